"""Change points over commits in the results history (docs/history.md#change-points).

A series is one metric of one configuration (its digest) of one kind of result: one value per
commit, the mean of that commit's valid results, the commits in the repository's order when
git knows them all, else in the order they were first ingested. apache-otava's E-Divisive
(`otava.analysis.compute_change_points`: windows of the series split where the two sides
differ most, each split kept when a t-test between its neighbouring segments gives a p-value
under --max-pvalue) finds the change points; each is then reported with its magnitude, the
change of the mean from the segment before it to the segment after it, and that change's 95%
interval (Welch's t over the two segments' per-commit values, stats.compare) and p-value.
"""

from __future__ import annotations

import functools
import subprocess
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sqlalchemy.engine import Connection

from . import stats
from .common import REPO_ROOT
from .history_db import Filters, metrics_of, select_results

DEFAULT_MAX_PVALUE = 0.001
DEFAULT_MIN_MAGNITUDE_PCT = 0.0
WINDOW = 50          # otava's sliding window, in commits
MIN_SEGMENT = 3      # a segment shorter than this is an outlier (a run a neighbour slowed), not a change
MIN_POINTS = 2 * MIN_SEGMENT   # fewer commits than this: no detection
REFINE = 5           # how far (in commits) a change point may move to where the two sides' means differ most


@dataclass
class Series:
    kind: str
    metric: str
    config: str | None
    commits: list[str] = field(default_factory=list)
    values: list[float] = field(default_factory=list)   # the mean of each commit's results
    counts: list[int] = field(default_factory=list)     # how many results each mean is of


@dataclass
class ChangePoint:
    series: Series
    index: int                 # the first commit of the new segment
    change: stats.Change       # the segment after against the segment before
    otava_pvalue: float

    @property
    def commit(self) -> str:
        return self.series.commits[self.index]

    def to_dict(self) -> dict[str, Any]:
        c = self.change
        return {"kind": self.series.kind, "metric": self.series.metric, "config": self.series.config,
                "commit": self.commit, "index": self.index, "previous_commit": self.series.commits[self.index - 1],
                "mean_before": c.mean_a, "mean_after": c.mean_b, "change_pct": c.change_pct,
                "ci_low_pct": c.ci_low_pct, "ci_high_pct": c.ci_high_pct, "p_value": self.otava_pvalue,
                "commits_before": c.n_a, "commits_after": c.n_b}


def git_order(commits: Sequence[str]) -> dict[str, int] | None:
    """Each commit's place in the repository's history (oldest first), when git knows them all
    (a commit given as a prefix, `-dirty` ignored); None otherwise."""
    p = subprocess.run(["git", "-C", str(REPO_ROOT), "rev-list", "--topo-order", "--reverse", "--all"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        return None
    full = p.stdout.split()
    place = {h: i for i, h in enumerate(full)}
    out: dict[str, int] = {}
    for commit in commits:
        short = commit.removesuffix("-dirty")
        hits = [h for h in full if h.startswith(short)] if len(short) >= 4 else []
        if len(hits) != 1:
            return None
        out[commit] = place[hits[0]]
    return out


def build_series(conn: Connection, f: Filters) -> list[Series]:
    """Every (kind, metric, configuration) series the filters keep; results without a commit
    are left out."""
    rows = [r for r in select_results(conn, f) if r["commit"]]
    values = metrics_of(conn, [r["id"] for r in rows])
    first_seen: dict[str, int] = {}
    groups: dict[tuple[str, str, str | None], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        first_seen.setdefault(r["commit"], r["id"])
        for name, value in values[r["id"]].items():
            if f.metric is None or name == f.metric:
                groups[(r["kind"], name, r["config_digest"])][r["commit"]].append(value)
    order = git_order(list(first_seen)) or first_seen
    out = []
    for (kind, name, config), by_commit in sorted(groups.items(), key=lambda kv: (kv[0][1], kv[0][0], kv[0][2] or "")):
        s = Series(kind, name, config)
        for commit in sorted(by_commit, key=lambda c: order[c]):
            s.commits.append(commit)
            s.values.append(sum(by_commit[commit]) / len(by_commit[commit]))
            s.counts.append(len(by_commit[commit]))
        out.append(s)
    return out


def _without_short_segments(values: np.ndarray, indices: list[int]) -> list[int]:
    """The change points left when every segment shorter than MIN_SEGMENT is merged into the
    neighbouring segment whose median is nearer its own: an outlier (a run a neighbour slowed)
    is no segment of its own."""
    indices = sorted(set(indices))
    while True:
        bounds = [0, *indices, len(values)]
        short = next((k for k in range(len(bounds) - 1) if bounds[k + 1] - bounds[k] < MIN_SEGMENT), None)
        if short is None:
            return indices
        if short == 0 or short == len(bounds) - 2:
            drop = bounds[1] if short == 0 else bounds[-2]
        else:
            own = np.median(values[bounds[short]:bounds[short + 1]])
            left = np.median(values[bounds[short - 1]:bounds[short]])
            right = np.median(values[bounds[short + 1]:bounds[short + 2]])
            drop = bounds[short] if abs(own - left) <= abs(own - right) else bounds[short + 1]
        indices.remove(drop)


def _refined(values: np.ndarray, indices: list[int]) -> list[int]:
    """Each change point moved (by up to REFINE commits, between its neighbours) to the split
    with the least absolute deviation from the two segments' medians (robust to the long right
    tail of shared machines): E-Divisive places a change by a distance statistic that is coarse
    on its own."""
    out = list(indices)
    for k in range(len(out)):
        start = out[k - 1] if k else 0
        end = out[k + 1] if k + 1 < len(out) else len(values)
        lo, hi = max(start + MIN_SEGMENT, out[k] - REFINE), min(end - MIN_SEGMENT, out[k] + REFINE)
        if lo <= hi:
            out[k] = min(range(lo, hi + 1), key=functools.partial(_deviation, values, start, end=end))
    return out


def _deviation(values: np.ndarray, start: int, split: int, end: int) -> float:
    a, b = values[start:split], values[split:end]
    return float(np.abs(a - np.median(a)).sum() + np.abs(b - np.median(b)).sum())


def detect(s: Series, max_pvalue: float = DEFAULT_MAX_PVALUE,
           min_magnitude_pct: float = DEFAULT_MIN_MAGNITUDE_PCT) -> list[ChangePoint]:
    """The series' change points, oldest first, each at least min_magnitude_pct in size."""
    if len(s.values) < MIN_POINTS or len(set(s.values)) == 1:
        return []
    # lazy for start-up time: otava imports scipy.stats, about a second of CPU that only a detection needs
    from otava.analysis import compute_change_points

    found, _ = compute_change_points(s.values, window_len=WINDOW, max_pvalue=max_pvalue,
                                     min_magnitude=min_magnitude_pct / 100)
    pvalues = {int(cp.index): float(cp.stats.pvalue) for cp in found}
    values = np.asarray(s.values, dtype=float)
    kept = _without_short_segments(values, list(pvalues))
    out = []
    for i, (index, moved) in enumerate(zip(kept, _refined(values, kept), strict=True)):
        start = kept[i - 1] if i else 0
        end = kept[i + 1] if i + 1 < len(kept) else len(values)
        change = stats.compare(s.values[start:moved], s.values[moved:end], ci_method="welch")
        if change.p_value is None or change.p_value > max_pvalue or \
                (change.change_pct is not None and abs(change.change_pct) < min_magnitude_pct):
            continue   # what is left of a change once its outliers were merged away
        out.append(ChangePoint(s, moved, change, pvalues[index]))
    return out


def head_change(points: Sequence[ChangePoint]) -> ChangePoint | None:
    """The change point that starts the newest commit's segment, if any."""
    return points[-1] if points else None
