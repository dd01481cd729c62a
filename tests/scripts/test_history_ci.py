"""The perf gate in CI: with $APIARY_HISTORY it ingests its count and fails on a change point at
the head of the history even when it passes against its parent; without it, it writes no
history. Its JUnit XML (a test case per check, a failure element when one fails) and its
Markdown summary."""

import json
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import histories
from apiary_tools import history_db as db
from apiary_tools.commands import perf_gate
from apiary_tools.commands.perf_gate import ci as perf_gate_ci
from apiary_tools.history_ingest import perf_gate_entries
from test_perf_gate import STAND_IN

HEAD = "f" * 40


def planted_gate_history(target: str, before: float, after: float, n_before: int = 30, n_after: int = 3) -> None:
    """The gate's series: n_before commits near `before`, then n_after near `after` (0.1% noise,
    as callgrind's counts of one workload differ a little from commit to commit)."""
    values = histories.noisy_series(n_before + n_after, seed=5, mean=1.0)
    values = [1 + (v - 1) * 0.05 for v in values]   # the noise scaled down to about 0.1%
    engine = db.open_history(target)
    with engine.begin() as conn:
        for i, v in enumerate(values):
            data = histories.perf_gate_result(f"c{i:03d}", v * (before if i < n_before else after))
            data["config"] = {"transactions": 100, "accounts": 10000, "seed": 1, "block_size": "256KiB"}
            for entry in perf_gate_entries(Path(f"planted/{i}"), data):
                db.insert(conn, entry, "2026-01-01T00:00:00Z")
    engine.dispose()


def result_at_head(ir_per_tx: float, parent: float) -> dict:
    data = histories.perf_gate_result(HEAD, ir_per_tx, parent)
    data["config"] = {"transactions": 100, "accounts": 10000, "seed": 1, "block_size": "256KiB"}
    data["verdict"].update(parent_ir_per_tx=parent, current_ir_per_tx=ir_per_tx, message="pass: ...")
    return data


@pytest.mark.parametrize("before, after, n_after, recent, passed", [
    (1000.0, 1060.0, 3, 10, False),    # a +6% step ending at the head
    (1000.0, 1000.0, 3, 10, True),     # flat
    (1000.0, 1020.0, 3, 10, True),     # a step within the threshold
    (1000.0, 1060.0, 15, 10, True),    # a step older than --recent: the baseline now
    (1060.0, 1000.0, 3, 10, True),     # fewer instructions
])
def test_the_history_check(tmp_path, before, after, n_after, recent, passed):
    target = str(tmp_path / "h.sqlite")
    planted_gate_history(target, before, after, n_after=n_after)
    check = perf_gate_ci.check_history(target, result_at_head(after, after), "perf-gate:head", 3.0, recent)
    assert check["passed"] is passed, check["message"]
    if not passed:
        assert check["change"]["commit"] == "c030" and 5 < check["change"]["change_pct"] < 7
        assert check["message"].startswith("FAIL: the history's newest segment, from c030 (4 commits)")


def test_junit_and_markdown_of_a_failed_history_check(tmp_path):
    target = str(tmp_path / "h.sqlite")
    planted_gate_history(target, 1000.0, 1060.0)
    result = result_at_head(1060.0, 1058.0)
    result["history"] = perf_gate_ci.check_history(target, result, "perf-gate:head", 3.0, 10)
    result["functions"] = {"self": [{"function": "find_comment(int)", "change_per_tx": 400.0}]}
    perf_gate_ci.write_reports(result, str(tmp_path / "junit.xml"), str(tmp_path / "gate.md"))
    suite = ET.parse(tmp_path / "junit.xml").getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("2", "1", "0")
    parent_case, history_case = suite.findall("testcase")
    assert parent_case.find("failure") is None and "against HEAD^" in parent_case.get("name")
    assert "newest segment, from c030" in history_case.find("failure").get("message")
    md = (tmp_path / "gate.md").read_text()
    assert md.startswith("### perf-gate: FAILED")
    assert "| instructions, against the parent | 1,058 | 1,060 | +0.19% | passed |" in md
    assert "history: segment from `c030`" in md and "**failed**" in md and "`find_comment(…)`: +400.0" in md


@pytest.mark.parametrize("result, outcome", [
    ({"status": "failed", "threshold_pct": 3.0, "base": "HEAD^", "reason": "the base could not be built"}, "error"),
    ({"status": "skipped", "threshold_pct": 3.0, "base": "HEAD^", "reason": "HEAD is the first commit"}, "skipped"),
    ({"status": "failed", "threshold_pct": 3.0, "base": "HEAD^",
      "verdict": {"passed": False, "change_pct": 4.0, "parent_ir_per_tx": 100.0, "current_ir_per_tx": 104.0,
                  "message": "FAIL: instructions per transaction 100.0 -> 104.0 (+4.00%)"}}, "failure"),
])
def test_junit_of_a_gate_without_history(result, outcome):
    suite = ET.fromstring(perf_gate_ci.junit_xml(result)).find("testsuite")
    (case,) = suite.findall("testcase")
    assert case.find(outcome) is not None and suite.get("tests") == "1"
    assert perf_gate_ci.markdown(result).startswith("### perf-gate: " + ("skipped" if outcome == "skipped"
                                                                           else "FAILED"))


@pytest.mark.skipif(not (shutil.which("valgrind") and shutil.which("cc")), reason="needs valgrind and a C compiler")
def test_the_gate_fails_on_a_change_point_at_the_head(tmp_path, monkeypatch, capsys):
    """The whole gate under the real callgrind, on a stand-in whose parent is the same build (so
    it passes against the parent), with a history whose last commits stepped up by 6% to the
    stand-in's count: it fails, says why, and writes both reports. Without $APIARY_HISTORY the
    same gate passes and writes no history."""
    source = tmp_path / "stand_in.c"
    source.write_text(STAND_IN)
    binary = tmp_path / "apiary"
    subprocess.run(["cc", "-O1", "-g", "-o", str(binary), str(source)], check=True)
    monkeypatch.setattr(perf_gate.shutil, "which", lambda name: "/usr/bin/" + name)
    monkeypatch.setattr(perf_gate, "resolve_commit", lambda rev: HEAD)
    monkeypatch.setattr(perf_gate, "build_base", lambda commit, work, jobs: binary)
    monkeypatch.delenv("APIARY_HISTORY", raising=False)
    common = ["--apiary", str(binary), "--work", str(tmp_path / "work"), "--wall-runs", "0", "--transactions", "100"]
    assert perf_gate.main([*common, "--json", str(tmp_path / "plain.json")]) == 0
    plain = json.loads((tmp_path / "plain.json").read_text())
    assert "history" not in plain and not list(tmp_path.glob("*.sqlite"))
    count = plain["sides"]["current"]["ir_per_tx"]

    target = tmp_path / "h.sqlite"
    planted_gate_history(str(target), count / 1.06, count)
    monkeypatch.setenv("APIARY_HISTORY", str(target))
    capsys.readouterr()
    code = perf_gate.main([*common, "--json", str(tmp_path / "gate.json"), "--junit", str(tmp_path / "junit.xml"),
                           "--markdown", str(tmp_path / "gate.md")])
    assert code == 1
    ingested, failed = capsys.readouterr().err.strip().splitlines()
    assert ingested.startswith("perf-gate: 1 result(s) ingested into the history")
    assert failed.startswith("perf-gate: FAIL: the history's newest segment, from c030")
    result = json.loads((tmp_path / "gate.json").read_text())
    assert result["status"] == "passed" and result["history"]["passed"] is False
    assert result["commit"] == HEAD and result["history"]["commits"] == 34
    suite = ET.parse(tmp_path / "junit.xml").getroot().find("testsuite")
    # the instructions, the estimated cycles, the memory time and the history: only the history failed
    assert suite.get("failures") == "1" and len(suite.findall("testcase")) == 4
    assert "FAILED" in (tmp_path / "gate.md").read_text()
