"""Adaptive repetition: deciding an A/B comparison while its pairs come in, with an interval
that stays valid however often it is looked at.

A fixed-sample test (stats.compare) is valid for one look at a number of runs chosen in
advance. Re-testing after every extra run and stopping at the first "significant" answer
inflates its false-positive rate well above its α. `Sequential` instead keeps a confidence
sequence: a sequence of intervals that all cover the true change at once, with probability
1 − α, so that stopping at any pair, chosen by looking at the data, keeps the error rate.

The method (Waudby-Smith, Arbour, Sinha, Kennedy & Ramdas, "Time-uniform central limit
theory and asymptotic confidence sequences", Annals of Statistics 52(6), 2024, Theorem 2.2,
the two-sided Gaussian-mixture asymptotic confidence sequence):

- Each pair is one interleaved run of A and one of B; its value is the log-ratio
  x = log(b / a). Drift the two runs of a pair share (the machine's load, its temperature)
  cancels in the ratio, and the log makes a slowdown and the matching speed-up symmetric.
- After n pairs, with x̄ the mean and s the sample standard deviation (n − 1) of the log-ratios,
  the interval of the mean log-ratio is

      x̄ ± s · sqrt( 2 (n ρ² + 1) / (n² ρ²) · log( sqrt(n ρ² + 1) / α ) ).

  ρ sets the time at which the interval is narrowest; it is tuned for the pairs expected,
  n* (the budget, `max_pairs`, else DEFAULT_EXPECTED_PAIRS):
  ρ = sqrt( (−2 log α + log(−2 log α + 1)) / n* ). At n* the half-width is about 3.0 s / √n
  at α = 0.05, against 1.96 s / √n for a single look: the price of looking after every pair.
- The change of B against A is exp(x̄) − 1, and the interval's ends are mapped the same way.
  `detectable` is the half-width, exp(half-width) − 1: the smallest change whose interval
  would lie wholly on one side of 0 with these pairs.

Assumptions: the pairs' log-ratios are independent and identically distributed with a finite
variance (the runs of a pair may share any drift: it cancels; the drift between pairs may
wander, since it does not enter the ratio). The sequence is asymptotic: its coverage holds as
the pairs grow, and with few pairs the sample standard deviation can be too small by chance.
So there is no look before MIN_PAIRS pairs (the interval is then unbounded), and the
half-width is widened by Student's t against the normal at 1 − α/2, t(n − 1) / z (1.42 at 5
pairs, 1.15 at 10, 1.04 at 30, tending to 1, so the sequence is the same as the pairs grow):
the interval treats s as σ, and s of a few pairs of light-tailed noise (a thread's CPU time)
falls short often enough that without the widening the first looks call a false change in
5.6 % of A/A comparisons of Gaussian noise at α = 0.05 and threshold 0 (2.8 % with it). The
simulation test
(tests/scripts/test_sequential.py) shows the false-positive rate at or below α on noise like
a shared machine's: a few percent a run, a long right tail, and drift shared by both runs of
a pair; and on light-tailed Gaussian noise.

The decision, three-way with the threshold t (relative, 0.01 = 1 %):

- "slower" when the whole interval lies above +t, "faster" when it lies below −t: B differs
  from A by more than t, at 1 − α;
- "equivalent" when the whole interval lies within ±t: whatever the change is, it is smaller
  than t (an interval within ±t that excludes 0 is still "equivalent": it is a change too
  small to matter, and the reason says on which side of 0 it lies);
- otherwise "undecided": the interval crosses +t or −t. It stays so until the interval
  settles or the budget (max_pairs pairs, max_seconds seconds) is spent.

Why this rule rather than "the interval excludes 0": the question a tool asks is whether a
change is larger than what matters, and every interval settles one of the three ways in the
end (it shrinks towards a point, which lies outside ±t or within it), except when the true
change sits at ±t itself, where the budget decides. The verdict is about the values as
given, where higher is slower (times): a tool comparing a metric whose higher value is
better maps "slower"/"faster" through metrics.DIRECTIONS as it does for its other verdicts.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from . import metrics, stats
from .common import Parser, duration, finite_number

ALPHA = 0.05
# No look before this many pairs: the sample standard deviation of fewer is too unsure.
MIN_PAIRS = 5
# The pairs the interval is tuned for when no max_pairs is given.
DEFAULT_EXPECTED_PAIRS = 30

VERDICTS = ("slower", "faster", "equivalent", "undecided")
METHOD = ("anytime-valid: the asymptotic confidence sequence of the mean log-ratio log(B/A) of interleaved "
          "pairs (Waudby-Smith et al., Annals of Statistics 2024), valid however often it is looked at, widened "
          f"by Student's t over the normal for few pairs; no look before {MIN_PAIRS} pairs")


@dataclass(frozen=True)
class Decision:
    verdict: str        # "slower" | "faster" | "equivalent" | "undecided" (B against A)
    change: float       # the estimated relative change of B against A (0.03 = +3 %)
    low: float          # the anytime-valid interval of the change at 1 − alpha
    high: float
    pairs: int
    detectable: float   # the smallest |change| these pairs could have detected (the half-width)
    reason: str         # one line: why decided, or why not

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def tuned_rho(expected_pairs: int, alpha: float) -> float:
    """The ρ that makes the interval narrowest after `expected_pairs` pairs."""
    k = -2.0 * math.log(alpha)
    return math.sqrt((k + math.log(k + 1.0)) / max(1, expected_pairs))


def radius(pairs: int, rho: float, alpha: float) -> float:
    """The half-width of the interval in units of the standard deviation of one pair."""
    r2n = pairs * rho * rho
    return math.sqrt(2.0 * (r2n + 1.0) / (pairs * pairs * rho * rho) * math.log(math.sqrt(r2n + 1.0) / alpha))


@functools.cache
def small_sample_factor(pairs: int, alpha: float) -> float:
    """How much wider the interval is made for a standard deviation estimated from `pairs`
    pairs: Student's t quantile with pairs − 1 degrees of freedom against the normal's, both at
    1 − α/2 (the module's docstring says why)."""
    sps = stats.scipy_stats()
    return float(sps.t.ppf(1.0 - alpha / 2.0, pairs - 1) / sps.norm.ppf(1.0 - alpha / 2.0))


def _pct(x: float) -> str:
    return f"{x * 100:+.1f} %"


class Sequential:
    """The sequential comparison of B against A, pair by pair (see the module's docstring)."""

    def __init__(self, threshold: float, alpha: float = ALPHA, max_pairs: int | None = None,
                 max_seconds: float | None = None, clock: Callable[[], float] = time.monotonic,
                 start: float | None = None):
        if not (threshold >= 0.0 and math.isfinite(threshold)):
            raise ValueError(f"the threshold must be a finite number ≥ 0, not {threshold}")
        if not 0.0 < alpha < 1.0:
            raise ValueError(f"alpha must lie between 0 and 1, not {alpha}")
        if max_pairs is not None and max_pairs < 1:
            raise ValueError(f"max_pairs must be at least 1, not {max_pairs}")
        if max_seconds is not None and not max_seconds > 0.0:
            raise ValueError(f"max_seconds must be positive, not {max_seconds}")
        self.threshold = threshold
        self.alpha = alpha
        self.max_pairs = max_pairs
        self.max_seconds = max_seconds
        self.rho = tuned_rho(max_pairs or DEFAULT_EXPECTED_PAIRS, alpha)
        self._clock = clock
        # When the time budget started: now, unless the caller's clock started earlier (a judge
        # made once the first pair shows what it can judge).
        self._start = clock() if start is None else start
        self._n = 0
        self._mean = 0.0    # of the log-ratios (Welford's running mean and sum of squares)
        self._m2 = 0.0

    def add(self, a: float, b: float) -> None:
        """One interleaved pair's values (a run of A and the run of B beside it)."""
        if not (a > 0.0 and b > 0.0 and math.isfinite(a) and math.isfinite(b)):
            raise ValueError(f"a pair needs two finite positive values, not {a} and {b}")
        x = math.log(b / a)
        self._n += 1
        delta = x - self._mean
        self._mean += delta / self._n
        self._m2 += delta * (x - self._mean)

    @property
    def pairs(self) -> int:
        return self._n

    @property
    def spread(self) -> float | None:
        """The sample standard deviation of the pairs' log-ratios (the noise of one pair's
        ratio); None before two pairs."""
        return math.sqrt(self._m2 / (self._n - 1)) if self._n >= 2 else None

    def elapsed(self) -> float:
        return self._clock() - self._start

    def budget_spent(self) -> str | None:
        """Why no more pairs should be run, or None: max_pairs pairs added, or a next pair that
        would end after max_seconds, at the average time a pair has taken so far (the clock
        runs from the construction)."""
        if self.max_pairs is not None and self._n >= self.max_pairs:
            return f"budget spent: {self._n} pairs"
        if self.max_seconds is not None:
            elapsed = self.elapsed()
            per_pair = elapsed / self._n if self._n else 0.0
            if elapsed + per_pair >= self.max_seconds:
                return (f"budget spent: {elapsed:.0f} s of {self.max_seconds:.0f} s"
                        + (f" (a pair takes {per_pair:.3g} s)" if elapsed < self.max_seconds else ""))
        return None

    def _interval(self) -> tuple[float, float]:
        """The interval of the mean log-ratio, unbounded before MIN_PAIRS pairs."""
        spread = self.spread
        if self._n < MIN_PAIRS or spread is None:
            return -math.inf, math.inf
        half = spread * radius(self._n, self.rho, self.alpha) * small_sample_factor(self._n, self.alpha)
        return self._mean - half, self._mean + half

    def _settled(self, low: float, high: float) -> tuple[str, str] | None:
        t = self.threshold
        if low > t:
            return "slower", f"interval above {_pct(t)}"
        if high < -t:
            return "faster", f"interval below {_pct(-t)}"
        if -t <= low and high <= t:
            side = " (above 0)" if low > 0 else " (below 0)" if high < 0 else ""
            return "equivalent", f"interval within ±{t * 100:.1f} %{side}"
        return None

    def decision(self) -> Decision:
        low_log, high_log = self._interval()
        low, high = math.expm1(low_log), math.expm1(high_log)
        change = math.expm1(self._mean) if self._n else math.nan
        half = (high_log - low_log) / 2.0
        detectable = math.expm1(half) if math.isfinite(half) else math.inf
        settled = self._settled(low, high) if self._n >= MIN_PAIRS else None
        if settled is not None:
            verdict, reason = settled
        else:
            verdict = "undecided"
            spent = self.budget_spent()
            if spent is not None:
                reason = spent
            elif self._n < MIN_PAIRS:
                reason = f"{self._n} pairs: no look before {MIN_PAIRS}"
            else:
                crossed = [_pct(x) for x in (-self.threshold, self.threshold) if low < x < high]
                reason = f"interval crosses {' and '.join(crossed) or _pct(self.threshold)}"
        return Decision(verdict=verdict, change=change, low=low, high=high, pairs=self._n,
                        detectable=detectable, reason=reason)

    def to_dict(self) -> dict[str, Any]:
        """The decision with what it was decided under, for a tool's JSON."""
        return {**self.decision().to_dict(), "threshold": self.threshold, "alpha": self.alpha,
                "max_pairs": self.max_pairs, "max_seconds": self.max_seconds, "method": METHOD}

    @property
    def decided(self) -> bool:
        """The verdict is settled, or the budget is spent: no more pairs are needed."""
        return self.decision().verdict != "undecided" or self.budget_spent() is not None


def describe(d: Decision, metric: str | None = None) -> str:
    """One line for a table or a progress line: the verdict (in the metric's words, see
    `worded`), the change, the interval, the pairs, the smallest detectable change, the reason."""
    interval = "" if not math.isfinite(d.high) else f" [{_pct(d.low)}, {_pct(d.high)}]"
    detectable = "" if not math.isfinite(d.detectable) else f", detectable ±{d.detectable * 100:.1f} %"
    change = "" if math.isnan(d.change) else f" {_pct(d.change)}"
    return f"{worded(d.verdict, metric)}{change}{interval}, {d.pairs} pairs{detectable} ({d.reason})"


def worded(verdict: str, metric: str | None = None) -> str:
    """The verdict in the words of the metric's direction (metrics.DIRECTIONS): "slower" and
    "faster" say that B's value is higher or lower, which for a rate is faster or slower, and
    for a metric without a better direction is higher or lower."""
    if metric is None or verdict not in ("slower", "faster"):
        return verdict
    direction = metrics.direction(metric)
    higher = verdict == "slower"
    if direction is None:
        return "higher" if higher else "lower"
    return direction.worse_word if higher == (direction.better < 0) else direction.better_word


def add_options(parser: Parser, threshold_pct: float, max_time: bool = True) -> None:
    """The options of a tool that decides sequentially: --threshold, and --max-time (a tool
    that has its own --max-runs defines it itself)."""
    parser.add_argument("--threshold", type=finite_number(0.0, 100.0, "a percentage"), default=threshold_pct,
                        metavar="PCT",
                        help="the sequential decision: B is slower or faster when the whole anytime-valid interval "
                             "of the change lies beyond ±PCT %%, equivalent when it lies within (default: %(default)s)")
    if max_time:
        parser.add_argument("--max-time", type=duration, default=None, metavar="DURATION",
                            help="the time budget of the added runs, such as 20m or 1h30m: no pair (or round) starts "
                                 "that would end after it, at the average time one has taken (default: none)")
