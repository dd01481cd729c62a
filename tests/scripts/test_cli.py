"""The commands as a user meets them: --help, the entry scripts, bad usage, and multirun's
failure and interrupt paths (driven through a fake apiary, fake_apiary.py)."""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys

import pytest

import fakes
from apiary_tools.commands import bisect, compare, gbexport, maxrate, multirun, plot, rc_tune, report_html, sweep
from apiary_tools.commands import history as history_cli
from apiary_tools.common import whole_number

TOOLS = {"multirun": multirun, "compare": compare, "gb-export": gbexport, "sweep": sweep, "plot": plot,
         "find-max-rate": maxrate, "report-html": report_html, "history": history_cli, "bisect": bisect,
         "rc-tune": rc_tune}


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_help(tool, capsys):
    assert TOOLS[tool].main(["--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: {tool}") and "example" in out


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_entry_script_runs_the_venv(repo, tool):
    script = repo / "scripts" / tool
    assert os.access(script, os.X_OK)
    assert "launch.sh" in script.read_text()
    if not (repo / ".venv" / "bin" / "python").exists():
        pytest.skip("no .venv")
    proc = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.startswith(f"usage: {tool}")


def test_entry_script_without_venv_says_what_to_do(repo, tmp_path):
    scripts = tmp_path / "scripts"
    shutil.copytree(repo / "scripts" / "apiary_tools", scripts / "apiary_tools")
    shutil.copy2(repo / "scripts" / "compare", scripts / "compare")
    proc = subprocess.run([str(scripts / "compare"), "a", "b"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("compare: ") and "scripts/install-deps.sh" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("args, message", [
    (["--runs", "0"], "--runs: expected a whole number from 1 to 10,000, not '0'"),
    (["--a", "--dedup split"], "come together"),
    (["--a", "x", "--b", "y", "--a-label", "s", "--b-label", "s"], "different names"),
    (["--aggregate", "x", "--config", "c.toml"], "runs nothing"),
    (["--config", "no-such.toml"], "no such file"),
    (["--", "--report", "x.json"], "--report"),
    (["--no-such-option"], "unrecognized"),
])
def test_multirun_bad_usage(args, message, capsys, fake_command):
    assert multirun.main(args + ["--command", fake_command]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("multirun: ") and message in err and "\n" not in err


def test_multirun_missing_binary(tmp_path, capsys):
    assert multirun.main(["--apiary", str(tmp_path / "nothing"), "--out", str(tmp_path / "o")]) == 2
    assert "no executable" in capsys.readouterr().err


def test_multirun_passes_on_apiary_bad_usage(tmp_path, capsys, fake_command):
    assert multirun.main(["--command", fake_command, "--out", str(tmp_path / "o"), "--", "--bad"]) == 2
    assert "--bad: unknown option" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_multirun_runs_and_aggregates(tmp_path, capsys, fake_command):
    out = tmp_path / "o"
    assert multirun.main(["--command", fake_command, "--runs", "3", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "run 3/3" in captured.err and "ETA" in captured.err and "last (run #2) cycle avg" in captured.err
    agg = json.loads((out / "aggregate.json").read_text())
    assert agg["n_runs"] == 3 and len(agg["runs"]) == 3
    cycle = agg["metrics"]["aggregates.cycle_us.avg"]
    assert len(cycle["values"]) == 3 and cycle["min"] <= cycle["mean"] <= cycle["max"]
    assert cycle["ci_low"] < cycle["mean"] < cycle["ci_high"]
    assert all(r["load_avg_before"] is not None for r in agg["runs"])
    summary = (out / "summary.md").read_text()
    assert summary.index("cycle avg") < summary.index("µs per transaction") < summary.index("writer unknown")
    assert "| metric | mean | 95% CI |" in captured.out
    # the output directory must be new
    assert multirun.main(["--command", fake_command, "--out", str(out)]) == 2


def test_multirun_ab_interleaves_and_compares(tmp_path, fake_command):
    out = tmp_path / "ab"
    assert multirun.main(["--command", fake_command, "--runs", "2", "--a", "--dedup split", "--b",
                          "--dedup unified", "--a-label", "split", "--b-label", "unified",
                          "--out", str(out), "--quiet"]) == 0
    runs = json.loads((out / "split" / "aggregate.json").read_text())["runs"]
    assert [r["path"] for r in runs] == ["run-001.json", "run-002.json"]
    logs = sorted(out.glob("*/run-*.out"), key=lambda p: p.stat().st_mtime_ns)
    assert [p.parent.name for p in logs] == ["split", "unified", "split", "unified"]
    assert "--dedup unified" in (out / "unified" / "run-001.out").read_text()
    assert multirun.main(["--command", fake_command, "--runs", "1", "--a", "--keep-alive=on", "--b",
                          "--keep-alive=off", "--out", str(tmp_path / "single-word"), "--quiet"]) == 0
    assert "Comparison: unified" in (out / "comparison.md").read_text()
    assert json.loads((out / "comparison.json").read_text())["kind"] == "apiary-compare"


def test_multirun_failed_run(tmp_path, capsys, fake_command, monkeypatch):
    monkeypatch.setenv("FAKE_APIARY_FAIL_RUN", "2")
    out = tmp_path / "o"
    assert multirun.main(["--command", fake_command, "--runs", "4", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "run 2/4 (run #2) FAILED with exit status 1: injected failure" in err and "run-002.out" in err
    assert not (out / "run-003.json").exists()  # stopped at the failure
    assert json.loads((out / "aggregate.json").read_text())["n_runs"] == 1

    out2 = tmp_path / "o2"
    assert multirun.main(["--command", fake_command, "--runs", "3", "--out", str(out2), "--keep-going",
                          "--quiet"]) == 1
    agg = json.loads((out2 / "aggregate.json").read_text())
    assert agg["n_runs"] == 2


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_multirun_interrupted(tmp_path, repo, fake_command, sig, code):
    out = tmp_path / "o"
    env = dict(os.environ, FAKE_APIARY_HANG_RUN="2", PYTHONPATH=str(repo / "scripts"))
    proc = subprocess.Popen([sys.executable, "-m", "apiary_tools.commands.multirun", "--command", fake_command,
                             "--runs", "4", "--out", str(out)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    fakes.wait_for_hanging_run(out / "run-002.out")
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == code, stderr
    assert f"stopped by {signal.Signals(sig).name}" in stderr
    agg = json.loads((out / "aggregate.json").read_text())
    assert agg["n_runs"] == 1                                 # run 1 counted
    assert json.loads((out / "run-002.json").read_text())["interrupted"]  # run 2's report kept
    assert not (out / "run-003.json").exists()


@pytest.mark.parametrize("args, message", [
    (["--param", "threads", "--values", ""], "at least one value"),
    (["--param", "threads", "--values", "1,1"], "repeated"),
    (["--param", "Block Size", "--values", "1"], "option name"),
    (["--param", "threads", "--values", "1", "--runs", "0"],
     "--runs: expected a whole number from 1 to 10,000, not '0'"),
    (["--param", "threads", "--values", "1", "--", "--threads", "2"], "sets this itself"),
    (["--values", "1"], "--param"),
])
def test_sweep_bad_usage(args, message, capsys, fake_command):
    assert sweep.main(args + ["--command", fake_command]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("sweep: ") and message in err and "\n" not in err


def test_plot_bad_usage(tmp_path, capsys):
    assert plot.main(["--out", str(tmp_path)]) == 2
    assert plot.main(["--sweep", str(tmp_path / "none.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("plot: ") for line in err)


@pytest.mark.parametrize("text", ["0", "1.5", "-1", "+3", "1e3", "1_000", " 4", "٣", "", "10001", "1" + "0" * 5000])
def test_a_count_is_ascii_digits_within_its_bounds(text):
    with pytest.raises(argparse.ArgumentTypeError, match="expected a whole number from 1 to 10,000"):
        whole_number(1, 10_000)(text)


def test_a_count_in_range_is_its_number():
    assert whole_number(1, 10)("7") == 7 and whole_number(0, 10)("0") == 0 and whole_number(1, 100)("0012") == 12
    assert whole_number(1, 10_000)("10000") == 10_000 and whole_number(1, 5)("00000000000000000005") == 5
