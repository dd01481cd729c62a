"""The tools' child processes: started outside the terminal's process group, this process's
SIGINT and SIGTERM passed on to them, waited for with a timeout.

Why a process group of its own: a Ctrl-C on the terminal goes to every process of the
terminal's foreground group. Were the child in it, apiary would get the SIGINT twice, from
the terminal and from the tool, and it takes a second SIGINT as "exit at once, without a
report". In its own group only the tool gets it, and passes on exactly one (`Forwarding`).

Every tool that runs apiary goes through here: the runner's plans (multirun, sweep, ladder,
find-max-rate), the soak's one long run and a cluster worker's task (fleet.run_task, which
has no signals of its own to pass on: it stops its child when the client asks, from `tick`).
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO, Any, Protocol

from .common import STOP, ToolError

# After a timeout: how long the child has after its SIGTERM before it is killed.
GRACE_S = 10.0


class Child(Protocol):
    """What a child must offer: a local process (subprocess.Popen) or a run elsewhere
    (fleet.RemoteProcess)."""

    def poll(self) -> int | None: ...

    def send_signal(self, signum: int) -> None: ...


class Forwarding:
    """Inside its `with` block, this process's SIGINT and SIGTERM are passed on, as they are, to
    the child in hand (`child`, set by `start` or by hand), by the tools' one handler
    (common.STOP, which also notes them: `received` is the first, `count` how many). With
    once=True only the first is passed on; otherwise every one is, so that a second Ctrl-C makes
    apiary exit at once, as on a terminal. A signal that came while no child was running (or
    before the block) is passed on to the next one as soon as it starts. Signal handlers can
    only be set in the main thread."""

    def __init__(self, once: bool = False):
        self.once = once
        self._child: Child | None = None
        self._passed = 0
        self._stack = contextlib.ExitStack()

    def __enter__(self) -> Forwarding:
        self._stack.enter_context(STOP.forwarding(self._pass_on))
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    @property
    def received(self) -> int | None:
        return STOP.received

    @property
    def count(self) -> int:
        return STOP.count

    @property
    def child(self) -> Child | None:
        return self._child

    @child.setter
    def child(self, child: Child | None) -> None:
        self._child = child
        self._passed = 0
        if child is not None and STOP.received is not None:
            self._pass_on(STOP.received)

    def _pass_on(self, signum: int) -> None:
        child = self._child
        if child is None or child.poll() is not None or (self.once and self._passed):
            return
        self._passed += 1
        child.send_signal(signum)

    def start(self, args: Sequence[str], **options: Any) -> subprocess.Popen:
        """`start(args, ...)`, and the child is the one signals go to."""
        child = start(args, **options)
        self.child = child
        return child


def start(args: Sequence[str], *, stdout: int | IO[Any] | None = None, stderr: int | IO[Any] | None = None,
          cwd: str | None = None, own_group: bool = True, text: bool = False) -> subprocess.Popen:
    """The child running `args`, with no standard input and, unless own_group=False, in a
    process group of its own. A ToolError (one line) when it cannot start."""
    try:
        return subprocess.Popen(list(args), stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr, cwd=cwd,
                                process_group=0 if own_group else None, text=text)
    except OSError as e:
        raise ToolError(f"cannot start {args[0]}: {e.strerror}") from None


@dataclass
class Ended:
    returncode: int
    elapsed_s: float
    timed_out: bool = False     # it ran past the timeout and was stopped (SIGTERM, then SIGKILL)


def _wait_up_to(child: Child, seconds: float | None) -> int | None:
    if isinstance(child, subprocess.Popen):
        try:
            return child.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            return None
    code = child.poll()
    if code is None:
        time.sleep(seconds if seconds is not None else 0.2)
        code = child.poll()
    return code


def _stop(child: Child, grace_s: float) -> int:
    child.send_signal(signal.SIGTERM)
    code = _wait_up_to(child, grace_s)
    if code is None and isinstance(child, subprocess.Popen):
        child.kill()
        code = child.wait()
    return code if code is not None else -int(signal.SIGTERM)


def wait(child: Child, *, timeout: float | None = None, tick: Callable[[], None] | None = None,
         every: float = 0.2, grace_s: float = GRACE_S) -> Ended:
    """Waits for the child to end. With `tick`, calls it about every `every` seconds while the
    child runs. With `timeout`, a child still running that many seconds after the wait began
    gets SIGTERM, and after `grace_s` more SIGKILL (a local child only)."""
    t0 = time.monotonic()
    deadline = None if timeout is None else t0 + timeout
    while True:
        step: float | None = every if tick is not None else None
        if deadline is not None:
            left = max(0.0, deadline - time.monotonic())
            step = left if step is None else min(step, left)
        code = _wait_up_to(child, step)
        if code is not None:
            return Ended(code, time.monotonic() - t0)
        if deadline is not None and time.monotonic() >= deadline:
            return Ended(_stop(child, grace_s), time.monotonic() - t0, timed_out=True)
        if tick is not None:
            tick()
