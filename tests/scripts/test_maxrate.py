"""find-max-rate against the fake apiary, whose node includes FAKE_APIARY_CAPACITY tx/s: the
bisection converges to the capacity, by the latency bound and by the queue rule alone; the
queue rule on constructed series; the end states (the ceiling passes, the floor fails, a
failed run, Ctrl-C) and bad usage."""

import csv
import json
import os
import signal
import subprocess
import sys

import pytest

import fakes
from apiary_tools.commands import maxrate

CAPACITY = 3000


@pytest.fixture
def capacity(monkeypatch):
    monkeypatch.setenv("FAKE_APIARY_CAPACITY", str(CAPACITY))
    return CAPACITY


def search(fake_command, out, *extra):
    return maxrate.main(["--command", fake_command, "--out", str(out), "--quiet", *extra])


def test_bisection_converges_to_the_capacity(tmp_path, capsys, fake_command, capacity):
    out = tmp_path / "o"
    assert search(fake_command, out, "--low", "500", "--high", "8000", "--precision", "1%") == 0
    data = json.loads((out / "maxrate.json").read_text())
    assert data["status"] == "found"
    assert capacity * 0.99 <= data["max_rate"] < capacity <= data["first_failing"] < capacity * 1.01
    assert data["first_failing"] - data["max_rate"] < 0.01 * data["max_rate"]
    rows = list(csv.DictReader((out / "maxrate.csv").open()))
    assert len(rows) == len(data["trials"]) and [int(r["rate"]) for r in rows] == sorted(int(r["rate"]) for r in rows)
    assert all((r["passed"] == "True") == (int(r["rate"]) < capacity) for r in rows)
    assert (out / "maxrate.png").read_bytes()[:4] == b"\x89PNG"
    text = capsys.readouterr().out
    assert f"highest sustainable rate: {data['max_rate']:,} tx/s" in text
    assert text == (out / "maxrate.md").read_text()
    assert not list(out.glob("*.tmp*"))


def test_the_queue_rule_alone_finds_the_overload(tmp_path, fake_command, capacity):
    out = tmp_path / "o"
    assert search(fake_command, out, "--low", "500", "--high", "8000", "--bound", "1000", "--precision", "50") == 0
    data = json.loads((out / "maxrate.json").read_text())
    assert capacity <= data["max_rate"] < capacity * 1.2        # a slight overload grows too slowly to see
    failed = [t for t in data["trials"] if not t["passed"]]
    assert failed and all(t["queue"] == "growing" and t["p99_inclusion_us"] < 1000e6 for t in failed)


def test_runs_per_rate_take_the_median(tmp_path, fake_command, capacity):
    out = tmp_path / "o"
    assert search(fake_command, out, "--low", "1000", "--high", "6000", "--precision", "20%", "--runs", "3") == 0
    data = json.loads((out / "maxrate.json").read_text())
    for t in data["trials"]:
        figures = t["run_figures"]
        assert len(figures) == 3 and t["runs"] == 3
        assert t["p99_inclusion_us"] == sorted(f["p99_us"] for f in figures)[1]
    assert (out / "rate-1000-run-003.intervals.jsonl").is_file()


def test_a_passing_ceiling_says_so(tmp_path, capsys, fake_command, capacity):
    assert search(fake_command, tmp_path / "o", "--low", "500", "--high", "2000") == 0
    assert "at least 2,000 tx/s, the --high given: raise --high" in capsys.readouterr().out


def test_a_failing_floor_exits_1(tmp_path, capsys, fake_command, capacity):
    out = tmp_path / "o"
    assert search(fake_command, out, "--low", "3500", "--high", "8000") == 1
    assert "no rate passed: --low 3,500 tx/s already failed" in capsys.readouterr().out
    assert json.loads((out / "maxrate.json").read_text())["max_rate"] is None


@pytest.mark.parametrize("series, grows", [
    ([100, 200, 150, 100, 200, 150, 100, 200, 150, 100, 200, 150], False),   # a saw-tooth
    ([100, 100, 100, 100, 100, 100, 900, 100, 100, 100, 100, 100], False),   # one slow interval
    ([100, 110, 120, 130, 140, 150, 160, 170, 180, 190, 200, 210], True),    # steady growth
    ([100, 101, 102, 103, 104, 105, 106, 107], False),                       # growth under 10%
    ([100, 200, 300], False),                                                # too few to judge
])
def test_growth_rule(series, grows):
    assert maxrate.grows(series) is grows


def test_the_queue_grows_by_its_latency_when_a_brake_holds_the_backlog(tmp_path):
    lines = [{"in_flight": 1000, "queue_depth": 10, "latency": {"end_to_end": {"p50_us": 1e5 * (1 + k)}}}
             for k in range(8)]
    assert maxrate.queue_grows(lines)
    for line in lines:
        line["latency"]["end_to_end"]["p50_us"] = 1e5
    assert not maxrate.queue_grows(lines)


def test_a_failed_run_keeps_what_was_tried(tmp_path, capsys, fake_command, capacity, monkeypatch):
    monkeypatch.setenv("FAKE_APIARY_FAIL_ABOVE", "5000")
    out = tmp_path / "o"
    assert search(fake_command, out, "--low", "500", "--high", "8000") == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("find-max-rate: rate 8000: run 1 failed with exit status 1") and "\n" not in err
    rows = list(csv.DictReader((out / "maxrate.csv").open()))
    assert [r["rate"] for r in rows] == ["500"]
    assert json.loads((out / "maxrate.json").read_text())["status"] == "stopped by a failed run"


def test_too_short_interval_logs_are_refused(tmp_path, capsys, fake_command, capacity, monkeypatch):
    monkeypatch.setenv("FAKE_APIARY_INTERVALS", "3")
    assert search(fake_command, tmp_path / "o", "--low", "500", "--high", "8000") == 1
    assert "3 intervals, the queue rule needs at least 6" in capsys.readouterr().err


def test_ctrl_c_keeps_the_table(tmp_path, repo, fake_command):
    out = tmp_path / "o"
    env = dict(os.environ, FAKE_APIARY_CAPACITY=str(CAPACITY), FAKE_APIARY_HANG_ABOVE="5000",
               PYTHONPATH=str(repo / "scripts"))
    proc = subprocess.Popen([sys.executable, "-m", "apiary_tools.commands.maxrate", "--command", fake_command,
                             "--low", "500", "--high", "8000", "--out", str(out), "--no-plot"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    fakes.wait_for_hanging_run(out / "rate-8000-run-001.out")
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "| 500 |" in stdout and "search interrupted: so far 500 tx/s passed" in stdout
    assert [r["rate"] for r in csv.DictReader((out / "maxrate.csv").open())] == ["500"]
    assert json.loads((out / "maxrate.json").read_text())["status"] == "interrupted"


@pytest.mark.parametrize("args, message", [
    (["--low", "2000", "--high", "1000"], "not below --high"),
    (["--low", "0", "--high", "1000"], "from 1 to 1,000,000,000 tx/s"),
    (["--low", "x", "--high", "1000"], "expected a rate"),
    (["--low", "1", "--high", "1000", "--runs", "0"], "--runs: expected a whole number from 1 to 10,000, not '0'"),
    (["--low", "1", "--high", "1000", "--precision", "0"], "above 0"),
    (["--low", "1", "--high", "1000", "--precision", "0.5"], "whole tx/s"),
    (["--low", "1", "--high", "1000", "--bound", "-1"], "seconds above 0"),
    (["--low", "1", "--high", "1000", "--", "--rate", "5"], "sets this itself"),
    (["--low", "1", "--high", "1000", "--", "--interval-log=x"], "sets this itself"),
    (["--high", "1000"], "--low"),
    (["--low", "1", "--high", "1000", "--", "--bad"], "--bad: unknown option"),
    (["--low", "1", "--high", "1000", "--interval", "soon"], "invalid value"),
])
def test_bad_usage(args, message, tmp_path, capsys, fake_command):
    out = tmp_path / "o"
    assert maxrate.main(["--command", fake_command, "--out", str(out)] + args) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("find-max-rate: ") and message in err and "\n" not in err
    assert not out.exists()


def test_missing_binary(tmp_path, capsys):
    assert maxrate.main(["--apiary", str(tmp_path / "none"), "--low", "1", "--high", "2"]) == 2
    assert "no executable" in capsys.readouterr().err
