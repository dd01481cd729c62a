"""Running a plan of `apiary run`s one after another, with progress on stderr and a clean stop.

Each run gets its own `--report` and a log of its summary; the runner never reads apiary's
live progress line (it passes `--progress off` unless the user chose otherwise).

Stopping: the child runs in its own process group, so a Ctrl-C on the terminal reaches only
this process, which forwards exactly one SIGINT (or SIGTERM) to the run in hand. apiary then
finishes the block in hand, writes a report marked interrupted and exits 130; the plan stops
there and the caller still aggregates what completed. (Were the signal to reach apiary twice,
from the terminal and from us, apiary would exit at once without a report.)
"""

from __future__ import annotations

import shlex
import signal
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from .common import EXIT_SIGINT, EXIT_SIGTERM, ToolError, fmt_number, load_avg, read_json
from .reports import is_report


@dataclass
class PlannedRun:
    label: str              # which side or value it belongs to ("a", "b", "64KiB", ...)
    index: int              # 1-based within its label
    args: list[str]         # the full command line, without --report
    report_path: Path

    @property
    def log_path(self) -> Path:
        # What the run printed; apiary's own log goes beside the report as .log.
        return self.report_path.with_suffix(".out")


@dataclass
class RunResult:
    planned: PlannedRun
    exit_code: int
    elapsed_s: float
    load_avg_before: list[float]
    report: dict[str, Any] | None = None

    @property
    def completed(self) -> bool:
        return self.exit_code == 0 and self.report is not None and self.report.get("status") == "completed"

    def info(self) -> dict[str, Any]:
        """What the aggregate file keeps about the run."""
        ctx = (self.report or {}).get("context", {})
        return {"path": self.planned.report_path.name, "label": self.planned.label,
                "index": self.planned.index, "exit_code": self.exit_code,
                "elapsed_s": round(self.elapsed_s, 3), "load_avg_before": self.load_avg_before,
                "start_time": ctx.get("start_time"), "commit": ctx.get("commit"),
                "status": (self.report or {}).get("status")}


@dataclass
class PlanOutcome:
    results: list[RunResult] = field(default_factory=list)
    stopped_by: int | None = None          # the signal that stopped the plan
    failures: list[RunResult] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        if self.stopped_by == signal.SIGINT:
            return EXIT_SIGINT
        if self.stopped_by is not None:
            return EXIT_SIGTERM
        if self.failures:
            # apiary's 2 means the arguments were wrong: pass that on, it is the user's to fix.
            return 2 if any(f.exit_code == 2 for f in self.failures) else 1
        return 0


def apiary_command(apiary: str | None, command: str | None) -> list[str]:
    """The prefix of every run: `<apiary> run`, or a command the user gave (e.g. with taskset)."""
    if command:
        parts = shlex.split(command)
        if not parts:
            raise ToolError("--command: empty")
        return parts
    return [str(apiary), "run"]


def effective_config(prefix: list[str], args: list[str], what: str) -> dict[str, Any]:
    """Lets apiary judge the arguments once (`--print-config`) before any run starts, so a typo
    costs a second rather than a failed plan, and the error is apiary's own line. Returns the
    effective options (sizes in bytes, as the report will have them)."""
    try:
        proc = subprocess.run(prefix + args + ["--print-config"], capture_output=True, text=True,
                              timeout=60, stdin=subprocess.DEVNULL)
    except OSError as e:
        raise ToolError(f"cannot start {prefix[0]}: {e.strerror}") from None
    except subprocess.TimeoutExpired:
        raise ToolError(f"{shlex.join(prefix)} --print-config did not answer within 60 s") from None
    if proc.returncode != 0:
        lines = (proc.stderr.strip() or proc.stdout.strip() or f"exit status {proc.returncode}").splitlines()
        raise ToolError(f"{what}: {lines[-1]}")
    try:
        return tomllib.loads(proc.stdout)
    except tomllib.TOMLDecodeError as e:
        raise ToolError(f"{what}: could not read apiary's --print-config output ({e})") from None


def with_progress_off(args: Sequence[str]) -> list[str]:
    args = list(args)
    if not any(a == "--progress" or a.startswith("--progress=") for a in args):
        args += ["--progress", "off"]
    return args


class _Signals:
    """Forwards SIGINT/SIGTERM to the running child once and remembers that the plan must stop."""

    def __init__(self):
        self.received: int | None = None
        self.child: subprocess.Popen | None = None
        self._old: dict[int, Any] = {}

    def __enter__(self):
        for sig in (signal.SIGINT, signal.SIGTERM):
            self._old[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc):
        for sig, handler in self._old.items():
            signal.signal(sig, handler)

    def _handle(self, signum, _frame):
        if self.received is None:
            self.received = signum
        if self.child is not None and self.child.poll() is None:
            # Every signal is passed on once: the second makes apiary exit at once, as on a terminal.
            self.child.send_signal(signum)

    def start(self, args, log):
        self.child = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL, process_group=0)
        return self.child


class Progress:
    """One line per run on stderr: where the plan is, the time so far, the ETA and the last
    result. The ETA counts each remaining run at the average duration of its own label so far
    (a sweep's 4 MiB runs take far longer than its 64 KiB runs), else of all runs."""

    def __init__(self, tool: str, plan: Sequence[PlannedRun], quiet: bool = False):
        self.tool = tool
        self.plan = list(plan)
        self.quiet = quiet
        self.start = time.monotonic()
        self.durations: dict[str, list[float]] = {}
        self.last: str | None = None

    def say(self, text: str) -> None:
        if not self.quiet:
            print(f"{self.tool}: {text}", file=sys.stderr, flush=True)

    def _eta(self, number: int) -> float | None:
        every = [d for ds in self.durations.values() for d in ds]
        if not every:
            return None
        overall = sum(every) / len(every)
        total = 0.0
        for run in self.plan[number - 1:]:
            own = self.durations.get(run.label)
            total += sum(own) / len(own) if own else overall
        return total

    def starting(self, number: int, run: PlannedRun) -> None:
        elapsed = time.monotonic() - self.start
        parts = [f"run {number}/{len(self.plan)} ({run.label} #{run.index})", f"elapsed {elapsed:.1f} s"]
        eta = self._eta(number)
        if eta is not None:
            parts.append(f"ETA {eta:.0f} s")
        if self.last:
            parts.append(self.last)
        self.say(", ".join(parts))

    def finished(self, result: RunResult) -> None:
        self.durations.setdefault(result.planned.label, []).append(result.elapsed_s)
        cycle = ((result.report or {}).get("aggregates", {}).get("cycle_us") or {}).get("avg")
        if cycle is not None:
            run = result.planned
            self.last = f"last ({run.label} #{run.index}) cycle avg {fmt_number(cycle)} µs"


def _tail(path: Path, lines: int = 5) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return ""
    return "\n".join("    " + line for line in text[-lines:])


def execute(plan: Sequence[PlannedRun], progress: Progress, keep_going: bool = False,
            on_result: Callable[[RunResult], None] | None = None) -> PlanOutcome:
    """Runs the plan in order. Stops at a signal, and at the first failed run unless keep_going
    (a failure usually means every later run would fail the same way)."""
    outcome = PlanOutcome()
    with _Signals() as sigs:
        for number, run in enumerate(plan, 1):
            if sigs.received is not None:
                break
            progress.starting(number, run)
            run.report_path.parent.mkdir(parents=True, exist_ok=True)
            before = load_avg()
            t0 = time.monotonic()
            args = run.args + ["--report", str(run.report_path)]
            try:
                with open(run.log_path, "w", encoding="utf-8") as log:
                    log.write("$ " + shlex.join(args) + "\n")
                    log.flush()
                    child = sigs.start(args, log)
                    code = child.wait()
            except OSError as e:
                raise ToolError(f"cannot start {args[0]}: {e.strerror}") from None
            finally:
                sigs.child = None
            result = RunResult(run, code, time.monotonic() - t0, before)
            if run.report_path.is_file():
                try:
                    data = read_json(run.report_path)
                    result.report = data if is_report(data) else None
                except ToolError:
                    result.report = None
            outcome.results.append(result)
            progress.finished(result)
            if on_result:
                on_result(result)
            if sigs.received is not None:
                outcome.stopped_by = sigs.received
                progress.say(f"stopped by {signal.Signals(sigs.received).name} during run {number}/"
                             f"{len(plan)}; its report (if any) is kept but not counted")
                break
            if not result.completed:
                outcome.failures.append(result)
                why = (result.report or {}).get("error") or "see the log"
                progress.say(f"run {number}/{len(plan)} ({run.label} #{run.index}) FAILED with exit "
                             f"status {code}: {why}\n  log: {run.log_path}\n{_tail(run.log_path)}")
                if not keep_going:
                    break
        if sigs.received is not None and outcome.stopped_by is None:
            outcome.stopped_by = sigs.received
    return outcome
