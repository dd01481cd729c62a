"""The instruction-count gate's decision on constructed counts, and reading totals from small
constructed callgrind and cachegrind files."""

import math

import pytest

from apiary_tools import gate

CALLGRIND = """# callgrind format
version: 1
creator: callgrind-3.19.0
pid: 4242
cmd:  apiary workload
part: 1

desc: I1 cache:
desc: Timerange: Basic block 0 - 1000
desc: Trigger: Program termination

positions: line
events: Ir
summary: 123456789

ob=(1) /usr/bin/apiary
fl=(1) core.cpp
fn=(1) main
16 3
cfn=(2) summary:helper
calls=1 0
16 10

totals: 123456789
"""


def write(tmp_path, text, name="callgrind.out.4242"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_callgrind_summary(tmp_path):
    assert gate.callgrind_total_ir(write(tmp_path, CALLGRIND)) == 123_456_789


def test_ir_not_first(tmp_path):
    text = "events: Dr Dw Ir\nsummary: 10 20 30\n"
    assert gate.callgrind_total_ir(write(tmp_path, text)) == 30
    assert gate.total_events(write(tmp_path, text), "Dw") == 20


def test_trailing_zeros_may_be_omitted(tmp_path):
    assert gate.total_events(write(tmp_path, "events: Ir Dr Dw\nsummary: 5\n"), "Dw") == 0


def test_totals_without_summary_are_summed_over_parts(tmp_path):
    text = "events: Ir\npart: 1\ntotals: 100\npart: 2\ntotals: 250\n"
    assert gate.callgrind_total_ir(write(tmp_path, text)) == 350


def test_cachegrind(tmp_path):
    text = ("desc: I1 cache: 32768 B, 64 B, 8-way associative\ncmd: apiary workload\n"
            "events: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw\nfl=core.cpp\nfn=main\n3 4 1 1 0 0 0 0 0 0\n"
            "summary: 127653 1091 1072 29382 1223 1014 10264 346 312\n")
    assert gate.cachegrind_total_ir(write(tmp_path, text, "cachegrind.out.1")) == 127_653


@pytest.mark.parametrize("text, message", [
    ("summary: 10\n", "no `events:` line"),
    ("events: Dr\nsummary: 10\n", "event Ir was not collected"),
    ("events: Ir\n", "no `summary:` or `totals:`"),
    ("events: Ir\nsummary: lots\n", "whole numbers"),
])
def test_bad_files(tmp_path, text, message):
    with pytest.raises(gate.ParseError, match=message):
        gate.callgrind_total_ir(write(tmp_path, text))


def test_decide_within_threshold_passes():
    v = gate.decide(1000.0, 1020.0)
    assert v.passed and v.change_pct == pytest.approx(2.0) and v.message.startswith("pass")


def test_decide_exactly_at_threshold_passes():
    assert gate.decide(1000, 1030).passed
    assert gate.decide(100, 103).passed


def test_decide_above_threshold_fails():
    v = gate.decide(1000, 1031)
    assert not v.passed
    assert v.change_pct == pytest.approx(3.1)
    assert v.message.startswith("FAIL") and "+3.10%" in v.message and "+3.00%" in v.message


def test_decide_improvement_passes():
    v = gate.decide(2000, 1500)
    assert v.passed and v.change_pct == pytest.approx(-25.0) and "fewer" in v.message


def test_decide_custom_threshold():
    assert not gate.decide(1000, 1011, threshold=0.01).passed
    assert gate.decide(1000, 1011, threshold=0.02).passed
    assert not gate.decide(1000, 1000.5, threshold=0).passed


def test_ir_per_tx_feeds_decide():
    parent = gate.ir_per_tx(1_500_000_000, 100_000)   # 15,000 per transaction
    current = gate.ir_per_tx(1_560_000_000, 100_000)  # 15,600: +4%
    v = gate.decide(parent, current)
    assert not v.passed and v.change_pct == pytest.approx(4.0)
    assert v.to_dict()["parent_ir_per_tx"] == 15_000


@pytest.mark.parametrize("args", [(0, 1), (1, -1), (math.nan, 1), (1, 1, -0.1), (1, math.inf)])
def test_decide_rejects_nonsense(args):
    with pytest.raises(ValueError):
        gate.decide(*args)


def test_ir_per_tx_rejects_nonsense():
    with pytest.raises(ValueError):
        gate.ir_per_tx(100, 0)
