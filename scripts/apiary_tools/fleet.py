"""Runs of `apiary run` on several machines, with Dask distributed as the engine (`--cluster`).

Set-up (docs/fleet.md): one Dask scheduler anywhere, and on every machine that measures one
worker with one thread and the resource `apiary=1`, started in that machine's own checkout of
apiary, built at the same commit as the client's:

    .venv/bin/dask scheduler --port 8786
    PYTHONPATH=scripts .venv/bin/dask worker tcp://HOST:8786 --nthreads 1 --resources apiary=1

What runs where:
- the client (multirun, sweep, ladder, soak with --cluster) checks the arguments with its own
  `apiary run --print-config`, builds the plan, sends one task per run and writes every
  report, log and table into its own --out directory;
- a worker runs the task: the same command line, where every path inside the client's
  checkout (the apiary binary, configs/...) names the same file inside the worker's checkout,
  and returns the report, what the run printed and apiary's log. Files outside the checkout
  must exist at the same path on every machine.

Every machine runs the whole plan as its own series, in the plan's (interleaved) order, so an
A/B comparison pairs runs of one machine with runs of the same machine (stats.compare). Its
reports are named `run-001@HOST.json`: HOST is the worker's identity, $APIARY_HOST on the
worker, else the worker's --name, else its hostname (two workers on one machine need
different names).

Commits: before anything runs, every worker's checkout must be at the client's commit; after
each run, the report's `context.commit` (the binary's own) must be too. Otherwise the plan is
refused with one line naming the worker.

Failures: a run that fails is run once more on another worker (when there is one) and both
attempts are recorded; a worker that leaves (dies, is stopped) has its runs, the one in hand
included, moved to the other workers. Ctrl-C asks every run in hand to stop (apiary finishes
its block and writes a report marked interrupted), drops the runs not yet started, and the
tool aggregates what completed; a second Ctrl-C stops waiting at once.
"""

from __future__ import annotations

import argparse
import io
import os
import re
import signal
import socket
import struct
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import proc
from .common import EXIT_USAGE, REPO_ROOT, ToolError, finite_number, load_avg, shown
from .outputs import make_directory, open_stream, write_text
from .runner import HOST_VARIABLE, PlannedRun, PlanOutcome, Progress, RunResult, read_run_report, say_failure

RESOURCE = "apiary"
DEFAULT_TIMEOUT_S = 10.0
MAX_TIMEOUT_S = 3600.0
ADDRESS = re.compile(r"(tcp|tls)://[A-Za-z0-9._-]+:[0-9]{1,5}")
POLL_S = 0.2
STOP_POLL_S = 0.5


def add_options(p: argparse.ArgumentParser) -> None:
    """--cluster and --cluster-timeout, as every tool that runs plans takes them."""
    p.add_argument("--cluster", metavar="tcp://HOST:PORT",
                   help="run on the workers of this Dask scheduler (resource apiary=1, one a machine), each "
                        "machine the whole plan, instead of here; see docs/fleet.md")
    p.add_argument("--cluster-timeout", type=finite_number(0, MAX_TIMEOUT_S, "seconds", above=True),
                   default=DEFAULT_TIMEOUT_S, metavar="S",
                   help=f"seconds to wait for the scheduler and a worker, at most {MAX_TIMEOUT_S:g} "
                        "(default: %(default)s)")


# ---- the commit ------------------------------------------------------------------------------

def checkout_commit(root: Path = REPO_ROOT) -> str:
    """The checkout's commit as apiary's build records it (harness/cmake/commit.cmake): the
    short hash, with -dirty when tracked files have changes; "unknown" outside git."""
    def git(*args):
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30)
    try:
        head = git("rev-parse", "--short", "HEAD")
        if head.returncode != 0 or not head.stdout.strip():
            return "unknown"
        status = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return head.stdout.strip() + ("-dirty" if status.returncode == 0 and status.stdout.strip() else "")


def same_commit(a: str | None, b: str | None) -> bool:
    """Whether two recorded commits are the same: hashes of any abbreviation, one a prefix of
    the other, and both clean or both dirty. "unknown" matches nothing."""
    if not a or not b or "unknown" in (a, b):
        return False
    ha, hb = a.removesuffix("-dirty"), b.removesuffix("-dirty")
    short = min(len(ha), len(hb))
    return short >= 7 and ha[:short] == hb[:short] and a.endswith("-dirty") == b.endswith("-dirty")


# ---- what the worker runs --------------------------------------------------------------------

def portable(args: Sequence[str], root: Path = REPO_ROOT) -> list[list[str]]:
    """The command line as the worker needs it: a path inside this checkout becomes
    ["repo", path relative to the checkout], anything else ["arg", text]. Relative paths that
    name an existing file count from the current directory, as they would here."""
    out = []
    for a in args:
        name, eq, value = a.partition("=") if a.startswith("--") else ("", "", a)
        p = Path(value)
        if value and (p.is_absolute() or p.exists()):
            try:
                rel = p.resolve().relative_to(root.resolve()) if p.exists() else p.relative_to(root)
                out.append(["repo", f"{name}{eq}", str(rel)])
                continue
            except ValueError:
                pass
        out.append(["arg", a])
    return out


def localize(items: Sequence[Sequence[str]], root: Path = REPO_ROOT) -> list[str]:
    """The worker's side of `portable`: repository paths inside this machine's checkout."""
    return [item[1] + str(root / item[2]) if item[0] == "repo" else item[1] for item in items]


def identity(name: Any = None, address: str | None = None) -> str:
    """This worker's name in the results: $APIARY_HOST, else a --name given to the worker (one
    that is not merely its address), else the hostname."""
    if os.environ.get(HOST_VARIABLE):
        return os.environ[HOST_VARIABLE]
    if name is not None and str(name) != str(address):
        return str(name)
    return socket.gethostname()


def worker_facts(dask_worker=None) -> dict[str, str]:
    """What the client checks about a worker before it sends runs (run by client.run)."""
    return {"host": identity(getattr(dask_worker, "name", None), getattr(dask_worker, "address", None)),
            "commit": checkout_commit(), "root": str(REPO_ROOT)}


def _stop_requested(event) -> bool:
    try:
        return event is not None and event.is_set()
    except Exception:  # the scheduler gone: nobody is left to ask for a stop
        return False


def run_task(spec: dict[str, Any]) -> dict[str, Any]:
    """One `apiary run` on this worker: returns the report's text, what the run printed and
    apiary's log. Stops the run (one SIGINT, as a terminal's Ctrl-C) when the client sets the
    plan's stop event; with spec["interval_log_name"], the run writes its interval log there too
    and the text comes back as "interval_log"."""
    from distributed import Event, get_worker  # lazy for start-up time: distributed only with --cluster

    worker = get_worker()
    host = identity(worker.name, worker.address)
    stop = Event(spec["stop"]) if spec.get("stop") else None
    if _stop_requested(stop):
        return {"skipped": True, "host": host}
    args = localize(spec["args"])
    with tempfile.TemporaryDirectory(prefix="apiary-run-") as tmp:
        report_path = Path(tmp) / spec["report_name"]
        full = args + ["--report", str(report_path)]
        interval_log = Path(tmp) / spec["interval_log_name"] if spec.get("interval_log_name") else None
        if interval_log:
            full += ["--interval-log", str(interval_log)]
        output = Path(tmp) / "output"
        before = load_avg()
        t0 = time.monotonic()
        sent_stop = False
        with open_stream(output) as out:
            out.write(f"$ {' '.join(full)}\n")
            out.flush()
            try:
                child = proc.start(full, stdout=out, stderr=subprocess.STDOUT, cwd=str(REPO_ROOT))
            except ToolError as e:
                return {"host": host, "exit_code": 127, "elapsed_s": 0.0, "load_avg_before": before,
                        "error": f"{e} (on {host})", "output": ""}

            def stop_when_asked() -> None:
                # A worker's task runs outside the main thread: no signal handlers here, the
                # client's stop event is what asks the run to stop (one SIGINT, as a Ctrl-C).
                nonlocal sent_stop
                if not sent_stop and _stop_requested(stop):
                    child.send_signal(signal.SIGINT)
                    sent_stop = True

            ended = proc.wait(child, tick=stop_when_asked, every=STOP_POLL_S)
        apiary_log = report_path.with_suffix(".log")
        return {"host": host, "exit_code": ended.returncode, "elapsed_s": time.monotonic() - t0,
                "load_avg_before": before, "stopped": sent_stop,
                "report": report_path.read_text(encoding="utf-8") if report_path.is_file() else None,
                "output": output.read_text(encoding="utf-8", errors="replace"),
                "log": apiary_log.read_text(encoding="utf-8", errors="replace") if apiary_log.is_file() else None,
                "interval_log": interval_log.read_text(encoding="utf-8") if interval_log and interval_log.is_file()
                else None}


def _task_function() -> Callable[[dict[str, Any]], dict[str, Any]]:
    """What a task calls. The scheduler unpickles every task it is given, and its Python need
    not have apiary's tools on its path: a function local to this one cannot be pickled by
    reference, so it travels by value (cloudpickle), and imports run_task only when it runs,
    on the worker, from the worker's own checkout."""
    def run_on_worker(spec):
        from apiary_tools.fleet import run_task  # on the worker, from its own checkout, when the task runs
        return run_task(spec)
    return run_on_worker


def _facts_function() -> Callable[..., dict[str, str]]:
    """worker_facts as client.run sends it: by value, like the tasks' function, so that a worker
    without apiary's tools on its path answers with the ImportError rather than failing to
    unpickle."""
    def facts(dask_worker=None):
        from apiary_tools.fleet import worker_facts  # on the worker, from its own checkout, when the task runs
        return worker_facts(dask_worker)
    return facts


# ---- the client ------------------------------------------------------------------------------

@dataclass
class Worker:
    address: str
    host: str


@dataclass
class Attempt:
    number: int                # 1-based in the expanded plan
    planned: PlannedRun
    worker: Worker
    retried: list[dict[str, Any]] = field(default_factory=list)


def with_host(path: Path, host: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", host)
    return path.with_name(f"{path.stem}@{safe}{path.suffix}")


# A Dask scheduler greets every connection at once with its handshake, one message of one small
# frame (distributed/comm/tcp.py: the frames' total length, 8 bytes little-endian, then their
# count and lengths, then msgpack holding "compression", "python" and "pickle-protocol").
GREETING_MAX_BYTES = 1 << 16
GREETING_KEYS = (b"compression", b"pickle-protocol")


def _resolve(host: str, port: int, seconds: float) -> tuple[Any, ...] | str:
    """The first address of `host` by getaddrinfo within `seconds` (it has no timeout of its
    own, so it runs in a thread of its own), or why there is none."""
    found: list[Any] = []
    thread = threading.Thread(target=lambda: found.append(_addresses(host, port)), daemon=True)
    thread.start()
    thread.join(seconds)
    if not found:
        return f"the name {host} was not resolved within {seconds:g} s"
    if isinstance(found[0], OSError) or not found[0]:
        return f"the name {host} does not resolve ({getattr(found[0], 'strerror', None) or 'no address'})"
    return found[0][0]


def _addresses(host: str, port: int) -> list[tuple] | OSError:
    try:
        return socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as e:
        return e


def _read(sock: socket.socket, n: int, deadline: float) -> bytes:
    data = b""
    while len(data) < n:
        sock.settimeout(max(0.001, deadline - time.monotonic()))
        chunk = sock.recv(n - len(data))
        if not chunk:
            break
        data += chunk
    return data


def _greeting_problem(sock: socket.socket, deadline: float, timeout: float) -> str | None:
    """Why what answered on `sock` is not a Dask scheduler, or None when it greeted as one."""
    try:
        head = _read(sock, 8, deadline)
    except TimeoutError:
        return (f"something accepted the connection but sent no Dask greeting within {timeout:g} s: not a Dask "
                "scheduler (which greets a client at once), or one too busy to answer")
    if len(head) < 8:
        return f"the connection was closed {'after ' + repr(head) if head else 'at once'}: not a Dask scheduler"
    total = struct.unpack("<Q", head)[0]
    if not 16 <= total <= GREETING_MAX_BYTES:
        return f"it answered {shown(head.decode('latin-1'), 40)!r}…: not a Dask scheduler"
    try:
        body = _read(sock, total, deadline)
    except TimeoutError:
        body = b""
    if not all(key in body for key in GREETING_KEYS):
        return "it answered something other than a Dask greeting: not a Dask scheduler"
    return None


def probe(address: str, timeout: float) -> None:
    """That a Dask scheduler answers at `address` within `timeout` seconds, by a connection and
    its greeting of our own, or a ToolError saying what was found: a name that does not resolve,
    a refused connection, none within the time, or something that is not a Dask scheduler. A
    TLS scheduler greets only inside TLS: for one the connection alone is checked."""
    scheme, _, rest = address.partition("://")
    host, _, port = rest.rpartition(":")
    where = f"--cluster {address}"
    deadline = time.monotonic() + timeout
    resolved = _resolve(host, int(port), timeout)
    if isinstance(resolved, str):
        raise ToolError(f"{where}: {resolved}")
    family, kind, proto, _, target = resolved
    try:
        with socket.socket(family, kind, proto) as sock:
            sock.settimeout(max(0.001, deadline - time.monotonic()))
            sock.connect(target)
            why = _greeting_problem(sock, deadline, timeout) if scheme == "tcp" else None
    except ConnectionRefusedError:
        why = "connection refused: nothing listens there"
    except TimeoutError:
        why = f"no answer to the connection within {timeout:g} s"
    except OSError as e:
        why = f"cannot connect ({e.strerror or e})"
    if why:
        raise ToolError(f"{where}: {why}")


def connect(address: str, timeout: float):
    """A client of the scheduler at `address`, or a one-line ToolError, within `timeout`
    seconds: `probe`, then Dask's own connection with the time left."""
    if not ADDRESS.fullmatch(address):
        raise ToolError(f"--cluster {address}: expected a scheduler address such as tcp://HOST:8786")
    started = time.monotonic()
    probe(address, timeout)
    import logging

    from distributed import Client  # lazy for start-up time: distributed only with --cluster
    # The client's own log lines (reconnecting, ...) would interleave with the progress lines.
    logging.getLogger("distributed").setLevel(logging.ERROR)
    left = max(1.0, timeout - (time.monotonic() - started))
    try:
        return Client(address, timeout=left, set_as_default=False)
    except (OSError, TimeoutError) as e:
        raise ToolError(f"--cluster {address}: the scheduler greeted, then did not take a client within "
                        f"{timeout:g} s ({shown(str(e) or type(e).__name__)})") from None


class ClusterBackend:
    """Sends every run of a plan, once per machine, to the cluster's workers (runner.Backend)."""

    def __init__(self, client, timeout: float = DEFAULT_TIMEOUT_S, commit: str | None = None):
        self.client = client
        self.commit = commit or checkout_commit()
        if self.commit == "unknown":
            raise ToolError("--cluster: this checkout's commit is unknown (not a git checkout); the workers' "
                            "commits cannot be checked against it")
        self.workers = self._discover(timeout)

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> ClusterBackend | None:
        """The backend the tool's --cluster asks for, or None (run here)."""
        if not getattr(args, "cluster", None):
            return None
        client = connect(args.cluster, args.cluster_timeout)
        try:
            return cls(client, args.cluster_timeout)
        except BaseException:
            client.close()
            raise

    def close(self) -> None:
        self.client.close()

    def _apiary_workers(self) -> list[str]:
        info = self.client.scheduler_info(n_workers=-1) if _takes_n_workers(self.client) else \
            self.client.scheduler_info()
        return sorted(a for a, w in info.get("workers", {}).items()
                      if (w.get("resources") or {}).get(RESOURCE, 0) >= 1)

    def _discover(self, timeout: float) -> list[Worker]:
        deadline = time.monotonic() + timeout
        addresses = self._apiary_workers()
        while not addresses and time.monotonic() < deadline:
            time.sleep(POLL_S)
            addresses = self._apiary_workers()
        if not addresses:
            raise ToolError(f"--cluster: no worker with the resource {RESOURCE}=1 joined within {timeout:g} s "
                            f"(start them with `dask worker ... --nthreads 1 --resources {RESOURCE}=1`)")
        facts = self.client.run(_facts_function(), workers=addresses, on_error="return")
        workers: list[Worker] = []
        seen: dict[str, str] = {}
        for address in addresses:
            f = facts[address]
            if isinstance(f, BaseException):
                raise ToolError(f"--cluster: worker {address} cannot run apiary's tools ({type(f).__name__}: {f}); "
                                "start it in its checkout with PYTHONPATH=scripts (docs/fleet.md)")
            if not same_commit(f["commit"], self.commit):
                raise ToolError(f"--cluster: worker {f['host']} ({address}) has its checkout {f['root']} at commit "
                                f"{f['commit']}, this one is at {self.commit}: check out and build the same commit "
                                "on every worker")
            if f["host"] in seen:
                raise ToolError(f"--cluster: workers {seen[f['host']]} and {address} are both called {f['host']}; "
                                f"give each its own ${HOST_VARIABLE} or --name")
            seen[f["host"]] = address
            workers.append(Worker(address, f["host"]))
        return sorted(workers, key=lambda w: w.host)

    # ---- running ----

    def _submit(self, attempt: Attempt, spec: dict[str, Any], stop_name: str):
        # A worker runs what it holds by priority, highest first: the plan's order.
        key = f"apiary-run-{attempt.planned.label}-{attempt.planned.index}-{uuid.uuid4().hex[:12]}"
        return self.client.submit(_task_function(), dict(spec, stop=stop_name), key=key,
                                  workers=[attempt.worker.address], allow_other_workers=False,
                                  resources={RESOURCE: 1}, pure=False, priority=-attempt.number)

    def expand(self, plan: Sequence[PlannedRun]) -> list[Attempt]:
        """The plan once per machine, each run's report named after the machine."""
        attempts: list[Attempt] = []
        for worker in self.workers:
            for run in plan:
                named = PlannedRun(run.label, run.index, run.args, with_host(run.report_path, worker.host))
                attempts.append(Attempt(len(attempts) + 1, named, worker))
        return attempts

    def execute(self, plan: Sequence[PlannedRun], progress: Progress, keep_going: bool = False,
                on_result: Callable[[RunResult], None] | None = None) -> PlanOutcome:
        return _Execution(self, plan, progress, keep_going, on_result).run()


def _takes_n_workers(client) -> bool:
    import inspect
    return "n_workers" in inspect.signature(client.scheduler_info).parameters


class _Execution:
    """One plan on the cluster: submitting, collecting, moving runs off workers that left,
    retrying failed runs elsewhere, and stopping."""

    def __init__(self, backend: ClusterBackend, plan, progress: Progress, keep_going: bool, on_result):
        from distributed import Event  # lazy for start-up time: distributed only with --cluster
        self.b = backend
        self.progress = progress
        self.keep_going = keep_going
        self.on_result = on_result
        self.attempts = backend.expand(plan)
        self.stop = Event(f"apiary-stop-{uuid.uuid4().hex}", client=backend.client)
        self.pending: dict[Any, Attempt] = {}
        self.outcome = PlanOutcome()
        self.done = 0
        self.stopping = False

    def spec(self, attempt: Attempt) -> dict[str, Any]:
        return {"args": portable(attempt.planned.args), "report_name": attempt.planned.report_path.name}

    def submit(self, attempt: Attempt) -> None:
        self.pending[self.b._submit(attempt, self.spec(attempt), self.stop.name)] = attempt

    def others(self, worker: Worker) -> list[Worker]:
        alive = set(self.b._apiary_workers())
        return [w for w in self.b.workers if w.address in alive and w.address != worker.address]

    def least_busy(self, workers: Sequence[Worker]) -> Worker:
        return min(workers, key=lambda w: sum(a.worker is w for a in self.pending.values()))

    def run(self) -> PlanOutcome:
        machines = ", ".join(w.host for w in self.b.workers)
        self.progress.say(f"{len(self.attempts)} runs on {len(self.b.workers)} machines ({machines}), "
                          "each machine the whole plan in order")
        with proc.Forwarding() as sigs:
            for attempt in self.attempts:
                self.submit(attempt)
            last_check = time.monotonic()
            while self.pending:
                if sigs.received is not None and self.outcome.stopped_by is None:
                    self.begin_stop(sigs.received)
                if sigs.count > 1:
                    self.b.client.cancel(list(self.pending))
                    self.pending.clear()
                    break
                finished = [f for f in self.pending if f.done()]
                for f in finished:
                    self.collect(f, self.pending.pop(f))
                if time.monotonic() - last_check >= 1.0:
                    last_check = time.monotonic()
                    self.move_from_departed()
                if not finished:
                    time.sleep(POLL_S)
        order = {id(a.planned): a.number for a in self.attempts}
        self.outcome.results.sort(key=lambda r: order.get(id(r.planned), 0))
        return self.outcome

    def begin_stop(self, signum: int) -> None:
        self.stopping = True
        self.outcome.stopped_by = signum
        self.stop.set()
        self.progress.say(f"stopped by {signal.Signals(signum).name}: the runs in hand finish their block and "
                          "write their reports (kept, not counted); the others are dropped. Again to stop waiting.")

    def end_early(self) -> None:
        """After a failure without --keep-going: the runs in hand stop, the rest are dropped."""
        if not self.stopping:
            self.stopping = True
            self.stop.set()

    def move_from_departed(self) -> None:
        alive = set(self.b._apiary_workers())
        for f, attempt in list(self.pending.items()):
            if attempt.worker.address in alive or f.done():
                continue
            others = self.others(attempt.worker)
            self.b.client.cancel([f])
            del self.pending[f]
            if not others:
                raise ToolError(f"--cluster: worker {attempt.worker.host} left and no other worker is there; "
                                "what completed is in the output directory", 1)
            target = self.least_busy(others)
            self.progress.say(f"worker {attempt.worker.host} left: {attempt.planned.label} #{attempt.planned.index} "
                              f"moves to {target.host}")
            attempt.retried.append({"host": attempt.worker.host, "reason": "worker left"})
            attempt.worker = target
            self.submit(attempt)

    def collect(self, f, attempt: Attempt) -> None:
        run = attempt.planned
        try:
            data = f.result()
        except Exception as e:  # the task raised, or a worker died under it too often
            data = {"host": attempt.worker.host, "exit_code": -1, "elapsed_s": 0.0, "load_avg_before": [],
                    "error": f"{type(e).__name__}: {e}", "output": ""}
        if data.get("skipped"):
            return
        make_directory(run.report_path.parent)
        run.report_path.unlink(missing_ok=True)   # a failed attempt's, when this is its retry
        write_text(run.log_path, data.get("output", "") + (f"\n{data['error']}\n" if data.get("error") else ""))
        if data.get("report") is not None:
            write_text(run.report_path, data["report"])
        if data.get("log") is not None:
            write_text(run.report_path.with_suffix(".log"), data["log"])
        result = RunResult(run, data["exit_code"], data["elapsed_s"], data["load_avg_before"],
                           read_run_report(run.report_path), data["host"], list(attempt.retried))
        commit = (result.report or {}).get("context", {}).get("commit")
        if result.report is not None and not same_commit(commit, self.b.commit):
            self.stop.set()
            self.b.client.cancel(list(self.pending))
            self.pending.clear()
            raise ToolError(f"--cluster: worker {data['host']}'s apiary was built at commit {commit}, this checkout "
                            f"is at {self.b.commit}: rebuild it there (its report: {run.report_path})", EXIT_USAGE)
        if not result.completed and not self.stopping and not data.get("stopped") and len(attempt.retried) == 0:
            others = self.others(attempt.worker)
            if others:
                target = self.least_busy(others)
                self.progress.say(f"{run.label} #{run.index} failed on {data['host']} (exit status "
                                  f"{data['exit_code']}); once more on {target.host}")
                attempt.retried.append({"host": data["host"], "exit_code": data["exit_code"],
                                        "reason": (result.report or {}).get("error") or data.get("error")
                                        or "see the log"})
                attempt.worker = target
                self.submit(attempt)
                return
        self.done += 1
        self.outcome.results.append(result)
        self.progress.finished(result)
        if self.on_result:
            self.on_result(result)
        self.progress.say(f"{self.done}/{len(self.attempts)} done: {run.label} #{run.index} on {data['host']} "
                          f"in {data['elapsed_s']:.1f} s{', ' + self.progress.last if self.progress.last else ''}")
        if not result.completed and not (self.stopping and data.get("stopped")):
            self.outcome.failures.append(result)
            say_failure(self.progress, attempt.number, len(self.attempts), result, on_host=True)
            if not self.keep_going:
                self.end_early()


def _take_option(args: list[str], name: str) -> str:
    """Removes `name VALUE` from args and returns VALUE."""
    at = args.index(name)
    value = args[at + 1]
    del args[at:at + 2]
    return value


class RemoteProcess:
    """One `apiary run` on one worker of the cluster, with the face of a local child that the
    soak watches (proc.Child): poll(), send_signal(), returncode and stdout. When the run is over, its report
    and its interval log are written where the command's --report and --interval-log say (the
    interval log arrives whole at the end, not while the run goes)."""

    def __init__(self, backend: ClusterBackend, cmd: Sequence[str]):
        from distributed import Event  # lazy for start-up time: distributed only with --cluster
        if "--report" not in cmd or "--interval-log" not in cmd:
            raise ToolError("the run has no --report or no --interval-log")
        args = list(cmd)
        self.report_path = Path(_take_option(args, "--report"))
        self.interval_log_path = Path(_take_option(args, "--interval-log"))
        self.b = backend
        self.stop = Event(f"apiary-stop-{uuid.uuid4().hex}", client=backend.client)
        self.future = backend.client.submit(
            _task_function(), {"args": portable(args), "report_name": self.report_path.name,
                               "interval_log_name": self.interval_log_path.name, "stop": self.stop.name},
            key=f"apiary-run-soak-{uuid.uuid4().hex[:12]}", resources={RESOURCE: 1}, pure=False)
        self.pid = None           # not a process of this machine: nothing to sample here
        self.returncode: int | None = None
        self.stdout: io.StringIO | None = None
        self.host: str | None = None

    def poll(self) -> int | None:
        if self.returncode is None and self.future.done():
            self._collect()
        return self.returncode

    def send_signal(self, signum: int) -> None:
        self.stop.set()

    def _collect(self) -> None:
        try:
            data = self.future.result()
        except Exception as e:  # the worker died, or the task raised
            raise ToolError(f"--cluster: the run was lost ({type(e).__name__}: {e})", 1) from None
        self.host = data["host"]
        if data.get("report") is not None:
            write_text(self.report_path, data["report"])
        if data.get("log") is not None:
            write_text(self.report_path.with_suffix(".log"), data["log"])
        if data.get("interval_log") is not None:
            write_text(self.interval_log_path, data["interval_log"])
        report = read_run_report(self.report_path)
        commit = (report or {}).get("context", {}).get("commit")
        if report is not None and not same_commit(commit, self.b.commit):
            raise ToolError(f"--cluster: worker {self.host}'s apiary was built at commit {commit}, this checkout is at "
                            f"{self.b.commit}: rebuild it there", EXIT_USAGE)
        self.stdout = io.StringIO(data.get("output", "") + (f"\n{data['error']}\n" if data.get("error") else ""))
        self.returncode = data["exit_code"]


def hosts_line(results: Sequence[RunResult]) -> str:
    """`3 runs on a, 3 on b` for the closing progress line."""
    counts: dict[str, int] = {}
    for r in results:
        counts[r.host or "?"] = counts.get(r.host or "?", 0) + 1
    return ", ".join(f"{n} on {h}" for h, n in sorted(counts.items()))

