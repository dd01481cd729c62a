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
sweep-<param>-cycle-histogram.png (see plot.py).

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

from . import fleet, metrics, plot
from .common import (
    REPO_ROOT,
    STOP,
    Parser,
    ToolError,
    check_apiary,
    default_apiary,
    fmt_metric,
    load_avg,
    markdown_table,
    parse_csv,
    run_main,
    utc_iso,
    utc_stamp,
    whole_number,
)
from .inputs import check_file
from .multirun import glue_values, set_from_results, split_passthrough, write_set
from .outputs import Outputs, make_directory, write_json, write_text
from .runner import (
    MAX_PLAN_RUNS,
    PlannedRun,
    Progress,
    apiary_command,
    check_plan,
    effective_config,
    execute,
    with_progress_off,
)

HIVE_MAX_BLOCK = 2 * 1024 * 1024
SWEEP_NAME = "sweep.json"
TABLE_NAME = "sweep.md"
# The metrics the table shows per value, after the cycle and µs per transaction with their CIs.
TABLE_METRICS = ("aggregates.cycle_us.median", "aggregates.cycle_us.p99", "aggregates.transactions_per_block.avg",
                 "aggregates.processing_us.avg", "throughput.tx_per_s", "cpu.utilization",
                 "writer.wait_work_share", "writer.unknown_share")


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
    rep = plot.representative(rs)
    entry["representative"] = str(Path(rep.path or "?").resolve().relative_to(base.resolve()))
    return entry


def _with_ci(name: str, s: dict[str, Any] | None) -> str:
    if not s:
        return "–"
    text = fmt_metric(name, s["mean"])
    if s.get("ci_low") is not None:
        text += f" ({fmt_metric(name, s['ci_low'])} … {fmt_metric(name, s['ci_high'])})"
    return text


def table_markdown(sweep: dict[str, Any], heading: str = "##") -> str:
    """One row per value: the mean of each metric over the runs, the cycle and the cost per
    transaction with their 95% CIs, and both relative to the first value."""
    pts = sweep["points"]
    param = sweep["param"]
    first = next((p for p in pts if p["n"]), None)
    header = ["--" + param, "runs", "cycle avg µs (95% CI)", "µs per tx (95% CI)"] + \
             [metrics.SHORT_NAMES.get(m, m) for m in TABLE_METRICS] + ["cycle ×", "µs per tx ×"]
    rows = []
    for p in pts:
        m = p["metrics"]
        row = [p["value"], str(p["n"]), _with_ci("aggregates.cycle_us.avg", m.get("aggregates.cycle_us.avg")),
               _with_ci("us_per_tx", m.get("us_per_tx"))]
        row += [fmt_metric(name, m[name]["mean"]) if name in m else "–" for name in TABLE_METRICS]
        for name in ("aggregates.cycle_us.avg", "us_per_tx"):
            if first and name in m and name in first["metrics"] and first["metrics"][name]["mean"]:
                row.append(f"{m[name]['mean'] / first['metrics'][name]['mean']:.2f}")
            else:
                row.append("–")
        rows.append(row)
    ctx = sweep.get("context", {})
    lines = [f"{heading} Sweep of `--{param}`", ""]
    lines.append(f"- {ctx.get('build_type', '?')} build, commit {ctx.get('commit', '?')}, "
                 f"{ctx.get('cpu_model', '?')}, {ctx.get('cores', '?')} cores")
    lines.append(f"- run arguments: `{' '.join(sweep.get('run_args', [])) or '(defaults)'}`; "
                 f"{sweep.get('runs_per_value')} runs per value, round-robin")
    before, after = sweep.get("load_avg_before"), sweep.get("load_avg_after")
    if before or after:
        lines.append(f"- load average (1, 5, 15 min): {' '.join(map(str, before or []))} before, "
                     f"{' '.join(map(str, after or []))} after")
    lines.append("- values are means over the runs; 95% CI: Student's t interval; "
                 "×: relative to the first value")
    lines += ["", markdown_table(header, rows)]
    return "\n".join(lines)


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
        (SWEEP_NAME, TABLE_NAME))
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
    sweep = {"kind": plot.SWEEP_KIND, "version": plot.SWEEP_VERSION, "created": utc_iso(), "param": param,
             "values": values,
             "runs_per_value": args.runs, "run_args": common, "load_avg_before": before,
             "load_avg_after": load_avg(), "context": context, "points": points}
    write_json(out / SWEEP_NAME, sweep)
    table = table_markdown(sweep)
    write_text(out / TABLE_NAME, table)
    print(table, end="")
    if not args.no_plots and any(p["n"] for p in points):
        for path in plot.plot_sweep_dir(out / SWEEP_NAME, out):
            progress.say(f"figure {path}")
    outcome.raise_failure()
    return outcome.exit_code


def main(argv: Sequence[str] | None = None) -> int:
    return run_main("sweep", _main, argv)


if __name__ == "__main__":
    raise SystemExit(main())
