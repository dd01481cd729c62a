"""plot: figures of cycle times, from reports or from a sweep.

- cycle-over-run.png: each measured block's full cycle against its block number, one panel
  per run, with the run's mean: shows warm-up effects, drift and outliers that an average hides
  (a run of more than MAX_POINTS blocks, a long soak's, is drawn as MAX_POINTS runs of
  consecutive blocks, each its mean and its min-to-max band: `downsample`);
- cycle-histogram.png: the distribution of the cycle per run, with mean and median;
- latency.png (inputs with latency records, report schema 2): the percentile distribution of
  each latency stage, one line per input (a multirun directory's runs merged into one
  histogram), on HdrHistogram's axes: the percentile as 1/(1 - p) on a log scale, so the tail
  gets the room;
- rc-pools.png (reports with RC archives, `--rc-stats-blocks`): each resource pool's level
  (pool / equilibrium) over the blocks, one line per input, with the level it settles at under
  the run's average use, 1 - u (1 - 1/tau) / b (docs/rc.md): shows which pools have settled
  and which are still on their way;
- sweep-<param>.png (from a sweep's sweep.json): the average cycle and the µs per transaction
  against the swept parameter, with the 95% confidence intervals of the means as error bars.

Runs differ by orders of magnitude across a block-size sweep, so every run gets its own panel
rather than sharing axes. matplotlib draws with the Agg backend: files only, no display needed.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
import numpy as np  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from . import latency as latency_mod  # noqa: E402
from .common import REPO_ROOT, Parser, ToolError, check_name, parse_csv, run_main, utc_stamp  # noqa: E402
from .inputs import checked, read_json  # noqa: E402
from .outputs import Outputs, make_directory, write_figure  # noqa: E402
from .rc_trials import use_per_block  # noqa: E402
from .reports import Run, RunSet, input_files, load_report, load_set, measured_blocks  # noqa: E402
from .schemas import (  # noqa: E402
    COUNT,
    NUMBER_OR_NULL,
    NUMBERS,
    RELATIVE_PATH,
    STRING,
    STRINGS,
    SUMMARY,
    array,
    obj,
    problem,
    report_part,
    rooted,
)

MAX_PANELS = 12
# The most points a panel of the cycle over a run draws (its width is about 570 pixels at DPI):
# beyond, each point stands for consecutive blocks, drawn as their mean and their min-to-max band.
MAX_POINTS = 2000
DPI = 110
SWEEP_KIND, SWEEP_VERSION = "apiary-sweep", 1
# sweep.json, as scripts/sweep writes it: each point's directory and representative report
# are paths inside the sweep's directory.
SWEEP = rooted(obj(
    ("kind", "version", "param", "values", "points"), kind={"const": SWEEP_KIND}, version={"const": SWEEP_VERSION},
    created=STRING, param={"type": "string", "pattern": "^[a-z][a-z0-9-]*$"}, values=array(STRING, minItems=1),
    runs_per_value=COUNT, run_args=STRINGS, load_avg_before=NUMBERS, load_avg_after=NUMBERS,
    context=report_part("context"),
    points=array(obj(("value", "dir", "n", "metrics"), value=STRING, x=NUMBER_OR_NULL, dir=RELATIVE_PATH, n=COUNT,
                     metrics={"type": "object", "additionalProperties": SUMMARY},
                     representative=RELATIVE_PATH))))


def load_sweep(path: Path) -> dict[str, Any]:
    """A sweep.json, checked."""
    data = read_json(path)
    if not isinstance(data, dict) or data.get("kind") != SWEEP_KIND:
        raise ToolError(f"{path}: not a sweep.json written by scripts/sweep")
    return checked(data, str(path), lambda d: problem(SWEEP, d))


def _grid(n: int) -> tuple[int, int]:
    cols = 1 if n == 1 else 2 if n <= 4 else 3
    return math.ceil(n / cols), cols


def _panels(n: int, title: str, width: float = 5.2, height: float = 3.0):
    rows, cols = _grid(n)
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, height * rows), squeeze=False)
    fig.suptitle(title)
    flat = list(axes.flat)
    for ax in flat[n:]:
        ax.set_visible(False)
    return fig, flat[:n]


def _cycles_ms(report: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    blocks = measured_blocks(report)
    return blocks["num"], blocks["cycle_us"] / 1000.0


def downsample(nums: np.ndarray, cycles: np.ndarray,
               points: int = MAX_POINTS) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """At most `points` points for a panel: the blocks cut into `points` runs of consecutive
    blocks (as equal as they divide), each drawn at its middle block as its mean, minimum and
    maximum, so that an outlier still shows. (x, mean, min, max, blocks a point at most); the
    blocks themselves, with 1 a point, when there are no more than `points`."""
    if cycles.size <= points:
        return nums, cycles, cycles, cycles, 1
    starts = (np.arange(points, dtype=np.int64) * cycles.size) // points
    counts = np.diff(np.append(starts, cycles.size))
    middle = nums[starts + counts // 2]
    mean = np.add.reduceat(cycles, starts) / counts
    return middle, mean, np.minimum.reduceat(cycles, starts), np.maximum.reduceat(cycles, starts), int(counts.max())


def _draw_cycles(ax, nums: np.ndarray, cycles: np.ndarray) -> None:
    x, mean, low, high, per_point = downsample(nums, cycles)
    if per_point == 1:
        ax.plot(x, mean, marker=".", markersize=3, linewidth=0.8)
        return
    ax.fill_between(x, low, high, color="tab:blue", alpha=0.25, linewidth=0,
                    label=f"min to max of {per_point:,} blocks")
    ax.plot(x, mean, linewidth=0.8, color="tab:blue", label=f"mean of {per_point:,} blocks")


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    try:
        return write_figure(fig, path, DPI)
    finally:
        plt.close(fig)


def cycle_over_run(series: Sequence[tuple[str, dict[str, Any]]], path: Path) -> Path:
    """Per-block cycle time over each run."""
    fig, axes = _panels(len(series), "Full block cycle per measured block")
    for ax, (label, report) in zip(axes, series, strict=True):
        nums, cycles = _cycles_ms(report)
        _draw_cycles(ax, nums, cycles)
        if cycles.size:
            ax.axhline(float(np.mean(cycles)), color="tab:red", linestyle="--", linewidth=1,
                       label=f"mean {np.mean(cycles):,.1f} ms")
            ax.legend(loc="best", fontsize=8)
        ax.set_title(label, fontsize=10)
        ax.set_xlabel("block number")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylabel("cycle (ms)")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
    return _save(fig, path)


def cycle_histogram(series: Sequence[tuple[str, dict[str, Any]]], path: Path) -> Path:
    """The distribution of the cycle time of each run."""
    fig, axes = _panels(len(series), "Distribution of the full block cycle")
    for ax, (label, report) in zip(axes, series, strict=True):
        _, cycles = _cycles_ms(report)
        if cycles.size:
            ax.hist(cycles, bins=min(40, max(5, cycles.size // 3)), color="tab:blue", alpha=0.75)
            ax.axvline(float(np.mean(cycles)), color="tab:red", linestyle="--", linewidth=1,
                       label=f"mean {np.mean(cycles):,.1f} ms")
            ax.axvline(float(np.median(cycles)), color="tab:green", linestyle=":", linewidth=1.2,
                       label=f"median {np.median(cycles):,.1f} ms")
            ax.legend(fontsize=8)
        ax.set_title(f"{label} ({cycles.size} cycles)", fontsize=10)
        ax.set_xlabel("cycle (ms)")
        ax.set_ylabel("blocks")
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
    return _save(fig, path)


def _error_bars(points: Sequence[dict[str, Any]], metric: str, scale: float):
    means, low, high = [], [], []
    for p in points:
        s = p["metrics"].get(metric)
        if not s:
            means.append(np.nan)
            low.append(0.0)
            high.append(0.0)
            continue
        m = s["mean"] * scale
        means.append(m)
        low.append(m - s["ci_low"] * scale if s.get("ci_low") is not None else 0.0)
        high.append(s["ci_high"] * scale - m if s.get("ci_high") is not None else 0.0)
    return np.array(means), np.array([low, high])


def _distribution(stage: latency_mod.Stage) -> tuple[np.ndarray, np.ndarray]:
    """(1 / (1 - p), latency ms) at each bin with a count, the last point being the maximum."""
    counts = stage.counts
    nonzero = np.flatnonzero(counts)
    cumulative = np.cumsum(counts)[nonzero] / stage.count
    low, high = stage.bounds_us()
    values = np.array([low if i == 0 else high if i == len(counts) - 1
                       else min(max(stage.axis.centre_us(int(i) - 1), low), high)
                       for i in nonzero]) / 1000.0
    values[-1] = high / 1000.0
    # The last point (p = 1) has no finite 1 / (1 - p): it is drawn one decade past the one before.
    before_last = 1.0 / (1.0 - cumulative[:-1])
    x = np.append(before_last, before_last[-1] * 10 if len(before_last) else 10.0)
    return x, values


def latency_figure(sets: Sequence[tuple[str, dict[str, latency_mod.Stage]]], path: Path) -> Path:
    stages = latency_mod.SHOWN_STAGES
    fig, axes = plt.subplots(1, len(stages), figsize=(5.2 * len(stages), 3.8), squeeze=False)
    fig.suptitle("Transaction latency: percentile distribution")
    ticks = [(2, "50%"), (10, "90%"), (100, "99%"), (1000, "99.9%"), (10000, "99.99%")]
    for ax, name in zip(axes.flat, stages, strict=True):
        for label, pooled in sets:
            stage = pooled.get(name)
            if stage is None or stage.count == 0:
                continue
            x, y = _distribution(stage)
            ax.plot(x, y, drawstyle="steps-post", label=f"{label} ({stage.count:,} tx)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks([t for t, _ in ticks], [t for _, t in ticks])
        ax.set_xlim(left=1)
        ax.set_title(latency_mod.STAGE_LABELS[name], fontsize=10)
        ax.set_xlabel("percentile")
        ax.set_ylabel("latency (ms)")
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=8)
    return _save(fig, path)


def latency_sets(sets: Sequence[tuple[str, RunSet]]) -> list[tuple[str, dict[str, latency_mod.Stage]]]:
    """Each input's stages, merged over its runs; inputs without latency records are left out."""
    out = []
    for label, rs in sets:
        runs = rs.latency_runs()
        if runs:
            out.append((label, latency_mod.pooled(runs, rs.label)))
    return out


def sweep_figure(sweep: dict[str, Any], path: Path) -> Path:
    """The average cycle and the cost per transaction against the swept parameter."""
    points = [p for p in sweep["points"] if p.get("n")]
    if not points:
        raise ToolError("the sweep has no value with a completed run: nothing to plot")
    param = sweep["param"]
    numeric = all(p.get("x") is not None for p in points)
    xs = np.array([p["x"] for p in points], dtype=float) if numeric else np.arange(len(points), dtype=float)
    labels = [p["value"] for p in points]
    log_x = numeric and param == "block-size"

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    title = f"Sweep of --{param}"
    if sweep.get("runs_per_value"):
        title += f" ({sweep['runs_per_value']} runs per value, mean and 95% CI)"
    fig.suptitle(title)
    for ax, metric, scale, ylabel in ((ax1, "aggregates.cycle_us.avg", 1e-3, "full block cycle, average (ms)"),
                                     (ax2, "us_per_tx", 1.0, "µs per transaction (cycle / tx per block)")):
        means, err = _error_bars(points, metric, scale)
        ax.errorbar(xs, means, yerr=err, marker="o", capsize=4, linewidth=1.2)
        for x, m in zip(xs, means, strict=True):
            if np.isfinite(m):
                ax.annotate(f"{m:,.1f}" if m >= 10 else f"{m:,.2f}", (x, m), textcoords="offset points",
                            xytext=(0, 7), ha="center", fontsize=8)
        if log_x:
            ax.set_xscale("log", base=2)
        ax.set_xticks(xs)
        ax.set_xticklabels(labels, rotation=30 if len(labels) > 5 else 0)
        ax.minorticks_off()
        ax.set_xlabel(param)
        ax.set_ylabel(ylabel)
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
    return _save(fig, path)


@dataclass
class RcPools:
    """A report's RC archives as drawn: per resource its name, the archives' levels and where
    the pool settles under the run's average use per block."""
    names: list[str]
    blocks: np.ndarray        # the archives' block numbers
    levels: np.ndarray        # archives × resources
    settles: np.ndarray       # per resource: 1 - u (1 - 1/tau) / b


def rc_pools(report: dict[str, Any]) -> RcPools | None:
    """The pools of a report with two RC archives or more (None without: nothing to draw)."""
    rc = report.get("rc") or {}
    archives, resources = rc.get("archives") or [], (rc.get("params") or {}).get("resources") or []
    if len(archives) < 2 or not resources:
        return None
    settles = [1 - use * (1 - 1 / r["tau_blocks"]) / r["budget"] if r["budget"] else math.nan
               for use, r in zip(use_per_block(archives, len(resources)), resources, strict=True)]
    return RcPools([r["name"] for r in resources], np.asarray([a["block"] for a in archives], dtype=float),
                   np.asarray([a["levels"] for a in archives], dtype=float), np.asarray(settles))


def rc_pools_figure(series: Sequence[tuple[str, RcPools]], path: Path) -> Path:
    """Each pool's level over the blocks, one line per input, its settling level dashed."""
    names = series[0][1].names
    fig, axes = _panels(len(names), "RC pool level (pool / equilibrium) over the blocks")
    for i, (ax, name) in enumerate(zip(axes, names, strict=True)):
        for n, (label, pools) in enumerate(series):
            if i >= len(pools.names):
                continue
            colour = f"C{n % 10}"
            ax.plot(pools.blocks, pools.levels[:, i], linewidth=1.0, color=colour, label=label)
            ax.axhline(pools.settles[i], color=colour, linewidth=0.8, linestyle="--",
                       label=f"settles at {pools.settles[i]:.4f}")
        ax.set_title(name, fontsize=10)
        ax.set_xlabel("block number")
        ax.set_ylabel("level")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    return _save(fig, path)


# ---- choosing what to draw -----------------------------------------------------------------

def representative(rs: RunSet) -> Run:
    """The run whose average cycle is the median of the set's, so one picture stands for the set."""
    runs = [r for r in rs.runs if r.report is not None]
    if not runs:
        raise ToolError(f"{rs.label}: the per-block data is in the reports, which are not there "
                        "(an aggregate.json alone has no blocks)")
    runs.sort(key=lambda r: r.metrics.get("aggregates.cycle_us.avg", 0.0))
    return runs[(len(runs) - 1) // 2]


def sets_from_inputs(inputs: Sequence[str], labels: Sequence[str] | None) -> list[tuple[str, RunSet]]:
    """Each input's set (read once: a soak's report is 250 MB) and its label."""
    if labels and len(labels) != len(inputs):
        raise ToolError(f"--labels: {len(labels)} names for {len(inputs)} inputs")
    if len(inputs) > MAX_PANELS:
        raise ToolError(f"{len(inputs)} inputs: at most {MAX_PANELS} fit in one figure")
    out = []
    for i, path in enumerate(inputs):
        p = Path(path)
        rs = load_set([p], p.name if p.is_dir() else p.stem)
        out.append((labels[i] if labels else rs.label, rs))
    return out


def sweep_series(sweep: dict[str, Any], base: Path) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for p in sweep["points"]:
        if p.get("representative"):
            report_path = base / p["representative"]
            if report_path.is_file():
                out.append((f"--{sweep['param']} {p['value']}", load_report(report_path)))
    return out[:MAX_PANELS]


def plot_sweep_dir(sweep_path: Path, out: Path) -> list[Path]:
    sweep = load_sweep(sweep_path)
    written = [sweep_figure(sweep, out / f"sweep-{sweep['param']}.png")]
    series = sweep_series(sweep, sweep_path.parent)
    if series:
        written.append(cycle_over_run(series, out / f"sweep-{sweep['param']}-cycle-over-run.png"))
        written.append(cycle_histogram(series, out / f"sweep-{sweep['param']}-cycle-histogram.png"))
    return written


def parser() -> Parser:
    p = Parser(
        prog="plot",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Draw PNG figures from apiary reports: the per-block cycle over each run, "
                    "the histogram of cycle times, the latency distributions and the RC pools' levels; or, "
                    "with --sweep, a sweep's figures again.",
        epilog="""inputs: report files or multirun directories (a directory is drawn by its median run).
rc-pools.png is drawn from the reports with RC archives (apiary run --rc-stats-blocks).

examples:
  scripts/plot results/multirun-X/a results/multirun-X/b --out plots/
  scripts/plot results/20260101T000000Z-default.json --out plots/
  scripts/plot --sweep results/sweep-block-size-20260101T000000Z/sweep.json --out docs/measured/ --force

--out must be a new or empty directory unless --force (the figures then replace files of the
same name and leave the rest).""")
    p.add_argument("inputs", nargs="*", metavar="INPUT", help="reports or multirun directories")
    p.add_argument("--sweep", metavar="SWEEP_JSON", help="redraw the figures of a sweep from its sweep.json")
    p.add_argument("--out", metavar="DIR", help="where the PNG files go (default: results/plot-<UTC time>); it must "
                   "be new or empty, unless --force")
    p.add_argument("--force", action="store_true",
                   help="write into an --out directory that has files in it (figures of the same name are replaced)")
    p.add_argument("--labels", metavar="NAME,...", help="panel titles, one per input (default: the file names)")
    return p


FIGURES = ("cycle-over-run.png", "cycle-histogram.png", "latency.png", "rc-pools.png")


def _main(argv: Sequence[str]) -> int:
    args = parser().parse_args(argv)
    if args.sweep and args.inputs:
        raise ToolError("--sweep draws from the sweep alone: give no other inputs")
    if not args.sweep and not args.inputs:
        raise ToolError("give at least one report or multirun directory (or --sweep)")
    labels = parse_csv(args.labels) if args.labels else None
    for label in labels or ():
        check_name("--labels", label)
    plan = Outputs().read("INPUT", [f for p in ([args.sweep] if args.sweep else args.inputs) for f in input_files(p)])
    out = plan.directory("--out", Path(args.out) if args.out else REPO_ROOT / "results" / f"plot-{utc_stamp()}",
                         args.force, () if args.sweep else FIGURES)
    if args.sweep:
        written = plot_sweep_dir(Path(args.sweep), make_directory(out))
    else:
        sets = sets_from_inputs(args.inputs, labels)
        series = [(label, representative(rs).full_report()) for label, rs in sets]
        make_directory(out)
        written = [cycle_over_run(series, out / "cycle-over-run.png"),
                   cycle_histogram(series, out / "cycle-histogram.png")]
        if stages := latency_sets(sets):
            written.append(latency_figure(stages, out / "latency.png"))
        if pools := [(label, p) for label, report in series if (p := rc_pools(report)) is not None]:
            written.append(rc_pools_figure(pools, out / "rc-pools.png"))
    for w in written:
        print(w)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return run_main("plot", _main, argv)


if __name__ == "__main__":
    raise SystemExit(main())
