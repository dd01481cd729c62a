"""What goes into the results history from each kind of result the tools write: recognising a
file or a directory (by the kinds of kinds.py), and turning it into history_db.Entry records
(docs/history.md).

Kinds, and what one becomes:
- `run`: an `apiary run` report; its metrics (metrics.flatten), its latency percentiles and
  histogram bins. Reports that did not complete (interrupted, failed, aborted) are skipped.
- `multirun`: a multirun set (a directory of reports with aggregate.json, or aggregate.json
  alone): one entry per set, each metric the mean over its runs, the latency histograms
  merged over the runs. An A/B multirun directory is two such sets (its subdirectories) and
  a comparison.
- `compare`: comparison.json: each metric's change in percent (`<metric>.change_pct`) and
  its interval, the commit being the candidate's (B).
- `ladder`: ladder.json: one entry per step (labelled with its name): the cycle, the writer's
  shares, instructions per transaction.
- `soak`: soak.json (with report.json beside it for the commit and configuration).
- `perf-gate`: the perf gate's result: instructions per transaction of the current commit.

Floor: results. Thread safety: one thread ingests; each file goes in in its own transaction.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Engine

from . import gate, kinds, ladders, soaks
from . import history_db as db
from . import latency as latency_mod
from . import metrics as metrics_mod
from .common import ToolError, shown, shown_path, utc_iso
from .history_db import Entry
from .inputs import read_json
from .reports import AGGREGATE_NAME, RunSet, is_aggregate, is_report, load_set, read_report_json

# Options that name or place a run's outputs: they do not change what is measured, so two runs
# that differ only in them share a configuration digest.
OUTPUT_OPTIONS = frozenset({
    "name", "report", "progress", "config_file", "log-level", "log-file", "interval", "checkpoint-blocks",
    "interval-log", "prometheus-textfile", "hgrm-dir", "profile", "dump-transactions", "dump-blocks", "dump-limit",
    "dump-block-limit"})
# What a report's context says about who ran it rather than where: not the environment.
NOT_ENVIRONMENT = frozenset({"commit", "hostname", "command_line", "start_time", "seed", "chain_id"})


class Skipped(Exception):
    """A result that is not ingested: the reason names it."""


def config_digest(config: dict[str, Any] | None) -> str | None:
    """A hash of the effective configuration, the same whatever the order of its keys."""
    if not config:
        return None
    kept = {k: v for k, v in config.items() if k not in OUTPUT_OPTIONS}
    text = json.dumps(kept, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def validity(data: dict[str, Any]) -> tuple[bool, list[str]]:
    """A result's top-level `validity` object (absent: valid)."""
    v = data.get("validity")
    if not isinstance(v, dict):
        return True, []
    reasons = [str(r) for r in v.get("reasons") or []]
    return v.get("valid") is not False, reasons


def _from_context(entry: Entry, context: dict[str, Any], config: dict[str, Any] | None, host: str | None) -> Entry:
    entry.commit = context.get("commit") or entry.commit
    entry.machine = host or context.get("hostname") or entry.machine
    entry.environment = {k: v for k, v in context.items() if k not in NOT_ENVIRONMENT}
    entry.time = context.get("start_time") or entry.time
    entry.config_digest = config_digest(config)
    return entry


def _file_time(path: Path) -> str:
    return datetime.fromtimestamp(path.stat().st_mtime, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _latency(entry: Entry, stages: dict[str, latency_mod.Stage]) -> None:
    for name, stage in stages.items():
        for key, value in stage.summary().items():
            if key != "count" and value is not None:
                entry.metrics[f"latency.{name}.{key}"] = float(value)
        axis = stage.axis
        counts = [(int(i) - 1, int(stage.counts[i])) for i in stage.counts.nonzero()[0]]
        entry.histograms[name] = ((axis.lowest_ns, axis.highest_ns, axis.bins), counts)


# ---- one kind each ----------------------------------------------------------------------------

def _set_validity(rs: RunSet, data: dict[str, Any]) -> tuple[bool, list[str]]:
    """A set is invalid when its file says so or when one of its runs' reports does."""
    valid, reasons = validity(data)
    for run in rs.runs:
        if run.report == data:
            continue   # a lone report: its validity is the result's
        run_valid, why = validity(run.report or {})
        if not run_valid:
            valid = False
            name = Path(run.path or "a run").name
            reasons += [f"{name}: {r}" for r in why] or [f"{name}: invalid"]
    return valid, reasons


def _set_entry(kind: str, rs: RunSet, source: Path, label: str, data: dict[str, Any]) -> Entry:
    """A run or a multirun set: each metric's mean over the runs, their histograms merged."""
    if rs.n == 0:
        why = "; ".join(s["reason"] for s in rs.skipped[:1])
        raise Skipped(f"no completed run{f' ({why})' if why else ''}")
    entry = Entry(kind=kind, source=str(source), label=label, time=_file_time(source))
    hosts = rs.machines()
    _from_context(entry, rs.context, rs.config, ",".join(hosts) if hosts != ["?"] else None)
    entry.valid, entry.reasons = _set_validity(rs, data)
    for name in rs.metric_names():
        values = rs.values(name)
        entry.metrics[name] = sum(values) / len(values)
    runs = rs.latency_runs()
    if runs:
        _latency(entry, latency_mod.pooled(runs, label or str(source)))
    return entry


def run_entries(path: Path, data: dict[str, Any]) -> list[Entry]:
    if data.get("status") != "completed":
        raise Skipped(f"the run is {data.get('status', 'of unknown status')}: nothing measured to keep")
    return [_set_entry("run", load_set([path], "run"), path, "", data)]


def multirun_entries(path: Path, data: dict[str, Any]) -> list[Entry]:
    """An aggregate.json, with the reports beside it when they are there: the runs the set
    counted (an invalid run only when it was asked to count them)."""
    directory = path.parent
    rs = load_set([directory], data.get("label", "set"), bool(data.get("include_invalid", True)))
    return [_set_entry("multirun", rs, path, str(data.get("label", "")), data)]


def compare_entries(path: Path, data: dict[str, Any]) -> list[Entry]:
    entry = Entry(kind="compare", source=str(path), label=f"{data['a']['label']}..{data['b']['label']}",
                  commit=data["b"].get("commit"), time=_file_time(path))
    entry.valid, entry.reasons = validity(data)
    aggregate = path.parent / str(data["b"]["label"]) / AGGREGATE_NAME
    if aggregate.is_file():
        side = read_json(aggregate)
        _from_context(entry, side.get("context") or {}, side.get("config"), None)
    for row in data.get("metrics", []):
        for key in ("change_pct", "ci_low_pct", "ci_high_pct", "p_value"):
            value = row.get(key)
            if isinstance(row.get("metric"), str) and isinstance(value, (int, float)) and value == value:
                entry.metrics[f"{row['metric']}.{key}"] = float(value)
    return [entry]


def _first_report(directory: Path, paths: list[str]) -> dict[str, Any]:
    for p in paths:
        candidate = directory / p
        if candidate.is_file():
            report = read_report_json(candidate)
            if is_report(report):
                return report
    return {}


def ladder_entries(path: Path, data: dict[str, Any]) -> list[Entry]:
    meta = data["meta"]
    first = _first_report(path.parent, [r.get("path", "") for r in data.get("runs", [])])
    context = first.get("context") or {}
    commit = context.get("commit")
    if commit is None and (m := re.search(r"commit (\S+?)(,|$)", str(meta.get("machine", "")))):
        commit = m.group(1)
    valid, reasons = validity(data)
    out = []
    for step in data["steps"]:
        entry = Entry(kind="ladder", source=str(path), label=str(step["name"]), time=_file_time(path))
        _from_context(entry, context, {"mode": meta.get("mode"), "step": step["name"],
                                       "options": step.get("options"), "extra_args": meta.get("extra_args")}, None)
        entry.commit, entry.valid, entry.reasons = commit, valid, reasons
        entry.metrics = metrics_mod.flatten({k: v for k, v in step.items()
                                             if k not in ("step", "runs", *ladders.CHANGES)})
        out.append(entry)
    return out


def soak_entries(path: Path, data: dict[str, Any]) -> list[Entry]:
    entry = Entry(kind="soak", source=str(path), time=_file_time(path))
    report_path = path.parent / soaks.RUN_REPORT
    report = read_report_json(report_path) if report_path.is_file() else {}
    if is_report(report):
        _from_context(entry, report.get("context") or {}, report.get("config"), None)
    entry.valid, entry.reasons = validity(data)
    entry.metrics = metrics_mod.flatten({k: v for k, v in data.items()
                                         if k not in ("kind", "version", "series", "state_end", "command",
                                                      "exit_code")})
    return [entry]


def perf_gate_entries(path: Path, data: dict[str, Any]) -> list[Entry]:
    current = (data.get("sides") or {}).get("current")
    if data.get("status") not in ("passed", "failed") or not isinstance(current, dict):
        raise Skipped(f"the gate {data.get('status', 'did not finish')}: no count of this commit")
    entry = Entry(kind="perf-gate", source=str(path), commit=data.get("commit"), time=data.get("time")
                  or _file_time(path), machine=data.get("machine"), environment=data.get("environment") or {})
    entry.config_digest = config_digest(data.get("config"))
    entry.valid, entry.reasons = validity(data)
    entry.metrics = {c.per_tx_key: float(current[c.per_tx_key]) for c in gate.GATE_COSTS
                     if isinstance(current.get(c.per_tx_key), (int, float))}
    for c in gate.GATE_COSTS:
        if isinstance((data.get(c.verdict_key) or {}).get("change_pct"), (int, float)):
            entry.metrics[f"{c.per_tx_key}.change_pct"] = float(data[c.verdict_key]["change_pct"])
    return [entry]


# ---- recognising ------------------------------------------------------------------------------

def kind_of(data: Any) -> str | None:
    if not isinstance(data, dict):
        return None
    if is_report(data):
        return "run"
    if is_aggregate(data):
        return "multirun"
    for kind in INGESTED:
        if kind.kind is not None and kind.is_one(data):
            return kind.name
    if "meta" in data and "steps" in data:
        return "ladder"   # written before ladder.json had a kind
    if "threshold_pct" in data and "sides" in data:
        return "perf-gate"   # written before the gate's result had a kind (and a commit)
    return None


# The kinds the history keeps, each with what one of its files becomes.
READERS: dict[str, Callable[[Path, dict[str, Any]], list[Entry]]] = {
    kinds.RUN.name: run_entries, kinds.MULTIRUN.name: multirun_entries, kinds.COMPARISON.name: compare_entries,
    kinds.LADDER.name: ladder_entries, kinds.SOAK.name: soak_entries, kinds.PERF_GATE.name: perf_gate_entries}
INGESTED = tuple(kind for kind in kinds.KINDS if kind.name in READERS)
KINDS = tuple(READERS)


def entries_of_file(path: Path) -> list[Entry]:
    """The entries of one result file; Skipped when it is not a result or holds nothing to keep."""
    try:
        data = read_report_json(path)
    except ToolError as e:
        raise Skipped(str(e).removeprefix(f"{shown_path(str(path))}: ")) from None
    kind = kind_of(data)
    if kind is None:
        raise Skipped("not a result of the apiary tools")
    try:
        return READERS[kind](path, data)
    except ToolError as e:
        raise Skipped(f"{kind}: {e}") from None
    except (KeyError, TypeError, ValueError) as e:
        raise Skipped(f"{kind}: malformed ({type(e).__name__}: {e})") from None


# Files a result directory holds beside its result: read through it, not on their own.
_WHOLE = (kinds.MULTIRUN.file, kinds.LADDER.file, kinds.SOAK.file)
_COMPARISON = kinds.COMPARISON.file


def result_files(path: Path) -> Iterator[Path]:
    """The result files under `path`: a file itself; in a directory its aggregate.json (not the
    reports it sums), its comparison.json, ladder.json or soak.json (not what they were made
    from), else every JSON file in it, and the same in its subdirectories."""
    if not path.is_dir():
        yield path
        return
    whole = [path / name for name in _WHOLE if (path / name).is_file()]
    yield from whole
    if (path / _COMPARISON).is_file():
        yield path / _COMPARISON
    if not whole:
        yield from sorted(p for p in path.glob("*.json") if p.name != _COMPARISON and p.is_file())
    if any(w.name in _WHOLE[1:] for w in whole):
        return
    for sub in sorted(p for p in path.iterdir() if p.is_dir() and not p.name.startswith(".")):
        if os.access(sub, os.R_OK | os.X_OK):
            yield from result_files(sub)


def ingest_paths(engine: Engine, paths: Sequence[Path], say=print) -> tuple[list[int], list[str]]:
    """Every result under `paths` into the history, each file in its own transaction; the new
    results' ids and the skipped files, each with its reason."""
    added: list[int] = []
    skipped: list[str] = []
    for top in paths:
        if not top.exists():
            raise ToolError(f"{shown(str(top))}: no such file or directory")
        for path in result_files(top.resolve()):
            try:
                entries = entries_of_file(path)
            except Skipped as e:
                skipped.append(f"{path}: {e}")
                continue
            with db.writing(engine) as conn:
                ids = [db.insert(conn, entry, utc_iso()) for entry in entries]
            new = [i for i in ids if i is not None]
            added.extend(new)
            say(f"{path}: {len(new)} result(s) added" + (f", {len(ids) - len(new)} already there"
                                                          if len(new) != len(ids) else ""))
    return added, skipped
