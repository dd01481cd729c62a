"""SIGINT and SIGTERM in every tool, handled alike by one handler (common.STOP): a tool that
has completed work (runs that finished, a run's interval log) keeps it and aggregates it,
then exits 130 or 143; a tool with nothing to keep stops at once, writing nothing half; never
a traceback. Each case runs the tool in a process of its own with one of its steps wrapped so
that the signal arrives just as that step starts."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import fakes
from apiary_tools.common import STOP, Interrupted

# Runs a tool's main() with `step` (an attribute of the tool's module, or Class.method) sending
# the process the signal the first time it is called, as a Ctrl-C or a `kill` would then.
DRIVER = textwrap.dedent("""
    import importlib, os, signal, sys
    module_name, step, sig = sys.argv[1:4]
    module = importlib.import_module("apiary_tools.commands." + module_name)
    owner, _, name = step.rpartition(".")
    holder = getattr(module, owner) if owner else module
    original = getattr(holder, name)

    sent = []

    def step_with_signal(*args, **kwargs):
        if not sent:   # once: a second signal is a second Ctrl-C
            sent.append(os.kill(os.getpid(), getattr(signal, sig)))
        return original(*args, **kwargs)

    setattr(holder, name, step_with_signal)
    sys.exit(module.main(sys.argv[4:]))
""")


def run_tool(repo, tmp_path, module, step, sig, args, env=None):
    proc = subprocess.run([sys.executable, "-c", DRIVER, module, step, sig.name, *args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=str(repo / "scripts"), **(env or {})))
    assert "Traceback" not in proc.stderr and "KeyboardInterrupt" not in proc.stderr, proc.stderr
    return proc


CODES = {signal.SIGINT: 130, signal.SIGTERM: 143}


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_multirun_aggregates_the_completed_runs_when_stopped_while_aggregating(sig, repo, tmp_path, fake_command):
    out = tmp_path / "o"
    proc = run_tool(repo, tmp_path, "multirun", "write_set", sig,
                    ["--command", fake_command, "--runs", "2", "--a", "--dedup split", "--b", "--dedup unified",
                     "--out", str(out), "--quiet"])
    assert proc.returncode == CODES[sig], proc.stderr
    for side in ("a", "b"):
        assert json.loads((out / side / "aggregate.json").read_text())["n_runs"] == 2
    assert json.loads((out / "comparison.json").read_text())["kind"] == "apiary-compare"


# One handler takes both signals alike: multirun is stopped by each, the other tools by one of them.
@pytest.mark.parametrize("sig", [signal.SIGTERM], ids=["SIGTERM"])
def test_sweep_writes_its_table_when_stopped_while_aggregating(sig, repo, tmp_path, fake_command):
    out = tmp_path / "o"
    proc = run_tool(repo, tmp_path, "sweep", "write_set", sig,
                    ["--command", fake_command, "--param", "threads", "--values", "1,2", "--runs", "1",
                     "--out", str(out), "--quiet", "--no-plots"])
    assert proc.returncode == CODES[sig], proc.stderr
    assert [p["n"] for p in json.loads((out / "sweep.json").read_text())["points"]] == [1, 1]


@pytest.mark.parametrize("sig", [signal.SIGINT], ids=["SIGINT"])
def test_the_soak_analyses_its_log_when_stopped_while_analysing(sig, repo, tmp_path):
    (tmp_path / "intervals.jsonl").write_text("".join(json.dumps(r) + "\n"
                                                      for r in fakes.soak_log(blocks=4_000, window=1_000)))
    proc = run_tool(repo, tmp_path, "soak", "analyse", sig, ["--from", str(tmp_path), "--cashout-blocks", "1000"])
    assert proc.returncode == CODES[sig], proc.stderr
    assert json.loads((tmp_path / "soak.json").read_text())["records"] == 40


@pytest.mark.parametrize("module, step, tool, sig", [
    ("compare", "to_markdown", "compare", signal.SIGINT),
    ("gbexport", "validate", "gb-export", signal.SIGTERM),
    ("report_html", "Page.render", "report-html", signal.SIGINT),
    ("plot", "sets_from_inputs", "plot", signal.SIGTERM),
], ids=["compare", "gb-export", "report-html", "plot"])
def test_a_tool_with_nothing_to_keep_stops_at_once_and_writes_nothing(module, step, tool, sig, repo, tmp_path):
    a = fakes.write_set(tmp_path / "a", [20000, 20100, 19900])
    b = fakes.write_set(tmp_path / "b", [21000, 21100, 20900])
    out = tmp_path / "out"
    args = {"compare": [str(a), str(b), "--json", str(out)], "gb-export": [str(a), "-o", str(out)],
            "report-html": [str(a), "--out", str(out)], "plot": [str(a), "--out", str(out)]}[tool]
    before = sorted(p.name for p in tmp_path.iterdir())
    proc = run_tool(repo, tmp_path, module, step, sig, args)
    assert proc.returncode == CODES[sig], proc.stderr
    assert proc.stderr.strip() == f"{tool}: stopped by {sig.name}"
    assert sorted(p.name for p in tmp_path.iterdir()) == before   # nothing written, not even a temporary file


def test_keeping_notes_the_first_signal_and_a_second_ends_at_once():
    before = signal.getsignal(signal.SIGTERM)
    with STOP.handling():
        with STOP.keeping():
            os.kill(os.getpid(), signal.SIGTERM)
            assert (STOP.received, STOP.count) == (signal.SIGTERM, 1)
            with pytest.raises(Interrupted):
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(1)   # the handler runs before this returns
        assert STOP.count == 2
    assert signal.getsignal(signal.SIGTERM) == before   # the handler is the tool's only while it runs


def _catches(pid: int, sig: signal.Signals) -> bool:
    """Whether the process has a handler of its own for `sig` (/proc's SigCgt mask)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    mask = next((int(line.split()[1], 16) for line in status.splitlines() if line.startswith("SigCgt:")), 0)
    return bool(mask >> (sig - 1) & 1)


def test_a_signal_while_the_tool_is_still_starting_is_one_line(repo, tmp_path):
    """From the moment the entry script's Python catches SIGTERM (apiary_tools/__main__.py, before
    numpy and scipy are imported), a signal ends the tool with one line, never a traceback."""
    a = fakes.write_set(tmp_path / "a", [20000, 20100, 19900])
    proc = subprocess.Popen([str(repo / "scripts" / "compare"), str(a), str(a), "--quiet"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not _catches(proc.pid, signal.SIGTERM) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143 and err == "compare: stopped by SIGTERM\n", (proc.returncode, err)
