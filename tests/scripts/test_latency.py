"""Latency histograms: the percentile rule on a hand-computed example, merging against the
histogram of the concatenated times, the pooled mean, and the refusals (other axes, bins that
do not add up)."""

import json
import math

import numpy as np
import pytest

import fakes
from apiary_tools import latency
from apiary_tools.common import ToolError

# Four bins of ratio 2 from 1 µs: [1, 2), [2, 4), [4, 8), [8, 16) µs, under- and overflow.
SMALL = {"lowest_ns": 1000, "highest_ns": 16000, "bins": 4}


def stage_of(values_ns, axis=SMALL):
    a = latency.axis_from(axis, "test")
    return latency.stage_from(fakes.stage(values_ns, axis), a, "test")


def assert_same_stage(got, want):
    assert got["bins"] == want["bins"]
    assert {k: v for k, v in got.items() if k != "bins"} == pytest.approx(
        {k: v for k, v in want.items() if k != "bins"}, rel=1e-12)


def test_percentile_rule_by_hand():
    s = stage_of([500, 1500, 2500, 3000, 5000, 20000])
    assert list(s.counts) == [1, 1, 2, 1, 0, 1]          # underflow, bins 0..3, overflow
    assert s.count == 6 and s.min_us == 0.5 and s.max_us == 20.0
    assert s.mean_us == pytest.approx(32500 / 6 / 1000)
    assert s.percentile_us(0.1) == 0.5                   # rank 1: the underflow bin gives min
    assert s.percentile_us(0.3) == pytest.approx(math.sqrt(2))   # rank 2: bin 0's centre, 1000·2^0.5 ns
    assert s.percentile_us(0.5) == pytest.approx(2 * math.sqrt(2))  # rank 3: bin 1, 1000·2^1.5 ns
    assert s.percentile_us(0.8) == pytest.approx(4 * math.sqrt(2))  # rank ceil(4.8) = 5: bin 2
    assert s.percentile_us(0.9) == 20.0                  # rank 6: the overflow bin gives max
    assert s.percentile_us(1e-9) == 0.5                  # the rank is at least 1


def test_centre_is_clamped_into_min_and_max():
    s = stage_of([1500, 1500])
    assert s.percentile_us(0.5) == 1.5                   # centre 1.414 µs < min 1.5 µs


def test_empty_stage():
    s = stage_of([])
    assert s.count == 0 and s.mean_us is None
    assert s.summary() == {"count": 0, "mean_us": None, "min_us": None, "p50_us": None, "p90_us": None,
                           "p99_us": None, "p999_us": None, "p9999_us": None, "max_us": None}
    assert s.to_dict()["bins"] == []


def test_a_single_stage_reads_back_as_written():
    x = np.random.default_rng(1).lognormal(np.log(2e6), 1.0, 5000)
    written = fakes.stage(x, fakes.AXIS)
    s = latency.stage_from(written, latency.axis_from(fakes.AXIS, "t"), "t")
    assert_same_stage(s.to_dict(), written)


def test_merging_equals_the_histogram_of_all_the_times():
    rng = np.random.default_rng(7)
    parts = [rng.lognormal(np.log(m), 0.8, n) for m, n in ((3e5, 4000), (1e6, 1500), (5e7, 300))]
    parts.append(np.array([50.0, 2e11]))                 # one under- and one overflow
    axis = latency.axis_from(fakes.AXIS, "t")
    merged = latency.merge([latency.stage_from(fakes.stage(p, fakes.AXIS), axis, "t") for p in parts])
    whole = fakes.stage(np.concatenate(parts), fakes.AXIS)
    assert_same_stage(merged.to_dict(), whole)
    assert merged.count == sum(len(p) for p in parts)
    assert merged.percentile_us(0.99) == pytest.approx(whole["p99_us"])
    assert merged.mean_us == pytest.approx(np.concatenate(parts).mean() / 1000)


@pytest.mark.parametrize("cells", [None, 10])   # the bootstrap's batch whole, and in chunks of a few rows
def test_resamples_merge_by_the_rule_of_a_single_merge(monkeypatch, cells):
    """The bootstrap's vectorised statistic (many resamples' pooled percentiles at once) gives
    exactly what merging each resample's stages and reading the percentile gives, for a
    batch of resamples and for the jackknife's leave-one-out shape."""
    if cells is not None:
        monkeypatch.setattr(latency, "_MERGE_CELLS", cells)
    rng = np.random.default_rng(3)
    axis = latency.axis_from(SMALL, "t")
    stages = [latency.stage_from(fakes.stage(rng.lognormal(np.log(m), 1.2, n), SMALL), axis, "t")
              for m, n in ((1500, 40), (4000, 7), (9000, 25), (700, 3), (20000, 11))]
    for q in (1e-9, 0.3, 0.5, 0.9, 0.99, 1.0):
        for shape in ((40, 5), (2, 5, 4)):
            picks = rng.integers(0, len(stages), shape)
            want = [latency.merge([stages[i] for i in row]).percentile_us(q) for row in picks.reshape(-1, shape[-1])]
            got = latency._resampled_percentile_us(stages, q, picks)
            assert got.shape == shape[:-1]
            assert list(got.ravel()) == want


def test_merge_keeps_empty_stages_out_of_min_and_max():
    merged = latency.merge([stage_of([]), stage_of([3000]), stage_of([])])
    assert (merged.count, merged.min_us, merged.max_us) == (1, 3.0, 3.0)


def test_different_axes_are_refused():
    a = stage_of([1500])
    b = stage_of([1500], {"lowest_ns": 1000, "highest_ns": 16000, "bins": 8})
    with pytest.raises(ToolError, match="different axes"):
        latency.merge([a, b])


def test_pooled_over_reports_and_the_axis_check():
    reports = [fakes.make_report([20000.0] * 5), fakes.make_report([21000.0] * 5)]
    runs = [latency.from_report(r, f"r{i}") for i, r in enumerate(reports)]
    pooled = latency.pooled(runs, "set")
    assert pooled["inclusion"].count == sum(r["latency"]["inclusion"]["count"] for r in reports)
    assert pooled["rejection"].count == 0
    other = fakes.make_report([20000.0] * 5)
    other["latency"]["histogram"]["bins"] = 1046
    with pytest.raises(ToolError, match="different axes"):
        latency.pooled(runs + [latency.from_report(_rebin(other), "x")], "set")


def _rebin(report):
    """The report's stages re-binned for its changed axis (only the axis matters to the test)."""
    for name in ("queue_wait", "inclusion", "end_to_end", "rejection"):
        report["latency"][name]["bins"] = [[0, report["latency"][name]["count"]]] \
            if report["latency"][name]["count"] else []
    return report


def test_schema_1_reports_have_no_latency():
    assert latency.from_report(fakes.make_report([20000.0] * 5, schema_version=1), "r") is None


@pytest.mark.parametrize("change, message", [
    (lambda st: st["bins"].append([2000, 1]), "out of range"),
    (lambda st: st["bins"].reverse(), "out of order"),
    (lambda st: st.update(count=st["count"] + 1), "count says"),
    (lambda st: st["bins"].append([5]), "pair"),
])
def test_bad_stages_are_refused(change, message):
    report = fakes.make_report([20000.0] * 5)
    change(report["latency"]["inclusion"])
    with pytest.raises(ToolError, match=message):
        latency.from_report(report, "r.json")


# ---- multirun's pooled table ----------------------------------------------------------------

def test_multirun_pools_the_runs_histograms(tmp_path, capsys):
    from apiary_tools.commands import multirun
    times = [fakes.load_model(2400, rate, 4000, seed, 20.0) for seed, rate in enumerate((1000, 2000, 3000))]
    for i, t in enumerate(times, 1):
        fakes.write_report(tmp_path / f"run-{i:03d}.json", fakes.make_report([20000.0] * 10, latency=t))
    assert multirun.main(["--aggregate", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    agg = json.loads((tmp_path / "aggregate.json").read_text())
    assert not any(name.startswith("latency.") for name in agg["metrics"])   # no mean of per-run p99s
    for name in ("queue_wait", "inclusion", "end_to_end"):
        whole = fakes.stage(np.concatenate([t[name] for t in times]), with_bins=False)
        assert agg["latency"]["pooled"][name] == pytest.approx(whole)
    assert [r["run"] for r in agg["latency"]["runs"]] == [0, 1, 2]
    assert "Transaction latency, pooled over 3 runs' histograms:" in out
    p99 = agg["latency"]["pooled"]["inclusion"]["p99_us"]
    assert "| inclusion (submitted → included) | 7,200 |" in out and f"{p99:,.0f}" in out


def test_multirun_without_latency_has_no_latency_rows(tmp_path, capsys):
    from apiary_tools.commands import multirun
    fakes.write_set(tmp_path, [20000, 20100], schema_version=1)
    assert multirun.main(["--aggregate", str(tmp_path)]) == 0
    assert "Transaction latency" not in capsys.readouterr().out
    assert "latency" not in json.loads((tmp_path / "aggregate.json").read_text())


def test_multirun_says_which_runs_lack_latency(tmp_path, capsys):
    from apiary_tools.commands import multirun
    fakes.write_set(tmp_path, [20000, 20100])
    fakes.write_report(tmp_path / "run-003.json", fakes.make_report([20000.0] * 10, schema_version=1))
    assert multirun.main(["--aggregate", str(tmp_path)]) == 0
    assert "pooled over 2 runs' histograms (1 of the 3 runs have no latency)" in capsys.readouterr().out


@pytest.mark.parametrize("spoil, why", [
    (lambda runs: runs[1].update(run=0), "latency run 0 is given twice"),
    (lambda runs: runs[0]["inclusion"]["bins"][0].__setitem__(0, -7), "bin [-7, "),
    (lambda runs: runs[0]["inclusion"]["bins"][-1].__setitem__(0, 1048), "bin [1048, ")])
def test_an_aggregate_s_impossible_latency_run_is_refused(spoil, why):
    """An aggregate file's runs are read back as a report's stages: a run given twice (one run's
    transactions would be lost, another's counted twice) and a bin index below -1 or past the
    axis are refused, naming the file."""
    runs = [latency.from_report(fakes.make_report(fakes.noisy_cycles(20000, i)), f"r{i}") for i in range(2)]
    section = json.loads(json.dumps(latency.to_section(runs, [0, 1], "set")))
    assert set(latency.from_section(section, "agg.json")) == {0, 1}
    spoil(section["runs"])
    with pytest.raises(ToolError, match=r"^agg\.json: ") as e:
        latency.from_section(section, "agg.json")
    assert why in str(e.value)
