"""The optimization ladder's steps and its results as people read them: Hive's six cycle
optimizations and the seventh (Step, START, STEPS: each step's options and Hive's published
cycle), ladder.md's tables (to_markdown, with each step's verdict) and ladder.png (plot). The
ladder command (commands/ladder.py) runs the steps; report-html shows a ladder.json with these;
its schema is kinds.LADDER's.

Floor: results. Thread safety: constants and pure functions; plot draws with matplotlib, which
is not thread-safe.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from . import gate, metrics
from .common import markdown_table
from .outputs import write_figure


@dataclass(frozen=True)
class Step:
    name: str
    what: str
    args: tuple[str, ...]  # this step's options; each step keeps the ones before it
    hive_ms: float | None  # Hive's published cycle after the step (none for the step it has not taken)
START = Step("start", "all six optimizations off",
             ("--keep-alive", "off", "--dedup", "unified", "--submit", "async", "--queue", "bounded",
              "--custom-ops", "state", "--pool-objects", "off", "--pool-undo", "off", "--rc", "state",
              "--reuse-pending", "off"), 750)
STEPS = (
    Step("1 keep-alive", "undo containers reused (keep_alive)", ("--keep-alive", "on"), 667),
    Step("2 split dedup", "pending ids in a volatile hash set", ("--dedup", "split"), 638),
    Step("3 fire-and-forget", "fire-and-forget submission, in-flight brake instead of a bounded queue",
         ("--submit", "fire-and-forget", "--queue", "unbounded"), 412),
    Step("4 local counters", "custom-op counters in a local hash map", ("--custom-ops", "local"), 372),
    Step("5 object pool", "pool allocator for state objects", ("--pool-objects", "on"), 321),
    Step("6 undo pool", "pool allocator for undo states", ("--pool-undo", "on"), 312),
    Step("7 volatile RC", "pending RC charges in a local map, merged at the block", ("--rc", "volatile"), None),
)
# A step whose change is not significant is shown to be small when its interval lies within this.
SMALL_PCT = 2.0
BREAKDOWN = ("wait_work", "wait_lock", "transactions", "blocks", "observe", "unknown")
# A step's row: the writer's CPU time per transaction (ns) over its runs, and its change against
# the step before (metrics.WRITER_CPU; the cycle's are cycle_ms and vs_previous).
CPU_KEY = "writer_cpu_ns_per_tx"
CPU_VS_PREVIOUS = "writer_cpu_vs_previous"
# A step's decision against the step before on the replay's counts, where the replay
# runs its change and --decide-on is auto (deciding.counted).
COUNTED = "decided_by_count"
# The keys of a row that compare it with other steps, rather than give its own figures.
CHANGES = ("vs_previous", "vs_start", CPU_VS_PREVIOUS, COUNTED)


def _pct(d: dict | None) -> str:
    if not d or d.get("change_pct") is None:
        return "-"
    text = f"{d['change_pct']:+.1f}%"
    if d.get("ci_low_pct") is not None:
        text += f" [{d['ci_low_pct']:+.1f}, {d['ci_high_pct']:+.1f}]"
    return text


def verdict(d: dict | None) -> str:
    """significant; else below 2% when the change's whole interval lies within ±2%; else
    undecided (the runs cannot tell)."""
    if not d or d.get("p_value") is None:
        return "-"
    if d["significant"]:
        return "significant"
    low, high = d.get("ci_low_pct"), d.get("ci_high_pct")
    if low is not None and high is not None and -SMALL_PCT <= low and high <= SMALL_PCT:
        return f"below {SMALL_PCT:g}%"
    return "undecided"


def _sig(d: dict | None) -> str:
    if not d or d.get("p_value") is None:
        return "-"
    return f"{verdict(d)} (p={d['p_value']:.3f})"


def _instructions(rows: list[dict[str, Any]], pos: int, key: str = "ir_per_tx") -> str:
    """The replay's count per transaction (`key`: a gate cost's per_tx_key, gate.GATE_COSTS)
    of the row at `pos`, with the change from the step before when it ran."""
    ir = rows[pos].get("instructions")
    if not ir or key not in ir:
        return "-"
    before_row = rows[pos - 1].get("instructions") if pos > 0 else None
    if before_row is None or rows[pos - 1]["step"] != rows[pos]["step"] - 1 or key not in before_row:
        return f"{ir[key]:,.0f}"
    return f"{ir[key]:,.0f} ({100 * (ir[key] / before_row[key] - 1):+.1f}%)"


def _decision(r: dict[str, Any]) -> str:
    """The decision against the step before: on the replay's count where it decided, else the
    sequential one: verdict, interval, pairs, detectable, and the metric it was decided on (a
    ladder.json from before there was a choice: the cycle)."""
    counted = r.get(COUNTED)
    if counted and counted["verdict"] != "undecided":   # where the counts part, the runs decide
        figures = ", ".join(f"{100 * change:+.1f}% {gate.BY_PER_TX_KEY[key].words}" for key, change in
                            (counted.get("changes") or {"est_per_tx": counted["change"]}).items())
        return f"**{counted['verdict']}** {figures} (the replay's count, deterministic)"
    d = r.get("sequential")
    if not d:
        return "-"
    words = f"**{d['verdict']}**" if d["verdict"] != "undecided" else d["verdict"]
    on = "writer CPU" if d.get("metric") == metrics.WRITER_CPU else "cycle"
    if d.get("high") is None:   # fewer pairs than a first look needs
        return f"{words}, {d['pairs']} pairs ({on})"
    return (f"{words} [{100 * d['low']:+.1f}, {100 * d['high']:+.1f}], {d['pairs']} pairs, "
            f"±{100 * d['detectable']:.1f}% ({on})")


def _mean_ci(c: dict[str, Any] | None, scale: float = 1.0) -> str:
    """A summary's mean ± the half-width of its 95% interval, times `scale`."""
    if not c:
        return "-"
    if c.get("ci_high") is None:
        return f"{c['mean'] * scale:,.1f}"
    return f"{c['mean'] * scale:,.1f} ± {(c['ci_high'] - c['mean']) * scale:,.1f}"


def _apart(r: dict[str, Any]) -> str:
    """A note when the cycle and the writer's CPU time moved apart against the step before: one
    changed significantly and the other not, or both, in opposite directions."""
    cycle, cpu = r.get("vs_previous"), r.get(CPU_VS_PREVIOUS)
    if not cycle or not cpu or cycle.get("change_pct") is None or cpu.get("change_pct") is None:
        return ""
    opposite = cycle["significant"] and cpu["significant"] and cycle["change_pct"] * cpu["change_pct"] < 0
    if cycle["significant"] == cpu["significant"] and not opposite:
        return ""
    return (f"; the cycle ({cycle['change_pct']:+.1f}%) and the writer's CPU time ({cpu['change_pct']:+.1f}%) moved "
            "apart: the step changes more than the writer's own work (its waiting, the other threads' share), "
            "which --decide-on cycle judges")


def _choice(r: dict[str, Any]) -> str:
    """A step's deciding metric: the replay's count, or the runs' choice and why the count did
    not decide (a step whose options the replay does not run; counts that part)."""
    counted = r.get(COUNTED)
    if counted and counted["verdict"] != "undecided":
        return counted["text"]
    unreplayed = (r.get("instructions") or {}).get("unreplayed")
    why = f" (the replay does not run {', '.join(unreplayed)}: the runs decide)" if unreplayed else ""
    if counted:
        why = f" ({counted['text']}: the runs decide)"
    return r["sequential"]["decided_on"]["text"] + why


def _choices(rows: list[dict[str, Any]]) -> list[str]:
    """Each decided step's deciding metric: which, the noise of each, why one was unavailable,
    and whether the cycle and the writer's CPU time moved apart."""
    lines = [f"- {r['name']}: {_choice(r)}{_apart(r)}" for r in rows
             if (r.get("sequential") or {}).get("decided_on")]
    return ["The metric each step's verdict was decided on (--decide-on; docs/tools.md, \"The deciding metric\"):",
            "", *lines, ""] if lines else []


def to_markdown(rows: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    """ladder.md's tables. A ladder.json from before the sequential decisions has the fixed
    test's verdict in their place."""
    table = []
    decided = any(r.get("sequential") for r in rows)
    for pos, r in enumerate(rows):
        table.append([r["name"], _mean_ci(r.get("cycle_ms")), _pct(r.get("vs_previous")),
                      _mean_ci(r.get(CPU_KEY), 1e-3), _pct(r.get(CPU_VS_PREVIOUS)),
                      _decision(r) if decided else _sig(r.get("vs_previous")),
                      _pct(r.get("vs_start")), *(_instructions(rows, pos, c.per_tx_key) for c in gate.GATE_COSTS),
                      "-" if r["hive_ms"] is None else f"{r['hive_ms']:,.0f}"])
    threshold = meta.get("threshold_pct", SMALL_PCT)
    verdict_column = (f"verdict (anytime-valid, α={meta['alpha']}, ±{threshold:g}%): interval, pairs, detectable"
                      if decided else f"verdict (α={meta['alpha']}, or within ±{SMALL_PCT:g}%)")
    md = [f"Ladder ({meta['mode']} mode, {meta['runs']} interleaved runs a step; {meta['machine']}; "
          f"load average before {meta['load_before']}):", "",
          markdown_table(["step", "full cycle ms (mean ± 95% CI)", "vs previous [95% CI]",
                          "writer CPU µs per tx (mean ± 95% CI)", "vs previous [95% CI]", verdict_column,
                          "vs start", *(f"{c.words} per tx (replay)" for c in gate.GATE_COSTS), "Hive ms"],
                         table),
          *_choices(rows),
          "Writer-loop breakdown per step (share of the writer's time):", ""]
    brows = []
    for r in rows:
        w = r.get("writer_share")
        brows.append([r["name"]] + (["-"] * len(BREAKDOWN) if not w else
                                    [f"{100 * w.get(k, 0.0):.1f}%" for k in BREAKDOWN]))
    md.append(markdown_table(["step", "waiting for work", "waiting for locks", "transactions", "blocks", "observing",
                              "unknown"], brows))
    digests = {r["instructions"]["state_digest"] for r in rows if r.get("instructions")}
    if digests:
        md.append("Every step's replay ends in the same state digest." if len(digests) == 1 else
                  f"The steps' replays end in {len(digests)} different state digests: a switch changes the state.")
    return "\n".join(md)


def plot(rows: list[dict[str, Any]], path: Path, title: str) -> None:
    import matplotlib  # lazy for start-up time: only the figure needs it
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [r["name"] for r in rows]
    means = [r["cycle_ms"]["mean"] if r.get("cycle_ms") else 0 for r in rows]
    errs = [(r["cycle_ms"]["ci_high"] - r["cycle_ms"]["mean"]) if r.get("cycle_ms") and r["cycle_ms"]["ci_high"]
            is not None else 0 for r in rows]
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 4.8))
    x = np.arange(len(rows))
    left.bar(x, means, yerr=errs, capsize=4, color="#4c72b0")
    for xi, m in zip(x, means, strict=True):
        left.annotate(f"{m:,.0f}", (xi, m), ha="center", va="bottom", fontsize=8, xytext=(0, 3),
                      textcoords="offset points")
    left.set_xticks(x, names, rotation=30, ha="right")
    left.set_ylabel("full block cycle (ms), mean with 95% CI")
    left.set_title(title)
    left.grid(axis="y", alpha=0.3)
    bottom = np.zeros(len(rows))
    colors = ["#dddddd", "#937860", "#55a868", "#4c72b0", "#8172b2", "#c44e52"]
    for k, color in zip(BREAKDOWN, colors, strict=True):
        vals = np.array([100 * r["writer_share"].get(k, 0.0) if r.get("writer_share") else 0 for r in rows])
        right.bar(x, vals, bottom=bottom, label=k.replace("_", " "), color=color)
        bottom += vals
    right.set_xticks(x, names, rotation=30, ha="right")
    right.set_ylabel("share of the writer's time (%)")
    right.set_title("writer-loop breakdown")
    right.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    try:
        write_figure(fig, path, 110)
    finally:
        plt.close(fig)
