"""The statistics: a summary of one metric over repeated runs, and the comparison of two sets
of runs. All the arithmetic is numpy's and scipy's; this module only chooses and documents.

Choices, and why:
- stddev is the sample standard deviation (n − 1): the runs are a sample of what the machine
  could have measured. (apiary's own reports give the population standard deviation of a
  run's blocks, n; the functions here say sample in their names.)
- The confidence interval of a mean is Student's t interval (scipy.stats.t): with five or
  ten runs the normal approximation is too narrow.
- The change between two sets is mean(B) / mean(A) − 1. Its confidence interval is, by
  default, a bootstrap of that ratio (scipy.stats.bootstrap, BCa, both sets resampled
  independently, a fixed seed so that a comparison prints the same numbers twice); the
  alternative "welch" is Welch's t interval of mean(B) − mean(A) divided by mean(A), which
  treats mean(A) as exact and so is a little narrow. With few runs every interval is rough:
  the bootstrap in particular cannot be wider than the spread of the runs it resamples.
- The significance test is Mann–Whitney U, two-sided (scipy.stats.mannwhitneyu): it assumes
  no distribution, and run times on a shared machine have long right tails. Its smallest
  possible p-value depends on the number of runs (2 / C(n_a + n_b, n_a) without ties: 0.1 for
  3 against 3, 0.008 for 5 against 5), which `min_p_value` reports so that too few runs show.
- Runs from several machines (a fleet, fleet.py) are not one sample: machines differ by more
  than runs on one machine do. When both sets have runs on two or more machines, the
  comparison is stratified by machine: each machine's change is mean(B) / mean(A) − 1 of its
  own runs, the change is the mean of the machines' changes (each machine counts once), its
  interval a bootstrap that resamples every machine's A and B runs on their own, and the p-value
  a permutation test that exchanges A and B labels only within a machine (exact when there
  are at most 20,000 relabelings, else 10,000 random ones, seeded). Machines that ran only one
  side are left out. Beside the change, the spread is split in two: within machines (the
  pooled standard deviation of the runs around their machine's and side's mean) and between
  machines (the standard deviation of the machines' means), both in percent of the mean.
- A table that tests many metrics at once would, at alpha 0.05 each, call some 1 in 20 of
  unchanged metrics changed: with 40 counters, an A/A comparison marks at least one in most
  trials. So the metrics beyond the question asked (the gate's) form one family whose
  p-values are adjusted together (`adjust_p_values`): by Holm's step-down by default, which
  keeps the chance of any false call in the family at alpha, or by Benjamini–Hochberg
  (scipy.stats.false_discovery_control), which keeps the expected share of false calls among
  the calls at alpha and so finds more when many metrics really changed. Holm is a few lines
  of arithmetic that scipy does not have: the i-th smallest of m p-values is multiplied by
  m − i + 1, and the results are made non-decreasing in that order.
- Whether a series settles (a resource pool's level over a run, scripts/rc-tune) is the slope
  of a least-squares line through it (scipy.stats.linregress), given as the drift it makes
  over the series' span, with Student's t interval of the slope (n − 2 degrees of freedom).
"""

from __future__ import annotations

import functools
import itertools
import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

CONFIDENCE = 0.95
BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_SEED = 20_26
CI_METHODS = ("bootstrap", "welch")
EXACT_PERMUTATIONS = 20_000
RANDOM_PERMUTATIONS = 10_000


def scipy_stats() -> Any:
    """scipy.stats, imported where an interval or a test is first computed: lazy for start-up time (the import
    takes about a second of CPU, most of a tool's start-up, and --help, a refused option and the readers need none
    of it)."""
    from scipy import stats  # lazy for start-up time: see above

    return stats


@dataclass
class Summary:
    n: int
    mean: float
    median: float
    stddev: float | None    # the sample standard deviation (n − 1)
    min: float
    max: float
    ci_low: float | None
    ci_high: float | None

    def to_dict(self) -> dict:
        return asdict(self)


def sample_stddev(values: Sequence[float] | np.ndarray) -> float | None:
    """The sample standard deviation (n − 1 degrees of freedom); None for fewer than 2 values."""
    x = np.asarray(values, dtype=float)
    return float(np.std(x, ddof=1)) if x.size >= 2 else None


def summarize_sample(values: Sequence[float], confidence: float = CONFIDENCE) -> Summary:
    """Mean, median, sample standard deviation (n − 1; in `stddev`), min, max and the t
    confidence interval of the mean, of values that are a sample (the runs of a set).

    One value has no spread: stddev and the interval are None."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        raise ValueError("no values to summarize")
    mean = float(np.mean(x))
    ci_low = ci_high = None
    stddev = sample_stddev(x)
    if stddev is not None:
        if stddev == 0.0:
            ci_low = ci_high = mean
        else:
            sps = scipy_stats()
            low, high = sps.t.interval(confidence, x.size - 1, loc=mean, scale=sps.sem(x))
            ci_low, ci_high = float(low), float(high)
    return Summary(n=int(x.size), mean=mean, median=float(np.median(x)), stddev=stddev,
                   min=float(np.min(x)), max=float(np.max(x)), ci_low=ci_low, ci_high=ci_high)


def min_p_value(n_a: int, n_b: int) -> float:
    """The smallest two-sided p-value Mann–Whitney U can give for these sizes (no ties)."""
    return min(1.0, 2.0 / float(math.comb(n_a + n_b, n_a)))


# How a family of p-values is adjusted for being tested together (adjust_p_values).
MULTIPLICITY_METHODS = {
    "holm": "Holm's step-down (the chance of any false call in the family stays at alpha)",
    "bh": "Benjamini–Hochberg (the expected share of false calls among the calls stays at alpha)",
    "none": "no adjustment (each metric tested at alpha on its own)",
}


def adjust_p_values(p_values: Sequence[float], method: str) -> list[float]:
    """The p-values of a family of tests, adjusted by `method` (MULTIPLICITY_METHODS) so that
    comparing each with alpha controls the family's error: an adjusted p is never below its
    raw one and never above 1. `m`, the family's size, is len(p_values)."""
    if method not in MULTIPLICITY_METHODS:
        raise ValueError(f"unknown multiplicity method {method!r}")
    ps = np.asarray(p_values, dtype=float)
    if ps.size == 0 or method == "none":
        return [float(p) for p in ps]
    if method == "bh":
        return [float(p) for p in scipy_stats().false_discovery_control(ps, method="bh")]
    order = np.argsort(ps, kind="stable")
    stepped = ps[order] * np.arange(ps.size, 0, -1)
    adjusted = np.empty_like(ps)
    adjusted[order] = np.minimum(np.maximum.accumulate(stepped), 1.0)
    return [float(p) for p in adjusted]


@dataclass
class Change:
    n_a: int
    n_b: int
    mean_a: float
    mean_b: float
    change_pct: float | None     # (mean_b / mean_a − 1) · 100; None when mean_a is 0 and mean_b is not
    ci_low_pct: float | None
    ci_high_pct: float | None
    ci_method: str | None
    p_value: float | None        # None: too few runs for a test
    min_p_value: float | None
    test: str = "mann-whitney"   # or "stratified permutation" (runs on several machines)
    machines: int = 1            # the machines compared (strata)
    within_sd_pct: float | None = None    # spread of runs within a machine and side, % of the mean
    between_sd_pct: float | None = None   # spread of the machines' means, % of the mean
    per_machine: list[dict] | None = None  # each machine's n, means and change (stratified only)

    def to_dict(self) -> dict:
        return asdict(self)


def _relative_change(mean_a: float, mean_b: float) -> float | None:
    if mean_a == 0.0:
        return 0.0 if mean_b == 0.0 else None
    return (mean_b / mean_a - 1.0) * 100.0


def _ratio_statistic(a, b, axis=-1):
    return np.mean(b, axis=axis) / np.mean(a, axis=axis) - 1.0


def bootstrap_interval(samples: tuple[np.ndarray, ...], statistic: Callable, vectorized: bool,
                       confidence: float = CONFIDENCE,
                       n_resamples: int = BOOTSTRAP_RESAMPLES) -> tuple[float, float]:
    """The bootstrap interval of `statistic` over independent samples, each resampled on its
    own: BCa, else (on degenerate resamples, where BCa gives NaN) the percentile method; NaN
    when neither gives a finite interval. The seed is fixed, so the numbers repeat."""
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for method in ("BCa", "percentile"):
            res = scipy_stats().bootstrap(samples, statistic, vectorized=vectorized, paired=False,
                                  confidence_level=confidence, n_resamples=n_resamples,
                                  method=method, rng=rng)
            low, high = res.confidence_interval
            if math.isfinite(low) and math.isfinite(high):
                return float(low), float(high)
    return math.nan, math.nan


def _bootstrap_ci(a: np.ndarray, b: np.ndarray, confidence: float) -> tuple[float, float]:
    low, high = bootstrap_interval((a, b), _ratio_statistic, True, confidence)
    return low * 100.0, high * 100.0


def _welch_ci(a: np.ndarray, b: np.ndarray, confidence: float) -> tuple[float, float]:
    ci = scipy_stats().ttest_ind(b, a, equal_var=False).confidence_interval(confidence)
    mean_a = float(np.mean(a))
    return float(ci.low) / mean_a * 100.0, float(ci.high) / mean_a * 100.0


def compare(a: Sequence[float], b: Sequence[float], ci_method: str = "bootstrap",
            confidence: float = CONFIDENCE, hosts_a: Sequence[str] | None = None,
            hosts_b: Sequence[str] | None = None) -> Change:
    """B against A: the relative change of the means, its confidence interval, and the
    Mann–Whitney U p-value. With fewer than two values on a side there is neither interval
    nor test, only the change. With the machine of every value (hosts_a, hosts_b) and two or
    more machines that ran both sides, the comparison is stratified by machine (see above)."""
    if ci_method not in CI_METHODS:
        raise ValueError(f"unknown CI method {ci_method!r}")
    with warnings.catch_warnings():
        # scipy warns about precision when runs are nearly identical; the numbers are still right
        # enough to print, and a warning per metric would bury the table.
        warnings.simplefilter("ignore", RuntimeWarning)
        strata = _strata(a, b, hosts_a, hosts_b)
        if len(strata) >= 2:
            return _compare_stratified(strata, confidence)
        # With one machine that ran both sides, that machine's values.
        side_a, side_b = next(iter(strata.values())) if len(strata) == 1 else (a, b)
        result = _compare(side_a, side_b, ci_method, confidence)
        result.within_sd_pct = _pooled_sample_sd_pct([np.asarray(side_a, float), np.asarray(side_b, float)])
        return result


def _strata(a, b, hosts_a, hosts_b) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each machine's A and B values, for the machines that ran both sides."""
    if hosts_a is None or hosts_b is None:
        return {}
    if len(hosts_a) != len(a) or len(hosts_b) != len(b):
        raise ValueError("one host per value")
    out = {}
    for host in sorted(set(hosts_a) & set(hosts_b)):
        out[host] = (np.array([v for v, h in zip(a, hosts_a, strict=True) if h == host], dtype=float),
                     np.array([v for v, h in zip(b, hosts_b, strict=True) if h == host], dtype=float))
    return out


def _pooled_sample_sd_pct(cells: Sequence[np.ndarray]) -> float | None:
    """The pooled sample standard deviation of the values around their own cell's mean (each
    cell of n values gives n − 1 degrees of freedom), in percent of the mean of all values;
    None without a cell of two or more."""
    dof = sum(c.size - 1 for c in cells if c.size >= 2)
    everything = np.concatenate(cells)
    mean = float(np.mean(everything))
    if dof == 0 or mean == 0.0:
        return None
    pooled = sum(float(np.sum((c - np.mean(c)) ** 2)) for c in cells if c.size >= 2) / dof
    return math.sqrt(pooled) / abs(mean) * 100.0


def _machine_changes(*samples, axis=-1):
    """The mean over machines of mean(B) / mean(A) − 1; samples are A1, B1, A2, B2, ..."""
    ratios = [np.mean(samples[i + 1], axis=axis) / np.mean(samples[i], axis=axis) for i in range(0, len(samples), 2)]
    return np.mean(ratios, axis=0) - 1.0


def _stratum_ratios(values: np.ndarray, n_a: int, rng: np.random.Generator | None) -> np.ndarray:
    """mean(B) / mean(A) of one machine's runs under every relabeling that keeps n_a runs in A
    (rng None), or under RANDOM_PERMUTATIONS random ones."""
    if rng is None:
        chosen = np.array(list(itertools.combinations(range(values.size), n_a)), dtype=int)
    else:
        chosen = np.argsort(rng.random((RANDOM_PERMUTATIONS, values.size)), axis=1)[:, :n_a]
    in_a = values[chosen].sum(axis=1)
    return ((values.sum() - in_a) / (values.size - n_a)) / (in_a / n_a)


def _permutation_p(strata: list[tuple[np.ndarray, np.ndarray]], observed: float) -> tuple[float, float]:
    """Two-sided p of the stratified permutation test, and the smallest p it could give."""
    pooled = [np.concatenate(pair) for pair in strata]
    sizes = [len(pair[0]) for pair in strata]
    total = math.prod(math.comb(len(p), n) for p, n in zip(pooled, sizes, strict=True))
    exact = total <= EXACT_PERMUTATIONS
    rng = None if exact else np.random.default_rng(BOOTSTRAP_SEED)
    ratios = [_stratum_ratios(p, n, rng) for p, n in zip(pooled, sizes, strict=True)]
    if exact:  # every combination of the machines' relabelings
        null: np.ndarray = functools.reduce(np.add, np.ix_(*ratios)).ravel()
    else:      # the k-th random relabeling of every machine together
        null = np.sum(ratios, axis=0)
    null = null / len(ratios) - 1.0
    tolerance = 1e-12 * max(1.0, abs(observed))
    extreme = int(np.sum(np.abs(null) >= abs(observed) - tolerance))
    if exact:
        return min(1.0, extreme / total), min(1.0, 2.0 / total)
    return (extreme + 1) / (RANDOM_PERMUTATIONS + 1), 1.0 / (RANDOM_PERMUTATIONS + 1)


def _compare_stratified(strata: dict[str, tuple[np.ndarray, np.ndarray]], confidence: float) -> Change:
    pairs = list(strata.values())
    means_a = [float(np.mean(a)) for a, _ in pairs]
    means_b = [float(np.mean(b)) for _, b in pairs]
    n_a, n_b = sum(len(a) for a, _ in pairs), sum(len(b) for _, b in pairs)
    per_machine: list[dict[str, Any]] = [
        {"machine": host, "n_a": len(a), "n_b": len(b), "mean_a": ma, "mean_b": mb,
         "change_pct": _relative_change(ma, mb)}
        for (host, (a, b)), ma, mb in zip(strata.items(), means_a, means_b, strict=True)]
    cells = [c for pair in pairs for c in pair]
    midpoints = [(ma + mb) / 2 for ma, mb in zip(means_a, means_b, strict=True)]
    grand = float(np.mean(midpoints))
    result = Change(n_a=n_a, n_b=n_b, mean_a=float(np.mean(means_a)), mean_b=float(np.mean(means_b)),
                    change_pct=None, ci_low_pct=None, ci_high_pct=None, ci_method=None, p_value=None,
                    min_p_value=None, test="stratified permutation", machines=len(pairs),
                    within_sd_pct=_pooled_sample_sd_pct(cells), per_machine=per_machine)
    between = sample_stddev(midpoints)   # two or more machines: never None
    if grand != 0.0 and between is not None:
        result.between_sd_pct = between / abs(grand) * 100.0
    if any(m == 0.0 for m in means_a):
        return result
    observed = float(np.mean(np.array(means_b) / np.array(means_a))) - 1.0
    result.change_pct = observed * 100.0
    if all(np.ptp(c) == 0.0 for c in cells) and len({round(m["change_pct"], 12) for m in per_machine}) == 1:
        result.ci_low_pct = result.ci_high_pct = result.change_pct
    elif all(len(c) >= 2 for c in cells):
        low, high = bootstrap_interval(tuple(cells), _machine_changes, True, confidence)
        if math.isfinite(low) and math.isfinite(high):
            result.ci_low_pct, result.ci_high_pct = low * 100.0, high * 100.0
    result.ci_method = "bootstrap"
    result.p_value, result.min_p_value = _permutation_p(pairs, observed)
    return result


def _compare(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray, ci_method: str,
             confidence: float) -> Change:
    xa = np.asarray(a, dtype=float)
    xb = np.asarray(b, dtype=float)
    if xa.size == 0 or xb.size == 0:
        raise ValueError("both sets need at least one value")
    mean_a, mean_b = float(np.mean(xa)), float(np.mean(xb))
    change = _relative_change(mean_a, mean_b)
    result = Change(n_a=int(xa.size), n_b=int(xb.size), mean_a=mean_a, mean_b=mean_b,
                    change_pct=change, ci_low_pct=None, ci_high_pct=None, ci_method=None,
                    p_value=None, min_p_value=None)
    if xa.size < 2 or xb.size < 2:
        return result

    if np.ptp(xa) == 0.0 and np.ptp(xb) == 0.0:
        # Constant on both sides (a setting echoed into the report): the change is exact.
        result.ci_low_pct = result.ci_high_pct = change
    elif mean_a != 0.0:
        low, high = (_bootstrap_ci if ci_method == "bootstrap" else _welch_ci)(xa, xb, confidence)
        if math.isfinite(low) and math.isfinite(high):
            result.ci_low_pct, result.ci_high_pct = low, high
    p = float(scipy_stats().mannwhitneyu(xa, xb, alternative="two-sided").pvalue)
    result.p_value = p if math.isfinite(p) else 1.0
    result.ci_method = ci_method
    result.min_p_value = min_p_value(xa.size, xb.size)
    return result


@dataclass
class Drift:
    drift: float       # the fitted line's rise over the span of x: slope × (x[-1] − x[0])
    low: float         # its confidence interval
    high: float


def drift_interval(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray,
                   confidence: float = CONFIDENCE, span: float | None = None) -> Drift:
    """The drift of y over `span` (default: the span of x) by a least-squares line, with the t
    interval of its slope. At least 3 points; a series without spread around its line has an
    exact drift."""
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if xs.size < 3:
        raise ValueError("a drift needs at least 3 points")
    span = float(xs[-1] - xs[0]) if span is None else span
    sps = scipy_stats()
    fit = sps.linregress(xs, ys)
    half = float(sps.t.ppf(0.5 + confidence / 2, xs.size - 2) * fit.stderr) if fit.stderr > 0 else 0.0
    return Drift(float(fit.slope) * span, (float(fit.slope) - half) * span, (float(fit.slope) + half) * span)
