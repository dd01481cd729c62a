"""sweep: `apiary run` over a list of values of one option, a table and figures.

How the cost of the full block cycle grows with the block size (Hive: a 64 kB block is
produced in a bit over 7 ms, sub-linear against 2 MB) or with the producer threads is a
curve, not a number. The sweep runs every value `--runs` times, round-robin (each value's
first run, then each value's second run, ...) so that the machine's drift spreads over all
values, aggregates each value like multirun, and draws the curve with confidence intervals.

Block sizes above the chain's 2 MiB maximum need `--max-block-size`: the sweep passes it,
equal to the size, unless the run arguments already set it.

Output directory (default results/sweep-<param>-<UTC time>/): one multirun-style directory
per value (reports, logs, aggregate.json, summary.md), sweep.json (every value's statistics),
sweep.md (the table) and the figures sweep-<param>.png, sweep-<param>-cycle-over-run.png and
sweep-<param>-cycle-histogram.png (sweeps.py, figures.py).

With `--cluster tcp://HOST:8786` every machine of the cluster runs the whole sweep (fleet.py);
each value's statistics pool the machines' runs.

Exit status as multirun: 0, 1 a run failed, 2 bad usage, 130/143 interrupted (what completed
is still aggregated and drawn).
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .. import figures, fleet, kinds, sweeps
from ..common import (
    REPO_ROOT,
    STOP,
    Parser,
    ToolError,
    check_apiary,
    default_apiary,
    load_avg,
    parse_csv,
    run_main,
    utc_iso,
    utc_stamp,
    whole_number,
)
from ..inputs import check_file
from ..outputs import Outputs, make_directory, write_json, write_text
from ..runner import (
    MAX_PLAN_RUNS,
    PlannedRun,
    Progress,
    apiary_command,
    check_plan,
    effective_config,
    execute,
    glue_values,
    set_from_results,
    split_passthrough,
    with_progress_off,
    write_set,
)

HIVE_MAX_BLOCK = 2 * 1024 * 1024


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "value"


def numeric_x(param: str, value: str, config: dict[str, Any]) -> float | None:
    """Where the value sits on the x axis: apiary's own reading of it (sizes in bytes), or
    None for words such as `infinite`."""
    effective = config.get(param, value)
    if isinstance(effective, bool):
        return None
    if isinstance(effective, (int, float)):
        return float(effective)
    try:
        return float(str(effective))
    except ValueError:
        return None


def value_args(param: str, value: str, common: list[str], prefix: list[str]) -> tuple[list[str], dict[str, Any]]:
    """The run arguments for one value, checked by apiary; raises the chain's maximum for big blocks."""
    args = common + [f"--{param}", value]
    if param == "block-size" and not any(a == "--max-block-size" or a.startswith("--max-block-size=")
                                         for a in common):
        probe = effective_config(prefix, args + ["--max-block-size", "256MiB"], f"--values {value}")
        size = int(probe["block-size"])
        if size > HIVE_MAX_BLOCK:
            args += ["--max-block-size", str(size)]
    config = effective_config(prefix, args, f"--values {value}")
    return args, config


def point(value: str, x: float | None, directory: Path, base: Path, rs) -> dict[str, Any]:
    entry: dict[str, Any] = {"value": value, "x": x, "dir": str(directory.relative_to(base)), "n": 0,
                             "metrics": {}}
    if rs is None:
        return entry
    agg = write_set(rs, directory)
    entry["n"] = rs.n
    entry["metrics"] = {k: {f: v for f, v in s.items() if f != "values" and f != "runs"}
                        for k, s in agg["metrics"].items()}
    rep = figures.representative(rs)
    entry["representative"] = str(Path(rep.path or "?").resolve().relative_to(base.resolve()))
    return entry


def parser() -> Parser:
    p = Parser(
        prog="sweep",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run `apiary run` for each value of one option (--runs times each, round-robin), "
                    "aggregate each value, and write a table and figures. Arguments after `--` go to "
                    "every run.",
        epilog="""examples:
  scripts/sweep --param block-size --values 64KiB,256KiB,1MiB,2MiB,4MiB --runs 3 -- --duration 5s
  scripts/sweep --param threads --values 1,2,3,4 --runs 3 -- --config configs/small-blocks.toml --blocks 200
  scripts/sweep --param rate --values 2000,5000,10000,infinite -- --config configs/smoke.toml

block sizes above 2 MiB get --max-block-size equal to the size.
figures: sweep-PARAM.png (cycle and µs per transaction with 95% CIs), sweep-PARAM-cycle-over-run.png,
sweep-PARAM-cycle-histogram.png; `scripts/plot --sweep DIR/sweep.json` draws them again.
with --cluster every worker (one a machine) runs the whole sweep: see docs/fleet.md.
exit status: 0, 1 a run failed, 2 bad usage, 130/143 interrupted.""")
    p.add_argument("--param", required=True, metavar="OPTION",
                   help="the `apiary run` option to vary, without dashes: block-size, threads, rate, ...")
    p.add_argument("--values", required=True, metavar="V1,V2,...", help="its values, comma-separated")
    p.add_argument("--runs", type=whole_number(1, MAX_PLAN_RUNS), default=3, metavar="N",
                   help="runs per value (default: %(default)s)")
    p.add_argument("--config", metavar="FILE", help="shorthand for `-- --config FILE`")
    p.add_argument("--apiary", metavar="BIN",
                   help="the apiary binary (default: $APIARY_BIN, else build/release/harness/apiary)")
    p.add_argument("--command", metavar="CMD", help="run this instead of `<apiary> run`")
    p.add_argument("--out", metavar="DIR", help="output directory (default: results/sweep-<param>-<UTC time>); "
                   "it must be new or empty, unless --force")
    p.add_argument("--force", action="store_true",
                   help="write into an --out directory that has files in it (files of the same name are replaced)")
    p.add_argument("--keep-going", action="store_true", help="go on after a failed run (default: stop)")
    p.add_argument("--no-plots", action="store_true", help="write the table only")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    fleet.add_options(p)
    return p


def _main(argv: Sequence[str]) -> int:
    own, passthrough = split_passthrough(argv)
    args = parser().parse_args(glue_values(own, ("--command",)))
    param = args.param.lstrip("-")
    if not re.fullmatch(r"[a-z][a-z0-9-]*", param):
        raise ToolError(f"--param {args.param}: expected an apiary run option name such as block-size")
    values = parse_csv(args.values)
    if not values:
        raise ToolError("--values: give at least one value")
    if len(set(values)) != len(values):
        raise ToolError(f"--values {args.values}: a value is repeated")
    check_plan(len(values) * args.runs, "--values and --runs")
    common = list(passthrough)
    if args.config:
        check_file("--config", args.config, "a config file")
        common = ["--config", args.config] + common
    for a in common:
        if a in (f"--{param}", "--report") or a.startswith((f"--{param}=", "--report=")):
            raise ToolError(f"{a}: the sweep sets this itself; leave it out of the run arguments")
    out = Outputs().read("--config", [args.config] if args.config else []).directory(
        "--out", Path(args.out) if args.out else REPO_ROOT / "results" / f"sweep-{param}-{utc_stamp()}", args.force,
        (kinds.SWEEP.file, sweeps.TABLE_NAME))
    prefix = apiary_command(None if args.command else check_apiary(args.apiary or default_apiary()), args.command)
    directories = {value: f"{param}-{_safe(value)}" for value in values}
    if len(set(directories.values())) != len(values):
        raise ToolError(f"--values {args.values}: two values would share a directory "
                        f"({', '.join(directories.values())})")
    prepared = []
    for value in values:
        run_args, config = value_args(param, value, common, prefix)
        prepared.append((value, run_args, numeric_x(param, value, config), out / directories[value]))
    backend = fleet.ClusterBackend.from_args(args)
    make_directory(out)
    with STOP.keeping():   # the runs that complete are aggregated and drawn, whatever signal comes
        return _run(args, param, values, common, prefix, prepared, out, backend)


def _run(args, param: str, values: list[str], common: list[str], prefix: list[str], prepared, out: Path,
         backend) -> int:
    plan = [PlannedRun(f"{param}={value}", i, prefix + with_progress_off(run_args),
                       directory / f"run-{i:03d}.json")
            for i in range(1, args.runs + 1) for value, run_args, _, directory in prepared]
    progress = Progress("sweep", plan, quiet=args.quiet)
    before = load_avg()
    progress.say(f"{len(plan)} runs of --{param} {','.join(values)} into {out} "
                 f"(load average {' '.join(map(str, before))})")
    try:
        outcome = execute(plan, progress, keep_going=args.keep_going, backend=backend)
    finally:
        if backend is not None:
            backend.close()

    points: list[dict[str, Any]] = []
    context: dict[str, Any] = {}
    for value, _, x, directory in prepared:
        rs = set_from_results(value, [r for r in outcome.results if r.planned.label == f"{param}={value}"])
        if rs is not None and not context:
            context = rs.context
        points.append(point(value, x, directory, out, rs))
    sweep = kinds.SWEEP.stamp({"created": utc_iso(), "param": param, "values": values,
                               "runs_per_value": args.runs, "run_args": common, "load_avg_before": before,
                               "load_avg_after": load_avg(), "context": context, "points": points})
    write_json(out / kinds.SWEEP.file, sweep)
    table = sweeps.table_markdown(sweep)
    write_text(out / sweeps.TABLE_NAME, table)
    print(table, end="")
    if not args.no_plots and any(p["n"] for p in points):
        for path in sweeps.plot_sweep_dir(out / kinds.SWEEP.file, out):
            progress.say(f"figure {path}")
    outcome.raise_failure()
    return outcome.exit_code


def main(argv: Sequence[str] | None = None) -> int:
    return run_main("sweep", _main, argv)


if __name__ == "__main__":
    raise SystemExit(main())
