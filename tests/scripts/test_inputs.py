"""Every input checked before use, with one line naming the file and the field: reports against
harness/report.schema.json, the tools' own files (aggregates, comparisons, sweeps, ladders,
soaks) against theirs, every number finite and bounded, histograms bounded, interval logs line
by line, and the size of a plan before it is built. Through the tools' main()."""

import json
import os
import shlex
import shutil
import sys
import time
from pathlib import Path

import pytest

import fakes
from apiary_tools import inputs
from apiary_tools.commands import compare, gbexport, ladder, maxrate, multirun, plot, report_html, soak, sweep
from apiary_tools.common import ToolError

BASE = [20000, 20100, 19900, 20050, 19950]


def one_error(capsys, tool: str) -> str:
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"{tool}: ") and "\n" not in err and "Traceback" not in err, err
    return err


def report_text(**changes) -> str:
    """A report's JSON text with `changes` applied: dotted paths to values, or to raw JSON text
    (a value given as RAW(...)), so that NaN and giant numbers can be written as such."""
    report = fakes.make_report(fakes.noisy_cycles(20000, 1))
    raw = {}
    for dotted, value in changes.items():
        keys = dotted.split("__")
        node = report
        for k in keys[:-1]:
            node = node[int(k)] if isinstance(node, list) else node[k]
        last = int(keys[-1]) if isinstance(node, list) else keys[-1]
        if isinstance(value, RAW):
            marker = f"@@raw{len(raw)}@@"
            raw[f'"{marker}"'] = value.text
            value = marker
        node[last] = value
    text = json.dumps(report)
    for marker, replacement in raw.items():
        text = text.replace(marker, replacement)
    return text


class RAW:
    def __init__(self, text):
        self.text = text


@pytest.fixture
def sides(tmp_path):
    return fakes.write_set(tmp_path / "a", BASE), fakes.write_set(tmp_path / "b", BASE)


BAD_REPORTS = [
    ("nan", {"aggregates__cycle_us__avg": RAW("NaN")}, "NaN"),
    ("infinity", {"throughput__tx_per_s": RAW("-Infinity")}, "Infinity"),
    ("overflowing float", {"throughput__tx_per_s": RAW("1e999")}, "throughput"),
    ("huge integer", {"aggregates__measured_blocks": RAW("1" + "0" * 30)}, "aggregates"),
    ("thousands of digits", {"peak_rss_bytes": RAW("9" * 5000)}, "peak_rss_bytes"),
    ("string for a number", {"aggregates__cycle_us__avg": "fast"}, "aggregates.cycle_us.avg"),
    ("blocks not a list", {"blocks": {"num": 1}}, "blocks"),
    ("a block not an object", {"blocks__3": 17}, "blocks[3]"),
    ("a block's cycle a string", {"blocks__4__cycle_us": "slow"}, "blocks[4].cycle_us"),
    ("negative bin", {"latency__inclusion__bins__0__1": -5}, "latency.inclusion"),
    ("giant axis", {"latency__histogram__bins": 10**12}, "latency.histogram.bins"),
    ("bin past the axis", {"latency__inclusion__bins__0__0": 5000}, "latency.inclusion"),
    ("status unknown", {"status": "finished"}, "status"),
    ("context not an object", {"context": "here"}, "context"),
    ("counters' ipc a string", {"counters": {"threads": [{"name": "writer", "ipc": "high"}]}},
     "counters.threads[0].ipc"),
]


@pytest.mark.parametrize("case, changes, field", BAD_REPORTS, ids=[c[0] for c in BAD_REPORTS])
def test_a_bad_report_is_one_line_naming_the_file_and_the_field(case, changes, field, sides, capsys):
    a, b = sides
    (a / "run-002.json").write_text(report_text(**changes))
    t0 = time.monotonic()
    assert compare.main([str(a), str(b), "--quiet"]) == 2
    err = one_error(capsys, "compare")
    assert "run-002.json" in err and field in err, err
    assert time.monotonic() - t0 < 30
    assert gbexport.main([str(a / "run-002.json"), "-o", str(a / "gb.json")]) == 2
    assert field in one_error(capsys, "gb-export")
    assert report_html.main([str(a / "run-002.json")]) == 2
    assert field in one_error(capsys, "report-html")
    assert not (a / "gb.json").exists() and not (a / "run-002.html").exists()


COUNTER_EVENTS = ("task_clock_ns", "context_switches", "cpu_migrations", "page_faults", "instructions", "cycles",
                  "cache_references", "cache_misses", "branch_misses", "llc_misses")


def counters_section(events=COUNTER_EVENTS) -> dict:
    """A counters section as apiary writes it: the software events counted, the hardware ones not."""
    hardware = set(events) - {"task_clock_ns", "context_switches", "cpu_migrations", "page_faults"}
    why = "not supported by this machine (perf_event_open: No such file or directory)"
    window = {e: None if e in hardware else 1000 for e in events}
    rates = {e: None if e in hardware else 10.0 for e in events}
    return {"enabled": True, "unavailable": None,
            "events": {e: {"available": e not in hardware, "reason": why if e in hardware else None} for e in events},
            "threads": [{"name": "writer", "tid": 101, "window": window | {"voluntary_switches": 3,
                                                                            "involuntary_switches": 1},
                         "per_block": rates, "per_transaction": rates, "ipc": None}]}


@pytest.mark.parametrize("counters", ["this apiary's", "an older apiary's (none)", "a newer apiary's (one more event)"])
def test_a_report_is_read_with_the_counters_of_any_apiary(counters, sides, capsys):
    """The counters section as this apiary writes it, a report from before it, and one with an event a newer
    apiary counts all read: the tools read the report's schema relaxed (apiary_tools.schemas)."""
    a, b = sides
    report = json.loads(report_text())
    if counters == "this apiary's":
        report["counters"] = counters_section()
    elif counters.startswith("a newer"):
        report["counters"] = counters_section(COUNTER_EVENTS + ("stalled_cycles",))
    (a / "run-002.json").write_text(json.dumps(report))
    assert compare.main([str(a), str(b), "--quiet"]) in (0, 1)
    assert capsys.readouterr().err == ""


def test_a_key_given_twice_is_refused(sides, capsys):
    a, b = sides
    text = report_text()
    (a / "run-003.json").write_text(text.replace('"status": "completed"', '"status": "completed", "status": "failed"'))
    assert compare.main([str(a), str(b), "--quiet"]) == 2
    err = one_error(capsys, "compare")
    assert "run-003.json" in err and "status" in err and "twice" in err


@pytest.mark.parametrize("kind", ["fifo", "device", "empty", "truncated", "not utf-8"])
def test_an_input_that_is_not_a_json_file_is_refused_at_once(kind, sides, tmp_path, capsys):
    a, b = sides
    path = tmp_path / "odd.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "device":
        path = "/dev/zero"
    elif kind == "empty":
        path.write_text("")
    elif kind == "truncated":
        path.write_text(report_text()[:5000])
    else:
        path.write_bytes(b'{"schema_version": 2, "name": "\xff\xfe"}')
    t0 = time.monotonic()
    assert compare.main([str(path), str(b), "--quiet"]) == 2
    assert str(path) in one_error(capsys, "compare")
    assert time.monotonic() - t0 < 20


# ---- the tools' own files -------------------------------------------------------------------

def aggregate_of(directory):
    assert multirun.main(["--aggregate", str(directory), "--quiet"]) == 0
    return json.loads((directory / "aggregate.json").read_text())


@pytest.mark.parametrize("damage, field", [
    (lambda d: d["metrics"]["us_per_tx"].update(values=["x"] * 5), "metrics"),
    (lambda d: d["metrics"]["us_per_tx"].update(runs=[0, 1, 2, 3, 99]), "us_per_tx"),
    (lambda d: d.update(runs="all"), "runs"),
    (lambda d: d["latency"]["runs"][0].update(run="first"), "latency"),
    (lambda d: d["latency"]["histogram"].update(bins=-3), "latency"),
    (lambda d: d["latency"]["runs"][1]["inclusion"]["bins"].append([10, "many"]), "latency"),
    (lambda d: d.update(version=7), "version"),
    (lambda d: d.update(skipped=[{"path": 3}]), "skipped"),
    (lambda d: d["context"].update(cores="many"), "context.cores"),
])
def test_a_damaged_aggregate_is_one_line(damage, field, tmp_path, capsys):
    data = aggregate_of(fakes.write_set(tmp_path / "a", BASE))
    damage(data)
    only = tmp_path / "only"
    only.mkdir()
    (only / "aggregate.json").write_text(json.dumps(data))
    other = fakes.write_set(tmp_path / "b", BASE)
    assert compare.main([str(only), str(other), "--quiet"]) == 2
    err = one_error(capsys, "compare")
    assert "aggregate.json" in err and field in err
    assert gbexport.main([str(only / "aggregate.json"), "-o", str(tmp_path / "gb.json")]) == 2
    one_error(capsys, "gb-export")


@pytest.fixture
def ab_dir(tmp_path):
    out = tmp_path / "ab"
    fakes.write_set(out / "a", BASE[:3])
    fakes.write_set(out / "b", BASE[:3])
    assert compare.main([str(out / "a"), str(out / "b"), "--labels", "a,b", "--json", str(out / "comparison.json"),
                         "--quiet"]) in (0, 1)
    return out


@pytest.mark.parametrize("damage, field", [
    (lambda d: d["a"].update(label="../../elsewhere"), "a.label"),
    (lambda d: d.update(alpha="small"), "alpha"),
    (lambda d: d.update(alpha=7), "alpha"),
    (lambda d: d["gate"].update(metrics="aggregates.cycle_us.avg"), "gate.metrics"),
    (lambda d: d.pop("ci_method"), "ci_method"),
])
def test_a_damaged_comparison_is_one_line(damage, field, ab_dir, capsys):
    data = json.loads((ab_dir / "comparison.json").read_text())
    damage(data)
    (ab_dir / "comparison.json").write_text(json.dumps(data))
    assert report_html.main([str(ab_dir)]) == 2
    err = one_error(capsys, "report-html")
    assert "comparison.json" in err and field in err


@pytest.fixture(scope="module")
def sweep_template(tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep") / "sweep"
    fake = shlex.join([sys.executable, str(Path(__file__).resolve().parent / "fake_apiary.py")])
    assert sweep.main(["--command", fake, "--param", "threads", "--values", "1,2", "--runs", "1",
                       "--out", str(out), "--quiet", "--no-plots"]) == 0
    return out


@pytest.fixture(scope="module")
def ladder_template(tmp_path_factory):
    out = tmp_path_factory.mktemp("ladder") / "ladder"
    binary = out.parent / "apiary"
    binary.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} "
                      f"{shlex.quote(str(Path(__file__).resolve().parent / 'fake_apiary.py'))} \"$@\"\n")
    binary.chmod(0o755)
    assert ladder.main(["--apiary", str(binary), "--runs", "1", "--instructions", "off", "--out", str(out)]) == 0
    return out


@pytest.mark.parametrize("damage, field", [
    (lambda d: d.update(points={}), "points"),
    (lambda d: d["points"][0].update(representative="../../../etc/passwd"), "representative"),
    (lambda d: d["points"][1].update(dir="/"), "dir"),
    (lambda d: d["points"][0]["metrics"]["us_per_tx"].update(mean="x"), "mean"),
    (lambda d: d.update(param=5), "param"),
])
def test_a_damaged_sweep_is_one_line(damage, field, tmp_path, sweep_template, capsys):
    path = Path(shutil.copytree(sweep_template, tmp_path / "sweep")) / "sweep.json"
    data = json.loads(path.read_text())
    damage(data)
    path.write_text(json.dumps(data))
    assert plot.main(["--sweep", str(path), "--out", str(tmp_path / "figures")]) == 2
    assert field in one_error(capsys, "plot")
    assert report_html.main([str(path.parent)]) == 2
    assert field in one_error(capsys, "report-html")


@pytest.mark.parametrize("damage, field", [
    (lambda d: d.update(steps="all"), "steps"),
    (lambda d: d["steps"][2].update(cycle_ms={"mean": "slow"}), "steps[2]"),
    (lambda d: d["runs"][0].update(path="../../../etc/passwd"), "runs[0].path"),
    (lambda d: d["meta"].pop("mode"), "meta"),
])
def test_a_damaged_ladder_is_one_line(damage, field, tmp_path, ladder_template, capsys):
    out = Path(shutil.copytree(ladder_template, tmp_path / "ladder"))
    data = json.loads((out / "ladder.json").read_text())
    damage(data)
    (out / "ladder.json").write_text(json.dumps(data))
    assert report_html.main([str(out), "--out", str(tmp_path / "page.html")]) == 2
    err = one_error(capsys, "report-html")
    assert "ladder.json" in err and field in err


@pytest.mark.parametrize("damage, field", [
    (lambda d: d["series"].update(rss=d["series"]["rss"][:-3]), "series"),
    (lambda d: d["series"].update(block="many"), "series.block"),
    (lambda d: d.update(blocks=-1), "blocks"),
    (lambda d: d["rc"].pop("pools"), "rc"),
])
def test_a_damaged_soak_is_one_line(damage, field, tmp_path, capsys):
    (tmp_path / "intervals.jsonl").write_text("".join(json.dumps(r) + "\n"
                                                     for r in fakes.soak_log(blocks=4_000, window=1_000)))
    assert soak.main(["--from", str(tmp_path), "--cashout-blocks", "1000"]) == 0
    capsys.readouterr()
    data = json.loads((tmp_path / "soak.json").read_text())
    damage(data)
    (tmp_path / "soak.json").write_text(json.dumps(data))
    assert report_html.main([str(tmp_path), "--out", str(tmp_path / "page.html")]) == 2
    err = one_error(capsys, "report-html")
    assert "soak.json" in err and field in err


# ---- interval logs, line by line ----------------------------------------------------------------

@pytest.mark.parametrize("damage, line", [
    (lambda lines: lines.__setitem__(4, lines[4].replace('"rss_bytes": ', '"rss_bytes": "x", "was": ')), 5),
    (lambda lines: lines.__setitem__(2, "[1, 2, 3]"), 3),
    (lambda lines: lines.__setitem__(7, lines[7].replace('"cycle_us": {"mean": ', '"cycle_us": {"mean": NaN, "x": ')),
     8),
    (lambda lines: lines.__setitem__(1, '{"blocks": 1}'), 2),
    (lambda lines: lines.__setitem__(3, lines[3].replace('"levels": [', '"levels": [1, ')), 4),
    (lambda lines: lines.__setitem__(6, "x" * 3_000_000), 7),
])
def test_a_damaged_interval_log_names_its_line(damage, line, tmp_path, capsys):
    lines = [json.dumps(r) for r in fakes.soak_log(blocks=4_000, window=1_000)]
    damage(lines)
    (tmp_path / "intervals.jsonl").write_text("\n".join(lines) + "\n")
    assert soak.main(["--from", str(tmp_path), "--cashout-blocks", "1000"]) == 1
    assert f"intervals.jsonl:{line}:" in one_error(capsys, "soak")
    assert not (tmp_path / "soak.json").exists()


def test_the_rc_archive_lines_of_an_interval_log_are_not_records(tmp_path):
    records = fakes.soak_log(blocks=4_000, window=1_000)
    archive = {"rc_archive": {"block": 200, "accepted": 5}}
    lines = [json.dumps(r) for r in records]
    lines[3:3] = [json.dumps(archive), json.dumps(archive)]
    (tmp_path / "intervals.jsonl").write_text("\n".join(lines) + "\n")
    # soak's own check of every record: an archive line passed to it would be refused.
    got = inputs.read_interval_log(tmp_path / "intervals.jsonl", soak.record_check())
    assert got == records
    # Only a line that is nothing but an archive is left out.
    lines[3] = json.dumps({"rc_archive": {}, "blocks": 1})
    (tmp_path / "intervals.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(ToolError, match="intervals.jsonl:4:"):
        inputs.read_interval_log(tmp_path / "intervals.jsonl", soak.record_check())


# ---- plans and options ----------------------------------------------------------------------------

@pytest.mark.parametrize("tool, args", [
    ("multirun", ["--runs", "100000000000000000000"]),
    ("multirun", ["--runs", "6000", "--a", "--dedup split", "--b", "--dedup unified"]),
    ("sweep", ["--param", "threads", "--values", "1,2,3,4,5,6", "--runs", "2000"]),
    ("find-max-rate", ["--low", "10", "--high", "20", "--runs", "100000000000000000000"]),
    ("ladder", ["--runs", "100000000000000000000"]),
    ("ladder", ["--runs", "2", "--max-runs", "5000"]),
])
def test_a_plan_too_big_is_refused_before_it_is_built(tool, args, tmp_path, fake_command, fake_binary, capsys):
    mains = {"multirun": multirun.main, "sweep": sweep.main, "find-max-rate": maxrate.main, "ladder": ladder.main}
    runner = ["--apiary", str(fake_binary)] if tool == "ladder" else ["--command", fake_command]
    t0 = time.monotonic()
    assert mains[tool](runner + args + ["--out", str(tmp_path / "o")]) == 2
    assert "10,000" in one_error(capsys, tool)
    assert time.monotonic() - t0 < 20 and not (tmp_path / "o").exists()


@pytest.mark.parametrize("tool, args", [
    ("multirun", ["--cluster", "tcp://127.0.0.1:1", "--cluster-timeout", "nan"]),
    ("multirun", ["--cluster", "tcp://127.0.0.1:1", "--cluster-timeout", "inf"]),
    ("soak", ["--interval", "nan"]),
    ("soak", ["--interval", "1e400"]),
    ("ladder", ["--alpha", "nan"]),
    ("find-max-rate", ["--low", "10", "--high", "20", "--bound", "nan"]),
    ("compare", ["--min-effect", "nan"]),
])
def test_a_number_that_is_not_finite_is_refused(tool, args, tmp_path, fake_command, fake_binary, sides, capsys):
    a, b = sides
    mains = {"multirun": multirun.main, "soak": soak.main, "ladder": ladder.main, "find-max-rate": maxrate.main,
             "compare": compare.main}
    before = {"multirun": ["--command", fake_command, "--out", str(tmp_path / "o")],
              "soak": ["--apiary", str(fake_binary), "--out", str(tmp_path / "o")],
              "ladder": ["--apiary", str(fake_binary), "--out", str(tmp_path / "o")],
              "find-max-rate": ["--command", fake_command, "--out", str(tmp_path / "o")],
              "compare": [str(a), str(b)]}[tool]
    assert mains[tool](before + args) == 2
    one_error(capsys, tool)
    assert not (tmp_path / "o").exists()
