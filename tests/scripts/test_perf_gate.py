"""The CI gate driver (apiary_tools.perf_gate): the cases where there is nothing to compare
must report and pass, and a count that grew must fail. Building a real parent takes
minutes, so the worktree build is replaced by fakes here; scripts/test.sh runs the real
gate on every submission."""

import json
import os
import stat
import textwrap
from pathlib import Path

import pytest

from apiary_tools import perf_gate


def _script(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + textwrap.dedent(body))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture
def current(tmp_path) -> Path:
    return _script(tmp_path / "current-apiary", "exit 0\n")


def test_no_parent_reports_and_passes(tmp_path, current, capsys, monkeypatch):
    monkeypatch.setattr(perf_gate.shutil, "which", lambda name: "/usr/bin/" + name)
    out = tmp_path / "gate.json"
    code = perf_gate.main(["--base", "no-such-revision-anywhere", "--apiary", str(current),
                           "--work", str(tmp_path / "work"), "--json", str(out)])
    assert code == 0
    result = json.loads(out.read_text())
    assert result["status"] == "skipped" and "first commit" in result["reason"]
    assert "nothing to compare" in capsys.readouterr().out


def test_a_parent_without_replay_reports_and_passes(tmp_path, current, capsys, monkeypatch):
    # An apiary from before the gate: CLI11 rejects the unknown subcommand with exit 2.
    old = _script(tmp_path / "old-apiary",
                  'echo "apiary: The following argument was not expected: replay" >&2\nexit 2\n')
    monkeypatch.setattr(perf_gate.shutil, "which", lambda name: "/usr/bin/" + name)
    monkeypatch.setattr(perf_gate, "resolve_commit", lambda rev: "0" * 40)
    monkeypatch.setattr(perf_gate, "build_base", lambda commit, work, jobs: old)
    out = tmp_path / "gate.json"
    code = perf_gate.main(["--apiary", str(current), "--work", str(tmp_path / "work"), "--json", str(out)])
    assert code == 0
    result = json.loads(out.read_text())
    assert result["status"] == "skipped" and "no `apiary replay`" in result["reason"]


def test_a_base_that_does_not_build_reports_and_passes(tmp_path, current, monkeypatch):
    monkeypatch.setattr(perf_gate.shutil, "which", lambda name: "/usr/bin/" + name)
    monkeypatch.setattr(perf_gate, "resolve_commit", lambda rev: "0" * 40)
    monkeypatch.setattr(perf_gate, "build_base", lambda commit, work, jobs: None)
    assert perf_gate.main(["--apiary", str(current), "--work", str(tmp_path / "w")]) == 0


@pytest.mark.parametrize("base_ir, current_ir, expected", [(1_000_000, 1_020_000, 0), (1_000_000, 1_040_000, 1),
                                                            (1_000_000, 900_000, 0)])
def test_the_verdict_decides_the_exit_status(tmp_path, current, monkeypatch, base_ir, current_ir, expected):
    monkeypatch.setattr(perf_gate.shutil, "which", lambda name: "/usr/bin/" + name)
    monkeypatch.setattr(perf_gate, "resolve_commit", lambda rev: "0" * 40)
    base = _script(tmp_path / "base-apiary", "exit 0\n")
    monkeypatch.setattr(perf_gate, "build_base", lambda commit, work, jobs: base)
    counts = {"base": base_ir, "current": current_ir}

    def fake_count(name, binary, work, args):
        return {"instructions": counts[name], "transactions": 1000, "ir_per_tx": counts[name] / 1000,
                "state_digest": "same", "blocks": 4, "accepted": 1000}

    monkeypatch.setattr(perf_gate, "count_side", fake_count)
    out = tmp_path / "gate.json"
    code = perf_gate.main(["--apiary", str(current), "--work", str(tmp_path / "w"), "--wall-runs", "0",
                           "--json", str(out)])
    assert code == expected
    assert json.loads(out.read_text())["status"] == ("passed" if expected == 0 else "failed")


def test_bad_usage_is_one_line_and_exit_2(tmp_path, capsys):
    assert perf_gate.main(["--transactions", "0", "--apiary", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("perf-gate:")


@pytest.mark.skipif(not os.path.exists("/usr/bin/valgrind"), reason="valgrind is not installed")
def test_a_real_count_of_the_current_binary(tmp_path, apiary_bin):
    """count_side on the real binary, twice: the instruction count does not move."""
    args = perf_gate.parser().parse_args(["--transactions", "300", "--accounts", "200", "--block-size", "64KiB"])
    a = perf_gate.count_side("current", apiary_bin, tmp_path, args)
    b = perf_gate.count_side("current", apiary_bin, tmp_path, args)
    assert a["instructions"] == b["instructions"] > 0
    assert a["transactions"] == 300 and a["blocks"] >= 1
