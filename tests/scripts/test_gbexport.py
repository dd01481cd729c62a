"""gb-export: the document validates against the package's schema, its numbers follow from
the report, and it has what Google Benchmark's tools/compare.py reads."""

import json
import math

import jsonschema
import numpy as np
import pytest
from scipy.stats import mannwhitneyu

import fakes
from apiary_tools.commands import gbexport, multirun

FAMILIES = ["apiary/cycle", "apiary/produced", "apiary/applied", "apiary/processing", "apiary/per_tx"]
SECONDS_PER_UNIT = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def schema_validator():
    schema = gbexport.load_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def by_name(doc, name):
    return [b for b in doc["benchmarks"] if b["name"] == name]


def test_single_report_blocks_are_repetitions(tmp_path):
    cycles = [10000.0, 20000.0, 30000.0, 40000.0]
    report = fakes.make_report(cycles, tx_per_block=100, utilization=0.75)
    path = fakes.write_report(tmp_path / "r.json", report)
    doc = gbexport.export([str(path)])
    schema_validator().validate(doc)

    ctx = doc["context"]
    assert ctx["num_cpus"] == 2 and ctx["host_name"] == "testhost"
    assert ctx["mhz_per_cpu"] == 2500  # from "Test CPU @ 2.50GHz"
    assert ctx["date"] == "2026-01-02T03:04:05+00:00" and ctx["library_build_type"] == "release"

    reps = by_name(doc, "apiary/cycle")
    assert [r["real_time"] for r in reps] == cycles
    assert [r["repetition_index"] for r in reps] == [0, 1, 2, 3]
    assert all(r["run_type"] == "iteration" and r["repetitions"] == 4 and r["iterations"] == 1 for r in reps)
    # cpu_time: the cycle times the process's busy cores, 2 cores · 0.75
    assert reps[0]["cpu_time"] == pytest.approx(10000 * 1.5)
    assert reps[0]["items_per_second"] == pytest.approx(100 / 0.01)

    per_tx = by_name(doc, "apiary/per_tx")
    assert [r["real_time"] for r in per_tx] == [100.0, 200.0, 300.0, 400.0]
    assert per_tx[0]["iterations"] == 100

    (mean,) = by_name(doc, "apiary/cycle_mean")
    (median,) = by_name(doc, "apiary/cycle_median")
    (sd,) = by_name(doc, "apiary/cycle_stddev")
    (cv,) = by_name(doc, "apiary/cycle_cv")
    assert mean["real_time"] == 25000 and median["real_time"] == 25000
    # sample stddev of 10k, 20k, 30k, 40k: √(500,000,000 / 3)
    assert sd["real_time"] == pytest.approx(math.sqrt(5e8 / 3))
    assert cv["real_time"] == pytest.approx(math.sqrt(5e8 / 3) / 25000)
    assert cv["aggregate_unit"] == "percentage" and mean["aggregate_unit"] == "time"
    assert all(a["run_type"] == "aggregate" and a["iterations"] == 4 and "repetition_index" not in a
               for a in (mean, median, sd, cv))


def test_set_runs_are_repetitions_and_ms_unit(tmp_path):
    d = fakes.write_set(tmp_path / "set", [20000, 21000, 22000])
    doc = gbexport.export([str(d)], prefix="bench", unit="ms")
    schema_validator().validate(doc)
    reps = by_name(doc, "bench/cycle")
    assert len(reps) == 3 and all(r["time_unit"] == "ms" for r in reps)
    run1 = fakes.make_report(fakes.noisy_cycles(20000, 1))
    assert reps[0]["real_time"] == pytest.approx(run1["aggregates"]["cycle_us"]["avg"] / 1000)
    assert reps[0]["iterations"] == 10  # the run's measured cycles


def test_aggregate_file_exports_like_its_directory(tmp_path):
    d = fakes.write_set(tmp_path / "set", [20000, 21000])
    assert multirun.main(["--aggregate", str(d), "--quiet"]) == 0
    from_dir = gbexport.export([str(d)])
    from_file = gbexport.export([str(d / "aggregate.json")])
    assert [b["real_time"] for b in from_dir["benchmarks"]] == \
        pytest.approx([b["real_time"] for b in from_file["benchmarks"]])


def test_schema_rejects_what_compare_py_could_not_read(tmp_path):
    doc = gbexport.export([str(fakes.write_report(tmp_path / "r.json", fakes.make_report([1000, 2000])))])
    v = schema_validator()
    broken = json.loads(json.dumps(doc))
    del broken["benchmarks"][0]["time_unit"]
    assert not v.is_valid(broken)
    broken = json.loads(json.dumps(doc))
    broken["benchmarks"][0]["run_type"] = "aggregate"  # an aggregate without aggregate_name
    assert not v.is_valid(broken)
    broken = json.loads(json.dumps(doc))
    broken["benchmarks"][0]["time_unit"] = "minutes"
    assert not v.is_valid(broken)


def _sort_like_gbench(doc):
    """The order Google Benchmark's tools sort results into before comparing: by family, then
    instance, then iterations before aggregates, then repetition."""
    def key(b):
        return (b.get("family_index", -1), b.get("per_family_instance_index", -1),
                1 if b.get("run_type") == "aggregate" else 0, b.get("repetition_index", -1))
    return sorted(doc["benchmarks"], key=key)


def _difference_report(old, new):
    """What compare.py computes, written from its documented behaviour: entries paired by name
    (time_unit, real_time and cpu_time required), relative change per pair, and a U test over
    the repetitions of each name."""
    old_rows, new_rows = _sort_like_gbench(old), _sort_like_gbench(new)
    names = [n for n in dict.fromkeys(b["name"] for b in old_rows) if any(b["name"] == n for b in new_rows)]
    out = {}
    for name in names:
        lhs = [b for b in old_rows if b["name"] == name]
        rhs = [b for b in new_rows if b["name"] == name and b["time_unit"] == lhs[0]["time_unit"]]
        for b in lhs + rhs:
            assert {"time_unit", "real_time", "cpu_time"} <= b.keys()
            assert b["time_unit"] in SECONDS_PER_UNIT
            if b["run_type"] == "aggregate":
                assert b["aggregate_name"]
        changes = [(y["real_time"] - x["real_time"]) / abs(x["real_time"]) for x, y in zip(lhs, rhs, strict=True)]
        p = None
        if len(lhs) >= 2 and len(rhs) >= 2:
            p = mannwhitneyu([b["real_time"] for b in lhs], [b["real_time"] for b in rhs]).pvalue
        out[name] = (changes, p)
    # the geometric mean over non-aggregate entries, in seconds
    times = [b["real_time"] * SECONDS_PER_UNIT[b["time_unit"]] for b in old_rows if b["run_type"] != "aggregate"]
    assert all(t > 0 for t in times)
    return out, float(np.exp(np.mean(np.log(times))))


def test_two_exports_pair_up_as_compare_py_expects(tmp_path):
    a = fakes.write_set(tmp_path / "a", [20000, 20100, 19900])
    b = fakes.write_set(tmp_path / "b", [22000, 22100, 21900])
    old, new = gbexport.export([str(a)]), gbexport.export([str(b)])
    diff, geomean = _difference_report(old, new)
    for family in FAMILIES:
        assert family in diff and family + "_mean" in diff and family + "_cv" in diff
    changes, p = diff["apiary/cycle"]
    assert len(changes) == 3 and all(c == pytest.approx(0.1, abs=0.02) for c in changes)
    assert p == pytest.approx(0.1)  # 3 against 3, fully separated
    assert geomean > 0


def test_cli_writes_a_valid_file(tmp_path, capsys):
    src = fakes.write_report(tmp_path / "r.json", fakes.make_report([1000, 1100, 1200]))
    out = tmp_path / "gb.json"
    assert gbexport.main([str(src), "-o", str(out)]) == 0
    schema_validator().validate(json.loads(out.read_text()))
    assert gbexport.main([str(src), "--per-run"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(by_name(doc, "apiary/cycle")) == 1


def test_cli_rejects_bad_input(tmp_path, capsys):
    failed = fakes.write_report(tmp_path / "f.json", fakes.make_report([1000], status="failed"))
    assert gbexport.main([str(failed)]) == 2
    assert gbexport.main([str(tmp_path / "none.json")]) == 2
    assert gbexport.main([str(failed), "--time-unit", "h"]) == 2
    assert gbexport.main([str(failed), "--prefix", "a b"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert all(line.startswith("gb-export: ") for line in err) and len(err) == 4
