"""The statistics on inputs whose answers are worked out by hand, and the flattening of a
report into named metrics."""

import math

import numpy as np
import pytest

import fakes
from apiary_tools import metrics, stats

# Student's t quantiles, from a printed table: t(0.975; 4) and t(0.975; 8).
T_975_4 = 2.776445
T_975_8 = 2.306004


def test_summary_of_one_to_five():
    s = stats.summarize_sample([1, 2, 3, 4, 5])
    assert s.n == 5
    assert s.mean == 3 and s.median == 3 and s.min == 1 and s.max == 5
    # sample variance: (4 + 1 + 0 + 1 + 4) / 4 = 2.5
    assert s.stddev == pytest.approx(math.sqrt(2.5))
    # half width: t · s / √n = 2.776445 · √2.5 / √5 = 2.776445 · √0.5
    half = T_975_4 * math.sqrt(0.5)
    assert s.ci_low == pytest.approx(3 - half, abs=1e-5)
    assert s.ci_high == pytest.approx(3 + half, abs=1e-5)


def test_summary_of_even_count_takes_middle_mean():
    s = stats.summarize_sample([10, 40, 20, 30])
    assert s.median == 25 and s.mean == 25


def test_single_value_has_no_spread():
    s = stats.summarize_sample([7.5])
    assert (s.n, s.mean, s.median, s.min, s.max) == (1, 7.5, 7.5, 7.5, 7.5)
    assert s.stddev is None and s.ci_low is None and s.ci_high is None


def test_constant_values_have_a_point_interval():
    s = stats.summarize_sample([4, 4, 4])
    assert s.stddev == 0 and s.ci_low == 4 and s.ci_high == 4


def test_empty_is_an_error():
    with pytest.raises(ValueError):
        stats.summarize_sample([])


A = [100, 101, 99, 100.5, 99.5]
B = [110, 111, 109, 110.5, 109.5]


def test_clear_change_welch():
    c = stats.compare(A, B, ci_method="welch")
    assert c.mean_a == 100 and c.mean_b == 110
    assert c.change_pct == pytest.approx(10.0)
    # Both samples have variance 0.625, so se = √(0.625/5 + 0.625/5) = 0.5, Welch df = 8:
    # difference 10 ± 2.306004 · 0.5, divided by mean(A) = 100, in percent.
    assert c.ci_low_pct == pytest.approx(10 - T_975_8 * 0.5, abs=1e-4)
    assert c.ci_high_pct == pytest.approx(10 + T_975_8 * 0.5, abs=1e-4)
    # Complete separation of 5 against 5: the exact two-sided p is 2 / C(10, 5) = 2 / 252.
    assert c.p_value == pytest.approx(2 / 252)
    assert c.min_p_value == pytest.approx(2 / 252)


def test_clear_change_bootstrap_brackets_the_change():
    c = stats.compare(A, B)
    assert c.ci_method == "bootstrap"
    assert 8 < c.ci_low_pct < 10 < c.ci_high_pct < 12
    again = stats.compare(A, B)
    assert (again.ci_low_pct, again.ci_high_pct) == (c.ci_low_pct, c.ci_high_pct)  # seeded


def test_overlapping_samples_are_not_significant():
    c = stats.compare([1, 3, 5, 7, 9], [2, 4, 6, 8, 10])
    assert c.change_pct == pytest.approx(20.0)  # means 5 and 6
    # U = 10 of 25, the middle of the distribution: p = 0.690 (exact test, no ties)
    assert c.p_value == pytest.approx(0.6904761904761905)
    assert c.ci_low_pct < 0 < c.ci_high_pct


def test_single_runs_give_the_change_only():
    c = stats.compare([200.0], [150.0])
    assert c.change_pct == pytest.approx(-25.0)
    assert c.p_value is None and c.ci_low_pct is None and c.min_p_value is None


def test_zero_baseline():
    both = stats.compare([0, 0, 0], [0, 0, 0])
    assert both.change_pct == 0 and both.p_value == 1.0
    grew = stats.compare([0, 0, 0], [1, 2, 3])
    assert grew.change_pct is None and grew.p_value is not None


def test_min_p_value():
    assert stats.min_p_value(3, 3) == pytest.approx(0.1)       # 2 / C(6, 3) = 2 / 20
    assert stats.min_p_value(5, 5) == pytest.approx(2 / 252)
    assert stats.min_p_value(1, 1) == 1.0


def test_flatten_names_and_skips():
    report = fakes.make_report([1000, 2000, 3000], tx_per_block=100)
    m = metrics.flatten(report)
    assert m["aggregates.cycle_us.avg"] == 2000
    assert m["writer.unknown_share"] == 0.01
    assert m["targets.cpu_utilization.value"] == 0.9
    assert m["colony.kinds.vote.count"] == 75
    assert m["us_per_tx"] == pytest.approx(20.0)  # 2000 µs / 100 transactions
    # config, context and blocks are not metrics; flags and block numbers are not either
    assert not any(k.startswith(("config.", "context.", "blocks.")) for k in m)
    assert "aggregates.cycle_us.min_block" not in m and "schema_version" not in m
    assert "colony.sink_closed" not in m and "targets.cpu_utilization.met" not in m
    # the counters' threads by name, without their thread ids
    report["counters"] = {"enabled": True, "threads": [{"name": "writer", "tid": 4242, "window": {"task_clock_ns": 7},
                                                        "per_transaction": {"task_clock_ns": 0.5}}]}
    m = metrics.flatten(report)
    assert m["counters.writer.per_transaction.task_clock_ns"] == 0.5
    assert not any(k.endswith(".tid") or ".window." in k for k in m) and "counters.enabled" not in m
    # --profile's section ranks functions: nothing to average over runs
    report["profile"] = {"samples": 5000, "threads": {"writer": 3000},
                         "top": [{"function": "f", "self_share": 0.1, "total_share": 0.2}]}
    assert not any(k.startswith("profile.") for k in metrics.flatten(report))


def test_key_metrics_come_first():
    names = metrics.ordered(["zeta", "us_per_tx", "aggregates.cycle_us.avg", "alpha"])
    assert names == ["aggregates.cycle_us.avg", "us_per_tx", "alpha", "zeta"]


def test_direction_table():
    assert metrics.direction("aggregates.cycle_us.avg").better == metrics.LOWER
    assert metrics.direction("us_per_tx").better == metrics.LOWER
    assert metrics.direction("throughput.tx_per_s").better == metrics.HIGHER
    assert metrics.direction("writer.unknown_share").better == metrics.LOWER
    assert metrics.direction("throughput.transactions") is None
    assert metrics.direction("writer.wait_work_share") is None
    assert metrics.direction("counters.writer.per_transaction.task_clock_ns").better == metrics.LOWER
    assert metrics.direction("counters.producer-0.per_block.llc_misses").better == metrics.LOWER
    assert metrics.direction("counters.writer.ipc").better == metrics.HIGHER


# ---- many metrics at once ------------------------------------------------------------------------

def test_holm_and_bh_adjust_as_their_definitions_say():
    raw = [0.01, 0.04, 0.03, 0.005]
    # Holm: sorted 0.005·4, 0.01·3, 0.03·2, 0.04·1, then made non-decreasing.
    assert stats.adjust_p_values(raw, "holm") == pytest.approx([0.03, 0.06, 0.06, 0.02])
    # BH: sorted p·m/rank, then made non-increasing from the largest.
    assert stats.adjust_p_values(raw, "bh") == pytest.approx([0.02, 0.04, 0.04, 0.02])
    assert stats.adjust_p_values(raw, "none") == raw
    assert stats.adjust_p_values([0.9, 0.8], "holm") == pytest.approx([1.0, 1.0])
    assert stats.adjust_p_values([], "bh") == []
    with pytest.raises(ValueError):
        stats.adjust_p_values(raw, "bonferroni")


def _family_false_call_rate(method: str, trials: int = 300, metrics: int = 40, runs: int = 10) -> float:
    """A/A trials of a family of unchanged metrics (Mann-Whitney per metric, as compare tests
    them): the share of trials in which any metric is called changed at alpha 0.05."""
    rng = np.random.default_rng(7)
    a = rng.normal(100.0, 3.0, size=(trials, metrics, runs))
    b = rng.normal(100.0, 3.0, size=(trials, metrics, runs))
    p = stats.scipy_stats().mannwhitneyu(a, b, axis=2).pvalue
    return float(np.mean([min(stats.adjust_p_values(row, method)) < 0.05 for row in p]))


def test_an_aa_of_forty_metrics_calls_nothing_in_95_percent_of_trials():
    # 300 trials: a true rate of 5% is seen below 8.5% with probability above 99.8%.
    assert _family_false_call_rate("bh") <= 0.085
    assert _family_false_call_rate("holm") <= 0.085
    # Tested one by one, almost every A/A of forty metrics calls one of them (1 − 0.95^40 ≈ 0.87).
    assert _family_false_call_rate("none") > 0.7


def test_bh_still_finds_a_change_that_moves_many_metrics():
    rng = np.random.default_rng(11)
    a = rng.normal(100.0, 1.0, size=(40, 5))
    b = rng.normal(100.0, 1.0, size=(40, 5))
    b[:10] *= 1.05   # ten of forty metrics 5% up: far beyond their noise
    p = stats.scipy_stats().mannwhitneyu(a, b, axis=1).pvalue
    called = np.asarray(stats.adjust_p_values(p, "bh")) < 0.05
    assert called[:10].all() and not called[10:].any()
    # Holm multiplies five against five runs' smallest p (0.008) by up to 40: it calls none.
    assert not (np.asarray(stats.adjust_p_values(p, "holm")) < 0.05).any()
