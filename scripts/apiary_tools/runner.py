"""Running a plan of `apiary run`s one after another, with progress on stderr and a clean stop.

Each run gets its own `--report` and a log of its summary; the runner never reads apiary's
live progress line (it passes `--progress off` unless the user chose otherwise).

Stopping: the child runs in its own process group, so a Ctrl-C on the terminal reaches only
this process, which forwards exactly one SIGINT (or SIGTERM) to the run in hand (proc.py). apiary then
finishes the block in hand, writes a report marked interrupted and exits 130; the plan stops
there and the caller still aggregates what completed. (Were the signal to reach apiary twice,
from the terminal and from us, apiary would exit at once without a report.)

Where the runs execute is the backend's business: `LocalBackend` (here) runs them one after
another on this machine; `fleet.ClusterBackend` sends them to the workers of a Dask cluster
(`--cluster`). Both take the same plan and give the same outcome, so the tools that build
plans (multirun, sweep, ladder) do not know which one ran it.

Also what every command that runs apiary shares: its own options split from apiary's
(split_passthrough, glue_values), and the set of a plan's completed runs (set_from_results)
written as multirun writes one (write_set: aggregate.json and summary.md).

Floor: running. Thread safety: a plan is executed by one thread; the signal handling is the
main thread's (common.STOP).
"""

from __future__ import annotations

import os
import shlex
import signal
import socket
import subprocess
import sys
import time
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from . import proc
from .aggregates import SUMMARY_NAME, aggregate, summary_markdown
from .common import ToolError, exit_code_for, fmt_number, load_avg, split_args
from .outputs import make_directory, open_stream, write_json, write_text
from .reports import AGGREGATE_NAME, RunSet, add_path, check_report, is_report, read_report_json

T = TypeVar("T")

# The most runs one plan holds (multirun's runs × sides, a sweep's values × runs, a ladder's
# steps × rounds), checked before the plan is built; with --cluster every machine runs it.
MAX_PLAN_RUNS = 10_000


def check_plan(runs: int, what: str) -> None:
    """Refuses a plan of more than MAX_PLAN_RUNS runs before anything is built or run."""
    if runs > MAX_PLAN_RUNS:
        raise ToolError(f"{what}: a plan of {runs:,} runs; at most {MAX_PLAN_RUNS:,} a plan")


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


HOST_VARIABLE = "APIARY_HOST"


def local_host() -> str:
    """The name this machine's runs are recorded under: $APIARY_HOST, else the hostname. The
    statistics pair and group runs by it (see stats.compare), so two workers on one machine
    that should count as two give themselves different names."""
    return os.environ.get(HOST_VARIABLE) or socket.gethostname()


@dataclass
class RunResult:
    planned: PlannedRun
    exit_code: int
    elapsed_s: float
    load_avg_before: list[float]
    report: dict[str, Any] | None = None
    host: str | None = None                  # which machine ran it (local_host() on that machine)
    retried: list[dict[str, Any]] = field(default_factory=list)   # attempts that failed before this one

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
                "status": (self.report or {}).get("status"), "host": self.host or ctx.get("hostname"),
                **({"retried": self.retried} if self.retried else {})}


@dataclass
class PlanOutcome:
    results: list[RunResult] = field(default_factory=list)
    stopped_by: int | None = None          # the signal that stopped the plan
    failures: list[RunResult] = field(default_factory=list)

    def raise_failure(self) -> None:
        """The plan's failed runs as the one line a tool ends with, even with --quiet (the
        progress lines say more): a ToolError with the plan's exit status. Nothing after a
        signal, which stopped the plan rather than failed it."""
        if self.stopped_by is not None or not self.failures:
            return
        f = self.failures[0]
        why = (f.report or {}).get("error") or "see its log"
        more = f"; {len(self.failures) - 1} more failed" if len(self.failures) > 1 else ""
        raise ToolError(f"{f.planned.label} #{f.planned.index} failed with exit status {f.exit_code}: {why} "
                        f"(log: {f.planned.log_path}){more}", self.exit_code)

    @property
    def exit_code(self) -> int:
        if self.stopped_by is not None:
            return exit_code_for(self.stopped_by)
        if self.failures:
            # apiary's 2 means the arguments were wrong: pass that on, it is the user's to fix.
            return 2 if any(f.exit_code == 2 for f in self.failures) else 1
        return 0


def apiary_command(apiary: str | os.PathLike | None, command: str | None) -> list[str]:
    """The prefix of every run: `<apiary> run`, or a command the user gave (e.g. with taskset)."""
    if command:
        parts = split_args("--command", command)
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


def read_run_report(path: Path) -> dict[str, Any] | None:
    """The report a run wrote, or None when it wrote none. One the tools cannot read is a
    stand-in with status "unreadable" and the reason as its error: the run counts as failed,
    and its failure says why."""
    if not path.is_file():
        return None
    try:
        data = read_report_json(path)
        return check_report(data, path) if is_report(data) else None
    except ToolError as e:
        return {"status": "unreadable", "error": str(e)}


def _tail(path: Path, lines: int = 5) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return ""
    return "\n".join("    " + line for line in text[-lines:])


class Backend(Protocol):
    """Runs a plan: every run's report at its `report_path`, its output at its `log_path`."""

    def execute(self, plan: Sequence[PlannedRun], progress: Progress, keep_going: bool,
                on_result: Callable[[RunResult], None] | None) -> PlanOutcome: ...


def say_failure(progress: Progress, number: int, total: int, result: RunResult, on_host: bool = False) -> None:
    run = result.planned
    why = (result.report or {}).get("error") or "see the log"
    where = f" on {result.host}" if on_host else ""
    progress.say(f"run {number}/{total} ({run.label} #{run.index}){where} FAILED with exit "
                 f"status {result.exit_code}: {why}\n  log: {run.log_path}\n{_tail(run.log_path)}")


class LocalBackend:
    """The runs one after another as children of this process."""

    def execute(self, plan: Sequence[PlannedRun], progress: Progress, keep_going: bool = False,
                on_result: Callable[[RunResult], None] | None = None) -> PlanOutcome:
        outcome = PlanOutcome()
        host = local_host()
        with proc.Forwarding() as sigs:
            for number, run in enumerate(plan, 1):
                if sigs.received is not None:
                    break
                progress.starting(number, run)
                make_directory(run.report_path.parent)
                before = load_avg()
                t0 = time.monotonic()
                args = run.args + ["--report", str(run.report_path)]
                try:
                    with open_stream(run.log_path) as log:
                        log.write("$ " + shlex.join(args) + "\n")
                        log.flush()
                        code = proc.wait(sigs.start(args, stdout=log, stderr=subprocess.STDOUT)).returncode
                except OSError as e:
                    raise ToolError(f"{run.log_path}: cannot write the run's output ({e.strerror})", 1) from None
                finally:
                    sigs.child = None
                result = RunResult(run, code, time.monotonic() - t0, before, read_run_report(run.report_path),
                                   host)
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
                    say_failure(progress, number, len(plan), result)
                    if not keep_going:
                        break
            if sigs.received is not None and outcome.stopped_by is None:
                outcome.stopped_by = sigs.received
        return outcome


def execute(plan: Sequence[PlannedRun], progress: Progress, keep_going: bool = False,
            on_result: Callable[[RunResult], None] | None = None,
            backend: Backend | None = None) -> PlanOutcome:
    """Runs the plan, here in order (the default) or on the backend given. Stops at a signal,
    and at the first failed run unless keep_going (a failure usually means every later run
    would fail the same way)."""
    return (backend or LocalBackend()).execute(plan, progress, keep_going, on_result)


def execute_rounds(tool: str, make_round: Callable[[int], list[PlannedRun]], first: int, last: int,
                   still_open: Callable[[list[RunResult]], str | None], keep_going: bool = False,
                   quiet: bool = False, backend: Backend | None = None) -> tuple[PlanOutcome, int]:
    """Adaptive repetition: rounds 1 to `first` (make_round(r): round r's runs) as one plan,
    then one round at a time while `still_open`, given each plan's new results, says what is
    still open (None: nothing), up to `last` rounds. Stops at a signal, and at a failed run
    unless keep_going. Returns the outcome of every run and the rounds run."""
    plan = [run for r in range(1, first + 1) for run in make_round(r)]
    outcome = execute(plan, Progress(tool, plan, quiet), keep_going, backend=backend)
    rounds = first
    why = still_open(outcome.results)
    while why is not None and rounds < last and outcome.stopped_by is None and (keep_going or not outcome.failures):
        rounds += 1
        more = make_round(rounds)
        progress = Progress(tool, more, quiet)
        progress.say(f"round {rounds} of at most {last}: {why}")
        extra = execute(more, progress, keep_going, backend=backend)
        outcome.results += extra.results
        outcome.failures += extra.failures
        outcome.stopped_by = extra.stopped_by
        why = still_open(extra.results)
    return outcome, rounds


def round_values(results: Sequence[RunResult], value: Callable[[dict[str, Any]], T | None]
                 ) -> dict[int, dict[str, T]]:
    """value(report) of every completed run that has one, by round (the run's index) and label:
    the pairs of an interleaved plan are the labels of one round."""
    out: dict[int, dict[str, T]] = {}
    for r in results:
        v = value(r.report) if r.completed and r.report is not None else None
        if v is not None:
            out.setdefault(r.planned.index, {})[r.planned.label] = v
    return out

# ---- the sets of completed runs, and the command lines ------------------------------------------

def write_set(rs: RunSet, out_dir: Path, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The set's aggregate.json and summary.md in `out_dir`; the aggregate."""
    agg = aggregate(rs, extra, out_dir)
    write_json(out_dir / AGGREGATE_NAME, agg)
    write_text(out_dir / SUMMARY_NAME, summary_markdown(agg))
    return agg


def set_from_results(label: str, results: Sequence[RunResult], include_invalid: bool = False) -> RunSet | None:
    """The set of the completed runs (the valid ones, unless include_invalid), with what the
    runner knows about each (load, duration)."""
    done = {str(r.planned.report_path): r for r in results if r.completed}
    rs = RunSet(label=label, include_invalid=include_invalid)
    for path in done:
        add_path(rs, Path(path))
    for run in rs.runs:
        run.info.update(done[str(run.path)].info())
    return rs if rs.n else None


def split_passthrough(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """A command's own arguments, and those after `--`, which go to apiary."""
    argv = list(argv)
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1:]
    return argv, []


def glue_values(argv: Sequence[str], options: Sequence[str]) -> list[str]:
    """`--a --keep-alive=off` as `--a=--keep-alive=off`: argparse would take a value that
    starts with dashes for an option of its own, and these values are apiary's options."""
    out, i = [], 0
    argv = list(argv)
    while i < len(argv):
        if argv[i] in options and i + 1 < len(argv):
            out.append(f"{argv[i]}={argv[i + 1]}")
            i += 2
        else:
            out.append(argv[i])
            i += 1
    return out
