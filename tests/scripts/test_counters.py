"""The counters of `apiary run --counters on` as metrics: named by thread, aggregated by
multirun, compared by compare with their better direction and interval, and shown in a block
of their own; a count the machine could not take (null) is skipped, never a traceback; a
counters section that is not what the tools read is one line, exit 2."""

import json

import pytest

import fakes
from apiary_tools import comparison, metrics
from apiary_tools.commands import compare, multirun
from apiary_tools.reports import load_set

BASE = [20000, 20100, 19900, 20050, 19950]


def counted_report(hardware=False, writer_ns=4000.0, seed=0):
    report = fakes.make_report(fakes.noisy_cycles(20000, 1))
    report["counters"] = fakes.counters_section(240, 10, writer_ns, hardware, seed)
    return report


def test_flatten_names_counters_by_thread():
    flat = metrics.flatten(counted_report())
    writer = fakes.counters_section(240, 10)["threads"][0]
    assert flat["counters.writer.per_transaction.task_clock_ns"] == writer["per_transaction"]["task_clock_ns"]
    assert flat["counters.producer-1.per_block.page_faults"] > 0
    assert "counters.main.per_transaction.context_switches" in flat
    # nulls (no hardware counters), the window's totals, the tid and the flags are no metrics
    assert not any(".instructions" in n or ".cycles" in n or n.endswith(".ipc") for n in flat)
    assert not any(".window." in n or n.endswith(".tid") or "events" in n or "enabled" in n
                   for n in flat if n.startswith("counters."))


def test_flatten_does_not_depend_on_the_threads_order():
    report = counted_report(hardware=True)
    reordered = json.loads(json.dumps(report))
    reordered["counters"]["threads"].reverse()
    assert metrics.flatten(report) == metrics.flatten(reordered)
    assert metrics.flatten(report)["counters.writer.ipc"] == pytest.approx(11_000 / 9_000, rel=0.02)


def test_directions_and_labels():
    assert metrics.direction("counters.writer.per_transaction.task_clock_ns") == metrics.TIME   # slower, faster
    assert metrics.direction("counters.main.per_block.task_clock_ns") == metrics.TIME
    assert metrics.direction("counters.writer.per_transaction.page_faults") == metrics.COST
    assert metrics.direction("counters.producer-0.per_block.cache_misses").better == metrics.LOWER
    assert metrics.direction("counters.writer.ipc").better == metrics.HIGHER
    assert metrics.direction("counters.writer.window.cycles") is None
    assert metrics.counter_parts("counters.producer-0.per_transaction.cycles") == ("producer-0", "per_transaction",
                                                                                   "cycles")
    assert metrics.label("counters.writer.ipc").startswith("writer: ipc")
    names = ["counters.main.per_transaction.task_clock_ns", "counters.writer.ipc", "counters.producer-10.per_"
             "transaction.cycles", "counters.producer-2.per_transaction.cycles", "counters.writer.per_transaction."
             "cycles", "counters.writer.per_block.cycles", "aggregates.cycle_us.avg"]
    assert metrics.per_transaction_counters(names) == [
        "counters.writer.per_transaction.cycles", "counters.writer.ipc", "counters.producer-2.per_transaction.cycles",
        "counters.producer-10.per_transaction.cycles", "counters.main.per_transaction.task_clock_ns"]


def test_multirun_aggregates_the_counters(tmp_path):
    a = fakes.write_profiled_set(tmp_path / "a", BASE)
    assert multirun.main(["--aggregate", str(a), "--quiet"]) == 0
    agg = json.loads((a / "aggregate.json").read_text())
    entry = agg["metrics"]["counters.writer.per_transaction.task_clock_ns"]
    assert entry["n"] == 5 and entry["ci_low"] < entry["mean"] < entry["ci_high"]
    assert not any(".cycles" in name for name in agg["metrics"])
    summary = (a / "summary.md").read_text()
    assert "Counters per transaction" in summary and "| writer | task_clock_ns |" in summary
    # The writer's CPU time is a key metric: in the first table, beside the cycle.
    key_table = summary[:summary.index("Counters per transaction")]
    for name in (metrics.WRITER_CPU, metrics.WRITER_CPU_PER_BLOCK):
        assert f"| {metrics.label(name)} |" in key_table
    assert key_table.index("cycle p99") < key_table.index("writer CPU per transaction") < key_table.index("tx/s")
    # the aggregate file alone keeps them
    rs = load_set([a / "aggregate.json"], "a")
    assert len(rs.values("counters.producer-0.per_transaction.task_clock_ns")) == 5


def test_compare_shows_the_counters_per_transaction(tmp_path, capsys):
    # Ten runs a side: one counter of the family that moved is called after the adjustment for
    # the family's size (with five, Mann-Whitney's smallest p times the family is above alpha).
    a = fakes.write_profiled_set(tmp_path / "a", BASE * 2)
    b = fakes.write_profiled_set(tmp_path / "b", BASE * 2, writer_ns_per_tx=4400, seed=1)   # +10% a transaction
    out_json = tmp_path / "cmp.json"
    assert compare.main([str(a), str(b), "--json", str(out_json)]) == 0
    text = capsys.readouterr().out
    block = text[text.index("Counters per transaction"):]
    writer = next(line for line in block.splitlines() if line.startswith("| writer | task_clock_ns |"))
    cells = [c.strip() for c in writer.strip("|").split("|")]
    assert cells[4].startswith("+") and float(cells[7]) < 0.05 < float(cells[7]) * 40 and cells[8] == "**slower**"
    low, high = (float(x.rstrip("%")) for x in cells[5].split(" … "))
    assert 5 < low < 10 < high < 15
    assert "Not counted: branch_misses, cache_misses" in block and "perf_event_open: not supported" in block
    row = {m["metric"]: m for m in json.loads(out_json.read_text())["metrics"]}[
        "counters.writer.per_transaction.task_clock_ns"]
    assert row["better"] == "lower" and row["regression"] and row["ci_low_pct"] > 0
    # a counter can gate
    assert compare.main([str(a), str(b), "--fail-on", "counters.writer.per_transaction.task_clock_ns",
                         "--quiet"]) == 1
    assert "counters.writer.per_transaction.task_clock_ns slower" in capsys.readouterr().err


def test_instructions_per_cycle_that_rise_are_better(tmp_path):
    # Ten runs a side, so that the family's adjustment leaves these calls possible.
    a = fakes.write_profiled_set(tmp_path / "a", BASE * 2, hardware=True)
    b = tmp_path / "b"
    fakes.write_profiled_set(b, BASE * 2, hardware=True, seed=1)
    for path in b.glob("run-*.json"):   # fewer cycles for the same instructions
        report = json.loads(path.read_text())
        for thread in report["counters"]["threads"]:
            thread["per_transaction"]["cycles"] *= 0.8
            thread["ipc"] /= 0.8
        path.write_text(json.dumps(report))
    cmp = comparison.build([str(a)], [str(b)])
    assert cmp.by_name["counters.writer.ipc"].verdict == "better"
    assert cmp.by_name["counters.writer.per_transaction.cycles"].verdict == "better"
    assert "| writer | ipc |" in comparison.to_markdown(cmp)


def test_nulls_on_one_side_leave_the_counter_out(tmp_path):
    """Hardware counts on A's machine, none on B's: those are not compared, and the rest is."""
    a = fakes.write_profiled_set(tmp_path / "a", BASE, hardware=True)
    b = fakes.write_profiled_set(tmp_path / "b", BASE)
    cmp = comparison.build([str(a)], [str(b)])
    assert "counters.writer.per_transaction.cycles" not in cmp.by_name
    assert cmp.by_name["counters.writer.per_transaction.task_clock_ns"].verdict == "no significant change"
    assert "Not counted: branch_misses" in comparison.to_markdown(cmp)


def test_one_side_without_counters_has_no_block(tmp_path):
    a = fakes.write_set(tmp_path / "a", BASE)
    b = fakes.write_profiled_set(tmp_path / "b", BASE)
    assert "Counters per transaction" not in comparison.to_markdown(comparison.build([str(a)], [str(b)]))


@pytest.mark.parametrize("spoil, message", [
    (lambda c: c["threads"][0].update(name="writer.thread"), "counters.threads[0].name: 'writer.thread': "),
    (lambda c: c["threads"][1]["per_transaction"].update(task_clock_ns="fast"),
     "counters.threads[1].per_transaction.task_clock_ns: expected number or null, not a string"),
    (lambda c: c["threads"][0]["per_block"].update(page_faults=-1), "page_faults: -1 is below the minimum 0"),
    (lambda c: c["threads"][2].update(name="writer"), "counters.threads[2].name: 'writer' is given twice"),
    (lambda c: c["threads"][0].update(ipc=True), "counters.threads[0].ipc: expected number or null"),
    (lambda c: c.update(threads={"writer": {}}), "counters.threads: expected array, not an object"),
    (lambda c: c["threads"][0]["per_transaction"].update({"bad event": 1}), "expected a word"),
])
def test_a_bad_counters_section_is_one_line(tmp_path, capsys, spoil, message):
    a = fakes.write_profiled_set(tmp_path / "a", BASE[:2])
    b = fakes.write_profiled_set(tmp_path / "b", BASE[:2])
    report = json.loads((b / "run-002.json").read_text())
    spoil(report["counters"])
    (b / "run-002.json").write_text(json.dumps(report))
    assert compare.main([str(a), str(b)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("compare: ") and "run-002.json" in err and message in err and "\n" not in err
