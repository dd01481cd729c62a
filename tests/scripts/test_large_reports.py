"""Reports of many blocks (a long soak's): their blocks read as columns and checked a chunk at
a time, gb-export's bounded and stated repetitions, plot's downsampled timeline. On a
20,000-block synthetic report (bigreport.py); the million-block timings are
bench/tools/million_blocks.py's, not a test's."""

import json
import re

import numpy as np
import pytest

import fakes
from apiary_tools import figures, inputs, schemas
from apiary_tools.commands import gbexport, plot, soak
from apiary_tools.common import ToolError
from apiary_tools.reports import load_report, measured_blocks, read_report_json
from apiary_tools.schemas import Blocks
from bigreport import columns, write_big_report

BLOCKS = 20_000


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    return write_big_report(tmp_path_factory.mktemp("big") / "report.json", BLOCKS, seed=3)


def test_the_blocks_are_read_as_the_columns_they_were_written_from(big):
    report = load_report(big)
    assert isinstance(report["blocks"], Blocks) and len(report["blocks"]) == BLOCKS + 1   # and the warm-up block
    got, want = measured_blocks(report), columns(BLOCKS, seed=3)
    assert np.array_equal(got["num"], want["num"])
    assert np.array_equal(got["cycle_us"], want["cycle_us"])
    assert np.array_equal(got["transactions"], want["transactions"])
    assert report["aggregates"]["cycle_us"]["avg"] == pytest.approx(float(np.mean(got["cycle_us"])))


def test_a_small_report_reads_the_same_as_a_list_of_blocks(tmp_path):
    report = fakes.make_report([10_000.0, 20_000.0, 30_000.0])
    path = fakes.write_report(tmp_path / "r.json", report)
    from_file, from_list = measured_blocks(load_report(path)), measured_blocks(report)
    assert from_file.keys() == from_list.keys()
    assert all(np.array_equal(from_file[k], from_list[k]) for k in from_file)
    assert list(from_file["cycle_us"]) == [10_000.0, 20_000.0, 30_000.0]


def _with_block(tmp_path, index, **fields):
    report = fakes.make_report([20_000.0] * (inputs.CHUNK_ITEMS + 2_000))
    report["blocks"][index].update(fields)
    return fakes.write_report(tmp_path / "r.json", report)


@pytest.mark.parametrize("fields, why", [
    ({"cycle_us": -1.0}, "blocks[11000].cycle_us: -1.0 is below the minimum 0"),
    ({"transactions": None}, "blocks[11000].transactions: expected a number, not null"),
    ({"warmup": 0}, "blocks[11000].warmup: expected a boolean, not a number"),
    ({"completed_ms": 1e300}, "blocks[11000].completed_ms: a number beyond ±2^64"),
], ids=["below-minimum", "null", "type", "huge"])
def test_a_bad_block_past_the_first_chunk_is_named_by_its_index(tmp_path, fields, why):
    with pytest.raises(ToolError, match=re.escape(f"r.json: {why}")):
        load_report(_with_block(tmp_path, 11_000, **fields))


def test_a_block_without_its_number_and_a_key_twice_are_refused(tmp_path):
    path = _with_block(tmp_path, 10_500)
    text = path.read_text()
    report = json.loads(text)
    del report["blocks"][10_500]["num"]
    path.write_text(json.dumps(report))
    with pytest.raises(ToolError, match=r"blocks\[10500\]: 'num' is missing"):
        load_report(path)
    path.write_text(text.replace('{"num": 10502,', '{"num": 10502, "num": 10502,'))
    with pytest.raises(ToolError, match="the key 'num' is given twice"):
        load_report(path)


@pytest.mark.parametrize("cut", [0.5, 0.999])
def test_a_truncated_report_is_one_line(big, tmp_path, cut):
    data = big.read_bytes()
    path = tmp_path / "cut.json"
    path.write_bytes(data[:int(len(data) * cut)])
    with pytest.raises(ToolError, match="cut.json: not valid JSON"):
        read_report_json(path)


def test_gb_export_bounds_the_repetitions_and_says_which(big, tmp_path):
    out = tmp_path / "gb.json"
    assert gbexport.main([str(big), "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    gbexport.validate(doc)
    cycles = columns(BLOCKS, seed=3)["cycle_us"]
    reps = [b for b in doc["benchmarks"] if b["name"] == "apiary/cycle"]
    assert len(reps) == gbexport.MAX_REPETITIONS == 1000
    assert [r["repetition_index"] for r in reps] == list(range(1000))
    # repetition i is block floor(i * 20,000 / 1,000): every 20th, from the first
    assert [r["real_time"] for r in reps] == pytest.approx(list(cycles[::20]))
    assert all(r["repetitions"] == 1000 for r in reps)
    (mean,) = [b for b in doc["benchmarks"] if b["name"] == "apiary/cycle_mean"]
    (median,) = [b for b in doc["benchmarks"] if b["name"] == "apiary/cycle_median"]
    assert mean["real_time"] == pytest.approx(float(np.mean(cycles)))   # over every block, not the sample
    assert median["real_time"] == pytest.approx(float(np.median(cycles)))
    assert mean["iterations"] == BLOCKS and mean["repetitions"] == 1000
    assert doc["context"]["apiary_repetitions"].startswith("1000 of 20000 measured blocks, evenly spaced")
    assert len(doc["benchmarks"]) == 5 * (1000 + 4)


def test_gb_export_takes_every_block_up_to_its_limit(big, tmp_path):
    out = tmp_path / "gb.json"
    assert gbexport.main([str(big), "--max-repetitions", "7", "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    reps = [b for b in doc["benchmarks"] if b["name"] == "apiary/processing"]
    processing = columns(BLOCKS, seed=3)["processing_us"]
    assert [r["real_time"] for r in reps] == pytest.approx([processing[i * BLOCKS // 7] for i in range(7)])
    small = fakes.write_report(tmp_path / "small.json", fakes.make_report([1000.0, 2000.0, 3000.0]))
    doc = gbexport.export([str(small)], limit=7)
    assert doc["context"]["apiary_repetitions"] == "every measured block (3)"
    assert len([b for b in doc["benchmarks"] if b["name"] == "apiary/cycle"]) == 3


def test_gb_export_refuses_a_bad_limit(big, capsys):
    assert gbexport.main([str(big), "--max-repetitions", "0"]) == 2
    assert "--max-repetitions" in capsys.readouterr().err


def test_the_timeline_of_many_blocks_is_downsampled_keeping_the_extremes():
    nums = np.arange(2, BLOCKS + 2, dtype=float)
    cycles = np.full(BLOCKS, 20.0)
    cycles[12_345] = 95.0   # one slow block
    x, mean, low, high, per_point = figures.downsample(nums, cycles)
    assert len(x) == figures.MAX_POINTS == 2000 and per_point == 10
    assert high.max() == 95.0 and low.min() == 20.0
    assert mean[1234] == pytest.approx(20.0 + 75.0 / 10)   # blocks 12,340 to 12,349 of the run
    assert x[0] == 2 + 5 and np.all(np.diff(x) == 10)
    few = figures.downsample(nums[:50], cycles[:50])
    assert few[4] == 1 and np.array_equal(few[0], nums[:50])


def test_plot_draws_a_large_report(big, tmp_path):
    assert plot.main([str(big), "--out", str(tmp_path / "plots")]) == 0
    assert (tmp_path / "plots" / "cycle-over-run.png").stat().st_size > 10_000


@pytest.mark.parametrize("change", [
    lambda r: None,
    lambda r: r.update(rss_bytes="big"),
    lambda r: r.update(blocks=-1),
    lambda r: r.update(t_s=True),
    lambda r: r.update(transactions=1.0),   # an integer to jsonschema: the loop leaves it to it
    lambda r: r.update(cycle_us=None),
    lambda r: r["cycle_us"].pop("max"),
    lambda r: r["rc"].update(levels=[0.5] * 5),
    lambda r: r["rc"].update(low_mana_share=1.5),
    lambda r: r["state"].update(extra="x"),
    lambda r: r["state"].update(extra=[1, 2]),
    lambda r: r["state"].update(comments=[1, 2, 3]),
], ids=["plain", "string", "negative", "bool", "float-integer", "null-cycle", "missing", "too-many", "above-max",
        "extra-string", "extra-pair", "long-pair"])
def test_the_loop_before_jsonschema_never_passes_what_jsonschema_refuses(change):
    record = fakes.soak_log(blocks=200, window=100)[0]
    change(record)
    valid = schemas._validator(soak.RECORD).is_valid(record)
    assert (schemas.problem(soak.RECORD, record) is None) == valid
    assert not schemas._plain_valid(soak.RECORD, record) or valid


def test_a_plain_record_is_passed_by_the_loop():
    assert all(schemas._plain_valid(soak.RECORD, r) for r in fakes.soak_log(blocks=2_000, window=1_000))
