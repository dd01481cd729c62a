"""A comparison of two sets of runs, B against A, metric by metric: the model behind the compare
command, multirun's A/B and report-html's A/B page.

For every metric both sides have: the means, the change of B against A in percent, its 95%
confidence interval, the two-sided Mann–Whitney U p-value, and a verdict. A change is
significant when p < alpha and the change is at least min_effect_pct percent; a significant
change is called faster/slower (or better/worse, fewer/more, smaller/larger) when the metric
has a better direction (metrics.DIRECTIONS), else higher/lower. With a single run on a side
there is no test: the change is shown and nothing is significant.

The gate's metrics are the question the comparison answers, tested at alpha as they are: by
default the deciding metric (deciding.py: the mean cycle or the writer's CPU time per
transaction, whichever is quieter in these runs under `--decide-on auto`, then tested at
alpha/2; or the one forced), unless `--fail-on` names others. Every other metric joins one
family whose p-values are adjusted together (stats.adjust_p_values, `--correction`), so that
forty unchanged counters do not yield a "better" or "worse" by chance; the adjusted p is
compared with alpha. The default is Benjamini–Hochberg: when nothing
changed (an A/A) it calls anything in at most alpha of comparisons, as Holm does, and when a
change moves many metrics together (the cycle, the throughput, the writer's share) it still
calls them with five runs a side, where Holm, multiplying the smallest p by the family's size,
could call none. The family's pooled
latency percentiles, which have an interval and no p-value, take a Bonferroni interval
(confidence 1 − alpha/m, m the family's size) instead.

Runs from several machines (multirun --cluster) are compared machine by machine: the change,
its interval and the p-value are stratified by machine (stats.compare), and the table shows
the spread of the runs within a machine beside the spread between the machines' means.

Transaction latency (reports of schema_version 2) is compared by its tail: the p99 of
inclusion and of end-to-end latency, each side's runs' histograms merged (latency.py). The
runs are the unit of resampling: a bootstrap over runs gives the interval of
p99(B) / p99(A) − 1, and the change is significant when the interval excludes 0 (and is at
least min_effect_pct); there is no p-value.

Comparison.to_dict is comparison.json's content (kinds.COMPARISON: its schema, its reader).

Floor: results. Thread safety: none needed; a Comparison is built and read by one thread.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import deciding, gate, kinds, latency, metrics, profiles, sequential, stats
from .common import (
    EXIT_FAILED,
    EXIT_OK,
    ToolError,
    fmt_metric,
    fmt_number,
    fmt_pct,
    markdown_table,
)
from .reports import Run, RunSet, load_set

DEFAULT_ALPHA = 0.05
DEFAULT_MIN_EFFECT_PCT = 1.0
DEFAULT_CORRECTION = "bh"
# Options that always differ between two sets and say nothing about what was compared.
IGNORED_CONFIG = frozenset({"report", "name", "progress", "config_file", "dump-transactions", "dump-blocks"})
# The pooled latency percentiles compared, with their quantile: the tail a node developer
# watches, of the wait for a block and of the whole way from the schedule.
LATENCY_METRICS = (("latency.inclusion.p99_us", "inclusion", 0.99),
                   ("latency.end_to_end.p99_us", "end_to_end", 0.99))


@dataclass
class MetricComparison:
    name: str
    change: stats.Change
    verdict: str
    significant: bool
    regression: bool
    improvement: bool
    statistic: str = "mean"   # what mean_a and mean_b hold: the mean over runs, or "pooled p99"
    # In the family of metrics tested together (not the gate's), with its adjusted p-value.
    in_family: bool = False
    p_adjusted: float | None = None

    def to_dict(self) -> dict[str, Any]:
        d = {"metric": self.name, "statistic": self.statistic, "verdict": self.verdict,
             "significant": self.significant, "regression": self.regression, "improvement": self.improvement,
             "in_family": self.in_family, "p_adjusted": self.p_adjusted}
        direction = metrics.direction(self.name)
        d["better"] = None if direction is None else ("lower" if direction.better < 0 else "higher")
        d.update(self.change.to_dict())
        return d


def judge(name: str, change: stats.Change, alpha: float, min_effect_pct: float,
          p_adjusted: float | None = None) -> MetricComparison:
    """The verdict for one metric: significance first (of p_adjusted when the metric is in the
    family, else of its own p), then which way it went."""
    if change.p_value is None:
        return MetricComparison(name, change, f"no test (n={min(change.n_a, change.n_b)})", False, False, False)
    big_enough = change.change_pct is None or abs(change.change_pct) >= min_effect_pct
    p = change.p_value if p_adjusted is None else p_adjusted
    if p >= alpha or not big_enough or change.mean_a == change.mean_b:
        return MetricComparison(name, change, "no significant change", False, False, False)
    went_up = change.mean_b > change.mean_a
    direction = metrics.direction(name)
    if direction is None:
        return MetricComparison(name, change, "higher" if went_up else "lower", True, False, False)
    improved = went_up == (direction.better > 0)
    word = direction.better_word if improved else direction.worse_word
    return MetricComparison(name, change, word, True, not improved, improved)


def judge_interval(name: str, change: stats.Change, min_effect_pct: float) -> MetricComparison:
    """The verdict for a pooled percentile, which has an interval but no test: significant when
    the 95% interval of the change excludes 0 and the change is at least min_effect_pct."""
    statistic = "pooled " + name.rsplit(".", 1)[-1].removesuffix("_us")
    if change.ci_low_pct is None or change.ci_high_pct is None or change.change_pct is None:
        why = f"no test (n={min(change.n_a, change.n_b)})" if min(change.n_a, change.n_b) < 2 else \
            "no significant change"
        return MetricComparison(name, change, why, False, False, False, statistic)
    if change.ci_low_pct <= 0.0 <= change.ci_high_pct or abs(change.change_pct) < min_effect_pct:
        return MetricComparison(name, change, "no significant change", False, False, False, statistic)
    went_up = change.change_pct > 0
    direction = metrics.direction(name)
    if direction is None:
        return MetricComparison(name, change, "higher" if went_up else "lower", True, False, False, statistic)
    improved = went_up == (direction.better > 0)
    word = direction.better_word if improved else direction.worse_word
    return MetricComparison(name, change, word, True, not improved, improved, statistic)


def latency_compared(a: RunSet, b: RunSet) -> bool:
    """Whether both sides have latency histograms, so that LATENCY_METRICS are compared."""
    return bool(a.latency_runs()) and bool(b.latency_runs())


def compare_latency(a: RunSet, b: RunSet, min_effect_pct: float,
                    confidence_of: dict[str, float] | None = None) -> list[MetricComparison]:
    """The pooled latency percentiles of both sets, where both have transactions in the stage,
    each interval at its confidence in confidence_of (default stats.CONFIDENCE)."""
    runs_a, runs_b = a.latency_runs(), b.latency_runs()
    if runs_a and runs_b:
        latency.common_axis(runs_a + runs_b, f"{a.label} and {b.label}")
    out = []
    for name, stage, q in LATENCY_METRICS:
        change = latency.percentile_change(runs_a, runs_b, stage, q,
                                           (confidence_of or {}).get(name, stats.CONFIDENCE))
        if change is not None:
            out.append(judge_interval(name, change, min_effect_pct))
    return out


@dataclass
class Family:
    """The metrics tested together (all but the gate's) and how their p-values were adjusted."""
    method: str
    size: int     # m: the family's tests, p-values and latency intervals

    def to_dict(self) -> dict[str, Any]:
        return {"method": self.method, "family_size": self.size, "text": self.text()}

    def text(self) -> str:
        if self.method == "none" or self.size == 0:
            return "the other metrics each tested at alpha on their own, not adjusted for being many"
        return (f"the other {self.size} metrics tested as one family, p adjusted by "
                f"{stats.MULTIPLICITY_METHODS[self.method]}; their latency intervals at 1 − alpha/{self.size}")


def compare_sets(a: RunSet, b: RunSet, alpha: float = DEFAULT_ALPHA,
                 min_effect_pct: float = DEFAULT_MIN_EFFECT_PCT,
                 ci_method: str = "bootstrap", gate: Sequence[str] = (metrics.CYCLE,),
                 correction: str = DEFAULT_CORRECTION,
                 gate_alpha: float | None = None) -> tuple[list[MetricComparison], Family]:
    """Every metric both sides have, judged: the gate's at gate_alpha (default alpha), the
    others as one family at alpha (module docstring)."""
    common = [n for n in a.metric_names() if n in set(b.metric_names())]
    changes = {name: stats.compare(a.values(name), b.values(name), ci_method=ci_method,
                                   hosts_a=a.hosts(name), hosts_b=b.hosts(name)) for name in common}
    tested = [n for n, c in changes.items() if n not in gate and c.p_value is not None]
    family_latency = [name for name, _, _ in LATENCY_METRICS if name not in gate] if latency_compared(a, b) else []
    family = Family(correction, len(tested) + len(family_latency))
    # The latency intervals count in the family's size: as p-values of 1, which are never called
    # and make every other adjusted p as large as a family of that size gives.
    raw = [p for n in tested if (p := changes[n].p_value) is not None] + [1.0] * len(family_latency)
    adjusted = dict(zip(tested, stats.adjust_p_values(raw, correction)[:len(tested)], strict=True))
    out = {}
    for name, change in changes.items():
        out[name] = judge(name, change, alpha if name not in gate or gate_alpha is None else gate_alpha,
                          min_effect_pct, adjusted.get(name))
        out[name].in_family = name not in gate
        out[name].p_adjusted = adjusted.get(name)
    bonferroni = 1.0 - alpha / family.size if correction != "none" and family.size else stats.CONFIDENCE
    for row in compare_latency(a, b, min_effect_pct, {name: bonferroni for name in family_latency}):
        row.in_family = row.name not in gate
        out[row.name] = row
    return [out[name] for name in metrics.ordered(out)], family


def config_differences(a: RunSet, b: RunSet) -> dict[str, tuple[Any, Any]]:
    """The options that differ between the two sides: what the comparison is about."""
    keys = sorted((set(a.config) | set(b.config)) - IGNORED_CONFIG)
    return {k: (a.config.get(k), b.config.get(k)) for k in keys if a.config.get(k) != b.config.get(k)}


@dataclass
class Comparison:
    a: RunSet
    b: RunSet
    rows: list[MetricComparison]
    alpha: float
    min_effect_pct: float
    ci_method: str
    gate: list[str]
    family: Family
    # The deciding metric (deciding.py) and the alpha the gate is tested at: the decided one's
    # share of alpha when it is the gate (`gate_decided`, no --fail-on), else alpha.
    decision: deciding.Choice
    gate_alpha: float
    gate_decided: bool = True
    profile: profiles.ProfileComparison | None = None   # with --profile
    # The sequential decision on the deciding metric of paired runs (deciding.Judge.to_dict), or
    # why there is none.
    sequential: dict[str, Any] | None = None
    sequential_note: str | None = None

    @property
    def by_name(self) -> dict[str, MetricComparison]:
        return {r.name: r for r in self.rows}

    @property
    def regressions(self) -> list[MetricComparison]:
        by_name = self.by_name
        return [by_name[g] for g in self.gate if by_name[g].regression]

    @property
    def exit_code(self) -> int:
        return EXIT_FAILED if self.regressions else EXIT_OK

    def notes(self) -> list[str]:
        out = []
        if min(self.a.n, self.b.n) < 2:
            out.append(f"{self.a.label} has {self.a.n} run(s) and {self.b.label} {self.b.n}: with a single "
                       "run on a side there is no p-value and no confidence interval, only the change; "
                       "nothing can be significant, so the gate cannot fail. Use multirun for a test.")
        else:
            gate = self.by_name[self.gate[0]].change if self.gate else None
            # A stratified gate has its own smallest p; the note is about the pooled test's.
            floor = stats.min_p_value(self.a.n, self.b.n)
            if not (gate is not None and gate.per_machine) and floor >= self.gate_alpha:
                out.append(f"with {self.a.n} against {self.b.n} runs the smallest possible Mann–Whitney p-value "
                           f"is {floor:.3f}, not below the gate's alpha {self.gate_alpha:g}: no change can be "
                           "significant. Use at least 5 runs a side (more is better).")
        for side in (self.a, self.b):
            for s in side.skipped:
                out.append(f"{side.label}: skipped {s['path']} ({s['reason']})")
            for key, values in side.config_differences().items():
                out.append(f"{side.label}: the runs differ in {key}: {values}")
        out += self.family_notes()
        out += self.machine_notes()
        out += self.latency_notes()
        return out

    def family_notes(self) -> list[str]:
        """When Holm's adjustment leaves no metric of the family a chance with these many runs."""
        if self.family.method != "holm" or self.family.size < 2 or min(self.a.n, self.b.n) < 2:
            return []
        floor = stats.min_p_value(self.a.n, self.b.n) * self.family.size
        if floor < self.alpha:
            return []
        return [f"with {self.a.n} against {self.b.n} runs and {self.family.size} metrics in the family, Holm's "
                f"smallest adjusted p is {min(floor, 1.0):.3f}, not below alpha {self.alpha}: no metric beyond the "
                "gate can be significant. Use more runs, or --correction bh."]

    def machine_notes(self) -> list[str]:
        machines_a, machines_b = set(self.a.machines()), set(self.b.machines())
        both = sorted(machines_a & machines_b)
        out = []
        if len(both) >= 2:
            out.append(f"runs on {len(both)} machines ({', '.join(both)}): each machine's B runs are compared with "
                       "its own A runs; " + STRATIFIED_METHOD)
        one_side = sorted(machines_a ^ machines_b)
        if one_side and both:
            out.append(f"left out of the comparison, having run only one side: {', '.join(one_side)}")
        return out

    def latency_notes(self) -> list[str]:
        with_latency = {side.label: len(side.latency_runs()) for side in (self.a, self.b)}
        if not any(with_latency.values()):
            return []
        if not all(with_latency.values()):
            has = next(label for label, n in with_latency.items() if n)
            return [f"only {has}'s reports have latency histograms (schema_version 2): latency is not compared"]
        return [f"{side.label}: latency from {with_latency[side.label]} of {side.n} runs"
                for side in (self.a, self.b) if with_latency[side.label] != side.n]

    def to_dict(self) -> dict[str, Any]:
        def side(rs: RunSet) -> dict[str, Any]:
            return {"label": rs.label, "n": rs.n, "sources": rs.sources, "skipped": rs.skipped,
                    "commit": rs.context.get("commit"), "name": rs.config.get("name")}
        return kinds.COMPARISON.stamp({
            "a": side(self.a), "b": side(self.b),
            "method": method_text(self.ci_method),
            "latency_method": LATENCY_METHOD,
            "alpha": self.alpha, "min_effect_pct": self.min_effect_pct, "ci_method": self.ci_method,
            "multiplicity": self.family.to_dict(),
            "config_differences": {k: list(v) for k, v in config_differences(self.a, self.b).items()},
            "gate": {"metrics": self.gate, "failed": bool(self.regressions),
                     "regressions": [r.name for r in self.regressions], "alpha": self.gate_alpha,
                     "decided": self.gate_decided},
            "decision": self.decision.to_dict(),
            "notes": self.notes(),
            "metrics": [r.to_dict() for r in self.rows],
            **({"profile": self.profile.to_dict()} if self.profile else {}),
            **({"sequential": self.sequential} if self.sequential else {}),
        })


def method_text(ci_method: str) -> str:
    ci = ("a bootstrap of mean(B)/mean(A) (BCa, 10,000 resamples, each set resampled on its own)"
          if ci_method == "bootstrap" else
          "Welch's t interval of mean(B) − mean(A), divided by mean(A)")
    return (f"change = mean(B) / mean(A) − 1; 95% CI: {ci}; p: Mann–Whitney U, two-sided")


STRATIFIED_METHOD = ("change = the mean over machines of each machine's mean(B) / mean(A) − 1; 95% CI: a "
                     "bootstrap resampling every machine's A and B runs on their own; p: a permutation test "
                     "exchanging A and B only within a machine; pooled latency percentiles are not stratified")

LATENCY_METHOD = ("pooled latency percentiles: each side's runs' histograms merged; change = p(B) / p(A) − 1; "
                  "95% CI: a bootstrap over runs (each side's runs resampled with replacement and merged, "
                  f"BCa, {latency.CHANGE_RESAMPLES:,} resamples); no p-value: significant when the interval "
                  "excludes 0")


ALIGN = "lrrrrrrrrl"
HEADER = ("metric", "A", "B", "change", "95% CI", "p", "p adjusted", "sd within machines", "sd between machines",
          "verdict")


def _ci_text(c: stats.Change) -> str:
    if c.ci_low_pct is None:
        return "–"
    return f"{fmt_pct(c.ci_low_pct)} … {fmt_pct(c.ci_high_pct)}"


def _p_text(p: float | None) -> str:
    if p is None:
        return "–"
    return f"{p:.3f}" if p >= 0.001 else f"{p:.1e}"


def _row(r: MetricComparison) -> list[str]:
    c = r.change
    verdict = f"**{r.verdict}**" if r.significant else r.verdict
    return [metrics.label(r.name), fmt_metric(r.name, c.mean_a), fmt_metric(r.name, c.mean_b),
            fmt_pct(c.change_pct), _ci_text(c), _p_text(c.p_value), _p_text(r.p_adjusted),
            fmt_pct(c.within_sd_pct, signed=False),
            fmt_pct(c.between_sd_pct, signed=False), verdict]


def header(cmp: Comparison) -> list[str]:
    return [HEADER[0], f"A: {cmp.a.label}", f"B: {cmp.b.label}", *HEADER[3:]]


def unavailable_counters(rs: RunSet) -> dict[str, str]:
    """The events a side's runs could not count (no hardware counters), with apiary's reason."""
    for run in rs.runs:
        events = ((run.report or {}).get("counters") or {}).get("events") or {}
        if events:
            return {name: e.get("reason") or "not available" for name, e in events.items() if not e.get("available")}
    return {}


def counters_markdown(cmp: Comparison) -> list[str]:
    """Each thread's counts per transaction and its instructions per cycle (`apiary run
    --counters on`), when both sides have them."""
    by_name = cmp.by_name
    names = metrics.per_transaction_counters(by_name)
    if not names:
        return []
    rows = []
    for name in names:
        r = by_name[name]
        thread, _, event = metrics.counter_parts(name) or ("", "", name)
        rows.append([thread, event, fmt_metric(name, r.change.mean_a), fmt_metric(name, r.change.mean_b),
                     fmt_pct(r.change.change_pct), _ci_text(r.change), _p_text(r.change.p_value),
                     _p_text(r.p_adjusted), f"**{r.verdict}**" if r.significant else r.verdict])
    lines = ["Counters per transaction (`apiary run --counters on`; each thread's own):", "",
             markdown_table(["thread", "counter", f"A: {cmp.a.label}", f"B: {cmp.b.label}", "change", "95% CI", "p",
                             "p adjusted", "verdict"], rows, "llrrrrrrl")]
    missing = {**unavailable_counters(cmp.a), **unavailable_counters(cmp.b)}
    if missing:
        reasons = sorted(set(missing.values()))
        lines += [f"Not counted: {', '.join(sorted(missing))} ({'; '.join(reasons)}).", ""]
    return lines


def machines_markdown(cmp: Comparison) -> list[str]:
    """Each machine's runs and change in the gate metrics, when the runs came from several."""
    lines = []
    for name in cmp.gate:
        c = cmp.by_name[name].change
        if not c.per_machine:
            continue
        rows = [[m["machine"], str(m["n_a"]), str(m["n_b"]), fmt_metric(name, m["mean_a"]),
                 fmt_metric(name, m["mean_b"]), fmt_pct(m["change_pct"])] for m in c.per_machine]
        lines += [f"Per machine, {metrics.label(name)}:", "",
                  markdown_table(["machine", "A runs", "B runs", f"A: {cmp.a.label}", f"B: {cmp.b.label}", "change"],
                                 rows)]
    return lines


def to_markdown(cmp: Comparison, show_all: bool = False, heading: str = "##") -> str:
    a, b = cmp.a, cmp.b
    lines = [f"{heading} Comparison: {b.label} (B, {b.n} runs) against {a.label} (A, {a.n} runs)", ""]
    for tag, rs in (("A", a), ("B", b)):
        ctx = rs.context
        lines.append(f"- {tag} = {rs.label}: {rs.describe_sources()}; config `{rs.config.get('name', '?')}`, "
                     f"commit {ctx.get('commit', '?')}, {ctx.get('build_type', '?')} build")
    diffs = config_differences(a, b)
    if diffs:
        changed = ", ".join(f"`{k}` {va} → {vb}" for k, (va, vb) in diffs.items())
        lines.append(f"- options that differ: {changed}")
    lines.append(f"- {method_text(cmp.ci_method)}; significant when p < {cmp.alpha} and the change is at "
                 f"least {cmp.min_effect_pct}%: the gate's p as it is (below {cmp.gate_alpha:g}); {cmp.family.text()}")
    lines.append(f"- {decision_text(cmp)}")
    if any(r.statistic != "mean" for r in cmp.rows):
        lines.append(f"- {LATENCY_METHOD} and the change is at least {cmp.min_effect_pct}%")
    lines.append("")
    columns = header(cmp)
    key = [r for r in cmp.rows if r.name in metrics.KEY_METRICS]
    counters = set(metrics.per_transaction_counters(cmp.by_name))   # in a block of their own
    rest = [r for r in cmp.rows if r.name not in metrics.KEY_METRICS and r.name not in counters]
    lines.append(markdown_table(columns, [_row(r) for r in key], ALIGN))
    lines += counters_markdown(cmp)
    shown_rest = rest if show_all else [r for r in rest if r.significant]
    if shown_rest:
        title = "All other metrics" if show_all else "Other metrics with a significant change"
        lines += [f"{title}:", "", markdown_table(columns, [_row(r) for r in shown_rest], ALIGN)]
    elif not show_all and min(a.n, b.n) < 2:
        lines += [f"{len(rest)} more metrics compared, none testable with a single run (`--all` lists them).", ""]
    elif not show_all:
        lines += [f"No other metric changed significantly ({len(rest)} more compared; `--all` lists them).", ""]
    lines += machines_markdown(cmp)
    lines += sequential_markdown(cmp)
    if cmp.profile is not None:
        lines += cmp.profile.markdown()
    for note in cmp.notes():
        lines.append(f"> {note}  ")
    if cmp.notes():
        lines.append("")
    gate_rows = [cmp.by_name[g] for g in cmp.gate]
    status = "FAIL" if cmp.regressions else "pass"
    detail = "; ".join(f"`{r.name}` {r.verdict} ({fmt_pct(r.change.change_pct)})" for r in gate_rows)
    lines.append(f"Gate: **{status}**: {detail}")
    return "\n".join(lines) + "\n"


def decision_text(cmp: Comparison) -> str:
    """The deciding metric's line: which metric decided and why, and what it decided."""
    text = cmp.decision.text()
    text = text[0].upper() + text[1:]
    if cmp.gate_decided:
        return f"{text}. It is the gate, tested at α {cmp.gate_alpha:g}."
    return f"{text}: the sequential decision's; the gate is --fail-on's, tested at α {cmp.gate_alpha:g}."


def sequential_markdown(cmp: Comparison) -> list[str]:
    """The sequential decision on the deciding metric, or why the runs have none."""
    d = cmp.sequential
    if d is None:
        return [f"Sequential decision: none ({cmp.sequential_note}).", ""] if cmp.sequential_note else []
    decision = sequential.Decision(**{k: d[k] for k in sequential.Decision.__dataclass_fields__})
    metric = d.get("metric", metrics.CYCLE)
    return [f"Sequential decision on {metrics.label(metric)}, B against A (α={d['alpha']:g}, "
            f"threshold ±{d['threshold'] * 100:g} %): **{sequential.describe(decision, metric)}**; "
            f"{d['method']}.", ""]


_RUN_NUMBER = re.compile(r"run-([0-9]+)")


def _round_of(run: Any) -> int | None:
    """The round of a run in an interleaved plan: multirun's index, else the NNN of run-NNN."""
    index = run.info.get("index")
    m = _RUN_NUMBER.search(Path(run.path or "").name)
    return index if isinstance(index, int) else int(m.group(1)) if m else None


def paired_runs(a: RunSet, b: RunSet) -> tuple[list[tuple[Run, Run]], str | None]:
    """The pairs of an interleaved A/B (multirun's A and B runs of one round, in round order),
    or no pairs and why: the sides must have runs of the same rounds on one machine, each
    round started after the one before."""
    rounds = [{_round_of(run): run for run in side.runs} for side in (a, b)]
    if any(None in r for r in rounds) or len(rounds[0]) != a.n or len(rounds[1]) != b.n:
        return [], "the runs are not numbered run-NNN"
    if set(rounds[0]) != set(rounds[1]):
        return [], f"the sides are not paired ({a.n} and {b.n} runs, of different rounds)"
    if len(set(a.machines()) | set(b.machines())) > 1:
        return [], "the runs are from several machines"
    order = sorted(i for i in rounds[0] if i is not None)
    starts = [[str(r[i].info.get("start_time") or "") for r in rounds] for i in order]
    if all(all(s) for s in starts) and any(max(x) > min(y) for x, y in zip(starts, starts[1:], strict=False)):
        return [], "the runs are not interleaved (a round started before the one before it ended)"
    return [(rounds[0][i], rounds[1][i]) for i in order], None


def sequential_of(a: RunSet, b: RunSet, setting: str, threshold_pct: float,
                  alpha: float) -> tuple[deciding.Judge | None, str | None]:
    """The sequential judge of the sides' pairs (paired_runs) on their deciding metric, the
    interval tuned for the budget multirun --adaptive has by default; or why there is none."""
    pairs, why = paired_runs(a, b)
    if why is not None:
        return None, why
    judge = deciding.Judge(setting, threshold_pct / 100.0, alpha)
    for run_a, run_b in pairs:
        judge.add(run_a.metrics, run_b.metrics, deciding.why_lacking(a.label, run_a),
                  deciding.why_lacking(b.label, run_b))
    return judge, None


def decide(a: RunSet, b: RunSet, setting: str, threshold_pct: float,
           alpha: float) -> tuple[deciding.Choice, dict[str, Any] | None, str | None]:
    """The deciding metric of the sides (deciding.py), by the noise of their pairs when they are
    an interleaved A/B's, else of their runs; the sequential decision on it (None with fewer
    than two runs a side, or when the runs are not pairs: the third item says why)."""
    if min(a.n, b.n) < 2:
        return deciding.choose_for_sets(setting, a, b), None, None
    judge, why = sequential_of(a, b, setting, threshold_pct, alpha)
    if judge is None:
        return deciding.choose_for_sets(setting, a, b), None, why
    return judge.choice(), judge.to_dict(), None


def build(a_paths: Sequence[str], b_paths: Sequence[str], labels: Sequence[str] | None = None,
          alpha: float = DEFAULT_ALPHA, min_effect_pct: float = DEFAULT_MIN_EFFECT_PCT,
          ci_method: str = "bootstrap", gate: Sequence[str] | None = None,
          threshold_pct: float = DEFAULT_MIN_EFFECT_PCT, include_invalid: bool = False,
          correction: str = DEFAULT_CORRECTION, decide_on: str = deciding.AUTO) -> Comparison:
    if not labels:
        labels = [_default_label(a_paths), _default_label(b_paths)]
        if labels[0] == labels[1]:  # run-001.json against run-001.json: say which directory
            labels = [_default_label(a_paths, parent=True), _default_label(b_paths, parent=True)]
    a = load_set(a_paths, labels[0], include_invalid)
    b = load_set(b_paths, labels[1], include_invalid)
    return from_sets(a, b, alpha, min_effect_pct, ci_method, gate, threshold_pct, correction, decide_on)


def from_sets(a: RunSet, b: RunSet, alpha: float = DEFAULT_ALPHA,
              min_effect_pct: float = DEFAULT_MIN_EFFECT_PCT, ci_method: str = "bootstrap",
              gate: Sequence[str] | None = None, threshold_pct: float = DEFAULT_MIN_EFFECT_PCT,
              correction: str = DEFAULT_CORRECTION, decide_on: str = deciding.AUTO) -> Comparison:
    """B against A: every metric judged (compare_sets); the gate is `gate`, tested at alpha, or
    without one the deciding metric (decide), tested at its share of alpha."""
    choice, seq, note = decide(a, b, decide_on, threshold_pct, alpha)
    decided = gate is None
    gate = [choice.chosen.metric] if gate is None else list(gate)
    gate_alpha = alpha * choice.alpha_share if decided else alpha
    rows, family = compare_sets(a, b, alpha, min_effect_pct, ci_method, gate, correction, gate_alpha)
    names = {r.name for r in rows}
    for g in gate:
        if g not in names:
            raise ToolError(f"--fail-on {g}: not a metric both sides have (e.g. aggregates.cycle_us.avg, "
                            "us_per_tx, throughput.tx_per_s)")
        if metrics.direction(g) is None:
            raise ToolError(f"--fail-on {g}: this metric has no better direction, so it cannot regress")
    cmp = Comparison(a, b, rows, alpha, min_effect_pct, ci_method, gate, family, choice, gate_alpha, decided)
    cmp.sequential, cmp.sequential_note = seq, note
    return cmp


def counts_section(counted: dict[str, dict[str, Any]], choice: deciding.Choice, threshold_pct: float,
                   data: dict[str, Any]) -> str:
    """Each side's build counted as the CI gate counts it (`counted`: label to gate.count_side's
    side, A first): the comparison's section in Markdown, its instructions, estimated cycles and
    estimated memory time per transaction (gate.GATE_COSTS) and their changes as
    data["instructions"]; under --decide-on auto (`choice`) the decision on the counts
    (deciding.counted, noise 0) as data["decision"]["count"]."""
    (a, sa), (b, sb) = counted.items()
    changes = {c.per_tx_key: (sb[c.per_tx_key] / sa[c.per_tx_key] - 1) * 100 for c in gate.GATE_COSTS}
    data["instructions"] = {"sides": counted, "change_pct": changes["ir_per_tx"],
                            "est_change_pct": changes["est_per_tx"], "mem_change_pct": changes["mem_ns_per_tx"]}
    rows = [[label, f"`{side['binary']}`", *(fmt_number(side[c.per_tx_key]) for c in gate.GATE_COSTS),
             fmt_number(side["transactions"])] for label, side in counted.items()]
    decision = deciding.counted(choice, sa, sb, threshold_pct / 100.0)
    if decision is not None:
        data.setdefault("decision", {})["count"] = decision
    return "\n".join(["", "Instructions, estimated cycles and estimated memory time per transaction (the seeded replay "
                       "under callgrind with its cache simulation and its pages', as the CI gate counts them; "
                       f"deterministic): {b} against {a} "
                       + ", ".join(f"{fmt_pct(changes[c.per_tx_key])} {c.words}" for c in gate.GATE_COSTS), "",
                       markdown_table(["side", "binary", *(f"{c.words} per transaction" for c in gate.GATE_COSTS),
                                       "transactions"], rows, "llrrrr"),
                       *_count_decision(decision)])


def _count_decision(decision: dict[str, Any] | None) -> list[str]:
    """The count's decision line: where the two counts part, the runs' decision above stands."""
    if decision is None:
        return []
    if decision["verdict"] == "undecided":
        return [f"Decision: not by the count, {decision['text']}; the runs' decision above stands", ""]
    return [f"Decision: **{decision['verdict']}**, {decision['text']} (--decide-on auto prefers the count where there "
            "is one; the gate and the sequential decision above are the runs')", ""]


def add_correction_option(p: Any) -> None:
    """--correction, for the commands that print a comparison's table."""
    p.add_argument("--correction", choices=tuple(stats.MULTIPLICITY_METHODS), default=DEFAULT_CORRECTION,
                   help="how the p-values of the metrics beyond the gate's are adjusted for being tested together: "
                        "holm keeps the chance of any false call among them at --alpha, bh (Benjamini-Hochberg) "
                        "the expected share of false calls among the calls, none tests each on its own "
                        "(default: %(default)s)")


def _default_label(paths: Sequence[str], parent: bool = False) -> str:
    p = Path(paths[0])
    name = p.name if p.is_dir() else p.stem
    if name == "aggregate":
        p = p.parent
        name = p.name
    if parent and p.parent.name:
        name = f"{p.parent.name}/{name}"
    return name or str(p)
