"""compare's verdicts and exit codes on constructed sets: a clear improvement, a clear
regression, noise, an effect below the threshold, single runs, and bad input."""

import json

import pytest

import fakes
from apiary_tools import comparison
from apiary_tools.commands import compare
from apiary_tools.common import ToolError
from apiary_tools.reports import load_report, load_set

BASE = [20000, 20100, 19900, 20050, 19950]


def rows(cmp):
    return cmp.by_name


def test_clear_faster(tmp_path):
    a = fakes.write_set(tmp_path / "a", BASE)
    b = fakes.write_set(tmp_path / "b", [m * 0.9 for m in BASE])
    cmp = comparison.build([str(a)], [str(b)])
    cycle = rows(cmp)["aggregates.cycle_us.avg"]
    assert cycle.verdict == "faster" and cycle.improvement and not cycle.regression
    assert cycle.change.change_pct == pytest.approx(-10, abs=0.5)
    # more transactions per second is also "faster"
    assert rows(cmp)["throughput.tx_per_s"].verdict == "faster"
    assert cmp.exit_code == 0
    assert compare.main([str(a), str(b), "--quiet"]) == 0


def test_clear_slower_fails_the_gate(tmp_path, capsys):
    a = fakes.write_set(tmp_path / "a", BASE)
    b = fakes.write_set(tmp_path / "b", [m * 1.1 for m in BASE])
    out_json = tmp_path / "cmp.json"
    assert compare.main([str(a), str(b), "--json", str(out_json)]) == 1
    text = capsys.readouterr().out
    assert "Gate: **FAIL**" in text and "slower" in text
    data = json.loads(out_json.read_text())
    assert data["gate"]["failed"] and data["gate"]["regressions"] == ["aggregates.cycle_us.avg"]
    cycle = next(m for m in data["metrics"] if m["metric"] == "aggregates.cycle_us.avg")
    assert cycle["verdict"] == "slower" and cycle["better"] == "lower"
    assert cycle["p_value"] == pytest.approx(2 / 252)
    assert cycle["ci_low_pct"] < cycle["change_pct"] < cycle["ci_high_pct"]


def test_noise_is_no_significant_change(tmp_path):
    a = fakes.write_set(tmp_path / "a", [20000, 20300, 19800, 20100, 19900])
    b = fakes.write_set(tmp_path / "b", [20100, 19850, 20250, 19950, 20000])
    cmp = comparison.build([str(a)], [str(b)])
    assert rows(cmp)["aggregates.cycle_us.avg"].verdict == "no significant change"
    assert cmp.exit_code == 0


def test_min_effect_hides_small_but_consistent_changes(tmp_path):
    steady = [20000] * 5
    a = fakes.write_set(tmp_path / "a", steady, spread=0.001)
    b = fakes.write_set(tmp_path / "b", [m * 1.005 for m in steady], spread=0.001)  # +0.5%, separated
    strict = comparison.build([str(a)], [str(b)], min_effect_pct=0.0)
    loose = comparison.build([str(a)], [str(b)], min_effect_pct=1.0)
    assert strict.by_name["aggregates.cycle_us.avg"].change.change_pct == pytest.approx(0.5, abs=0.2)
    assert strict.by_name["aggregates.cycle_us.avg"].verdict == "slower"
    assert strict.exit_code == 1
    assert loose.by_name["aggregates.cycle_us.avg"].verdict == "no significant change"
    assert loose.exit_code == 0


def test_single_reports_have_no_p_value(tmp_path, capsys):
    a = fakes.write_report(tmp_path / "a.json", fakes.make_report([20000] * 10))
    b = fakes.write_report(tmp_path / "b.json", fakes.make_report([30000] * 10))
    assert compare.main([str(a), str(b)]) == 0
    text = capsys.readouterr().out
    assert "no p-value" in text and "no test (n=1)" in text and "+50.00%" in text


def test_too_few_runs_are_flagged(tmp_path):
    a = fakes.write_set(tmp_path / "a", BASE[:3])
    b = fakes.write_set(tmp_path / "b", [m * 2 for m in BASE[:3]])
    cmp = comparison.build([str(a)], [str(b)])
    assert cmp.by_name["aggregates.cycle_us.avg"].verdict == "no significant change"
    assert any("smallest possible Mann" in n for n in cmp.notes())


def test_neutral_metric_is_higher_or_lower(tmp_path):
    # Ten runs a side: the one metric that moved is called even after the family's adjustment.
    a = fakes.write_set(tmp_path / "a", BASE * 2, utilization=0.5)
    b = fakes.write_set(tmp_path / "b", BASE * 2, utilization=0.8)
    cmp = comparison.build([str(a)], [str(b)])
    assert cmp.by_name["cpu.utilization"].verdict == "higher"
    assert not cmp.by_name["cpu.utilization"].regression


def test_one_metric_of_many_needs_runs_enough_for_the_family(tmp_path):
    # Five runs a side: Mann-Whitney's smallest p is 0.008, and a lone change among the family's
    # metrics, adjusted for their number, cannot reach alpha; tested on its own it would.
    a = fakes.write_set(tmp_path / "a", BASE, utilization=0.5)
    b = fakes.write_set(tmp_path / "b", BASE, utilization=0.8)
    for method, verdict in (("bh", "no significant change"), ("holm", "no significant change"), ("none", "higher")):
        cmp = comparison.build([str(a)], [str(b)], correction=method)
        row = cmp.by_name["cpu.utilization"]
        assert row.verdict == verdict and row.in_family, method
        assert row.p_adjusted == pytest.approx(row.change.p_value) if method == "none" else \
            row.p_adjusted > row.change.p_value, method
        assert cmp.to_dict()["multiplicity"]["family_size"] == cmp.family.size > 10
    holm = comparison.build([str(a)], [str(b)], correction="holm")
    assert any("Holm's smallest adjusted p" in n for n in holm.notes())
    # The gate's metric is the question asked: never in the family, its own p decides.
    gate = holm.by_name["aggregates.cycle_us.avg"]
    assert not gate.in_family and gate.p_adjusted is None


def test_aggregate_files_compare_like_directories(tmp_path):
    from apiary_tools.commands import multirun
    a = fakes.write_set(tmp_path / "a", BASE)
    b = fakes.write_set(tmp_path / "b", [m * 1.1 for m in BASE])
    assert multirun.main(["--aggregate", str(a), "--quiet"]) == 0
    assert multirun.main(["--aggregate", str(b), "--quiet"]) == 0
    from_dirs = comparison.build([str(a)], [str(b)])
    from_files = comparison.build([str(a / "aggregate.json")], [str(b / "aggregate.json")])
    x = from_dirs.by_name["us_per_tx"].change
    y = from_files.by_name["us_per_tx"].change
    assert (x.change_pct, x.p_value, x.ci_low_pct) == pytest.approx((y.change_pct, y.p_value, y.ci_low_pct))


def test_skipped_runs_are_named(tmp_path):
    a = fakes.write_set(tmp_path / "a", BASE)
    fakes.write_report(tmp_path / "a" / "run-009.json", fakes.make_report([1.0], status="interrupted"))
    b = fakes.write_set(tmp_path / "b", BASE)
    cmp = comparison.build([str(a)], [str(b)])
    assert cmp.a.n == 5
    assert any("run-009.json" in n and "interrupted" in n for n in cmp.notes())


def test_aborted_runs_are_skipped_and_named(tmp_path):
    """A hard exit's report (status aborted: context and config, nothing measured) is a run
    that did not complete, named in the notes, never a traceback; read alone, it is refused."""
    a = fakes.write_set(tmp_path / "a", BASE)
    full = fakes.make_report([1.0])
    aborted = {k: full[k] for k in ("schema_version", "name", "context", "config")}
    aborted.update(status="aborted", interrupted=True, failed=False, stop_reason="SIGTERM",
                   error="a second signal ended the run at once", report_path="run-010.json")
    fakes.write_report(tmp_path / "a" / "run-010.json", aborted)
    cmp = comparison.build([str(a)], [str(fakes.write_set(tmp_path / "b", BASE))])
    assert cmp.a.n == 5
    assert any("run-010.json" in n and "aborted" in n for n in cmp.notes())
    with pytest.raises(ToolError, match="aborted by a second signal"):
        load_report(tmp_path / "a" / "run-010.json")


def test_invalid_runs_stay_out_of_verdicts_unless_asked(tmp_path):
    """A report marked invalid (validity.valid false: its load generator fell behind its schedule)
    is skipped and named with its reason; asked for, it counts."""
    a = fakes.write_set(tmp_path / "a", BASE)
    invalid = fakes.make_report([50.0])
    invalid["validity"] = {"valid": False, "reasons": ["the load generator fell behind its schedule"], "warnings": []}
    fakes.write_report(tmp_path / "a" / "run-010.json", invalid)
    cmp = comparison.build([str(a)], [str(fakes.write_set(tmp_path / "b", BASE))])
    assert cmp.a.n == 5
    assert any("run-010.json" in n and "invalid: the load generator fell behind" in n for n in cmp.notes())
    assert comparison.build([str(a)], [str(a)], include_invalid=True).a.n == 6
    assert load_set([a], "a").n == 6   # shown or recorded, it counts
    with pytest.raises(ToolError, match="no completed, valid runs"):
        load_set([tmp_path / "a" / "run-010.json"], "a", include_invalid=False)


@pytest.mark.parametrize("extra, message", [
    (["--fail-on", "no.such.metric"], "not a metric"),
    (["--fail-on", "cpu.utilization"], "no better direction"),
    (["--alpha", "2"], "between 0 and 1"),
    (["--min-effect", "x"], "percentage"),
    (["--labels", "one"], "two names"),
])
def test_bad_usage_exits_2(tmp_path, capsys, extra, message):
    a = fakes.write_set(tmp_path / "a", BASE[:2])
    b = fakes.write_set(tmp_path / "b", BASE[:2])
    assert compare.main([str(a), str(b)] + extra) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("compare: ") and message in err and "\n" not in err


def test_bad_input_exits_2(tmp_path, capsys):
    assert compare.main([str(tmp_path / "missing.json"), str(tmp_path / "missing.json")]) == 2
    assert "no such file" in capsys.readouterr().err
    (tmp_path / "x.json").write_text("{not json")
    assert compare.main([str(tmp_path / "x.json"), str(tmp_path / "x.json")]) == 2
    assert "not valid JSON" in capsys.readouterr().err
    (tmp_path / "y.json").write_text("{}")
    assert compare.main([str(tmp_path / "y.json"), str(tmp_path / "y.json")]) == 2
    empty = tmp_path / "empty"
    empty.mkdir()
    assert compare.main([str(empty), str(empty)]) == 2


# ---- pooled latency percentiles ---------------------------------------------------------------

P99 = ("latency.inclusion.p99_us", "latency.end_to_end.p99_us")


def test_latency_tail_that_rises_is_slower(tmp_path, capsys):
    a = fakes.write_latency_set(tmp_path / "a", 1000)
    b = fakes.write_latency_set(tmp_path / "b", 3000, seed=1)    # 3/4 of the capacity: a longer wait
    out_json = tmp_path / "cmp.json"
    assert compare.main([str(a), str(b), "--fail-on", "latency.inclusion.p99_us", "--json", str(out_json)]) == 1
    text = capsys.readouterr().out
    assert "bootstrap over runs" in text and "Gate: **FAIL**" in text
    data = {m["metric"]: m for m in json.loads(out_json.read_text())["metrics"]}
    for name in P99:
        row = data[name]
        assert row["statistic"] == "pooled p99" and row["verdict"] == "slower" and row["p_value"] is None
        assert 0 < row["ci_low_pct"] <= row["change_pct"] <= row["ci_high_pct"]
        assert row["n_a"] == row["n_b"] == 5
    # the point estimate is the pooled percentile of each side, not a mean of the runs' p99s
    cmp = comparison.build([str(a)], [str(b)])
    from apiary_tools import latency
    pooled = latency.pooled(cmp.a.latency_runs(), "a")["inclusion"]
    assert cmp.by_name["latency.inclusion.p99_us"].change.mean_a == pooled.percentile_us(0.99)


def test_latency_of_the_same_load_is_no_significant_change(tmp_path):
    a = fakes.write_latency_set(tmp_path / "a", 2000)
    b = fakes.write_latency_set(tmp_path / "b", 2000, seed=1)
    cmp = comparison.build([str(a)], [str(b)], gate=["latency.end_to_end.p99_us"])
    row = cmp.by_name["latency.inclusion.p99_us"]
    assert row.verdict == "no significant change" and row.change.ci_low_pct <= 0 <= row.change.ci_high_pct
    assert cmp.exit_code == 0


def test_latency_interval_is_reproducible_and_survives_the_aggregate(tmp_path):
    from apiary_tools.commands import multirun
    a = fakes.write_latency_set(tmp_path / "a", 1000)
    b = fakes.write_latency_set(tmp_path / "b", 1500, seed=1)
    first = comparison.build([str(a)], [str(b)]).by_name["latency.inclusion.p99_us"].change
    again = comparison.build([str(a)], [str(b)]).by_name["latency.inclusion.p99_us"].change
    assert first == again
    assert multirun.main(["--aggregate", str(a), "--quiet"]) == 0
    assert multirun.main(["--aggregate", str(b), "--quiet"]) == 0
    from_files = comparison.build([str(a / "aggregate.json")], [str(b / "aggregate.json")])
    assert from_files.by_name["latency.inclusion.p99_us"].change == first


def test_latency_of_single_reports_has_no_interval(tmp_path):
    a = fakes.write_latency_set(tmp_path / "a", 1000, runs=1)
    b = fakes.write_latency_set(tmp_path / "b", 3000, runs=1)
    row = comparison.build([str(a)], [str(b)]).by_name["latency.inclusion.p99_us"]
    assert row.verdict == "no test (n=1)" and row.change.ci_low_pct is None and row.change.change_pct > 0


def test_schema_1_on_one_side_compares_no_latency(tmp_path):
    a = fakes.write_set(tmp_path / "a", BASE, schema_version=1)
    b = fakes.write_set(tmp_path / "b", BASE)
    cmp = comparison.build([str(a)], [str(b)])
    assert not any(r.name.startswith("latency.") for r in cmp.rows)
    assert any("only b's reports have latency" in n for n in cmp.notes())
    assert compare.main([str(a), str(b), "--fail-on", "latency.inclusion.p99_us"]) == 2


def test_latency_of_different_axes_is_refused(tmp_path, capsys):
    a = fakes.write_latency_set(tmp_path / "a", 1000, runs=2)
    b = tmp_path / "b"
    times = fakes.load_model(100, 1000, 4000, 1, 20.0)
    report = fakes.make_report([20000.0] * 5)
    report["latency"] = fakes.latency_section(times, {"lowest_ns": 1000, "highest_ns": 10**11, "bins": 500})
    fakes.write_report(b / "run-001.json", report)
    assert compare.main([str(a), str(b)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("compare: ") and "different axes" in err and "\n" not in err
