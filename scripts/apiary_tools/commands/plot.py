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
rather than sharing axes. The figures are drawn by figures.py, a sweep's by sweeps.py.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from .. import figures, sweeps
from ..common import REPO_ROOT, Parser, ToolError, check_name, parse_csv, run_main, utc_stamp
from ..outputs import Outputs, make_directory
from ..reports import RunSet, input_files, load_set


def sets_from_inputs(inputs: Sequence[str], labels: Sequence[str] | None) -> list[tuple[str, RunSet]]:
    """Each input's set (read once: a soak's report is 250 MB) and its label."""
    if labels and len(labels) != len(inputs):
        raise ToolError(f"--labels: {len(labels)} names for {len(inputs)} inputs")
    if len(inputs) > figures.MAX_PANELS:
        raise ToolError(f"{len(inputs)} inputs: at most {figures.MAX_PANELS} fit in one figure")
    out = []
    for i, path in enumerate(inputs):
        p = Path(path)
        rs = load_set([p], p.name if p.is_dir() else p.stem)
        out.append((labels[i] if labels else rs.label, rs))
    return out


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
        written = sweeps.plot_sweep_dir(Path(args.sweep), make_directory(out))
    else:
        sets = sets_from_inputs(args.inputs, labels)
        series = [(label, figures.representative(rs).full_report()) for label, rs in sets]
        make_directory(out)
        written = [figures.cycle_over_run(series, out / "cycle-over-run.png"),
                   figures.cycle_histogram(series, out / "cycle-histogram.png")]
        if stages := figures.latency_sets(sets):
            written.append(figures.latency_figure(stages, out / "latency.png"))
        if pools := [(label, p) for label, report in series if (p := figures.rc_pools(report)) is not None]:
            written.append(figures.rc_pools_figure(pools, out / "rc-pools.png"))
    for w in written:
        print(w)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return run_main("plot", _main, argv)


if __name__ == "__main__":
    raise SystemExit(main())
