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
import csv
import hashlib
import io
import math
import subprocess
import sys
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import fleet
from .common import (
    REPO_ROOT,
    STOP,
    Parser,
    ToolError,
    check_apiary,
    default_apiary,
    finite_number,
    markdown_table,
    run_main,
    shown,
    shown_path,
    utc_iso,
    utc_stamp,
    whole_number,
)
from .inputs import read_bytes, read_json
from .multirun import split_passthrough
from .outputs import Outputs, check_directory, make_directory, write_json, write_text
from .rc_trials import (
    MAX_FACTOR,
    MAX_SCALE,
    Analysis,
    Factors,
    Finished,
    Runner,
    Trial,
    analyse,
    params_document,
    toml_text,
)

TABLE_JSON, TABLE_CSV, PARAMS_NAME, SUMMARY_NAME = "trials.json", "trials.csv", "rc-params.toml", "tune.md"
KIND, VERSION = "apiary-rc-tune", 1
MAX_ROUNDS = 100
MAX_BLOCKS = 10_000_000
# The price search ends when its interval is this narrow.
PRICE_RESOLUTION = 64
# The options a trial's command line gets from the tuner, not from the user.
OWN_OPTIONS = ("--rc-params", "--rc-scale", "--blocks", "--rc-stats-blocks", "--report")


# ---- the search --------------------------------------------------------------------------

@dataclass
class Bracket:
    """One factor's search: every factor above lo and below hi may still be the one; tried
    holds each factor tried and its score (|drift|, or the low-RC share), None when it failed
    the rule (price: over the bound)."""
    lo: int = -1
    hi: int = MAX_FACTOR + 1
    chosen: int | None = None
    status: str = "searching"            # settled, closest (the interval closed) or limit
    tried: dict[int, float] = field(default_factory=dict)

    def points(self, n: int) -> list[int]:
        inside = self.hi - self.lo - 1
        if inside <= n:
            return list(range(self.lo + 1, self.hi))
        return sorted({self.lo + round((self.hi - self.lo) * (j + 1) / (n + 1)) for j in range(n)})

    def close(self, status: str) -> None:
        self.chosen = min(self.tried, key=lambda f: self.tried[f]) if self.tried else max(self.lo, 0)
        self.status = status


def first_points(guess: int, n: int) -> list[int]:
    """Round 1: the guess, and around it in steps of 5% of it."""
    offsets = [0] + [s * k for k in range(1, n) for s in (-1, 1)]
    points = [min(MAX_FACTOR, max(0, round(guess * (1 + 0.05 * o)))) for o in offsets]
    return list(dict.fromkeys(points))[:n]


def budget_guess(resource: dict[str, Any], usage: float, scale: int, level: float) -> int:
    """The factor whose budget b = u (1 - 1/tau) / (1 - L) settles a pool that uses u at L."""
    if scale == 1:
        return resource["budget_scale_factor"]
    base = resource["budget"] / (1 + resource["budget_scale_factor"] * (scale - 1) / 10_000)
    wanted = usage * (1 - 1 / resource["tau_blocks"]) / (1 - level)
    return min(MAX_FACTOR, max(0, round((wanted / base - 1) * 10_000 / (scale - 1)))) if base > 0 else MAX_FACTOR


def update_budget(bracket: Bracket, results: list[tuple[int, str, float]]) -> None:
    """A round's (factor, verdict, drift) for one resource."""
    for factor, verdict, drift in results:
        bracket.tried[factor] = abs(drift)
        if verdict == "falling":
            bracket.lo = max(bracket.lo, factor)
        elif verdict == "rising":
            bracket.hi = min(bracket.hi, factor)
    flat = [(abs(d), f) for f, v, d in results if v == "flat"]
    if flat:
        bracket.chosen, bracket.status = min(flat)[1], "settled"
    elif bracket.hi - bracket.lo <= 1:
        bracket.close("closest")


def update_price(bracket: Bracket, results: list[tuple[int, float]], bound: float) -> None:
    """A round's (price_scale_factor, low-RC share): the smallest factor within the bound."""
    for factor, share in results:
        bracket.tried[factor] = share
        if share <= bound:
            bracket.hi = min(bracket.hi, factor)
        else:
            bracket.lo = max(bracket.lo, factor)
    if bracket.hi <= MAX_FACTOR and bracket.hi - bracket.lo <= PRICE_RESOLUTION:
        bracket.chosen, bracket.status = bracket.hi, "settled"
    elif bracket.hi - bracket.lo <= 1:
        bracket.close("closest")


# ---- the settings and the table ----------------------------------------------------------

@dataclass
class Tuning:
    args: argparse.Namespace
    out: Path
    base: dict[str, Any]               # the base params file's content
    command: list[str]                 # apiary replay ... without the tuner's own options
    settings: dict[str, Any]
    rows: dict[str, dict[str, Any]] = field(default_factory=dict)
    names: list[str] = field(default_factory=list)
    trials: list[Finished] = field(default_factory=list)
    analyses: dict[str, Analysis] = field(default_factory=dict)
    earlier: dict[str, dict[str, Any]] = field(default_factory=dict)   # an earlier run's rows, by key

    def say(self, text: str) -> None:
        if not self.args.quiet:
            print(f"rc-tune: {text}", file=sys.stderr, flush=True)

    def trial(self, round_: int, phase: str, factors: Factors | None, index: int = 0) -> Trial:
        doc = params_document(self.base, factors, self.args.target_level)
        return Trial(round_, phase, factors, toml_text(doc), self.command, index)

    def analysis(self, finished: Finished) -> Analysis:
        key = finished.trial.key
        if key not in self.analyses:
            self.analyses[key] = analyse(finished.report, self.args.transient, self.args.tolerance,
                                         f"trial {key}")
        return self.analyses[key]

    def record(self, finished: Finished) -> None:
        """A finished trial's row, and the table written again (resumable as it goes). A trial
        the search comes back to keeps its first row; one of an earlier run its host and time."""
        key = finished.trial.key
        if key in self.rows:
            return
        a = self.analysis(finished)
        self.names = self.names or a.names
        before = self.earlier.get(key, {}) if finished.host == "earlier" else {}
        row: dict[str, Any] = {"key": key, "round": finished.trial.round, "index": finished.trial.index,
                               "phase": finished.trial.phase, "host": before.get("host", finished.host),
                               "elapsed_s": before.get("elapsed_s", round(finished.elapsed_s, 3))}
        for i, r in enumerate(a.resources):
            row[f"{r['name']}.budget_scale_factor"] = r["budget_scale_factor"]
            row[f"{r['name']}.price_scale_factor"] = r["price_scale_factor"]
            row[f"{r['name']}.level"] = round(float(a.levels[-1, i]), 6)
            d = a.drifts[i]
            row[f"{r['name']}.drift"] = f"{d.drift:+.4f} ({d.low:+.4f} … {d.high:+.4f})"
            row[f"{r['name']}.verdict"] = a.verdicts[i]
        row["low_rc_share"] = round(a.low_share, 6)
        row["verdict"] = "flat" if all(v == "flat" for v in a.verdicts) else ", ".join(
            f"{n} {v}" for n, v in zip(a.names, a.verdicts, strict=True) if v != "flat")
        self.trials.append(finished)
        self.rows[key] = row
        self.write_table()

    def write_table(self) -> None:
        """The rows in the order of the search (rounds, and the trials of a round), whatever
        order the trials finished in."""
        rows = sorted(self.rows.values(), key=lambda r: (r["round"], r["index"]))
        write_json(self.out / TABLE_JSON, {"kind": KIND, "version": VERSION, "created": utc_iso(),
                                           "settings": self.settings, "trials": rows})
        text = io.StringIO()
        columns = list(dict.fromkeys(k for row in rows for k in row))
        writer = csv.DictWriter(text, columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        write_text(self.out / TABLE_CSV, text.getvalue())


class Stopped(Exception):
    """A signal came: the search ends with what finished (run_main then exits 130 or 143)."""


def run_round(tuning: Tuning, runner: Runner, trials: list[Trial]) -> list[Finished]:
    finished = runner.run(trials, tuning.record)
    if STOP.received is not None:
        raise Stopped
    return finished


# ---- the rounds --------------------------------------------------------------------------

@dataclass
class Search:
    tuning: Tuning
    runner: Runner
    probe: Analysis
    brackets: dict[str, Bracket]
    guesses: dict[str, int]
    base: Factors                      # the probe's factors
    rounds: int = 0
    price: Bracket | None = None
    chosen: Finished | None = None

    def budget_points(self, name: str) -> list[int]:
        b, n = self.brackets[name], self.tuning.args.parallel
        if b.chosen is not None:
            return [b.chosen]
        first = [p for p in first_points(self.guesses[name], n) if b.lo < p < b.hi] if self.rounds == 1 else []
        return first or b.points(n)

    def budget_round(self) -> None:
        self.rounds += 1
        points = {name: self.budget_points(name) for name in self.brackets}
        count = max(len(p) for p in points.values())
        trials = [self.tuning.trial(self.rounds, "budget", {n: [p[min(j, len(p) - 1)], self.base[n][1]]
                                                              for n, p in points.items()}, j) for j in range(count)]
        self.tuning.say(f"round {self.rounds}: trials: {len(trials)}, budget_scale_factor " + ", ".join(
            f"{n} {'/'.join(map(str, p))}" for n, p in points.items() if self.brackets[n].chosen is None))
        finished = run_round(self.tuning, self.runner, trials)
        for i, name in enumerate(self.probe.names):
            if self.brackets[name].chosen is None:
                results = {}
                for f in finished:
                    a = self.tuning.analysis(f)
                    results[a.resources[i]["budget_scale_factor"]] = (a.verdicts[i], a.drifts[i].drift)
                update_budget(self.brackets[name], [(k, v, d) for k, (v, d) in results.items()])

    def budgets(self) -> Factors:
        return {n: [b.chosen if b.chosen is not None else self.base[n][0], self.base[n][1]]
                for n, b in self.brackets.items()}

    def price_round(self, budgets: Factors) -> None:
        assert self.price is not None
        self.rounds += 1
        points = self.price.points(self.tuning.args.parallel)
        self.tuning.say(f"round {self.rounds}: trials: {len(points)}, price_scale_factor {'/'.join(map(str, points))}")
        trials = [self.tuning.trial(self.rounds, "price", {n: [f[0], p] for n, f in budgets.items()}, j)
                  for j, p in enumerate(points)]
        finished = run_round(self.tuning, self.runner, trials)
        update_price(self.price, [(p, self.tuning.analysis(f).low_share) for p, f in zip(points, finished,
                                                                                            strict=True)],
                     self.tuning.args.low_rc_bound)

    def run(self) -> Factors:
        args = self.tuning.args
        if args.scale == 1:   # the factors scale by s − 1: at 1 they change nothing
            self.tuning.say("at scale 1 the factors have no effect: the base parameters are kept")
            for name, b in self.brackets.items():
                b.chosen, b.status = self.base[name][0], "no effect at scale 1"
        while any(b.chosen is None for b in self.brackets.values()) and self.rounds < args.max_rounds:
            self.budget_round()
        for b in self.brackets.values():
            if b.chosen is None:
                b.close("limit")
        factors = self.budgets()
        self.chosen = run_round(self.tuning, self.runner, [self.tuning.trial(self.rounds, "chosen", factors)])[0]
        if args.tune_price and args.scale > 1 and self.tuning.analysis(self.chosen).low_share > args.low_rc_bound:
            self.price = Bracket()
            while self.price.chosen is None and self.rounds < args.max_rounds:
                self.price_round(factors)
            if self.price.chosen is None:
                self.price.close("limit")
            price = self.price.chosen if self.price.chosen is not None else 0
            factors = {n: [f[0], price] for n, f in factors.items()}
            self.chosen = run_round(self.tuning, self.runner,
                                    [self.tuning.trial(self.rounds, "chosen", factors)])[0]
        return factors


def start_search(tuning: Tuning, runner: Runner) -> Search:
    """Round 0: the base parameters, the pools from the target level; the first guesses."""
    probe = tuning.analysis(run_round(tuning, runner, [tuning.trial(0, "probe", None)])[0])
    base = {r["name"]: [r["budget_scale_factor"], r["price_scale_factor"]] for r in probe.resources}
    brackets = {name: Bracket() for name in probe.names}
    guesses = {}
    for i, (name, r) in enumerate(zip(probe.names, probe.resources, strict=True)):
        update_budget(brackets[name], [(r["budget_scale_factor"], probe.verdicts[i], probe.drifts[i].drift)])
        guesses[name] = budget_guess(r, probe.usage[i], tuning.args.scale, tuning.args.target_level)
    tuning.say("round 0: " + ", ".join(f"{n} {v}" for n, v in zip(probe.names, probe.verdicts, strict=True)) +
               "; first guesses " + ", ".join(f"{n} {g}" for n, g in guesses.items()))
    return Search(tuning, runner, probe, brackets, guesses, base)


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
        from . import rc_tune_page
        for path in rc_tune_page.write_figures(tuning, search):
            tuning.say(f"figure {path}")
        tuning.say(f"page {rc_tune_page.write_page(tuning, search, summary)}")


# ---- the command line --------------------------------------------------------------------

def open_unit(text: str) -> float:
    """The argparse type of --target-level: a number above 0 and below 1."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value < 1:   # NaN too
        raise argparse.ArgumentTypeError(f"expected a level above 0 and below 1, not '{shown(text)}'")
    return value


open_unit.__name__ = "level"


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
    if not isinstance(earlier, dict) or earlier.get("kind") != KIND or not isinstance(earlier.get("trials"), list):
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
