"""apiary_tools.proc, the one way the tools run a child: signals passed on, timeouts, errors."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from apiary_tools import proc
from apiary_tools.common import ToolError

# A child that notes the signal it gets in a file, then exits as apiary does after one.
CHILD = textwrap.dedent("""
    import signal, sys, time
    from pathlib import Path
    marker = Path(sys.argv[1])
    def on(signum, frame):
        marker.write_text(signal.Signals(signum).name)
        sys.exit(128 + signum)
    signal.signal(signal.SIGINT, on)
    signal.signal(signal.SIGTERM, on)
    marker.with_suffix(".ready").write_text("")
    time.sleep(60)
    sys.exit(0)
""")

# A tool as the tools are written: run_main around a body that runs the child under proc.
PARENT = textwrap.dedent("""
    import sys
    from apiary_tools import proc
    from apiary_tools.common import exit_code_for, run_main

    def body(argv):
        with proc.Forwarding() as signals:
            ended = proc.wait(signals.start([sys.executable, "-c", argv[0], argv[1]]), timeout=30)
        return exit_code_for(signals.received) if signals.received else ended.returncode

    sys.exit(run_main("parent", body, None))
""")


def _wait_for(path, seconds=20.0):
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} did not appear"
        time.sleep(0.02)


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_to_the_tool_reaches_its_child_and_the_tool_exits_with_its_code(tmp_path, repo, sig, code):
    marker = tmp_path / "child.signal"
    parent = subprocess.Popen([sys.executable, "-c", PARENT, CHILD, str(marker)], cwd=repo / "scripts",
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=dict(os.environ, PYTHONPATH=str(repo / "scripts")))
    _wait_for(marker.with_suffix(".ready"))
    parent.send_signal(sig)   # to the parent alone: the child is in a process group of its own
    out, err = parent.communicate(timeout=30)
    assert marker.read_text() == signal.Signals(sig).name
    assert parent.returncode == code, err
    assert "Traceback" not in err and out == ""


def test_the_child_has_its_own_process_group(tmp_path):
    child = proc.start([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert os.getpgid(child.pid) == child.pid != os.getpgid(0)
    finally:
        child.kill()
        child.wait()


def test_a_child_past_its_timeout_is_stopped(tmp_path):
    child = proc.start([sys.executable, "-c", "import time; time.sleep(30)"])
    ended = proc.wait(child, timeout=0.3, grace_s=5)
    assert ended.timed_out and ended.returncode == -signal.SIGTERM and ended.elapsed_s < 10


def test_tick_runs_while_the_child_does():
    ticks = []
    child = proc.start([sys.executable, "-c", "import time; time.sleep(0.5)"])
    ended = proc.wait(child, tick=lambda: ticks.append(1), every=0.05)
    assert ended.returncode == 0 and not ended.timed_out and len(ticks) >= 3


def test_a_program_that_cannot_start_is_one_line(tmp_path):
    with pytest.raises(ToolError, match=r"^cannot start .*nothing-here: No such file or directory$"):
        proc.start([str(tmp_path / "nothing-here")])


def test_once_passes_on_only_the_first_signal():
    class Fake:
        def __init__(self):
            self.got = []

        def poll(self):
            return None

        def send_signal(self, signum):
            self.got.append(signum)

    fake = Fake()
    with proc.Forwarding(once=True) as signals:
        signals.child = fake
        signal.raise_signal(signal.SIGINT)
        signal.raise_signal(signal.SIGINT)
    assert fake.got == [signal.SIGINT] and signals.count == 2 and signals.received == signal.SIGINT
