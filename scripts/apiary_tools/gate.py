"""The decision part of a CI performance gate on instruction counts and estimated costs.

Wall time on shared 2-core machines drifts by several percent between runs; the number of
instructions a deterministic workload executes does not. So the gate runs the same workload
on the parent commit and on the candidate under valgrind (callgrind or cachegrind), divides
the total instruction count (event `Ir`) by the transactions processed, and fails when the
candidate needs more than `threshold` (3% by default) more instructions per transaction.

Instructions are blind to memory: a change that keeps the instructions and doubles the cache
misses passes them. So the replay also runs valgrind's cache simulation, and each access is
priced by where the simulated caches served it (COSTS["EstCycles"], below): the estimated
cycles. And the same replay runs a second time on caches whose lines are pages, a model of the
TLBs (PAGE_GEOMETRY): its misses and the page walks, with the cache simulation's last-level
misses, are priced at what they cost this machine's wall time (MEMORY below): the memory time.
All three are deterministic, held to the same threshold (GATE_COSTS); the gate fails on any.

The pure parts can be tested on constructed input: reading the total of an event from a
callgrind or cachegrind output file, the decision, and where the instructions moved: each
function's self and inclusive count read from the two callgrind files (`function_costs`),
per transaction, and the functions that moved most (`function_changes`), so that a failed
gate names its cause. Then the counting itself, which the gate (commands/perf_gate), multirun,
ladder and bisect share: the gate's seeded workload (`Workload`, `make_workload`) and its
replay under callgrind, counting only the measured function (`count_replay`, `count_side`),
the two counts of a replay side by side.
Building the base and deciding what to compare is the gate command's job.

Both output formats (valgrind's docs: "Callgrind Format Specification", and cachegrind's
out-file format) declare the event order in an `events:` line and give the whole program's
totals in a `summary:` line (callgrind repeats them in `totals:` at the end; a file that
combines several dumps has one `totals:` per part and no `summary:`). Where both are there the
`totals:` are read: a callgrind run that starts its instrumentation late (--instr-atstart=no,
as the replay is counted) writes a `summary:` of 0 and the real counts in `totals:`. The wanted event is
looked up by name, since `Ir` need not come first (e.g. `--collect-systime=yes` or cache
simulation add events); a total line may omit trailing zero counts.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .common import EXIT_FAILED, ToolError, short_symbols
from .inputs import checked, read_json
from .schemas import COUNT, STRING, obj, problem

DEFAULT_THRESHOLD = 0.03


class ParseError(ValueError):
    """The file is not valgrind tool output with the wanted event."""


# ---- what is counted: instructions, and cycles estimated from a cache simulation ---------------
#
# valgrind's --cache-sim=yes counts, beside the instructions (Ir), the data reads and writes
# (Dr, Dw), the first-level misses of each kind of access (I1mr, D1mr, D1mw) and the last-level
# ones (ILmr, DLmr, DLmw), on the simulated caches CACHE_GEOMETRY gives: fixed, so that the
# counts are the same whatever machine valgrind runs on (left alone, valgrind copies the host's,
# and a virtual machine may report a 300 MiB last level that nothing misses). The estimate
# prices an access by where it was served: a first-level hit 1, a last-level hit 5, memory 35
# (iai-callgrind's weights; docs/benchmarks.md says how they compare with wall time here).
# Since L1 hits = accesses − L1 misses and LL hits = L1 misses − LL misses, that is
#   accesses + 4 · L1 misses + 30 · LL misses,
# a weighted sum of events, so it is counted per cost line like an event of its own.
L1_HIT_CYCLES, LL_HIT_CYCLES, MEMORY_CYCLES = 1, 5, 35
ACCESS_EVENTS, L1_MISS_EVENTS, LL_MISS_EVENTS = ("Ir", "Dr", "Dw"), ("I1mr", "D1mr", "D1mw"), ("ILmr", "DLmr", "DLmw")
CACHE_GEOMETRY = ("--I1=32768,8,64", "--D1=49152,12,64", "--LL=8388608,16,64")
COSTS: dict[str, dict[str, int]] = {
    "Ir": {"Ir": 1},
    "EstCycles": {**{e: L1_HIT_CYCLES for e in ACCESS_EVENTS},
                  **{e: LL_HIT_CYCLES - L1_HIT_CYCLES for e in L1_MISS_EVENTS},
                  **{e: MEMORY_CYCLES - LL_HIT_CYCLES for e in LL_MISS_EVENTS}},
}

# ---- the translation of addresses: the same replay on caches of pages ---------------------------
#
# valgrind's cache simulation takes lines up to a page long. Caches of 4 KiB lines stand for the
# translation of addresses: the first level of data for the first-level data TLB (72 pages, fully
# associative), the last level for the second-level TLB (3,072 pages, 24-way), as on AMD's Zen 4,
# the machine the prices below were fitted on; a last-level miss there is a page walk. The code's
# pages take the first level of instructions (64). A model, not the real TLBs: LRU, 4 KiB pages
# only, no caches of the page walks.
PAGE_GEOMETRY = ("--I1=262144,64,4096", "--D1=294912,72,4096", "--LL=12582912,24,4096")
TLB_MISS_EVENTS, PAGE_WALK_EVENTS = ("D1mr", "D1mw"), ("ILmr", "DLmr", "DLmw")
# What the memory costs: a last-level miss of the caches of lines, a TLB miss and a page walk at
# the nanoseconds fitted to this machine's wall time over the state grid and the ladder
# (bench/tools/cost_weights.py; docs/measured/cost-weights.md, 2026-11-30: 35.7, 13.4 and 243 ns,
# the accesses and first-level misses 0). Counted in picoseconds, so that a count stays whole.
LL_MISS_PS, TLB_MISS_PS, PAGE_WALK_PS = 35_700, 13_400, 243_000
COSTS.update({
    "MemLines": {e: LL_MISS_PS for e in LL_MISS_EVENTS},
    "MemPages": {**{e: TLB_MISS_PS for e in TLB_MISS_EVENTS}, **{e: PAGE_WALK_PS for e in PAGE_WALK_EVENTS}},
})
# A side's two counts of the replay: the key of its callgrind file in a side, and the caches.
COUNTS = {"callgrind": CACHE_GEOMETRY, "pages_callgrind": PAGE_GEOMETRY}


@dataclass(frozen=True)
class GateCost:
    """A figure per transaction the gate holds to its threshold: the sum of `parts`, each a cost
    of COSTS in one of a side's counts (a key of COUNTS), times `scale`."""
    cost: str             # its name
    words: str            # what the tools print it as
    per_tx_key: str       # its key per transaction in a side and a verdict
    total_key: str        # a side's whole count of it
    verdict_key: str      # the gate's verdict on it in the gate's result
    functions_key: str    # where the functions whose cost moved most go in the gate's result
    parts: tuple[tuple[str, str], ...]
    scale: float = 1


INSTRUCTIONS = GateCost("Ir", "instructions", "ir_per_tx", "instructions", "verdict", "functions",
                        (("callgrind", "Ir"),))
ESTIMATED_CYCLES = GateCost("EstCycles", "estimated cycles", "est_per_tx", "estimated_cycles", "estimate_verdict",
                            "functions_by_estimate", (("callgrind", "EstCycles"),))
MEMORY = GateCost("Memory", "estimated memory ns", "mem_ns_per_tx", "memory_ns", "memory_verdict",
                  "functions_by_memory", (("callgrind", "MemLines"), ("pages_callgrind", "MemPages")), 1e-3)
GATE_COSTS = (INSTRUCTIONS, ESTIMATED_CYCLES, MEMORY)
BY_COST = {c.cost: c for c in GATE_COSTS}
BY_PER_TX_KEY = {c.per_tx_key: c for c in GATE_COSTS}


def cost_weights(path: str | os.PathLike, events: list[str], cost: str) -> list[tuple[int, int]]:
    """Where each event of `cost` (a name of COSTS, or a single event) sits among a file's
    `events:`, with its weight; a ParseError names the events the file lacks."""
    weights = COSTS.get(cost, {cost: 1})
    missing = [e for e in weights if e not in events]
    if missing == [cost]:
        raise ParseError(f"{path}: event {cost} was not collected (events: {' '.join(events)})")
    if missing:
        raise ParseError(f"{path}: {cost} needs event(s) {' '.join(missing)}, which were not collected "
                         f"(events: {' '.join(events)}; valgrind's --cache-sim=yes collects them)")
    return [(events.index(e), w) for e, w in weights.items()]


def weighted(counts: Sequence[int], weights: list[tuple[int, int]]) -> int:
    """A cost line's (or a total's) cost: trailing zero counts may be left out of the line."""
    return sum(counts[i] * w for i, w in weights if i < len(counts))


def total_events(path: str | os.PathLike, event: str = "Ir") -> int:
    """The program's total count of `event` (an event, or a cost of COSTS) in a callgrind or
    cachegrind output file."""
    events: list[str] | None = None
    summary: list[int] | None = None
    part_totals: list[list[int]] = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for number, raw in enumerate(f, 1):
            line = raw.strip()
            key, sep, rest = line.partition(":")
            if not sep or key not in ("events", "summary", "totals"):
                continue
            if key == "events":
                events = rest.split()
                continue
            try:
                counts = [int(x) for x in rest.split()]
            except ValueError:
                raise ParseError(f"{path}:{number}: {key}: expected whole numbers, got {rest.strip()!r}") from None
            if key == "summary":
                summary = counts
            else:
                part_totals.append(counts)
    if events is None:
        raise ParseError(f"{path}: no `events:` line; not callgrind or cachegrind output")
    weights = cost_weights(path, events, event)

    def pick(counts: list[int]) -> int:
        return weighted(counts, weights)

    if part_totals:
        return sum(pick(t) for t in part_totals)
    if summary is not None:
        return pick(summary)
    raise ParseError(f"{path}: no `summary:` or `totals:` line; the profile is incomplete")


def callgrind_total_ir(path: str | os.PathLike) -> int:
    """Total instructions executed, from a `callgrind.out.<pid>` file."""
    return total_events(path, "Ir")


def cachegrind_total_ir(path: str | os.PathLike) -> int:
    """Total instructions executed, from a `cachegrind.out.<pid>` file."""
    return total_events(path, "Ir")


def ir_per_tx(total_ir: float, transactions: int) -> float:
    if transactions <= 0:
        raise ValueError(f"transactions must be positive, got {transactions}")
    if total_ir <= 0:
        raise ValueError(f"the instruction count must be positive, got {total_ir}")
    return total_ir / transactions


@dataclass(frozen=True)
class Verdict:
    passed: bool
    change_pct: float        # (current / parent − 1) · 100; negative: less
    parent: float
    current: float
    threshold: float         # a fraction: 0.03 is 3%
    message: str
    cost: str = "Ir"         # what was counted: a name of COSTS

    def to_dict(self) -> dict:
        key = BY_COST[self.cost].per_tx_key
        return {"passed": self.passed, "change_pct": self.change_pct, f"parent_{key}": self.parent,
                f"current_{key}": self.current, "threshold": self.threshold, "message": self.message,
                "cost": self.cost}


def _positive(name: str, value: float) -> float:
    v = float(value)
    if not math.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be a positive number, got {value!r}")
    return v


def decide(parent_ir_per_tx: float, current_ir_per_tx: float, threshold: float = DEFAULT_THRESHOLD,
           cost: str = "Ir") -> Verdict:
    """Fails when the candidate costs more than `threshold` more per transaction than its
    parent, in instructions or another cost of COSTS; exactly at the threshold still passes."""
    key = BY_COST[cost].per_tx_key
    parent = _positive(f"parent_{key}", parent_ir_per_tx)
    current = _positive(f"current_{key}", current_ir_per_tx)
    t = float(threshold)
    if not math.isfinite(t) or t < 0:
        raise ValueError(f"threshold must be 0 or more, got {threshold!r}")
    change = (current / parent - 1.0) * 100.0
    limit = t * 100.0
    # A hair of tolerance so that exactly +3.00% (e.g. 1000 -> 1030) is not failed by rounding.
    passed = current / parent - 1.0 <= t + 1e-12
    words = BY_COST[cost].words
    numbers = f"{words} per transaction {parent:,.1f} -> {current:,.1f} ({change:+.2f}%)"
    if not passed:
        message = f"FAIL: {numbers}, more than the allowed +{limit:.2f}%"
    elif change < 0:
        message = f"pass: {numbers}, fewer {words} than the parent"
    else:
        message = f"pass: {numbers}, within the allowed +{limit:.2f}%"
    return Verdict(passed, change, parent, current, t, message, cost)


# ---- where the instructions went: each function's count in a callgrind file -------------------
#
# A callgrind file (valgrind's "Callgrind Format Specification") gives, after `fn=NAME`, cost
# lines of that function's own code: positions (`positions:`, one for `line`), then one count
# per event of `events:` (trailing zeros left out; a position may be relative: `+3`, `-2`, `*`).
# `cfn=NAME` then `calls=COUNT TARGET` announce a call, and the cost line after it is the
# call's inclusive cost. Names may be compressed: `fn=(12) NAME` defines 12, `fn=(12)` uses it;
# fn= and cfn= share their numbers, as fl=, fi=, fe=, cfi= and cfl= do, and ob= and cob=.

# How many functions the gate names, by self and by inclusive count.
TOP_FUNCTIONS = 10
# Callgrind's name for code it has no symbol for.
UNKNOWN_FUNCTION = "???"
# A recursion level, which callgrind names apart (`rec'2`, --separate-recs), counts as its function.
_RECURSION_LEVEL = re.compile(r"'[0-9]+$")
_SUBPOSITION = re.compile(r"\*|[+-]?(0x[0-9a-fA-F]+|[0-9]+)")
_COMPRESSED = re.compile(r"\(([0-9]+)\)(?: (.*))?")
_LINE = re.compile(r"([a-z]+)([=:])(.*)")
_NAMESPACES = {"fn": "fn", "cfn": "fn", "fl": "fl", "fi": "fl", "fe": "fl", "cfi": "fl", "cfl": "fl",
               "ob": "ob", "cob": "ob"}


@dataclass
class FunctionCost:
    """One function's count of an event: its own code (`own`, callgrind's self) and with
    everything it calls (`inclusive`)."""
    own: float = 0   # whole for an event; a GateCost's scale may make it a fraction
    inclusive: float = 0


class _CallgrindReader:
    """One pass over a callgrind file, keeping every function's own and call costs."""

    def __init__(self, path: str | os.PathLike, event: str):
        self.path, self.event = path, event
        self.names: dict[str, dict[int, str]] = {"fn": {}, "fl": {}, "ob": {}}
        self.weights: list[tuple[int, int]] | None = None   # cost_weights of the event
        self.positions = 1
        self.function = UNKNOWN_FUNCTION
        self.callee: str | None = None
        self.in_call = False              # the next cost line is a call's inclusive cost
        self.own: dict[str, int] = {}
        self.called: dict[str, int] = {}  # what each function's calls to others cost
        self.totals: list[int] = []

    def error(self, number: int, why: str) -> ParseError:
        return ParseError(f"{self.path}:{number}: {why}")

    def name(self, kind: str, value: str, number: int) -> str:
        space = self.names[_NAMESPACES[kind]]
        compressed = _COMPRESSED.fullmatch(value)
        if compressed is None:
            name = value
        elif compressed.group(2) is not None:
            name = space[int(compressed.group(1))] = compressed.group(2)
        elif (known := space.get(int(compressed.group(1)))) is not None:
            name = known
        else:
            raise self.error(number, f"{kind}=({compressed.group(1)}) names a number never given a name")
        return _RECURSION_LEVEL.sub("", name) if space is self.names["fn"] else name

    def header(self, key: str, value: str, number: int) -> None:
        if key == "events":
            try:
                self.weights = cost_weights(self.path, value.split(), self.event)
            except ParseError as e:
                raise self.error(number, str(e).removeprefix(f"{self.path}: ")) from None
        elif key == "positions":
            self.positions = max(1, len(value.split()))
        elif key == "totals":
            counts = value.split()
            if not all(c.isdigit() for c in counts):
                raise self.error(number, f"totals: expected whole numbers, got {value.strip()!r}")
            self.totals.append(weighted([int(c) for c in counts], self.weights) if self.weights is not None else 0)

    def specification(self, key: str, value: str, number: int) -> None:
        if key == "calls":
            if not value.split() or not value.split()[0].isdigit():
                raise self.error(number, f"calls={value.strip()!r}: expected a call count and a position")
            self.in_call = True
        elif key == "fn":
            self.function, self.callee = self.name(key, value, number), None
        elif key == "cfn":
            self.callee = self.name(key, value, number)
        elif key in _NAMESPACES:
            self.name(key, value, number)   # a file's or an object's name, kept for its number
        # jump=, jcnd= and keys of later formats carry no cost of their own

    def cost(self, line: str, number: int) -> None:
        tokens = line.split()
        if self.weights is None:
            raise self.error(number, "a cost line before the `events:` line")
        if len(tokens) < self.positions or not all(_SUBPOSITION.fullmatch(t) for t in tokens[:self.positions]) \
                or not all(t.isdigit() for t in tokens[self.positions:]):
            raise self.error(number, f"not a cost line: {line.strip()[:80]!r}")
        value = weighted([int(c) for c in tokens[self.positions:]], self.weights)
        if self.in_call:
            self.in_call = False
            if (self.callee or self.function) != self.function:   # a recursive call is counted already
                self.called[self.function] = self.called.get(self.function, 0) + value
        else:
            self.own[self.function] = self.own.get(self.function, 0) + value

    def read(self) -> dict[str, FunctionCost]:
        with open(self.path, encoding="utf-8", errors="replace") as f:
            for number, raw in enumerate(f, 1):
                line = raw.rstrip("\n")
                if not line.strip() or line.startswith("#"):
                    continue
                keyed = _LINE.match(line)
                if keyed is None:
                    self.cost(line, number)
                elif keyed.group(2) == ":":
                    self.header(keyed.group(1), keyed.group(3), number)
                else:
                    self.specification(keyed.group(1), keyed.group(3).strip(), number)
        if self.weights is None:
            raise ParseError(f"{self.path}: no `events:` line; not callgrind output")
        if self.in_call:
            raise ParseError(f"{self.path}: ends after a `calls=` line, without its cost; the file is cut short")
        own_total = sum(self.own.values())
        if self.totals and own_total != sum(self.totals):
            raise ParseError(f"{self.path}: the functions' {self.event} add up to {own_total:,}, its `totals:` say "
                             f"{sum(self.totals):,}; the file is damaged or cut short")
        return {name: FunctionCost(self.own.get(name, 0), self.own.get(name, 0) + self.called.get(name, 0))
                for name in self.own.keys() | self.called.keys()}


def function_costs(path: str | os.PathLike, event: str = "Ir") -> dict[str, FunctionCost]:
    """Every function's own and inclusive count of `event` in a callgrind output file, all its
    parts added up. A recursive call is not added to its function's inclusive count again, and
    a function's recursion levels (`rec'2`) are the function; through a cycle of functions
    (f calls g calls f) an inclusive count counts the cycle's calls twice, as callgrind_annotate's
    does."""
    return _CallgrindReader(path, event).read()


@dataclass(frozen=True)
class FunctionChange:
    """One function's count per transaction, in the base and in the current build."""
    function: str
    base: float
    current: float

    @property
    def change(self) -> float:
        return self.current - self.base

    def to_dict(self) -> dict:
        return {"function": self.function, "base_per_tx": self.base, "current_per_tx": self.current,
                "change_per_tx": self.change,
                "change_pct": (self.current / self.base - 1) * 100 if self.base else None}


def _moved(base: dict[str, float], current: dict[str, float], top: int) -> list[FunctionChange]:
    rows = [FunctionChange(name, base.get(name, 0.0), current.get(name, 0.0)) for name in base.keys() | current.keys()]
    rows = [r for r in rows if r.change != 0]
    # Of equal changes (a chain of callers passes one on), the deepest first: the smallest count.
    return sorted(rows, key=lambda r: (-abs(r.change), r.base + r.current, r.function))[:top]


def function_changes(base: dict[str, FunctionCost], current: dict[str, FunctionCost], base_transactions: int,
                     current_transactions: int, top: int = TOP_FUNCTIONS) -> dict[str, list[FunctionChange]]:
    """The `top` functions whose own (`self`) and whose inclusive count per transaction moved
    most between the base and the current build, largest absolute change first (of equal
    changes, the function with the smaller count: the callee before its callers); a function
    only one side has counts 0 on the other, and one that owns no count on either side (a
    caller of the measured code) is left out."""
    b_tx = _positive("base transactions", base_transactions)
    c_tx = _positive("current transactions", current_transactions)
    # Callers of the measured code (main, with --toggle-collect) own nothing counted: each would
    # repeat the measured function's inclusive change.
    counted = {name for costs in (base, current) for name, c in costs.items() if c.own}

    def per_tx(costs: dict[str, FunctionCost], transactions: float, kind: str) -> dict[str, float]:
        return {name: (c.own if kind == "self" else c.inclusive) / transactions for name, c in costs.items()
                if name in counted}

    return {kind: _moved(per_tx(base, b_tx, kind), per_tx(current, c_tx, kind), top) for kind in ("self", "inclusive")}


def changes_text(changes: dict[str, list[FunctionChange]], width: int = 100,
                 words: str = INSTRUCTIONS.words) -> Iterable[str]:
    """The function changes as the gate prints them: one table per kind, one function a line,
    its name without template arguments and parameters (--json keeps them); `words` names the
    cost counted."""
    what = {"self": f"own {words} (self)", "inclusive": f"{words} with their callees (inclusive)"}
    for kind, rows in changes.items():
        if not rows:
            continue
        yield f"functions whose {what[kind]} per transaction moved most (base -> current, change):"
        for r, name in zip(rows, short_symbols([r.function for r in rows], width), strict=True):
            yield f"  {r.base:>12,.1f} -> {r.current:>12,.1f}  {r.change:>+12,.1f}  {name}"


MEASURED_FUNCTION = "apiary_replay_measured"
# What the gate reads of `apiary replay --report` (docs/replay.md).
REPLAY = obj(("result",), result=obj(("transactions", "accepted", "blocks", "state_digest"),
                                     transactions={"type": "integer", "minimum": 1}, accepted=COUNT, blocks=COUNT,
                                     state_digest=STRING))


def log(message: str) -> None:
    print(f"perf-gate: {message}", flush=True)


def run(cmd: Sequence[str | os.PathLike], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kwargs)


def make_workload(name: str, binary: Path, workload: Path, transactions: int, seed: int, accounts: int,
                  extra: Sequence[str] = ()) -> Path:
    """`apiary workload` with `binary`: the seeded transactions every replay of a comparison pushes."""
    gen = run([binary, "workload", "--out", workload, "--transactions", str(transactions), "--seed", str(seed),
               "--accounts", str(accounts), *extra])
    if gen.returncode != 0:
        raise ToolError(f"{name}: apiary workload failed: {gen.stderr.strip()}", EXIT_FAILED)
    return workload


def count_replay(name: str, binary: Path, workload: Path, work: Path, replay_args: Sequence[str],
                 say: Callable[[str], None] = log) -> dict:
    """Replays `workload` under callgrind twice side by side, on the caches of lines and on
    those of pages (COUNTS), and returns the measured function's figures of GATE_COSTS, whole
    and per transaction, with the replay's own figures; `say` gets the line that reports it.

    The measured function starts and stops callgrind's instrumentation itself (its client
    requests), so the genesis and the workload's loading before it run uninstrumented: a third
    of the time the simulation takes from the start, and its caches start empty. A build older
    than those requests counts nothing so; it is counted again with the instrumentation on from
    the start and collection toggled at the function (`instrumented` says which): its caches
    start warm from the genesis, which moves the estimate by about 0.3% (docs/benchmarks.md)."""
    files = {key: work / f"{name}{'' if key == 'callgrind' else '-pages'}.callgrind" for key in COUNTS}
    t0 = time.monotonic()
    instrumented = "by the measured function"
    totals, result = _callgrind_replay(name, files, ("--instr-atstart=no",), binary, workload, replay_args, work)
    if totals[INSTRUCTIONS.cost] == 0:
        instrumented = "from the start (a build without the measured function's client requests)"
        toggled = ("--collect-atstart=no", f"--toggle-collect={MEASURED_FUNCTION}")
        totals, result = _callgrind_replay(name, files, toggled, binary, workload, replay_args, work)
    if totals[INSTRUCTIONS.cost] == 0:
        raise ToolError(f"{name}: callgrind counted nothing in {MEASURED_FUNCTION}", EXIT_FAILED)
    transactions = result["transactions"]
    side = {"binary": str(binary), **{key: str(path) for key, path in files.items()},
            **{c.total_key: totals[c.cost] for c in GATE_COSTS}, "instrumented": instrumented,
            "transactions": transactions, "accepted": result["accepted"], "blocks": result["blocks"],
            **{c.per_tx_key: ir_per_tx(totals[c.cost], transactions) for c in GATE_COSTS},
            "state_digest": result["state_digest"], "seconds": round(time.monotonic() - t0, 1)}
    say(f"{name}: {side['instructions']:,} instructions, {side['estimated_cycles']:,} estimated cycles and "
        f"{side['memory_ns']:,.0f} estimated memory ns for {transactions:,} transactions "
        f"({side['ir_per_tx']:,.1f}, {side['est_per_tx']:,.1f} and {side['mem_ns_per_tx']:,.1f} per transaction, "
        f"{result['blocks']} blocks; {side['seconds']} s under callgrind)")
    return side


def _callgrind_replay(name: str, files: dict[str, Path], how: Sequence[str], binary: Path, workload: Path,
                      replay_args: Sequence[str], work: Path) -> tuple[dict[str, float], dict]:
    """The replay under callgrind on each of COUNTS's caches at once, `how` choosing what is
    counted: the totals of GATE_COSTS and the replay's result (both replays must end alike)."""
    procs: dict[str, subprocess.Popen] = {}
    reports = {key: work / f"{files[key].stem}-replay.json" for key in COUNTS}
    try:
        for key, geometry in COUNTS.items():
            cmd = ["valgrind", "--tool=callgrind", "--cache-sim=yes", *geometry, *how,
                   f"--callgrind-out-file={files[key]}", binary, "replay", "--workload", workload, *replay_args,
                   "--report", reports[key]]
            procs[key] = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                          text=True)
        errors = {key: p.communicate()[1] for key, p in procs.items()}
    finally:   # an exception or a signal while one runs: neither outlives the tool
        for p in procs.values():
            if p.poll() is None:
                p.kill()
                p.wait()
    for key, p in procs.items():
        if p.returncode != 0:
            raise ToolError(f"{name}: the replay under callgrind failed ({p.returncode}): "
                            f"{(errors[key].strip().splitlines() or [''])[-1]}", EXIT_FAILED)
    results = {key: checked(read_json(report), str(report), lambda d: problem(REPLAY, d), EXIT_FAILED)["result"]
               for key, report in reports.items()}
    if len({(r["transactions"], r["state_digest"]) for r in results.values()}) != 1:
        raise ToolError(f"{name}: the replay's two counts ended differently ("
                        + "; ".join(f"{r['transactions']:,} transactions, state {r['state_digest']}"
                                    for r in results.values()) + "): the replay is not deterministic", EXIT_FAILED)
    try:
        totals = {c.cost: sum(total_events(files[key], part) for key, part in c.parts) * c.scale for c in GATE_COSTS}
    except (OSError, ParseError) as e:
        raise ToolError(f"{name}: {e}", EXIT_FAILED) from None
    return {cost: (int(v) if BY_COST[cost].scale == 1 else v) for cost, v in totals.items()}, results["callgrind"]


def side_function_costs(side: dict, cost: GateCost) -> dict[str, FunctionCost]:
    """Every function's own and inclusive `cost` in a counted side's callgrind files."""
    summed: dict[str, FunctionCost] = {}
    for key, part in cost.parts:
        for function, c in function_costs(side[key], part).items():
            s = summed.setdefault(function, FunctionCost())
            s.own += c.own * cost.scale
            s.inclusive += c.inclusive * cost.scale
    return summed


def count_side(name: str, binary: Path, work: Path, args, say: Callable[[str], None] = log) -> dict:
    """Generates the workload with `binary` and counts its replay (both sides the same way);
    `args` holds the workload's settings: perf-gate's options, or WORKLOAD."""
    workload = make_workload(name, binary, work / f"{name}.workload", args.transactions, args.seed, args.accounts)
    return count_replay(name, binary, workload, work, ["--block-size", args.block_size], say)


@dataclass(frozen=True)
class Workload:
    """The gate's seeded workload and replay: perf-gate's defaults (--transactions, --accounts,
    --seed, --block-size), and what other tools count with, so that their figures are the gate's."""
    transactions: int = 20_000
    accounts: int = 10_000
    seed: int = 1
    block_size: str = "256KiB"


WORKLOAD = Workload()
