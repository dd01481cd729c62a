"""The scalar metrics of a report: how they are named, which come first in tables, and which
direction of change is an improvement.

A metric is a numeric leaf of the report outside `config`, `context` and `blocks` (those
describe the run or repeat the per-block data the aggregates already summarize), named by
its dotted path: `aggregates.cycle_us.avg`, `writer.unknown_share`. Lists of objects are
keyed by their `name` or `kind` field so a metric keeps its name when a list changes order
(`targets.cpu_utilization.value`, `colony.kinds.vote.count`). One metric is derived:
`us_per_tx`, the average cycle divided by the average transactions per block, the cost of
one transaction through the whole cycle and the number to compare across block sizes.

The `counters` section (`apiary run --counters on`) gives each thread's counts per block and
per transaction, and its instructions per cycle; they are named by the thread, whose place in
the report's list may change: `counters.writer.per_transaction.task_clock_ns`,
`counters.producer-0.per_block.page_faults`, `counters.writer.ipc`. A count the machine could
not take (null: no hardware counters) is no metric. The writer's CPU time per transaction and
per block (its task clock, WRITER_CPU) are key metrics beside the cycle: other processes that
take the CPU from the run lengthen the cycle but not the writer's own CPU time, so it can be
the quieter measure of the same work. The window's totals grow with the run's
length and are left out, as is the `profile` section (profiles.py compares profiles).
The `profile` section (`apiary run --profile`) is not flattened either: its top functions
are a ranking, not quantities to average, and a run without it would lack them.

The `latency` section is not flattened: a run's percentiles averaged over runs are not the
percentiles of the runs' transactions. Its histograms are merged instead (latency.py), and
the pooled percentiles are named here like metrics, `latency.<stage>.<p>_us`, so that tables
and verdicts treat them alike.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

SKIPPED_SECTIONS = frozenset({"config", "context", "blocks", "latency", "counters", "profile"})
# Numbers that identify rather than measure: averaging a block number says nothing.
IDENTIFIER_LEAVES = frozenset({"schema_version", "min_block", "max_block", "tid"})
LIST_KEYS = ("name", "kind")
# The mean full cycle: the primary metric, which the ladder and an adaptive A/B decide on.
CYCLE = "aggregates.cycle_us.avg"
# The writer thread's CPU time (perf's task clock, `apiary run --counters on`), per transaction
# and per block.
WRITER_CPU = "counters.writer.per_transaction.task_clock_ns"
WRITER_CPU_PER_BLOCK = "counters.writer.per_block.task_clock_ns"

# The metrics tables show first, in this order; the rest follow alphabetically.
KEY_METRICS = (
    CYCLE,
    "aggregates.cycle_us.median",
    "aggregates.cycle_us.p99",
    WRITER_CPU,
    WRITER_CPU_PER_BLOCK,
    "us_per_tx",
    "throughput.tx_per_s",
    "latency.inclusion.p99_us",
    "latency.end_to_end.p99_us",
    "aggregates.transactions_per_block.avg",
    "aggregates.processing_us.avg",
    "writer.wait_work_share",
    "writer.wait_lock_share",
    "writer.transactions_share",
    "writer.blocks_share",
    "writer.observe_share",
    "writer.unknown_share",
    "cpu.utilization",
    "cpu.other_processes_share",
)

SHORT_NAMES = {
    "aggregates.cycle_us.avg": "cycle avg (µs)",
    "aggregates.cycle_us.median": "cycle median (µs)",
    "aggregates.cycle_us.p99": "cycle p99 (µs)",
    WRITER_CPU: "writer CPU per transaction (ns)",
    WRITER_CPU_PER_BLOCK: "writer CPU per block (ns)",
    "us_per_tx": "µs per transaction",
    "throughput.tx_per_s": "tx/s",
    "latency.inclusion.p99_us": "inclusion p99 (µs, pooled)",
    "latency.end_to_end.p99_us": "end-to-end p99 (µs, pooled)",
    "aggregates.transactions_per_block.avg": "tx per block",
    "aggregates.processing_us.avg": "block processing avg (µs)",
    "writer.wait_work_share": "writer waiting for work",
    "writer.wait_lock_share": "writer waiting for locks",
    "writer.transactions_share": "writer processing transactions",
    "writer.blocks_share": "writer processing blocks",
    "writer.observe_share": "writer observing blocks",
    "writer.unknown_share": "writer unknown",
    "cpu.utilization": "CPU utilization",
    "cpu.other_processes_share": "CPU taken by other processes",
}


def label(name: str) -> str:
    """A reader's name for a key metric, with the dotted name for the rest."""
    short = SHORT_NAMES.get(name)
    if short is None and (parts := counter_parts(name)):
        thread, kind, event = parts
        short = f"{thread}: {event}" + ("" if kind == "ipc" else " " + kind.replace("_", " "))
    return f"{short} `{name}`" if short else f"`{name}`"


def _is_number(value: Any) -> bool:
    # bool is an int in Python, but a flag is not a measurement.
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _flatten(value: Any, prefix: str, out: dict[str, float]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            if key in IDENTIFIER_LEAVES:
                continue
            _flatten(item, f"{prefix}.{key}" if prefix else key, out)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            key = str(index)
            if isinstance(item, dict):
                key = next((str(item[k]) for k in LIST_KEYS if isinstance(item.get(k), str)), key)
            _flatten(item, f"{prefix}.{key}", out)
    elif _is_number(value):
        out[prefix] = float(value)


# ---- counters ---------------------------------------------------------------------------------

# The counters' figures that are metrics, and the events in the order apiary lists them.
COUNTER_KINDS = ("per_transaction", "per_block")
COUNTER_EVENTS = ("task_clock_ns", "context_switches", "cpu_migrations", "page_faults", "instructions", "cycles",
                  "cache_references", "cache_misses", "branch_misses", "llc_misses")
_COUNTER_NAME = re.compile(r"^counters\.([^.]+)\.(?:(per_transaction|per_block)\.([^.]+)|(ipc))$")


def _counters(section: Any, out: dict[str, float]) -> None:
    if not isinstance(section, dict) or not isinstance(section.get("threads"), list):
        return
    for thread in section["threads"]:
        name = thread.get("name") if isinstance(thread, dict) else None
        if not isinstance(name, str):
            continue
        for kind in COUNTER_KINDS:
            counts = thread.get(kind)
            for event, value in (counts.items() if isinstance(counts, dict) else ()):
                if _is_number(value):
                    out[f"counters.{name}.{kind}.{event}"] = float(value)
        if _is_number(thread.get("ipc")):
            out[f"counters.{name}.ipc"] = float(thread["ipc"])


def counter_parts(name: str) -> tuple[str, str, str] | None:
    """(thread, kind, event) of a counter metric: ("writer", "per_transaction", "cycles"), or
    (thread, "ipc", "ipc"); None for any other metric."""
    m = _COUNTER_NAME.match(name)
    if m is None:
        return None
    return (m.group(1), "ipc", "ipc") if m.group(4) else (m.group(1), m.group(2), m.group(3))


def counter_order(name: str) -> tuple:
    """The order counter tables list their rows in: the writer, the producers by number, the
    main thread, the others; within a thread the events in apiary's order, then ipc."""
    thread, _, event = counter_parts(name) or ("", "", name)
    producer = re.fullmatch(r"producer-([0-9]+)", thread)
    rank = (0, 0) if thread == "writer" else (1, int(producer.group(1))) if producer else \
        (2, 0) if thread == "main" else (3, 0)
    place = COUNTER_EVENTS.index(event) if event in COUNTER_EVENTS else len(COUNTER_EVENTS) + (event == "ipc")
    return rank, thread, place, event


def per_transaction_counters(names) -> list[str]:
    """The counters per transaction and the ipc among `names`, in counter_order."""
    return sorted((n for n in names if (parts := counter_parts(n)) and parts[1] != "per_block"), key=counter_order)


def flatten(report: dict[str, Any]) -> dict[str, float]:
    """Every scalar metric of one report, with `us_per_tx` derived."""
    out: dict[str, float] = {}
    for key, value in report.items():
        if key in SKIPPED_SECTIONS or key in IDENTIFIER_LEAVES:
            continue
        _flatten(value, key, out)
    _counters(report.get("counters"), out)
    cycle = out.get("aggregates.cycle_us.avg")
    per_block = out.get("aggregates.transactions_per_block.avg")
    if cycle is not None and per_block:
        out["us_per_tx"] = cycle / per_block
    return out


def ordered(names) -> list[str]:
    """Key metrics first in their fixed order, then the others alphabetically."""
    names = set(names)
    first = [n for n in KEY_METRICS if n in names]
    return first + sorted(names - set(first))


# ---- which way is better -------------------------------------------------------------------

LOWER = -1
HIGHER = +1


@dataclass(frozen=True)
class Direction:
    better: int          # LOWER or HIGHER
    better_word: str     # the verdict when the change is an improvement
    worse_word: str      # the verdict when it is a regression


TIME = Direction(LOWER, "faster", "slower")
RATE = Direction(HIGHER, "faster", "slower")
COST = Direction(LOWER, "better", "worse")
COUNT_BAD = Direction(LOWER, "fewer", "more")
MEMORY = Direction(LOWER, "smaller", "larger")
INSTRUCTIONS_PER_CYCLE = Direction(HIGHER, "better", "worse")

# The direction table: the first pattern that matches the dotted name decides. Metrics that
# match none (totals that grow with run length, shares that only redistribute time, counts of
# generated transactions) have no better direction: their changes are reported as higher or
# lower, never as a regression.
DIRECTIONS: tuple[tuple[str, Direction], ...] = (
    (r"^us_per_tx$", TIME),
    (r"^aggregates\.(cycle|produced|applied|processing)_us\.(min|avg|max|median|p90|p99)$", TIME),
    (r"^aggregates\.(cycle|produced|applied|processing)_us\.stddev$", COST),
    (r"^throughput\.(tx_per_s|blocks_per_s)$", RATE),
    (r"^latency\.[a-z_]+\.(mean|p\d+|max)_us$", TIME),
    (r"^writer\.(wait_lock|unknown)_share$", COST),
    (r"^signing\.(cpu_ms_per_block|bound_us)$", TIME),
    (r"^signing\.cycle_to_bound$", COST),
    (r"^cpu\.(ms_per_block|bound_us)$", TIME),
    (r"^cpu\.cycle_to_bound$", COST),
    (r"^cpu\.split\.harness_(ms_per_block|share)$", COST),
    (r"^timing\.(genesis_ms|colony_start_ms|shutdown_ms)$", TIME),
    (r"^colony\.brakes\.[^.]+\.(waits|wait_ms)$", COUNT_BAD),
    (r"^colony\.rejected$", COUNT_BAD),
    (r"^rejections\.", COUNT_BAD),
    (r"^ledger\.dropped$", COUNT_BAD),
    (r"^peak_rss_bytes$", MEMORY),
    (r"^counters\.[^.]+\.ipc$", INSTRUCTIONS_PER_CYCLE),
    # A thread's CPU time, whose change is a slowdown or a speed-up, as the cycle's is.
    (r"^counters\.[^.]+\.(per_transaction|per_block)\.task_clock_ns$", TIME),
    (r"^counters\.[^.]+\.(per_transaction|per_block)\.", COST),
)
_COMPILED = tuple((re.compile(p), d) for p, d in DIRECTIONS)


def direction(name: str) -> Direction | None:
    for pattern, d in _COMPILED:
        if pattern.search(name):
            return d
    return None
