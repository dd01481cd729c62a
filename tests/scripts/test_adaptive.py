"""Adaptive repetition end to end with the fake apiary: `multirun --adaptive` adds interleaved
pairs until the sequential decision is settled or its budget is spent, `compare` re-judges
the pairs of an A/B, and the ladder's extra rounds follow each step's sequential decision."""

import json
import os
import signal
import subprocess
import sys

import pytest

import fakes
from apiary_tools import comparison
from apiary_tools.commands import multirun

NOISY = {"FAKE_APIARY_NOISE": "0.01"}


@pytest.fixture
def fake_env(monkeypatch):
    def use(**variables):
        for name, value in variables.items():
            monkeypatch.setenv(name, value)
    return use


def ab(tmp_path, fake_command, *extra):
    out = tmp_path / "ab"
    code = multirun.main(["--command", fake_command, "--adaptive", "--a", "--side a", "--b", "--side b",
                          "--out", str(out), "--quiet", *extra])
    return code, out


def decision(out):
    return json.loads((out / "comparison.json").read_text())["sequential"]


def runs_of(out, side):
    return sorted(p.name for p in (out / side).glob("run-*.json"))


def test_a_planted_slowdown_is_decided_slower_before_the_budget(tmp_path, fake_command, fake_env):
    fake_env(FAKE_APIARY_SLOWER="--side b 1.05", **NOISY)
    code, out = ab(tmp_path, fake_command, "--threshold", "1", "--max-runs", "30")
    assert code == 0
    d = decision(out)
    assert d["verdict"] == "slower" and d["reason"] == "interval above +1.0 %"
    assert 5 <= d["pairs"] < 30 and d["low"] > 0.01 and d["change"] == pytest.approx(0.05, abs=0.02)
    assert d["detectable"] > 0 and d["max_pairs"] == 30
    # Every pair is a run of each side, and nothing past the pair that decided.
    assert runs_of(out, "a") == runs_of(out, "b") == [f"run-{i:03d}.json" for i in range(1, d["pairs"] + 1)]
    text = (out / "comparison.md").read_text()
    assert "Sequential decision" in text and "**slower +" in text


def test_identical_sides_end_equivalent(tmp_path, fake_command, fake_env):
    fake_env(**NOISY)
    code, out = ab(tmp_path, fake_command, "--threshold", "5", "--max-runs", "30")
    assert code == 0
    d = decision(out)
    assert d["verdict"] == "equivalent" and -0.05 <= d["low"] and d["high"] <= 0.05
    assert d["pairs"] < 30


def test_the_budget_of_runs_is_honoured(tmp_path, fake_command, fake_env):
    # Threshold 0 cannot be settled on noisy runs: only the budget ends it.
    fake_env(**NOISY)
    code, out = ab(tmp_path, fake_command, "--threshold", "0", "--runs", "3", "--max-runs", "7")
    assert code == 0
    d = decision(out)
    assert d["verdict"] == "undecided" and d["reason"] == "budget spent: 7 pairs" and d["pairs"] == 7
    assert len(runs_of(out, "a")) == len(runs_of(out, "b")) == 7


def test_the_budget_of_time_is_honoured(tmp_path, fake_command, fake_env):
    fake_env(**NOISY)
    code, out = ab(tmp_path, fake_command, "--threshold", "0", "--max-runs", "500", "--max-time", "4s")
    assert code == 0
    d = decision(out)
    assert d["verdict"] == "undecided" and d["reason"].startswith("budget spent: ") and " s of 4 s" in d["reason"]
    assert d["pairs"] == len(runs_of(out, "b")) < 500 and d["max_seconds"] == 4


def test_compare_re_judges_the_pairs_as_the_loop_did(tmp_path, fake_command, fake_env):
    fake_env(FAKE_APIARY_SLOWER="--side b 1.05", **NOISY)
    code, out = ab(tmp_path, fake_command, "--threshold", "1")
    assert code == 0
    again = comparison.build([str(out / "a")], [str(out / "b")], threshold_pct=1.0)
    loop = decision(out)
    for key in ("verdict", "change", "low", "high", "pairs", "detectable"):
        assert again.sequential[key] == pytest.approx(loop[key]), key
    # A higher threshold re-judges the same pairs differently.
    rejudged = comparison.build([str(out / "a")], [str(out / "b")], threshold_pct=20.0)
    assert rejudged.sequential["verdict"] == "equivalent"


def test_compare_gives_no_decision_for_runs_that_are_not_paired(tmp_path, fake_command, fake_env):
    fake_env(**NOISY)
    a, b = tmp_path / "a", tmp_path / "b"
    for out, runs in ((a, "5"), (b, "6")):
        assert multirun.main(["--command", fake_command, "--runs", runs, "--out", str(out), "--quiet"]) == 0
    cmp = comparison.build([str(a)], [str(b)])
    assert cmp.sequential is None and "not paired" in cmp.sequential_note
    assert "Sequential decision: none (the sides are not paired" in comparison.to_markdown(cmp)


def test_ctrl_c_keeps_the_completed_pairs(tmp_path, repo, fake_command):
    out = tmp_path / "ab"
    env = dict(os.environ, FAKE_APIARY_HANG_RUN="7", PYTHONPATH=str(repo / "scripts"), **NOISY)
    proc = subprocess.Popen([sys.executable, "-m", "apiary_tools.commands.multirun", "--command", fake_command,
                             "--adaptive", "--threshold", "0", "--a", "--side a", "--b", "--side b", "--out", str(out)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    fakes.wait_for_hanging_run(out / "a" / "run-007.out")
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "stopped by SIGINT" in stderr
    d = decision(out)
    assert d["pairs"] == 6 and d["verdict"] == "undecided"
    assert not (out / "b" / "run-007.json").exists()


@pytest.mark.parametrize("extra, message", [
    (["--adaptive"], "--adaptive decides an A/B: give --a and --b"),
    (["--max-runs", "9", "--a", "x", "--b", "y"], "give --adaptive too"),
    (["--adaptive", "--a", "x", "--b", "y", "--max-time", "soon"], "expected a duration above 0"),
    (["--adaptive", "--a", "x", "--b", "y", "--threshold", "-1"], "expected a percentage from 0 to 100"),
])
def test_bad_adaptive_usage(tmp_path, fake_command, capsys, extra, message):
    assert multirun.main(["--command", fake_command, "--out", str(tmp_path / "o"), *extra]) == 2
    assert message in capsys.readouterr().err
