"""The tools' figures of runs, drawn with matplotlib (the Agg backend: files only, no display
needed): the per-block cycle over each run (a run of more than MAX_POINTS blocks, a long
soak's, is drawn as MAX_POINTS runs of consecutive blocks, each its mean and its min-to-max
band: `downsample`), the distribution of the cycle per run, the percentile distribution of
each latency stage on HdrHistogram's axes (the percentile as 1/(1 - p) on a log scale, so the
tail gets the room), each RC pool's level over the blocks with the level it settles at under
the run's average use, 1 - u (1 - 1/tau) / b (docs/rc.md), and a sweep's cycle and µs per
transaction against the swept value with the 95% confidence intervals of the means. Runs
differ by orders of magnitude across a block-size sweep, so every run gets its own panel
rather than sharing axes. The plot, sweep, report-html and rc-tune commands draw with these.

Floor: results (rc_trials gives the pools' use per block). Thread safety: none; matplotlib's
pyplot is not thread-safe, so one thread draws.
"""

from __future__ import annotations

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
from .common import ToolError  # noqa: E402
from .outputs import write_figure  # noqa: E402
from .rc_trials import use_per_block  # noqa: E402
from .reports import Run, RunSet, measured_blocks  # noqa: E402

MAX_PANELS = 12
# The most points a panel of the cycle over a run draws (its width is about 570 pixels at DPI):
# beyond, each point stands for consecutive blocks, drawn as their mean and their min-to-max band.
MAX_POINTS = 2000
DPI = 110


def _grid(n: int) -> tuple[int, int]:
    cols = 1 if n == 1 else 2 if n <= 4 else 3
    return math.ceil(n / cols), cols


def panels(n: int, title: str, width: float = 5.2, height: float = 3.0):
    """A figure of n panels in a grid, the unused ones hidden: (figure, the n axes)."""
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


def save(fig, path: Path) -> Path:
    """The figure laid out and written to `path` (outputs.write_figure), then closed."""
    fig.tight_layout()
    try:
        return write_figure(fig, path, DPI)
    finally:
        plt.close(fig)


def cycle_over_run(series: Sequence[tuple[str, dict[str, Any]]], path: Path) -> Path:
    """Per-block cycle time over each run."""
    fig, axes = panels(len(series), "Full block cycle per measured block")
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
    return save(fig, path)


def cycle_histogram(series: Sequence[tuple[str, dict[str, Any]]], path: Path) -> Path:
    """The distribution of the cycle time of each run."""
    fig, axes = panels(len(series), "Distribution of the full block cycle")
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
    return save(fig, path)


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
    return save(fig, path)


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
    return save(fig, path)


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
    fig, axes = panels(len(names), "RC pool level (pool / equilibrium) over the blocks")
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
    return save(fig, path)


def representative(rs: RunSet) -> Run:
    """The run whose average cycle is the median of the set's, so one picture stands for the set."""
    runs = [r for r in rs.runs if r.report is not None]
    if not runs:
        raise ToolError(f"{rs.label}: the per-block data is in the reports, which are not there "
                        "(an aggregate.json alone has no blocks)")
    runs.sort(key=lambda r: r.metrics.get("aggregates.cycle_us.avg", 0.0))
    return runs[(len(runs) - 1) // 2]
