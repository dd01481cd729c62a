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


# ---- where the instructions went: function costs from callgrind files -------------------------

# The specification's extended example, names compressed: main calls func1 once and func2
# three times, func1 calls func2 twice.
EXTENDED = """# callgrind format
events: Instructions Ir
fl=(1) file1.c
fn=(1) main
16 0 20
cfn=(2) func1
calls=1 50
16 0 400
cfi=(2) file2.c
cfn=(3) func2
calls=3 20
16 0 400
fn=(2)
51 0 100
cfi=(2)
cfn=(3)
calls=2 20
51 0 300
fl=(2)
fn=(3)
20 0 700
totals: 0 820
"""


def test_function_costs_of_the_specifications_example(tmp_path):
    costs = gate.function_costs(write(tmp_path, EXTENDED))
    assert {name: (c.own, c.inclusive) for name, c in costs.items()} == {
        "main": (20, 820), "func1": (100, 400), "func2": (700, 700)}


def test_recursion_is_one_function_counted_once(tmp_path):
    # As callgrind writes it (--separate-recs=2): rec calls rec'2, which calls itself.
    text = """events: Ir
fn=(1) outer
1 10
cfn=(2) rec
calls=1 5
1 300
fn=(2)
5 6
cfn=(3) rec'2
calls=1 5
5 294
cfn=(4) leaf
calls=1 9
5 50
fn=(3)
5 244
cfn=(3)
calls=19 *
* 200
fn=(4)
9 50
"""
    costs = gate.function_costs(write(tmp_path, text))
    assert (costs["rec"].own, costs["rec"].inclusive) == (250, 300)
    assert "rec'2" not in costs and costs["outer"].inclusive == 310


def test_instruction_positions_relative_and_hex(tmp_path):
    text = """positions: instr line
events: Dr Ir
fn=(7) f
0x401000 12 1 3
+3 * 0 4
-2 +1 2
cfn=(8) g
calls=2 0x402000 20
+5 * 0 40
fn=(8)
0x402000 20 9 40
"""
    costs = gate.function_costs(write(tmp_path, text))
    assert (costs["f"].own, costs["f"].inclusive) == (7, 47)
    assert costs["g"].own == 40


def test_parts_add_up(tmp_path):
    text = "events: Ir\npart: 1\nfn=(1) f\n1 5\ntotals: 5\npart: 2\nfn=(1)\n1 7\nfn=(2) g\n2 1\ntotals: 8\n"
    costs = gate.function_costs(write(tmp_path, text))
    assert (costs["f"].own, costs["g"].own) == (12, 1)


@pytest.mark.parametrize("text, message", [
    ("fn=(1) f\n1 5\n", ":2: a cost line before the `events:` line"),
    ("events: Ir\nfn=(3)\n1 5\n", ":2: fn=(3) names a number never given a name"),
    ("events: Ir\nfn=f\n1 five\n", ":3: not a cost line"),
    ("events: Ir\nfn=f\ncfn=g\ncalls=1 2\n", "ends after a `calls=` line"),
    ("events: Ir\nfn=f\n1 5\ntotals: 9\n", "add up to 5, its `totals:` say 9"),
    ("events: Dr\nfn=f\n1 5\n", ":1: event Ir was not collected"),
    ("fn=f\n", "no `events:` line"),
])
def test_bad_callgrind_files(tmp_path, text, message):
    with pytest.raises(gate.ParseError, match=message.replace("(", r"\(").replace(")", r"\)")):
        gate.function_costs(write(tmp_path, text))


def callgrind_of(functions: dict[str, int], calls: dict[str, list[tuple[str, int]]]) -> str:
    """A callgrind file of these functions' own counts, and calls with their inclusive costs."""
    lines = ["events: Ir"]
    for name, own in functions.items():
        lines += [f"fn={name}", f"1 {own}"]
        for callee, cost in calls.get(name, []):
            lines += [f"cfn={callee}", "calls=1 1", f"1 {cost}"]
    return "\n".join(lines) + "\n"


def test_function_changes_name_the_planted_function_first(tmp_path):
    base = {"measured": 100, "push": 2_000, "find_comment": 1_000, "apply": 3_000}
    slow = dict(base, find_comment=1_600, apply=2_950)   # a planted slowdown, and a little noise

    def costs(own):   # measured calls push and apply, push calls find_comment
        calls = {"measured": [("push", own["push"] + own["find_comment"]), ("apply", own["apply"])],
                 "push": [("find_comment", own["find_comment"])]}
        return gate.function_costs(write(tmp_path, callgrind_of(own, calls), f"{id(own)}.out"))

    changes = gate.function_changes(costs(base), costs(slow), 10, 10)
    assert [r.function for r in changes["self"]] == ["find_comment", "apply"]
    assert changes["self"][0].to_dict() == {"function": "find_comment", "base_per_tx": 100.0,
                                            "current_per_tx": 160.0, "change_per_tx": 60.0,
                                            "change_pct": pytest.approx(60.0)}
    assert [r.function for r in changes["inclusive"]][:3] == ["find_comment", "push", "measured"]
    text = list(gate.changes_text(changes))
    assert text[0].startswith("functions whose own instructions (self) per transaction moved most")
    assert text[1].split() == ["100.0", "->", "160.0", "+60.0", "find_comment"]
    # more transactions on one side: compared per transaction
    assert gate.function_changes(costs(base), costs(base), 10, 20)["self"][0].change == pytest.approx(-150)


def test_function_changes_of_a_function_on_one_side_only(tmp_path):
    a = gate.function_costs(write(tmp_path, callgrind_of({"f": 10}, {}), "a.out"))
    b = gate.function_costs(write(tmp_path, callgrind_of({"f": 10, "new_check": 30}, {}), "b.out"))
    rows = gate.function_changes(a, b, 1, 1)["self"]
    assert [(r.function, r.base, r.current) for r in rows] == [("new_check", 0.0, 30.0)]
    assert rows[0].to_dict()["change_pct"] is None


@pytest.mark.parametrize("name, shown", [
    ("apiary::core::undo_index<apiary::core::account_object, boost::multi_index::indexed_by<x, y> >::modify<"
     "apiary::core::chain::f(int)::{lambda(apiary::core::account_object&)#1}::operator()(int) const>(int&&)",
     "apiary::core::undo_index<…>::modify<…>(…)"),
    ("apiary::core::chain::push(std::shared_ptr<apiary::core::full_transaction const> const&, bool)",
     "apiary::core::chain::push(…)"),
    ("bool apiary::core::operator<(apiary::core::fixed_bytes<20ul> const&, int)", "bool apiary::core::operator<(…)"),
    ("std::vector<int>::operator[](unsigned long) const", "std::vector<…>::operator[](…) const"),
    ("(anonymous namespace)::helper(int)", "(anonymous namespace)::helper(…)"),
    ("sha256_block_data_order", "sha256_block_data_order"),
    ("unbalanced<(x", "unbalanced<(x"),
])
def test_a_function_name_as_tables_show_it(name, shown):
    from apiary_tools.common import short_symbol
    assert short_symbol(name) == shown
    assert short_symbol("f" * 200, 50) == "f" * 49 + "…"


def test_names_that_would_look_alike_keep_their_first_template_argument():
    from apiary_tools.common import short_symbols
    names = ["a::undo_index<a::account_object, b<c, d> >::undo(int)",
             "a::undo_index<a::comment_object, b<c, d> >::undo(int)", "a::chain::push(int)",
             "a::undo_index<f(int), g>::undo()", "a::undo_index<f(long), g>::undo()"]
    assert short_symbols(names) == ["a::undo_index<a::account_object, …>::undo(…)",
                                    "a::undo_index<a::comment_object, …>::undo(…)", "a::chain::push(…)",
                                    "a::undo_index<f(…), …>::undo(…)", "a::undo_index<f(…), …>::undo(…)"]
