"""rc-tune: searches each RC resource's budget_scale_factor (and, with --tune-price, the
price_scale_factor) for a scale, so that the pools settle at a target level; docs/rc.md,
"Tuning: scripts/rc-tune", explains the method.

    scripts/rc-tune --scale 8 --blocks 400 --out DIR -- --config configs/core-only.toml ...

Each trial is a deterministic `apiary replay` (rc_trials.py). Round 0 runs the base
parameters with the pools starting at the target level L; it measures each resource's use
per block u, and the first guess of the budget is b = u (1 - 1/tau) / (1 - L), where a pool
whose use is u settles at L. Then each round runs --parallel trials (every trial sets every
resource's factor; the resources' searches go side by side): a resource whose level, after the
transient, drifts (by its fitted slope, over one characteristic time tau: how far from L the
pool would settle) with a 95% interval that holds 0 or stays within ±--tolerance is settled;
a falling one needs a larger factor, a rising one a smaller; each resource's interval of
factors is cut at the round's trials until it settles or the interval closes (then the trial
nearest to flat is taken). With --tune-price, once the budgets are set, one price_scale_factor
for every resource is searched: the smallest for which the share of payers unable to afford a
reference operation (vote, comment or transfer) stays within --low-rc-bound.

Output directory: trials/ (each trial's params, report and output, by its key), trials.json
and trials.csv (one row per trial, written as each finishes), rc-params.toml (the chosen
parameters), tune.md (the summary), the figures and rc-tune.html. A second run with the same
--out and settings runs no finished trial again; Ctrl-C keeps the finished ones.

Exit status: 0 done (the verdicts say whether the search reached its target), 1 a trial
failed, 2 bad usage, 130/143 interrupted.
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ... import fleet, kinds
from ...common import (
    REPO_ROOT,
    STOP,
    Parser,
    ToolError,
    check_apiary,
    default_apiary,
    finite_number,
    markdown_table,
    open_unit,
    run_main,
    shown_path,
    utc_stamp,
    whole_number,
)
from ...inputs import read_bytes, read_json
from ...outputs import Outputs, check_directory, make_directory, write_text
from ...rc_search import TABLE_CSV, TABLE_JSON, Search, Stopped, Tuning, start_search
from ...rc_trials import (
    MAX_SCALE,
    Factors,
    Runner,
    params_document,
    toml_text,
)
from ...runner import split_passthrough

PARAMS_NAME, SUMMARY_NAME = "rc-params.toml", "tune.md"
MAX_ROUNDS = 100
MAX_BLOCKS = 10_000_000
# The options a trial's command line gets from the tuner, not from the user.
OWN_OPTIONS = ("--rc-params", "--rc-scale", "--blocks", "--rc-stats-blocks", "--report")


# ---- the search --------------------------------------------------------------------------


# ---- the settings and the table ----------------------------------------------------------


# ---- the rounds --------------------------------------------------------------------------


# ---- the results -------------------------------------------------------------------------

def summary_markdown(tuning: Tuning, search: Search) -> str:
    args, chosen = tuning.args, search.chosen
    assert chosen is not None
    a = tuning.analysis(chosen)
    header = ["resource", "base factor", "chosen factor", "search", "level at the end", "drift after the transient "
              "(95% CI)", "verdict", "use per block", "budget per block"]
    rows = []
    for i, r in enumerate(a.resources):
        d, b = a.drifts[i], search.brackets[r["name"]]
        rows.append([r["name"], str(search.base[r["name"]][0]), str(r["budget_scale_factor"]), b.status,
                     f"{a.levels[-1, i]:.4f}", f"{d.drift:+.4f} ({d.low:+.4f} … {d.high:+.4f})", a.verdicts[i],
                     f"{a.usage[i]:,.0f}", f"{r['budget']:,.0f}"])
    price = search.price
    lines = [f"## RC tuning at scale {args.scale}", "",
             f"- {len(tuning.rows)} trials of {args.blocks:,} blocks ({search.runner.ran} run now), "
             f"rounds: {search.rounds} of up to {args.parallel} trials; chosen trial `{chosen.trial.key}`",
             f"- target level {args.target_level:g}, transient {args.transient:.0%} of the archives, "
             f"tolerance ±{args.tolerance:g} of drift over each pool's characteristic time",
             f"- apiary arguments: `{' '.join(tuning.command[2:])}`", "", markdown_table(header, rows),
             f"Payers unable to afford a reference operation (largest of vote, comment, transfer): "
             f"{a.low_share:.2%} against the bound {args.low_rc_bound:.2%} "
             f"({'within' if a.low_share <= args.low_rc_bound else 'over'})"
             + (f"; price_scale_factor {price.chosen} for every resource ({price.status})" if price else "") + ".",
             "", f"The parameters: `{PARAMS_NAME}` (`apiary run --rc-params {PARAMS_NAME} --rc-scale {args.scale}`).",
             ""]
    return "\n".join(lines)


def write_results(tuning: Tuning, search: Search, factors: Factors) -> None:
    args = tuning.args
    doc = params_document(tuning.base, factors, args.target_level)
    write_text(tuning.out / PARAMS_NAME, f"# scripts/rc-tune --scale {args.scale} --blocks {args.blocks}: the chosen "
               f"factors, pools starting at {args.target_level:g} of their equilibrium\n" + toml_text(doc))
    summary = summary_markdown(tuning, search)
    write_text(tuning.out / SUMMARY_NAME, summary)
    print(summary, end="")
    if not args.no_plots:
        from . import page as rc_tune_page  # lazy for start-up time: matplotlib only for the figures
        for path in rc_tune_page.write_figures(tuning, search):
            tuning.say(f"figure {path}")
        tuning.say(f"page {rc_tune_page.write_page(tuning, search, summary)}")


# ---- the command line --------------------------------------------------------------------

def parser() -> Parser:
    p = Parser(prog="rc-tune", formatter_class=argparse.RawDescriptionHelpFormatter,
               description="Search each RC resource's budget_scale_factor (and with --tune-price the "
                           "price_scale_factor) at a scale, so that every pool settles at the target level, by "
                           "trials of `apiary replay`. Arguments after `--` go to every trial.",
               epilog="""examples:
  scripts/rc-tune --scale 8 --blocks 2000 --out results/rc-8 -- --config configs/core-only.toml \\
      --blocks-by clock --slot-transactions 1300
  scripts/rc-tune --scale 32 --blocks 2000 --tune-price --parallel 4 --cluster tcp://HOST:8786 \
      --out results/rc-32 -- ...

outputs in --out: trials.json and trials.csv (one row per trial), rc-params.toml (the chosen parameters),
tune.md, levels.png, prices.png, low-rc.png, rounds.png and rc-tune.html. A rerun with the same --out and
settings runs no finished trial again. The method: docs/rc.md, "Tuning: scripts/rc-tune".
exit status: 0, 1 a trial failed, 2 bad usage, 130/143 interrupted (the finished trials are kept).""")
    p.add_argument("--scale", type=whole_number(1, MAX_SCALE), required=True, metavar="S", help="Hive's rc_scale")
    p.add_argument("--blocks", type=whole_number(1, MAX_BLOCKS), required=True, metavar="B",
                   help="blocks per trial")
    p.add_argument("--rc-params", metavar="BASE.toml", help="the parameters to start from (default: apiary's)")
    p.add_argument("--target-level", type=open_unit, default=0.5, metavar="L",
                   help="the level (pool / equilibrium) the pools start at and should stay at (default: %(default)s)")
    p.add_argument("--transient", type=finite_number(0, 0.9, "a fraction"), default=0.2, metavar="F",
                   help="the fraction of the archives left out at the start (default: %(default)s)")
    p.add_argument("--tolerance", type=finite_number(0, 1, "a level", above=True), default=0.01, metavar="T",
                   help="a level's drift over its characteristic time (tau) within ±T counts as flat "
                   "(default: %(default)s)")
    p.add_argument("--low-rc-bound", type=finite_number(0, 1, "a share"), default=0.05, metavar="X",
                   help="the share of payers unable to afford a reference operation (default: %(default)s)")
    p.add_argument("--tune-price", action="store_true",
                   help="also search the price_scale_factor when the share is over the bound")
    p.add_argument("--rc-stats-blocks", type=whole_number(1, MAX_BLOCKS), metavar="K",
                   help="blocks per archive of the pools (default: --blocks / 50)")
    p.add_argument("--parallel", type=whole_number(1, 64), default=2, metavar="N",
                   help="trials per round, run at once here (default: %(default)s)")
    p.add_argument("--max-rounds", type=whole_number(1, MAX_ROUNDS), default=12, metavar="R",
                   help="rounds at most (default: %(default)s)")
    p.add_argument("--apiary", metavar="BIN",
                   help="the apiary binary (default: $APIARY_BIN, else build/release/harness/apiary)")
    p.add_argument("--out", metavar="DIR", help="output directory (default: results/rc-tune-<UTC time>); new, "
                   "empty, or a tuning's with the same settings (continued)")
    p.add_argument("--force", action="store_true", help="write into an --out directory that has other files in it")
    p.add_argument("--no-plots", action="store_true", help="the tables and the parameters only")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    fleet.add_options(p)
    return p


def read_base(path: str | None, apiary: Path) -> dict[str, Any]:
    """The parameters to start from, complete: `apiary rc-params` prints the built-in ones, or
    the --rc-params file's merged with them (and checked by the binary that will run them)."""
    if path is not None:
        try:
            read_bytes(path, "an --rc-params file", 1 << 20)
        except ToolError as e:
            raise ToolError(f"--rc-params {e}") from None
    command = [str(apiary), "rc-params"] + (["--rc-params", path] if path is not None else [])
    done = subprocess.run(command, capture_output=True, text=True, errors="replace", check=False)
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or [f"exit {done.returncode}"]
        raise ToolError(f"--rc-params: {lines[-1]}")
    try:
        return tomllib.loads(done.stdout)
    except tomllib.TOMLDecodeError as e:
        raise ToolError(f"{shown_path(str(apiary))} rc-params: not a TOML file ({e})") from None


def settings_of(args: argparse.Namespace, command: list[str], base: dict[str, Any]) -> dict[str, Any]:
    """What decides the trials and their verdicts: a continued tuning must have the same."""
    return {"scale": args.scale, "blocks": args.blocks, "rc_stats_blocks": args.rc_stats_blocks,
            "target_level": args.target_level, "transient": args.transient, "tolerance": args.tolerance,
            "low_rc_bound": args.low_rc_bound, "tune_price": args.tune_price, "parallel": args.parallel,
            "max_rounds": args.max_rounds, "apiary_args": command[1:],
            "base_params_sha256": hashlib.sha256(toml_text(base).encode()).hexdigest()}


def earlier_rows(out: Path, settings: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The rows of the tuning in `out`, which must have had the same settings."""
    earlier = read_json(out / TABLE_JSON, "a tuning's table")
    if not kinds.RC_TUNE.is_one(earlier) or not isinstance(earlier.get("trials"), list):
        raise ToolError(f"--out {shown_path(str(out))}: its {TABLE_JSON} was not written by rc-tune")
    if earlier.get("settings") != settings:
        changed = [k for k in settings if (earlier.get("settings") or {}).get(k) != settings[k]]
        raise ToolError(f"--out {shown_path(str(out))}: a tuning of other settings ({', '.join(changed)}); "
                        "choose a new directory, or give the same options to continue it")
    return {r["key"]: r for r in earlier["trials"] if isinstance(r, dict) and "key" in r}


def prepare(argv: Sequence[str]) -> Tuning:
    own, passthrough = split_passthrough(argv)
    args = parser().parse_args(own)
    for a in passthrough:
        if a.split("=", 1)[0] in OWN_OPTIONS:
            raise ToolError(f"{a}: rc-tune sets this itself; leave it out of the apiary arguments")
    args.rc_stats_blocks = args.rc_stats_blocks or max(1, args.blocks // 50)
    apiary = check_apiary(args.apiary or default_apiary())
    base = read_base(args.rc_params, apiary)
    command = [str(apiary), "replay", "--rc-scale", str(args.scale), "--blocks", str(args.blocks),
               "--rc-stats-blocks", str(args.rc_stats_blocks), *passthrough]
    out = Path(args.out) if args.out else REPO_ROOT / "results" / f"rc-tune-{utc_stamp()}"
    settings = settings_of(args, command, base)
    rows = earlier_rows(out, settings) if (out / TABLE_JSON).is_file() else None
    if rows is None:
        check_directory("--out", out, args.force)
    Outputs().read("--rc-params", [args.rc_params] if args.rc_params else []).directory(
        "--out", out, True, (TABLE_JSON, TABLE_CSV, PARAMS_NAME, SUMMARY_NAME))
    return Tuning(args, out, base, command, settings, earlier=rows or {})


def _main(argv: Sequence[str]) -> int:
    tuning = prepare(argv)
    backend = fleet.ClusterBackend.from_args(tuning.args)
    make_directory(tuning.out)
    runner = Runner(tuning.out, tuning.args.parallel, backend, tuning.say)
    where = f"on the cluster's {len(backend.workers)} workers" if backend else "here"
    tuning.say(f"trials of {tuning.args.blocks:,} blocks at scale {tuning.args.scale}, up to "
               f"{tuning.args.parallel} at once {where}, into {tuning.out}")
    try:
        with STOP.keeping():
            search = start_search(tuning, runner)
            factors = search.run()
    except Stopped:
        tuning.say(f"stopped: {len(tuning.rows)} finished trials kept in {tuning.out}; run again with the same "
                   "options to continue")
        return 0
    finally:
        runner.close()
    write_results(tuning, search, factors)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return run_main("rc-tune", _main, argv)


if __name__ == "__main__":
    raise SystemExit(main())
