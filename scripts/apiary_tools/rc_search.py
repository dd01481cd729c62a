"""rc-tune's search: each resource's interval of budget_scale_factors (Bracket), cut at each
round's trials until the pool settles or the interval closes; then, with --tune-price, one
price_scale_factor (Search); the tuning's settings and its table of trials, written as each
trial finishes so that a rerun continues it (Tuning). The command (commands/rc_tune) reads
the options and writes the results; its page (commands/rc_tune/page.py) draws the search.

Floor: results.

Thread safety: the search runs in the command's main thread; trials finish through
rc_trials.Runner, which calls Tuning.record from that thread.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import kinds
from .common import STOP, utc_iso
from .outputs import write_json, write_text
from .rc_trials import MAX_FACTOR, Analysis, Factors, Finished, Runner, Trial, analyse, params_document, toml_text

TABLE_JSON, TABLE_CSV = kinds.RC_TUNE.file, "trials.csv"

# The price search ends when its interval is this narrow.
PRICE_RESOLUTION = 64


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
        write_json(self.out / TABLE_JSON, kinds.RC_TUNE.stamp({"created": utc_iso(), "settings": self.settings,
                                                               "trials": rows}))
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
