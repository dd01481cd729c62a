"""The statistics: a summary of one metric over repeated runs, and the comparison of two sets
of runs. All the arithmetic is numpy's and scipy's; this module only chooses and documents.

Choices, and why:
- stddev is the sample standard deviation (n − 1): the runs are a sample of what the machine
  could have measured.
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
"""

from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass
from typing import Callable, Sequence

import numpy as np
from scipy import special, stats

CONFIDENCE = 0.95
BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_SEED = 20_26
CI_METHODS = ("bootstrap", "welch")


@dataclass
class Summary:
    n: int
    mean: float
    median: float
    stddev: float | None
    min: float
    max: float
    ci_low: float | None
    ci_high: float | None

    def to_dict(self) -> dict:
        return asdict(self)


def summarize(values: Sequence[float], confidence: float = CONFIDENCE) -> Summary:
    """Mean, median, sample stddev, min, max and the t confidence interval of the mean.

    One value has no spread: stddev and the interval are None."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        raise ValueError("no values to summarize")
    mean = float(np.mean(x))
    stddev = ci_low = ci_high = None
    if x.size >= 2:
        stddev = float(np.std(x, ddof=1))
        if stddev == 0.0:
            ci_low = ci_high = mean
        else:
            low, high = stats.t.interval(confidence, x.size - 1, loc=mean, scale=stats.sem(x))
            ci_low, ci_high = float(low), float(high)
    return Summary(n=int(x.size), mean=mean, median=float(np.median(x)), stddev=stddev,
                   min=float(np.min(x)), max=float(np.max(x)), ci_low=ci_low, ci_high=ci_high)


def min_p_value(n_a: int, n_b: int) -> float:
    """The smallest two-sided p-value Mann–Whitney U can give for these sizes (no ties)."""
    return min(1.0, 2.0 / float(special.comb(n_a + n_b, n_a, exact=True)))


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
            res = stats.bootstrap(samples, statistic, vectorized=vectorized, paired=False,
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
    ci = stats.ttest_ind(b, a, equal_var=False).confidence_interval(confidence)
    mean_a = float(np.mean(a))
    return float(ci.low) / mean_a * 100.0, float(ci.high) / mean_a * 100.0


def compare(a: Sequence[float], b: Sequence[float], ci_method: str = "bootstrap",
            confidence: float = CONFIDENCE) -> Change:
    """B against A: the relative change of the means, its confidence interval, and the
    Mann–Whitney U p-value. With fewer than two values on a side there is neither interval
    nor test, only the change."""
    if ci_method not in CI_METHODS:
        raise ValueError(f"unknown CI method {ci_method!r}")
    with warnings.catch_warnings():
        # scipy warns about precision when runs are nearly identical; the numbers are still right
        # enough to print, and a warning per metric would bury the table.
        warnings.simplefilter("ignore", RuntimeWarning)
        return _compare(a, b, ci_method, confidence)


def _compare(a: Sequence[float], b: Sequence[float], ci_method: str, confidence: float) -> Change:
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
    p = float(stats.mannwhitneyu(xa, xb, alternative="two-sided").pvalue)
    result.p_value = p if math.isfinite(p) else 1.0
    result.ci_method = ci_method
    result.min_p_value = min_p_value(xa.size, xb.size)
    return result
