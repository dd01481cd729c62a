"""Which metric decides an A/B comparison, and the sequential decision on it (docs/tools.md,
"The deciding metric").

The question an A/B answers is whether B processes transactions faster than A. Two metrics
of every run answer it (MEASURED), each with its own noise:

- `cycle`: the mean full cycle (metrics.CYCLE), wall time. Other processes that take the CPU
  from the run lengthen it.
- `cpu`: the writer's CPU time per transaction (metrics.WRITER_CPU: perf's task clock of the
  writer thread, `apiary run --counters on`). Preemption delays the writer but adds nothing to
  its own CPU time. It sees the writer's thread only: a change that moves work to another
  thread (the ladder's asynchronous submission) lowers it without shortening the cycle, a
  question to force the cycle for.

A third is no run's: the replay's counts under callgrind (gate.py, COUNTED): its estimated
cycles and its estimated memory time per transaction, deterministic, so their noise is 0.
Where a tool counts them anyway (multirun with two builds, the ladder) and the replay runs
what the sides change, auto decides on them (`counted`); a tool that has no count does not
make one for the choice.

The rule, `--decide-on auto` (the default): of the candidates every run of both sides has, the
one with the lowest noise decides. A candidate's noise is the standard deviation of log(B/A)
of one run against one: of the pairs' log-ratios when the runs are interleaved pairs (drift a
pair shares cancels in its ratio), else sqrt(var log A + var log B) over the sides' runs;
printed in percent (±2.1% is 0.021). With too few runs to tell (fewer than two pairs, a side of
one run) the cycle decides, as it did before there was a choice. A candidate a run lacks is
unavailable, with the reason (a report without counters: `--counters off`, an apiary older than
them; counters the machine refused): auto decides without it and says so, and forced
(`--decide-on cpu`) it is an error.

Choosing after looking. Of two noise estimates the lower one is more often one that came out
too low by chance, and an interval (or a test) of its metric is then too narrow: deciding on
the quieter-looking metric would call a false change more often than alpha. So auto judges
each of the k candidates at alpha / k (Bonferroni): the k intervals all hold together with
probability 1 − alpha, so the one taken makes a false call with at most alpha however it was
chosen, and however often it is chosen again (a sequential decision chooses at every look,
each candidate's confidence sequence holding at all times at 1 − alpha / k). A forced metric,
or the only one available, is judged at alpha. The split costs about 9% of a sequential
interval's width at 30 pairs (alpha 0.025 against 0.05; 11% at 10): auto gains where the
writer's CPU time is quieter than the cycle by more than that. tests/scripts/test_deciding.py simulates the
rule's false calls on noise like this machine's.

Floor: data. Thread safety: none needed; a judge is fed and read by one thread.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import gate, metrics, sequential
from .common import Parser, ToolError
from .reports import Run, RunSet


@dataclass(frozen=True)
class Candidate:
    """A metric that can decide an A/B."""
    name: str      # its word for --decide-on
    metric: str    # the run's metric it reads (metrics.flatten)
    words: str     # what the output calls it


CYCLE = Candidate("cycle", metrics.CYCLE, "the mean cycle")
CPU = Candidate("cpu", metrics.WRITER_CPU, "the writer's CPU time per transaction")
# The cycle first: it decides when the noise cannot be told, and of equal noises.
MEASURED = (CYCLE, CPU)
BY_NAME = {c.name: c for c in MEASURED}
AUTO = "auto"
SETTINGS = (AUTO, *BY_NAME)
# The replay's counts, which decide under auto where a tool has them (module docstring).
ESTIMATED_CYCLES = Candidate("estimated-cycles", gate.ESTIMATED_CYCLES.per_tx_key,
                             "the replay's estimated cycles per transaction")
MEMORY_TIME = Candidate("memory-time", gate.MEMORY.per_tx_key, "the replay's estimated memory ns per transaction")
COUNTED = (ESTIMATED_CYCLES, MEMORY_TIME)

# Why a run lacks a metric, given the metric: the report's own account (missing_reason).
Why = Callable[[str], str]


def missing_reason(report: Mapping[str, Any] | None, metric: str) -> str:
    """Why a run has no (positive) value of `metric`: for a counter, what its report's
    counters section says."""
    if report is None:
        return f"its aggregate holds no {metric}"
    parts = metrics.counter_parts(metric)
    if parts is None:
        return f"its report has no positive {metric}"
    counters = report.get("counters")
    if not isinstance(counters, Mapping):
        return "its report has no counters (an apiary older than --counters)"
    if not counters.get("enabled"):
        return "its counters were off (--counters off)"
    event = (counters.get("events") or {}).get(parts[2])
    if isinstance(event, Mapping) and not event.get("available"):
        return f"{parts[2]} was not counted: {event.get('reason') or 'not available'}"
    if counters.get("unavailable"):
        return f"its counters were unavailable: {counters['unavailable']}"
    return f"its report has no {parts[0]} thread's {parts[2]}"


def has(values: Mapping[str, float], candidate: Candidate) -> bool:
    """Whether a run's metrics hold the candidate's, positive (a ratio's term)."""
    value = values.get(candidate.metric)
    return value is not None and value > 0.0 and math.isfinite(value)


def why_lacking(label: str, run: Run) -> Why:
    """Why a run of the set `label` lacks a metric, the run named by its file."""
    return lambda metric: f"{label} {Path(run.path or 'a run').name}: {missing_reason(run.report, metric)}"


def unavailable_in(sides: Sequence[RunSet], candidate: Candidate) -> str | None:
    """Why the candidate cannot decide between the sets (the first run that lacks its metric),
    or None when every run has it."""
    for side in sides:
        for run in side.runs:
            if not has(run.metrics, candidate):
                return why_lacking(side.label, run)(candidate.metric)
    return None


def set_noise(a: Sequence[float], b: Sequence[float]) -> float | None:
    """The standard deviation of log(b / a) for a run of each side taken at random: the root of
    the sum of the sides' sample variances of the log-values; None when a side has one run."""
    if min(len(a), len(b)) < 2:
        return None
    return math.sqrt(float(np.var(np.log(a), ddof=1) + np.var(np.log(b), ddof=1)))


def _noise_text(noise: float | None) -> str:
    return "noise unknown: too few runs" if noise is None else f"noise ±{noise * 100:.1f}%"


def _other_text(c: Candidate, noise: float | None) -> str:
    return f"{c.words}: noise unknown" if noise is None else f"{c.words} ±{noise * 100:.1f}%"


@dataclass(frozen=True)
class Choice:
    """What decides, and why: the setting, the candidate taken, the candidates judged and the
    share of alpha each is judged at, every available candidate's noise (None: too few runs to
    tell), and why the others could not decide."""
    setting: str
    chosen: Candidate
    judged: tuple[Candidate, ...]
    alpha_share: float
    noise: dict[str, float | None]
    unavailable: dict[str, str] = field(default_factory=dict)

    def text(self) -> str:
        """One line: the metric that decided, its noise and the others', how alpha was spent."""
        others = [_other_text(c, self.noise[c.name]) for c in MEASURED if c != self.chosen and c.name in self.noise]
        others += [f"{BY_NAME[name].words} unavailable: {why}" for name, why in self.unavailable.items()]
        line = f"decided on {self.chosen.words} ({'; '.join([_noise_text(self.noise[self.chosen.name]), *others])})"
        if self.setting != AUTO:
            return f"{line}, as --decide-on {self.setting} asks"
        if self.alpha_share < 1.0:
            k = round(1 / self.alpha_share)
            if len(self.judged) < k:   # a sequential judge's candidate that a later pair lacked
                return f"{line}: --decide-on auto, judged at α/{k}, the share it had before the others were dropped"
            return (f"{line}: --decide-on auto, the quieter of {k}, each judged at α/{k} (Bonferroni) so that "
                    "choosing after looking keeps the chance of a false call at α")
        if self.unavailable:
            return f"{line}: --decide-on auto falls back to {self.chosen.words}"
        return line

    def to_dict(self) -> dict[str, Any]:
        return {"setting": self.setting, "candidate": self.chosen.name, "metric": self.chosen.metric,
                "judged": [c.name for c in self.judged], "alpha_share": self.alpha_share,
                "noise": dict(self.noise), "unavailable": dict(self.unavailable), "text": self.text()}


def counted(choice: Choice, a: Mapping[str, Any], b: Mapping[str, Any], threshold: float) -> dict[str, Any] | None:
    """Under auto (`choice`, what the runs alone decide on), the decision on the replay's counts
    (COUNTED: the estimated cycles and the estimated memory time per transaction) of A's side
    `a` and B's `b` (gate.count_side's), each three-way as a sequential decision whose interval
    is a point: slower where either is slower beyond +threshold, faster where either is faster
    beyond -threshold and neither slower, equivalent where both are within; undecided where one
    is slower and the other faster (the two costs part; the text says which). The count a side
    lacks (a count older than the memory time) is left out. None when a metric is forced."""
    if choice.setting != AUTO:
        return None
    costs = [c for c in COUNTED if c.metric in a and c.metric in b]
    changes = {c.name: b[c.metric] / a[c.metric] - 1.0 for c in costs}
    each = {name: "slower" if change > threshold else "faster" if change < -threshold else "equivalent"
            for name, change in changes.items()}
    found = set(each.values()) - {"equivalent"}
    verdict = "undecided" if len(found) == 2 else found.pop() if found else "equivalent"
    # The count the verdict is the verdict of (where they part, the slower one), the first of COUNTED of those.
    decided = next(c for c in costs if each[c.name] == ("slower" if verdict == "undecided" else verdict))
    runs = [_other_text(c, choice.noise[c.name]) for c in MEASURED if c.name in choice.noise]
    runs += [f"{BY_NAME[name].words} unavailable" for name in choice.unavailable]
    figures = ", ".join(f"{gate.BY_PER_TX_KEY[c.metric].words} {changes[c.name] * 100:+.2f}%" for c in costs)
    where = {"equivalent": "both within", "undecided": "the two part beyond"}.get(verdict, "beyond")
    text = (f"decided on the replay's counts (deterministic, noise 0; in the runs {', '.join(runs)}): {verdict}, "
            f"{figures}; {where} ±{threshold * 100:g}%")
    return {"candidate": decided.name, "metric": decided.metric, "verdict": verdict, "change": changes[decided.name],
            "changes": {c.metric: changes[c.name] for c in costs}, "threshold": threshold, "text": text}


def refusal(setting: str, unavailable: Mapping[str, str]) -> ToolError | None:
    """The error when nothing is left to decide on: a forced metric the runs lack (or, as no
    completed run lacks a cycle, an input that is no run's)."""
    if setting != AUTO and setting in unavailable:
        return ToolError(f"--decide-on {setting}: {BY_NAME[setting].words} is unavailable: {unavailable[setting]}")
    if all(c.name in unavailable for c in MEASURED):
        return ToolError("no metric to decide on: " + "; ".join(f"{BY_NAME[n].words} unavailable: {why}"
                                                               for n, why in unavailable.items()))
    return None


def choose(setting: str, noise: Mapping[str, float | None], unavailable: Mapping[str, str],
           alpha_share: float | None = None) -> Choice:
    """The rule (module docstring) over the available candidates' noise (`noise` has one entry
    for each: None when it cannot be told) and why the others are unavailable. The candidates
    judged are the forced one, or under auto every available one, at `alpha_share` of alpha
    (default: 1 / their number under auto). A ToolError when nothing can decide."""
    if setting not in SETTINGS:
        raise ValueError(f"unknown setting {setting!r}")
    refused = refusal(setting, unavailable)
    if refused is not None:
        raise refused
    available = tuple(c for c in MEASURED if c.name in noise)
    if setting != AUTO:
        return Choice(setting, BY_NAME[setting], (BY_NAME[setting],), 1.0, dict(noise), dict(unavailable))
    share = 1.0 / len(available) if alpha_share is None else alpha_share
    told = {c.name: n for c in available if (n := noise[c.name]) is not None}
    chosen = min(available, key=lambda c: told[c.name]) if len(told) == len(available) else available[0]
    return Choice(AUTO, chosen, available, share, dict(noise), dict(unavailable))


def choose_for_sets(setting: str, a: RunSet, b: RunSet) -> Choice:
    """The choice between two sets whose runs are not pairs: each candidate's noise over the
    sides' runs (set_noise)."""
    unavailable = {c.name: why for c in MEASURED if (why := unavailable_in((a, b), c)) is not None}
    noise = {c.name: set_noise(a.values(c.metric), b.values(c.metric)) for c in MEASURED if c.name not in unavailable}
    return choose(setting, noise, unavailable)


def add_option(parser: Parser, what: str, counted: str = "") -> None:
    """--decide-on, for a tool whose verdict `what` is decided on one metric; `counted` says
    where the tool counts the replay, whose counts then decide under auto."""
    count = (f"; {counted} the replay's estimated cycles and memory time per transaction, deterministic, decide "
             "under auto"
             if counted else "")
    parser.add_argument("--decide-on", choices=SETTINGS, default=AUTO,
                        help=f"the metric {what} is decided on: cycle (the mean full cycle, wall time), cpu (the "
                             "writer's CPU time per transaction, its task clock, which preemption by other processes "
                             "does not lengthen; needs the runs' counters, apiary run --counters on, the default), or "
                             "auto, the one whose noise in these runs is lowest, each then judged at alpha/2 "
                             "(Bonferroni) so that choosing after looking keeps the error at alpha; the output says "
                             f"which decided, the noise of each, and why one was unavailable{count} "
                             "(default: %(default)s)")


def check_counted(setting: str, config: Mapping[str, Any], what: str) -> None:
    """Refuses, before anything runs, `--decide-on cpu` for runs whose effective options
    (apiary's --print-config) turn the counters off."""
    if setting == CPU.name and config.get("counters") in ("off", False):
        raise ToolError(f"--decide-on cpu: {what} turn the counters off (--counters off), so the runs would not "
                        f"count {CPU.words}")


class Judge:
    """The sequential decision of an interleaved A/B on its deciding metric (module docstring):
    a sequential.Sequential for each candidate judged, each at its share of alpha and fed the
    same pairs; at every look the rule chooses among them, and the chosen one's decision is the
    A/B's. The candidates are those the first pair has (a forced one is judged alone, the
    others' pairs kept only for their noise); one a later pair lacks is dropped, and the others
    keep their share (the split stays valid, if wider than needed)."""

    def __init__(self, setting: str, threshold: float, alpha: float = sequential.ALPHA,
                 max_pairs: int | None = None, max_seconds: float | None = None,
                 clock: Callable[[], float] = time.monotonic):
        if setting not in SETTINGS:
            raise ValueError(f"unknown setting {setting!r}")
        self.setting = setting
        self.threshold, self.alpha, self.max_pairs, self.max_seconds = threshold, alpha, max_pairs, max_seconds
        self._clock = clock
        self._start = clock()
        self._seen: dict[str, sequential.Sequential] = {}   # every available candidate's pairs
        self.judges: dict[str, sequential.Sequential] = {}  # those judged: a forced one, or all under auto
        self.unavailable: dict[str, str] = {}
        self._share = 1.0

    def _make(self, share: float) -> sequential.Sequential:
        return sequential.Sequential(self.threshold, self.alpha * share, self.max_pairs, self.max_seconds,
                                     self._clock, start=self._start)

    def add(self, a: Mapping[str, float], b: Mapping[str, float], why_a: Why, why_b: Why) -> None:
        """One interleaved pair: the metrics of A's run and of B's (metrics.flatten), and why
        each lacks a metric it lacks. A ToolError when nothing is left to decide on."""
        def lacking(c: Candidate) -> str | None:
            return why_a(c.metric) if not has(a, c) else why_b(c.metric) if not has(b, c) else None

        if not self._seen and not self.unavailable:   # the first pair: what can be judged
            self.unavailable = {c.name: why for c in MEASURED if (why := lacking(c)) is not None}
            judged = [c.name for c in MEASURED if c.name not in self.unavailable and self.setting in (AUTO, c.name)]
            self._share = 1.0 / len(judged) if judged else 1.0
            self._seen = {c.name: self._make(self._share if c.name in judged else 1.0)
                          for c in MEASURED if c.name not in self.unavailable}
            self.judges = {name: self._seen[name] for name in judged}
        for name in list(self._seen):
            if (why := lacking(BY_NAME[name])) is not None:
                del self._seen[name]
                self.judges.pop(name, None)
                self.unavailable[name] = why
        refused = refusal(self.setting, self.unavailable) if not self.judges else None
        if refused is not None:
            raise refused
        for name, seen in self._seen.items():
            seen.add(a[BY_NAME[name].metric], b[BY_NAME[name].metric])

    def add_reports(self, a: Mapping[str, Any], b: Mapping[str, Any], names: tuple[str, str]) -> None:
        """One interleaved pair as the runs' reports, each named (`a run-003.json`) in the reason
        it lacks a metric."""
        def why(report: Mapping[str, Any], name: str) -> Why:
            return lambda metric: f"{name}: {missing_reason(report, metric)}"

        self.add(metrics.flatten(dict(a)), metrics.flatten(dict(b)), why(a, names[0]), why(b, names[1]))

    def choice(self) -> Choice:
        """The rule at this look: the candidate whose pairs' log-ratios spread least."""
        if not self.judges:   # no pair yet: the forced metric, else the cycle
            name = CYCLE.name if self.setting == AUTO else self.setting
            return choose(self.setting, {name: None}, {}, 1.0)
        return choose(self.setting, {name: seen.spread for name, seen in self._seen.items()}, self.unavailable,
                      self._share)

    def _chosen(self) -> sequential.Sequential:
        return self.judges.get(self.choice().chosen.name) or self._make(self._share)

    @property
    def pairs(self) -> int:
        return self._chosen().pairs

    def decision(self) -> sequential.Decision:
        return self._chosen().decision()

    @property
    def decided(self) -> bool:
        """The chosen candidate's verdict is settled, or the budget is spent."""
        return self._chosen().decided

    def describe(self) -> str:
        """One line: the chosen candidate's decision (sequential.describe) and its name."""
        chosen = self.choice().chosen
        return f"{sequential.describe(self.decision(), chosen.metric)} on {chosen.words}"

    def to_dict(self) -> dict[str, Any]:
        """The chosen candidate's decision as Sequential.to_dict gives it, with the metric, the
        choice, and every judged candidate's own decision."""
        choice = self.choice()
        return {**self._chosen().to_dict(), "metric": choice.chosen.metric, "decided_on": choice.to_dict(),
                "candidates": {name: {"metric": BY_NAME[name].metric, **judge.to_dict()}
                               for name, judge in self.judges.items()}}
