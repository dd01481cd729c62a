"""The decision part of a CI performance gate on instruction counts.

Wall time on shared 2-core machines drifts by several percent between runs; the number of
instructions a deterministic workload executes does not. So the gate runs the same workload
on the parent commit and on the candidate under valgrind (callgrind or cachegrind), divides
the total instruction count (event `Ir`) by the transactions processed, and fails when the
candidate needs more than `threshold` (3% by default) more instructions per transaction.

This module holds only the pure parts, so they can be tested on constructed input: reading
the total of an event from a callgrind or cachegrind output file, and the decision. Running
valgrind and the workload is the driver's job.

Both output formats (valgrind's docs: "Callgrind Format Specification", and cachegrind's
out-file format) declare the event order in an `events:` line and give the whole program's
totals in a `summary:` line (callgrind repeats them in `totals:` at the end; a file that
combines several dumps has one `totals:` per part and no `summary:`). The wanted event is
looked up by name, since `Ir` need not come first (e.g. `--collect-systime=yes` or cache
simulation add events); a total line may omit trailing zero counts.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

DEFAULT_THRESHOLD = 0.03


class ParseError(ValueError):
    """The file is not valgrind tool output with the wanted event."""


def total_events(path: str | os.PathLike, event: str = "Ir") -> int:
    """The program's total count of `event` in a callgrind or cachegrind output file."""
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
    if event not in events:
        raise ParseError(f"{path}: event {event} was not collected (events: {' '.join(events)})")
    index = events.index(event)

    def pick(counts: list[int]) -> int:
        return counts[index] if index < len(counts) else 0  # trailing zeros may be left out

    if summary is not None:
        return pick(summary)
    if part_totals:
        return sum(pick(t) for t in part_totals)
    raise ParseError(f"{path}: no `summary:` or `totals:` line; the profile is incomplete")


def callgrind_total_ir(path: str | os.PathLike) -> int:
    """Total instructions executed, from a `callgrind.out.<pid>` file."""
    return total_events(path, "Ir")


def cachegrind_total_ir(path: str | os.PathLike) -> int:
    """Total instructions executed, from a `cachegrind.out.<pid>` file."""
    return total_events(path, "Ir")


def ir_per_tx(total_ir: int, transactions: int) -> float:
    if transactions <= 0:
        raise ValueError(f"transactions must be positive, got {transactions}")
    if total_ir <= 0:
        raise ValueError(f"the instruction count must be positive, got {total_ir}")
    return total_ir / transactions


@dataclass(frozen=True)
class Verdict:
    passed: bool
    change_pct: float        # (current / parent − 1) · 100; negative: fewer instructions
    parent: float
    current: float
    threshold: float         # a fraction: 0.03 is 3%
    message: str

    def to_dict(self) -> dict:
        return {"passed": self.passed, "change_pct": self.change_pct, "parent_ir_per_tx": self.parent,
                "current_ir_per_tx": self.current, "threshold": self.threshold, "message": self.message}


def _positive(name: str, value: float) -> float:
    v = float(value)
    if not math.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be a positive number, got {value!r}")
    return v


def decide(parent_ir_per_tx: float, current_ir_per_tx: float, threshold: float = DEFAULT_THRESHOLD) -> Verdict:
    """Fails when the candidate executes more than `threshold` more instructions per
    transaction than its parent; exactly at the threshold still passes."""
    parent = _positive("parent_ir_per_tx", parent_ir_per_tx)
    current = _positive("current_ir_per_tx", current_ir_per_tx)
    t = float(threshold)
    if not math.isfinite(t) or t < 0:
        raise ValueError(f"threshold must be 0 or more, got {threshold!r}")
    change = (current / parent - 1.0) * 100.0
    limit = t * 100.0
    # A hair of tolerance so that exactly +3.00% (e.g. 1000 -> 1030) is not failed by rounding.
    passed = current / parent - 1.0 <= t + 1e-12
    numbers = f"instructions per transaction {parent:,.1f} -> {current:,.1f} ({change:+.2f}%)"
    if not passed:
        message = f"FAIL: {numbers}, more than the allowed +{limit:.2f}%"
    elif change < 0:
        message = f"pass: {numbers}, fewer instructions than the parent"
    else:
        message = f"pass: {numbers}, within the allowed +{limit:.2f}%"
    return Verdict(passed, change, parent, current, t, message)
