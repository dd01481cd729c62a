"""The sequential comparison (sequential.py): its error rates by simulation, looking after every
pair, and its decisions on inputs worked out by hand."""

import math

import numpy as np
import pytest
from scipy import stats

from apiary_tools import sequential
from apiary_tools.sequential import Sequential

TRIALS = 1_000
# The false-positive rate may exceed α only by the Monte-Carlo error of 1,000 trials
# (its standard error at 5 % is 0.7 %; 6.5 % is two of them).
FALSE_POSITIVE_LIMIT = 0.065


def machine_noise(rng: np.random.Generator, trials: int, pairs: int) -> tuple[np.ndarray, np.ndarray]:
    """Cycle times (ms) like a shared machine's: drift that wanders from pair to pair and is
    shared by both runs of a pair, 2 % of noise a run, and a long right tail (one run in ten
    slowed by an exponential 6 % on average)."""
    drift = np.cumsum(rng.normal(0.0, 0.01, (trials, pairs)), axis=1)

    def runs() -> np.ndarray:
        body = rng.normal(0.0, 0.02, (trials, pairs))
        tail = rng.exponential(0.06, (trials, pairs)) * (rng.random((trials, pairs)) < 0.1)
        return 100.0 * np.exp(drift + body) * (1.0 + tail)

    return runs(), runs()


def verdicts(a: np.ndarray, b: np.ndarray, threshold: float) -> tuple[dict[str, int], list[int]]:
    """Every trial looked at after every pair, stopped as soon as it is decided."""
    counts = dict.fromkeys(sequential.VERDICTS, 0)
    pairs = []
    budget = a.shape[1]
    for xa, xb in zip(a, b, strict=True):
        s = Sequential(threshold, max_pairs=budget)
        for va, vb in zip(xa, xb, strict=True):
            s.add(float(va), float(vb))
            if s.decided:
                break
        d = s.decision()
        counts[d.verdict] += 1
        pairs.append(d.pairs)
    return counts, pairs


@pytest.mark.parametrize("threshold", [0.0, 0.01])
def test_a_against_a_false_positives_stay_at_alpha(threshold):
    # threshold 0 is the hardest case: any interval that leaves 0 is a false "slower" or "faster".
    a, b = machine_noise(np.random.default_rng(1), TRIALS, 60)
    counts, _ = verdicts(a, b, threshold)
    rate = (counts["slower"] + counts["faster"]) / TRIALS
    print(f"A/A, threshold {threshold:.0%}, looking after each of up to 60 pairs: "
          f"false positives {rate:.1%} ({counts})")
    assert rate <= FALSE_POSITIVE_LIMIT


def test_light_tailed_noise_keeps_alpha_too():
    # A thread's CPU time varies from run to run without the wall time's tail: Gaussian noise
    # of 3 % a pair. Its sample standard deviation after the first few pairs falls short of σ
    # often enough that the sequence without its small-sample widening calls a false change in
    # about 6 % of these comparisons at threshold 0; with it, under α.
    rng = np.random.default_rng(4)
    a = np.full((TRIALS, 60), 100.0)
    b = 100.0 * np.exp(rng.normal(0.0, 0.03, (TRIALS, 60)))
    counts, _ = verdicts(a, b, 0.0)
    rate = (counts["slower"] + counts["faster"]) / TRIALS
    print(f"A/A on Gaussian noise, threshold 0: false positives {rate:.1%} ({counts})")
    assert rate <= sequential.ALPHA


def test_the_fixed_test_repeated_fails_where_the_sequence_holds():
    # The simulation can see the problem it guards against: Student's t interval re-tested
    # after each pair from the 5th stops on a false difference far more often than 5 %.
    a, b = machine_noise(np.random.default_rng(2), TRIALS, 60)
    x = np.log(b / a)
    n = np.arange(1, 61)
    mean = np.cumsum(x, axis=1) / n
    sd = np.sqrt(np.maximum(np.cumsum(x * x, axis=1) - n * mean * mean, 0.0) / np.maximum(n - 1, 1))
    half = stats.t.ppf(0.975, np.maximum(n - 1, 1)) * sd / np.sqrt(n)
    excludes = (np.abs(mean) > half)[:, sequential.MIN_PAIRS - 1:]
    naive = float(np.mean(excludes.any(axis=1)))
    print(f"the fixed t test re-tested after every pair: false positives {naive:.1%}")
    assert naive > 2 * FALSE_POSITIVE_LIMIT


def test_a_planted_three_percent_slowdown_is_found():
    a, b = machine_noise(np.random.default_rng(3), TRIALS, 100)
    counts, pairs = verdicts(a, b * 1.03, 0.01)
    found = counts["slower"] / TRIALS
    print(f"3 % slower, threshold 1 %, up to 100 pairs: found {found:.1%}, "
          f"median {int(np.median(pairs))} pairs ({counts})")
    assert found >= 0.90
    assert counts["faster"] == 0


def test_no_look_before_the_minimum():
    s = Sequential(0.01)
    for _ in range(sequential.MIN_PAIRS - 1):
        s.add(100.0, 150.0)
    d = s.decision()
    assert d.verdict == "undecided" and not s.decided
    assert d.low == -1.0 and d.high == math.inf and d.detectable == math.inf   # exp(−∞) − 1 = −100 %
    assert d.change == pytest.approx(0.5)
    assert "no look before" in d.reason


def test_identical_sides_are_equivalent_and_a_constant_change_is_decided():
    same = Sequential(0.01)
    slower = Sequential(0.01)
    for _ in range(sequential.MIN_PAIRS):
        same.add(100.0, 100.0)
        slower.add(100.0, 110.0)
    assert same.decided and same.decision().verdict == "equivalent"
    d = slower.decision()
    assert d.verdict == "slower" and d.low == pytest.approx(0.10) and d.high == pytest.approx(0.10)
    assert d.reason == "interval above +1.0 %" and d.detectable == 0.0


def test_the_interval_by_hand():
    # log-ratios 0.0, 0.1, 0.0, 0.1, 0.0: mean 0.04, sample sd sqrt(0.012 / 4)
    s = Sequential(0.5, max_pairs=20)
    for x in (0.0, 0.1, 0.0, 0.1, 0.0):
        s.add(1.0, math.exp(x))
    k = -2 * math.log(0.05)
    rho2 = (k + math.log(k + 1)) / 20
    # Student's t with 4 degrees of freedom over the normal, both at 97.5 %: the widening for 5 pairs.
    widening = stats.t.ppf(0.975, 4) / stats.norm.ppf(0.975)
    half = math.sqrt(0.012 / 4) * math.sqrt(2 * (5 * rho2 + 1) / (25 * rho2) * math.log(math.sqrt(5 * rho2 + 1) / 0.05))
    half *= widening
    d = s.decision()
    assert d.change == pytest.approx(math.expm1(0.04))
    assert d.low == pytest.approx(math.expm1(0.04 - half)) and d.high == pytest.approx(math.expm1(0.04 + half))
    assert d.verdict == "equivalent" and d.pairs == 5


def test_the_budget_by_pairs_and_by_time():
    by_pairs = Sequential(0.0, max_pairs=6)
    now = [0.0]
    by_time = Sequential(0.0, max_seconds=10.0, clock=lambda: now[0])
    for i in range(6):
        by_pairs.add(100.0, 100.0 + (-1) ** i * 5)
        by_time.add(100.0, 100.0 + (-1) ** i * 5)
    assert by_pairs.decided and by_pairs.decision().reason == "budget spent: 6 pairs"
    assert not by_time.decided
    now[0] = 10.5
    assert by_time.decided and by_time.decision().verdict == "undecided"
    assert by_time.decision().reason.startswith("budget spent: 10 s")


@pytest.mark.parametrize("a, b", [(0.0, 1.0), (1.0, -1.0), (math.nan, 1.0), (1.0, math.inf)])
def test_values_that_are_no_times_are_refused(a, b):
    with pytest.raises(ValueError):
        Sequential(0.01).add(a, b)


def test_no_pair_starts_that_would_end_after_the_time_budget():
    now = [0.0]
    s = Sequential(0.0, max_seconds=10.0, clock=lambda: now[0])
    for i in range(6):
        now[0] += 1.5   # a pair takes 1.5 s
        s.add(100.0, 100.0 + (-1) ** i * 5)
    # 9 s spent, a pair takes 1.5 s: the next would end at 10.5 s, after the budget.
    assert s.decided and s.decision().reason == "budget spent: 9 s of 10 s (a pair takes 1.5 s)"
