"""Transaction latency from the reports' histograms: reading them, merging several runs'
exactly, and the percentiles of the merged histogram.

A report of schema_version 2 has a `latency` section: the histogram axis
(`latency.histogram`: `lowest_ns`, `highest_ns`, `bins`) and one entry per stage
(`queue_wait`, `inclusion`, `end_to_end`, `rejection`) with `count`, `mean_us`, `min_us`,
`max_us`, the percentiles, and `bins`, the nonzero bins as `[index, count]` pairs. The bins
are log-spaced: with r = (highest / lowest)^(1 / bins), bin i (0 <= i < bins) holds the times
in [lowest · r^i, lowest · r^(i+1)), index -1 those below lowest and index `bins` those at
or above highest.

Averaging the runs' p99s says little about the p99 of all their transactions; summing their
bins gives the histogram of all of them, whose percentiles are exact up to the bin width.
The percentile rule is apiary's own, so that a merged single run gives the report's numbers:
nearest rank, rank = max(1, ceil(q · count)); the first bin whose cumulative count reaches
the rank; its value is the bin's geometric centre lowest · r^(i + 0.5), clamped into
[min, max]; the underflow bin's value is min, the overflow bin's max.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import stats
from .common import ToolError
from .schemas import MAX_BINS, stage_problem

STAGES = ("queue_wait", "inclusion", "end_to_end", "rejection")
# The stages the tables show (rejected transactions are few and have their own story), and
# what each one measures.
SHOWN_STAGES = ("queue_wait", "inclusion", "end_to_end")
STAGE_LABELS = {
    "queue_wait": "queue wait (submitted → accepted)",
    "inclusion": "inclusion (submitted → included)",
    "end_to_end": "end to end (intended → included)",
    "rejection": "rejection (submitted → rejected)",
}
# The change of a pooled percentile between two sets is resampled over runs (a run's
# transactions are not independent of each other: they share the run's machine and state).
# Each resample merges histograms, so fewer resamples than for a mean keep it quick.
CHANGE_RESAMPLES = 2_000
QUANTILES = (("p50_us", 0.5), ("p90_us", 0.9), ("p99_us", 0.99), ("p999_us", 0.999), ("p9999_us", 0.9999))


@dataclass(frozen=True)
class Axis:
    """The histogram's log-spaced axis, as `latency.histogram` gives it."""
    lowest_ns: float
    highest_ns: float
    bins: int

    @property
    def ratio(self) -> float:
        return (self.highest_ns / self.lowest_ns) ** (1.0 / self.bins)

    def to_dict(self) -> dict[str, Any]:
        return {"lowest_ns": self.lowest_ns, "highest_ns": self.highest_ns, "bins": self.bins}

    def centre_us(self, index: int) -> float:
        """The geometric centre of bin `index` (0 <= index < bins) in microseconds."""
        return self.lowest_ns * self.ratio ** (index + 0.5) / 1000.0


def axis_from(data: Any, where: str) -> Axis:
    try:
        axis = Axis(float(data["lowest_ns"]), float(data["highest_ns"]), int(data["bins"]))
    except (TypeError, KeyError, ValueError):
        raise ToolError(f"{where}: latency.histogram needs lowest_ns, highest_ns and bins") from None
    if not (0 < axis.lowest_ns < axis.highest_ns) or not 1 <= axis.bins <= MAX_BINS:
        raise ToolError(f"{where}: latency.histogram {axis.to_dict()} is not a valid axis (1 to {MAX_BINS:,} bins "
                        "from lowest_ns to a larger highest_ns)")
    return axis


@dataclass
class Stage:
    """One stage's histogram: counts indexed from -1 (underflow) to bins (overflow), stored
    shifted by one; the sum of the times (mean × count) so that means pool exactly."""
    axis: Axis
    counts: np.ndarray
    total_us: float
    min_us: float | None
    max_us: float | None

    @property
    def count(self) -> int:
        return int(self.counts.sum())

    @property
    def mean_us(self) -> float | None:
        n = self.count
        return self.total_us / n if n else None

    def percentile_us(self, q: float) -> float | None:
        """The q-quantile by apiary's rule (see the module's docstring); None when empty."""
        n = self.count
        if n == 0:
            return None
        rank = max(1, math.ceil(q * n))
        position = int(np.searchsorted(np.cumsum(self.counts), rank))  # first cumulative >= rank
        index = position - 1
        low, high = self.bounds_us()
        if index < 0:
            return low
        if index >= self.axis.bins:
            return high
        return min(max(self.axis.centre_us(index), low), high)

    def bounds_us(self) -> tuple[float, float]:
        """(min, max) of a stage that holds transactions."""
        if self.min_us is None or self.max_us is None:
            raise ValueError("an empty latency stage has no minimum or maximum")
        return self.min_us, self.max_us

    def summary(self) -> dict[str, Any]:
        """The stage as a report gives it, without the bins."""
        out: dict[str, Any] = {"count": self.count, "mean_us": self.mean_us, "min_us": self.min_us}
        for key, q in QUANTILES:
            out[key] = self.percentile_us(q)
        out["max_us"] = self.max_us
        return out

    def to_dict(self) -> dict[str, Any]:
        """The stage in the report's form, bins included, so that it can be read back."""
        out = self.summary()
        nonzero = np.flatnonzero(self.counts)
        out["bins"] = [[int(i) - 1, int(self.counts[i])] for i in nonzero]
        return out


def empty(axis: Axis) -> Stage:
    return Stage(axis, np.zeros(axis.bins + 2, dtype=np.int64), 0.0, None, None)


def stage_from(data: Any, axis: Axis, where: str) -> Stage:
    """A stage of a report (or of an aggregate file), checked: bins in range, ascending, and
    summing to the count (schemas.stage_problem)."""
    why = stage_problem(data, axis.bins)
    if why:
        raise ToolError(f"{where}: {why}")
    stage = empty(axis)
    for index, n in data["bins"]:
        stage.counts[index + 1] = n
    count = data["count"]
    if count:
        try:
            stage.total_us = float(data["mean_us"]) * count
            stage.min_us, stage.max_us = float(data["min_us"]), float(data["max_us"])
        except (KeyError, TypeError, ValueError):
            raise ToolError(f"{where}: a stage with transactions needs mean_us, min_us and max_us") from None
    return stage


def _pooled_percentile_us(stages: Sequence[Stage], q: float) -> float:
    """The q-quantile of stages that hold transactions, merged."""
    value = merge(stages).percentile_us(q)
    if value is None:
        raise ValueError("no transactions in the stages")
    return value


# The most cells (resamples × bins in use) _resampled_percentile_us merges at once.
_MERGE_CELLS = 4_000_000


def _resampled_percentile_us(stages: Sequence[Stage], q: float, picks: np.ndarray) -> np.ndarray:
    """_pooled_percentile_us of many resamples at once, by the same rule: `picks` holds, along
    its last axis, one resample's positions in `stages` (repeats allowed), and its leading axes
    count the resamples. Each resample's histogram is its stages' counts weighted by how often
    it picked them, over the bins any stage uses; the stages hold transactions."""
    picks = np.asarray(picks, dtype=np.intp)
    flat = picks.reshape(-1, picks.shape[-1])
    rows, n = flat.shape[0], len(stages)
    offsets = (np.arange(rows, dtype=np.intp) * n)[:, None]
    weights = np.bincount((flat + offsets).ravel(), minlength=rows * n).reshape(rows, n).astype(np.float64)
    counts = np.stack([s.counts for s in stages])
    used = np.flatnonzero(counts.sum(axis=0))
    counts = counts[:, used].astype(np.float64)
    mins, maxs = np.array([s.bounds_us() for s in stages]).T
    axis = stages[0].axis
    centres = np.array([axis.centre_us(int(i) - 1) if 0 < i <= axis.bins else 0.0 for i in used])
    out = np.empty(rows)
    step = max(1, _MERGE_CELLS // len(used))
    for start in range(0, rows, step):
        w = weights[start:start + step]
        merged = w @ counts
        rank = np.maximum(1.0, np.ceil(q * merged.sum(axis=1)))
        # The first bin whose cumulative count reaches the rank, as Stage.percentile_us finds it.
        position = (np.cumsum(merged, axis=1) < rank[:, None]).sum(axis=1)
        index = used[position] - 1
        low = np.where(w > 0, mins, np.inf).min(axis=1)
        high = np.where(w > 0, maxs, -np.inf).max(axis=1)
        inside = np.minimum(np.maximum(centres[position], low), high)
        out[start:start + step] = np.where(index < 0, low, np.where(index >= axis.bins, high, inside))
    return out.reshape(picks.shape[:-1])


def merge(stages: Sequence[Stage]) -> Stage:
    """The histogram of all the stages' transactions: bins and counts summed, the mean pooled
    (Σ mean·count / Σ count), the smallest min and the largest max. The axes must agree."""
    if not stages:
        raise ValueError("nothing to merge")
    axis = stages[0].axis
    for s in stages[1:]:
        if s.axis != axis:
            raise ToolError(f"cannot merge latency histograms with different axes: {axis.to_dict()} "
                            f"and {s.axis.to_dict()}")
    mins = [s.min_us for s in stages if s.min_us is not None]
    maxs = [s.max_us for s in stages if s.max_us is not None]
    return Stage(axis, np.sum([s.counts for s in stages], axis=0), float(sum(s.total_us for s in stages)),
                 min(mins) if mins else None, max(maxs) if maxs else None)


@dataclass
class RunLatency:
    """The overall stages of one run (per-kind stages carry no bins and do not merge)."""
    axis: Axis
    stages: dict[str, Stage]

    def to_dict(self) -> dict[str, Any]:
        return {name: stage.to_dict() for name, stage in self.stages.items()}


def from_report(report: dict[str, Any], where: str) -> RunLatency | None:
    """A report's latency stages, or None for a report without them (schema_version 1)."""
    section = report.get("latency")
    if section is None:
        return None
    if not isinstance(section, dict):
        raise ToolError(f"{where}: latency is not an object")
    axis = axis_from(section.get("histogram"), where)
    stages = {name: stage_from(section[name], axis, f"{where}: latency.{name}")
              for name in STAGES if name in section}
    return RunLatency(axis, stages)


def common_axis(runs: Iterable[RunLatency], what: str) -> Axis | None:
    """The one axis of the runs; refuses runs whose histograms are binned differently."""
    axes = {r.axis for r in runs}
    if len(axes) > 1:
        listed = "; ".join(str(a.to_dict()) for a in axes)
        raise ToolError(f"{what}: the runs' latency histograms have different axes ({listed}); "
                        "they cannot be merged")
    return axes.pop() if axes else None


def pooled(runs: Sequence[RunLatency], what: str) -> dict[str, Stage]:
    """Each stage merged over the runs that have it."""
    common_axis(runs, what)
    out = {}
    for name in STAGES:
        stages = [r.stages[name] for r in runs if name in r.stages]
        if stages:
            out[name] = merge(stages)
    return out


def to_section(runs: Sequence[RunLatency], indices: Sequence[int], what: str) -> dict[str, Any] | None:
    """What an aggregate file keeps: the axis, the pooled summaries and every run's stages with
    their bins (`run` is the run's position in the set), so that a set read back from the
    aggregate merges and resamples as it did from its reports."""
    axis = common_axis(runs, what)
    if axis is None:
        return None
    return {"histogram": axis.to_dict(),
            "pooled": {name: stage.summary() for name, stage in pooled(runs, what).items()},
            "runs": [dict(r.to_dict(), run=i) for r, i in zip(runs, indices, strict=True)]}


def from_section(section: dict[str, Any], where: str) -> dict[int, RunLatency]:
    """An aggregate file's latency section back as each run's stages, keyed by run position."""
    axis = axis_from(section.get("histogram"), where)
    out = {}
    for entry in section.get("runs", []):
        index = entry.get("run")
        if not isinstance(index, int):
            raise ToolError(f"{where}: a latency run without its run number")
        if index in out:
            raise ToolError(f"{where}: latency run {index} is given twice")
        out[index] = RunLatency(axis, {name: stage_from(entry[name], axis, f"{where}: latency run {index} {name}")
                                       for name in STAGES if name in entry})
    return out


def _with_transactions(runs: Sequence[RunLatency], stage: str) -> list[Stage]:
    return [r.stages[stage] for r in runs if stage in r.stages and r.stages[stage].count > 0]


def percentile_change(a: Sequence[RunLatency], b: Sequence[RunLatency], stage: str, q: float,
                      confidence: float = stats.CONFIDENCE) -> stats.Change | None:
    """B against A for one stage's pooled q-quantile: change = p(B) / p(A) − 1 of the merged
    histograms, and a bootstrap interval over runs (each side's runs resampled with
    replacement, every resample's histograms merged; stats.bootstrap_interval). `mean_a` and
    `mean_b` of the result hold the pooled percentiles. None when a side has no transactions
    in the stage; no interval with a single run on a side."""
    sa, sb = _with_transactions(a, stage), _with_transactions(b, stage)
    if not sa or not sb:
        return None
    pa, pb = _pooled_percentile_us(sa, q), _pooled_percentile_us(sb, q)
    change = stats.Change(n_a=len(sa), n_b=len(sb), mean_a=pa, mean_b=pb, change_pct=(pb / pa - 1.0) * 100.0,
                          ci_low_pct=None, ci_high_pct=None, ci_method=None, p_value=None, min_p_value=None)
    if min(len(sa), len(sb)) < 2:
        return change

    def ratio(ia, ib, axis=-1):
        return _resampled_percentile_us(sb, q, ib) / _resampled_percentile_us(sa, q, ia) - 1.0

    low, high = stats.bootstrap_interval((np.arange(len(sa)), np.arange(len(sb))), ratio, vectorized=True,
                                         confidence=confidence, n_resamples=CHANGE_RESAMPLES)
    if math.isfinite(low) and math.isfinite(high):
        change.ci_low_pct, change.ci_high_pct = low * 100.0, high * 100.0
        change.ci_method = "bootstrap over runs"
    return change
