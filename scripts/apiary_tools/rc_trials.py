"""rc-tune's trials: the --rc-params file of one trial, running trials (here, N at a time, or
on the workers of a Dask cluster), and what a trial's report says about its pools.

A trial is one deterministic `apiary replay --rc-params TRIAL.toml --rc-scale S --blocks B
--rc-stats-blocks K --report R` with the user's own arguments. It runs in a temporary
directory (here, or on a worker, where the params file travels as text and the report comes
back as text); the client writes both into the tuning's directory, `trials/KEY.toml` and
`trials/KEY.json` (KEY: a hash of the params file and the command line), so that a trial run
once is never run again by a later run in the same directory.

What is read of a report is its `rc` section: `rc.params` (the effective parameters of each
resource) and `rc.archives` (every K blocks: each pool's level, the prices, each operation
kind's usage and each payer rank's counts), checked by RC_SCHEMA before use.
"""

from __future__ import annotations

import hashlib
import math
import shlex
import signal
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import fleet, proc
from .common import REPO_ROOT, STOP, ToolError, shown
from .inputs import checked, read_json
from .outputs import make_directory, write_text
from .schemas import COUNT, NONNEG, NUMBERS, STRING, array, obj, problem, rooted
from .stats import drift_interval

# Hive's bounds: rc_scale from 1 to HIVE_RC_MAX_SCALE (2 MiB / 64 KiB), the factors int16.
MAX_SCALE = 32
MAX_FACTOR = 32767
FACTORS = ("budget_scale_factor", "price_scale_factor")
# The operations whose affordability rc_stats counts (each payer rank's cant_afford, in order).
REFERENCE_OPS = ("vote", "comment", "transfer")
TRIALS_DIR = "trials"
POLL_S = 0.2

RESOURCE = obj(("name", "budget", "tau_blocks", "equilibrium") + FACTORS, name=STRING, unit=COUNT,
               budget=NONNEG, tau_blocks={"type": "number", "exclusiveMinimum": 0}, equilibrium=NONNEG,
               budget_scale_factor=COUNT, price_scale_factor=COUNT)
ARCHIVE = obj(("block", "levels", "prices", "ops", "payers"), block=COUNT, levels=NUMBERS, prices=NUMBERS,
              pools=NUMBERS, ops=array(obj(("kind", "count", "usage"), kind=STRING, count=COUNT,
                                           usage=array(NONNEG))),
              payers=array(obj(("rank", "count", "cant_afford"), rank=COUNT, count=COUNT,
                               cant_afford=array(COUNT, minItems=3))))
RC_SCHEMA = rooted(obj(("rc",), rc=obj(("params", "archives"), params=obj(
    ("scale", "resources"), scale=COUNT, resources=array(RESOURCE, minItems=1)), archives=array(ARCHIVE))))


# ---- a trial's params file ---------------------------------------------------------------

Factors = dict[str, list[int]]     # resource name -> [budget_scale_factor, price_scale_factor]


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise ToolError(f"--rc-params: a value of type {type(value).__name__} cannot be written back")


def toml_text(document: dict[str, Any], prefix: str = "") -> str:
    """A TOML document of scalars, arrays and tables (what an --rc-params file holds)."""
    lines = [f"{k} = {_toml_value(v)}" for k, v in document.items() if not isinstance(v, dict)]
    text = "\n".join(lines) + ("\n" if lines else "")
    for key, value in document.items():
        if isinstance(value, dict):
            name = f"{prefix}{key}"
            own = any(not isinstance(v, dict) for v in value.values())
            text += (f"\n[{name}]\n" if own else "") + toml_text(value, name + ".")
    return text


def params_document(base: dict[str, Any], factors: Factors | None, level: float) -> dict[str, Any]:
    """The base parameters (a table per resource, as `apiary rc-params` prints them) with every
    pool's initial level and, when given, each resource's factors."""
    doc = {k: (dict(v) if isinstance(v, dict) else v) for k, v in base.items()}
    for name, table in doc.items():
        if isinstance(table, dict):
            table["initial_level"] = level
            if factors and name in factors:
                table.update(zip(FACTORS, factors[name], strict=True))
    return doc


# ---- running trials ----------------------------------------------------------------------

@dataclass
class Trial:
    round: int
    phase: str                 # probe, budget, price or chosen
    factors: Factors | None    # None: the base file's
    params: str                # the params file's text
    args: list[str]            # the command line, without --rc-params and --report
    index: int = 0             # its place in its round

    @property
    def key(self) -> str:
        return hashlib.sha256((self.params + "\0" + "\0".join(self.args)).encode()).hexdigest()[:16]


def _stop_asked(stop: Any) -> bool:
    try:
        return stop is not None and stop.is_set()
    except Exception:   # a cluster's scheduler gone: nobody is left to ask
        return False


def trial_task(spec: dict[str, Any], stop: Any = None) -> dict[str, Any]:
    """One trial in a temporary directory (here or on a worker): its report's text and output."""
    if _stop_asked(stop):
        return {"stopped": True}
    with tempfile.TemporaryDirectory(prefix="apiary-rc-tune-") as tmp:
        params, report = Path(tmp) / "rc-params.toml", Path(tmp) / "report.json"
        params.write_text(spec["params"], encoding="utf-8")
        args = fleet.localize(spec["args"]) + ["--rc-params", str(params), "--report", str(report)]
        t0 = time.monotonic()
        with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as out:
            out.write("$ " + shlex.join(args) + "\n")
            out.flush()
            child = proc.start(args, stdout=out, stderr=subprocess.STDOUT, cwd=str(REPO_ROOT))
            sent: list[bool] = []

            def tick() -> None:
                if not sent and _stop_asked(stop):
                    child.send_signal(signal.SIGINT)
                    sent.append(True)

            code = proc.wait(child, tick=tick, every=POLL_S).returncode
            out.seek(0)
            output = out.read()
        return {"exit_code": code, "elapsed_s": time.monotonic() - t0, "stopped": bool(sent), "output": output,
                "host": fleet.identity(), "report": report.read_text(encoding="utf-8") if report.is_file() else None}


def _trial_function() -> Callable[..., dict[str, Any]]:
    """trial_task as a cluster task: by value, importing the worker's own tools when it runs
    (as fleet's tasks do)."""
    def run_on_worker(spec, stop_name):
        from distributed import Event  # lazy for start-up time: distributed only with --cluster

        from apiary_tools.rc_trials import trial_task  # on the worker, from its own checkout, when the task runs
        return trial_task(spec, Event(stop_name))
    return run_on_worker


@dataclass
class Finished:
    trial: Trial
    report: dict[str, Any]
    elapsed_s: float
    host: str


class Runner:
    """Runs trials, `parallel` at a time here or on a cluster's workers (fleet.ClusterBackend,
    which checked them), skipping those whose report is in `directory` already; `on_done`
    hears of each as it finishes. A SIGINT or SIGTERM (noted by common.STOP) stops the trials in
    hand (apiary finishes its block; the trial is not counted) and starts no more."""

    def __init__(self, directory: Path, parallel: int, backend: fleet.ClusterBackend | None,
                 say: Callable[[str], None]):
        self.directory = make_directory(directory / TRIALS_DIR)
        self.backend = backend
        self.pool = ThreadPoolExecutor(parallel) if backend is None else None
        self.event: Any = threading.Event()
        if backend is not None:
            from distributed import Event  # lazy for start-up time: distributed only with --cluster
            self.event = Event(f"apiary-rc-tune-stop-{uuid.uuid4().hex}", client=backend.client)
        self.say = say
        self.ran = 0

    def close(self) -> None:
        """Stops what still runs (after a failed trial, or a second signal) and lets go."""
        self.event.set()
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
        if self.backend is not None:
            self.backend.close()

    def stored(self, trial: Trial) -> dict[str, Any] | None:
        """The report of a trial that finished before, if its files are whole."""
        path = self.directory / f"{trial.key}.json"
        if not path.is_file() or not (self.directory / f"{trial.key}.toml").is_file():
            return None
        try:
            return checked(read_json(path, "a trial's report"), str(path), lambda d: problem(RC_SCHEMA, d))
        except ToolError:
            return None

    def _submit(self, trial: Trial) -> Any:
        spec = {"args": fleet.portable(trial.args), "params": trial.params}
        if self.pool is not None:
            return self.pool.submit(trial_task, spec, self.event)
        assert self.backend is not None
        return self.backend.client.submit(_trial_function(), spec, self.event.name, key=f"apiary-rc-trial-"
                                          f"{trial.key}-{uuid.uuid4().hex[:8]}", resources={fleet.RESOURCE: 1},
                                          pure=False)

    def run(self, trials: Sequence[Trial], on_done: Callable[[Finished], None]) -> list[Finished]:
        """The trials' outcomes in their order; fewer when a signal stopped them."""
        done: dict[str, Finished] = {}
        pending: dict[Any, Trial] = {}
        for trial in trials:
            report = self.stored(trial) if trial.key not in done else None
            if report is not None:
                done[trial.key] = Finished(trial, report, 0.0, "earlier")
                on_done(done[trial.key])
            elif trial.key not in done and trial.key not in {t.key for t in pending.values()}:
                pending[self._submit(trial)] = trial
        while pending:
            if STOP.received is not None and not self.event.is_set():
                self.event.set()
                for future in pending:
                    future.cancel()
            for future in [f for f in pending if f.done()]:
                finished = self._collect(pending.pop(future), future)
                if finished is not None:
                    done[finished.trial.key] = finished
                    on_done(finished)
            time.sleep(POLL_S if pending else 0)
        return [done[t.key] for t in trials if t.key in done]

    def _collect(self, trial: Trial, future: Any) -> Finished | None:
        try:
            data = future.result()
        except Exception as e:   # the task raised, was cancelled, or the worker died under it
            if STOP.received is not None:
                return None
            raise ToolError(f"trial {trial.key} (round {trial.round}) was lost: {type(e).__name__}: {e}", 1) from None
        if data.get("stopped"):
            return None
        base = self.directory / trial.key
        write_text(base.with_suffix(".out"), data["output"])
        if data["exit_code"] != 0 or data["report"] is None:
            last = (data["output"].strip().splitlines() or ["no output"])[-1]
            raise ToolError(f"trial {trial.key} (round {trial.round}) failed with exit status {data['exit_code']}: "
                            f"{shown(last, 300)} (log: {base.with_suffix('.out')})", 2 if data["exit_code"] == 2 else 1)
        write_text(base.with_suffix(".json"), data["report"])
        try:
            report = checked(read_json(base.with_suffix(".json"), "a trial's report"), str(base.with_suffix(".json")),
                             lambda d: problem(RC_SCHEMA, d))
        except ToolError as e:   # apiary's report, not the user's input: the trial failed
            raise ToolError(f"trial {trial.key} (round {trial.round}): {e}", 1) from None
        write_text(base.with_suffix(".toml"), trial.params)   # last: a trial is finished when its params are there
        self.ran += 1
        self.say(f"trial {trial.key} (round {trial.round}, {trial.phase}) done in {data['elapsed_s']:.1f} s "
                 f"on {data['host']}")
        return Finished(trial, report, data["elapsed_s"], data["host"])


# ---- what a report says ------------------------------------------------------------------

@dataclass
class Analysis:
    names: list[str]
    resources: list[dict[str, Any]]          # rc.params' resources
    blocks: np.ndarray                       # the archives' block numbers, all of them
    levels: np.ndarray                       # archives × resources
    prices: np.ndarray
    low_shares: np.ndarray                   # archives × REFERENCE_OPS: cant_afford / count
    kept: int                                # the first archive after the transient
    drifts: list[Any] = field(default_factory=list)     # stats.Drift per resource
    verdicts: list[str] = field(default_factory=list)   # flat, falling or rising
    usage: list[float] = field(default_factory=list)    # per block, per resource

    @property
    def low_share(self) -> float:
        """The largest share, over the reference operations, of payers after the transient who
        could not afford it."""
        return float(np.max(self.low_shares[self.kept:].mean(axis=0))) if self.low_shares.size else 0.0


def _low_shares(archives: list[dict[str, Any]]) -> np.ndarray:
    rows = []
    for a in archives:
        count = sum(p["count"] for p in a["payers"])
        cant = [sum(p["cant_afford"][i] for p in a["payers"]) for i in range(len(REFERENCE_OPS))]
        rows.append([c / count if count else 0.0 for c in cant])
    return np.asarray(rows, dtype=float).reshape(len(archives), len(REFERENCE_OPS))


def verdict(drift: Any, tolerance: float) -> str:
    """flat when the drift's interval holds 0 or lies within ±tolerance; else its direction."""
    if drift.low <= 0 <= drift.high or (-tolerance <= drift.low and drift.high <= tolerance):
        return "flat"
    return "falling" if drift.high < 0 else "rising"


def use_per_block(archives: list[dict[str, Any]], resources: int) -> list[float]:
    """Each resource's average use per block over the archives (two or more); an archive's
    operations hold the use since the archive before (the first's since one interval before it)."""
    first, second, last = archives[0]["block"], archives[1]["block"], archives[-1]["block"]
    span = last - first + (second - first)
    return [sum(op["usage"][r] for a in archives for op in a["ops"]) / span for r in range(resources)]


def analyse(report: dict[str, Any], transient: float, tolerance: float, where: str) -> Analysis:
    rc = report["rc"]
    resources, archives = rc["params"]["resources"], rc["archives"]
    n = len(resources)
    bad = next((i for i, a in enumerate(archives) if len(a["levels"]) != n or len(a["prices"]) != n
                or any(len(op["usage"]) != n for op in a["ops"])), None)
    if bad is not None:
        raise ToolError(f"{where}: rc.archives[{bad}] does not hold one value per resource ({n})", 1)
    kept = math.floor(transient * len(archives))
    if len(archives) - kept < 3:
        raise ToolError(f"{where}: {len(archives)} archives, {len(archives) - kept} after the transient; a drift "
                        "needs 3: give more --blocks or fewer --rc-stats-blocks", 2)
    blocks = np.asarray([a["block"] for a in archives], dtype=float)
    out = Analysis([r["name"] for r in resources], resources, blocks,
                   np.asarray([a["levels"] for a in archives], dtype=float),
                   np.asarray([a["prices"] for a in archives], dtype=float), _low_shares(archives), kept)
    for r in range(n):
        # Over one characteristic time rather than the trial: a pool held at level L with budget
        # b and use u moves by about (b (1 - L) - u) / (b tau) a block, so its drift over tau is
        # how far from L it settles (1 - u/b). A trial far shorter than tau cannot see that
        # drift itself, but its slope can.
        out.drifts.append(drift_interval(blocks[kept:], out.levels[kept:, r], span=float(resources[r]["tau_blocks"])))
        out.verdicts.append(verdict(out.drifts[-1], tolerance))
    out.usage = use_per_block(archives, n)
    return out
