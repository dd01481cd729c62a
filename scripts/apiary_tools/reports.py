"""Loading `apiary run` reports and sets of them.

A *set* is what a comparison or an export works on: the metrics of one or more runs of the
same configuration. It can come from
- report files (`apiary run --report`), one run each;
- a directory: every report directly inside it (multirun writes run-001.json, ...), or its
  aggregate.json when it has no reports of its own;
- an aggregate file written by multirun (`aggregate.json`), which keeps every run's value of
  every metric, so a set can be compared after its reports are gone.

Reports of schema_version 2 also carry latency histograms (see latency.py); a run's stages
are read with it, and an aggregate file keeps every run's bins so that they merge the same
way after the reports are gone. Reports of schema_version 1 have none and are still read.

Only completed runs count: an interrupted or failed report has partial or no statistics. They
are listed in `skipped` with the reason so the commands can say what they left out.

Every report and aggregate file is checked before its figures are used (check_report against
the report's schema, check_aggregate against aggregate_schema; schemas.py), and `input_files`
says which files a set reads, so that no output replaces one (outputs.Outputs).
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import latency as latency_mod
from . import metrics
from .common import ToolError, shown_path
from .inputs import checked, read_json
from .schemas import (
    AXIS,
    BLOCK_FIELDS,
    COUNT,
    NONNEG,
    NUMBER_OR_NULL,
    NUMBERS,
    REPORT_VERSIONS,
    STAGE,
    STAGE_NAMES,
    STRING,
    STRING_OR_NULL,
    STRINGS,
    Blocks,
    array,
    obj,
    problem,
    report_part,
    report_problem,
    rooted,
)

AGGREGATE_KIND = "apiary-multirun-aggregate"
AGGREGATE_VERSION = 1
AGGREGATE_NAME = "aggregate.json"
# What multirun keeps of a run beside its metrics (runner.RunResult.info).
RUN_INFO = obj(path=STRING_OR_NULL, host=STRING_OR_NULL, label=STRING, index=COUNT, exit_code={"type": "integer"},
               elapsed_s=NONNEG, load_avg_before={"type": ["array", "null"], "items": NONNEG},
               start_time=STRING_OR_NULL, commit=STRING_OR_NULL, status=STRING_OR_NULL,
               retried=array({"type": "object"}))


@functools.cache
def aggregate_schema() -> dict[str, Any]:
    """An aggregate.json: every run's value of every metric, their summaries, every run's
    latency bins (checked by latency.stage_from as it reads them)."""
    summary = {k: NUMBER_OR_NULL for k in ("mean", "median", "stddev", "min", "max", "ci_low", "ci_high")}
    return rooted(obj(
        ("kind", "version", "runs", "metrics"), kind={"const": AGGREGATE_KIND}, version={"const": AGGREGATE_VERSION},
        label=STRING, created=STRING, sources=STRINGS, n_runs=COUNT, runs=array(RUN_INFO),
        skipped=array(obj(("path", "reason"), path=STRING, reason=STRING)),
        context=report_part("context"), config=report_part("config"), config_differences={"type": "object"},
        metrics={"type": "object", "additionalProperties": obj(("values",), values=NUMBERS, runs=array(COUNT), n=COUNT,
                                                                **summary)},
        latency=obj(("histogram", "runs"), histogram=AXIS, pooled={"type": "object"},
                    runs=array(obj(("run",), run=COUNT, **{name: STAGE for name in STAGE_NAMES})))))


def is_report(data: Any) -> bool:
    return isinstance(data, dict) and data.get("schema_version") in REPORT_VERSIONS and "status" in data \
        and ("aggregates" in data or data["status"] == "aborted")   # aborted: a hard exit's, nothing measured


def is_aggregate(data: Any) -> bool:
    return isinstance(data, dict) and data.get("kind") == AGGREGATE_KIND


@dataclass
class Run:
    """One completed run inside a set."""
    path: str | None
    metrics: dict[str, float]
    report: dict[str, Any] | None = None   # None when the run came from an aggregate file
    info: dict[str, Any] = field(default_factory=dict)
    latency: latency_mod.RunLatency | None = None   # None for a report of schema_version 1

    def full_report(self) -> dict[str, Any]:
        """The run's report, for what only a report holds (its blocks): a run read from an
        aggregate file has none."""
        if self.report is None:
            raise ToolError(f"{self.path or 'a run'}: only its aggregate's figures are here, not its report")
        return self.report

    @property
    def host(self) -> str:
        """The machine that ran it: what the tool recorded (a fleet worker's name, $APIARY_HOST),
        else the report's hostname."""
        return self.info.get("host") or (self.report or {}).get("context", {}).get("hostname") or "?"


@dataclass
class RunSet:
    label: str
    runs: list[Run] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)
    context: dict[str, Any] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)
    # A run its report marks invalid (validity.valid false: the load generator fell behind its
    # schedule) is skipped like an incomplete one when the set is to give a verdict (compare,
    # multirun, sweep), unless asked for (--include-invalid); shown or recorded, it counts.
    include_invalid: bool = True

    @property
    def n(self) -> int:
        return len(self.runs)

    def describe_sources(self) -> str:
        """`5 reports in DIR` rather than five paths, when they share a directory."""
        parents = {str(Path(s).parent) for s in self.sources}
        if len(self.sources) > 2 and len(parents) == 1:
            return f"{len(self.sources)} reports in {parents.pop()}"
        return ", ".join(self.sources)

    def metric_names(self) -> list[str]:
        names: set[str] = set()
        for run in self.runs:
            names.update(run.metrics)
        return metrics.ordered(names)

    def values(self, name: str) -> list[float]:
        """The metric's value in every run that has it (kinds of transaction a short run never
        generated are missing, not zero)."""
        return [run.metrics[name] for run in self.runs if name in run.metrics]

    def hosts(self, name: str) -> list[str]:
        """The machine of every value `values(name)` gives, in the same order."""
        return [run.host for run in self.runs if name in run.metrics]

    def machines(self) -> list[str]:
        return sorted({run.host for run in self.runs})

    def latency_runs(self) -> list[latency_mod.RunLatency]:
        """The latency stages of the runs that have them, checked to share one histogram axis."""
        runs = [run.latency for run in self.runs if run.latency is not None]
        latency_mod.common_axis(runs, self.label)
        return runs

    def latency_section(self) -> dict[str, Any] | None:
        """The aggregate file's `latency`: pooled summaries and every run's bins."""
        with_latency = [(i, run.latency) for i, run in enumerate(self.runs) if run.latency is not None]
        return latency_mod.to_section([lat for _, lat in with_latency], [i for i, _ in with_latency], self.label)

    def config_differences(self) -> dict[str, list[Any]]:
        """Options that differ between the runs (other than the report path and name):
        a set is meant to repeat one configuration, so these are worth a warning."""
        configs = [r.report.get("config", {}) for r in self.runs if r.report]
        ignore = {"report", "name", "progress"}
        keys = sorted({k for c in configs for k in c} - ignore)
        diffs = {}
        for key in keys:
            seen = [c.get(key) for c in configs]
            if any(v != seen[0] for v in seen):
                diffs[key] = seen
        return diffs


def _run_info(report: dict[str, Any]) -> dict[str, Any]:
    ctx = report.get("context", {})
    return {"start_time": ctx.get("start_time"), "commit": ctx.get("commit"),
            "status": report.get("status")}


def check_report(report: Any, path: str | Path) -> dict[str, Any]:
    """The report, checked against its schema as the tools read it (schemas.report_problem)."""
    return checked(report, shown_path(str(path)), report_problem)


def check_aggregate(data: Any, path: str | Path) -> dict[str, Any]:
    return checked(data, shown_path(str(path)), lambda d: problem(aggregate_schema(), d))


def _add_report(rs: RunSet, path: Path, report: dict[str, Any]) -> None:
    check_report(report, path)
    if report.get("status") != "completed":
        reason = report.get("status", "unknown status")
        if report.get("error"):
            reason += f": {report['error']}"
        rs.skipped.append({"path": str(path), "reason": reason})
        return
    validity = report.get("validity") or {}
    if validity.get("valid") is False and not rs.include_invalid:
        reasons = "; ".join(validity.get("reasons") or ["no reason given"])
        rs.skipped.append({"path": str(path), "reason": f"invalid: {reasons}"})
        return
    if not rs.context:
        rs.context = report.get("context", {})
        rs.config = report.get("config", {})
    rs.runs.append(Run(path=str(path), metrics=metrics.flatten(report), report=report,
                       info=_run_info(report), latency=latency_mod.from_report(report, str(path))))


def _add_aggregate(rs: RunSet, path: Path, data: dict[str, Any]) -> None:
    check_aggregate(data, path)
    runs = data["runs"]
    per_metric = data.get("metrics", {})
    for name, entry in per_metric.items():
        if len(entry.get("values", [])) != len(entry.get("runs", range(len(runs)))):
            raise ToolError(f"{path}: metric {name} has a values list that does not match its runs")
    built = [Run(path=r.get("path"), metrics={}, info=dict(r)) for r in runs]
    for name, entry in per_metric.items():
        indices = entry.get("runs", list(range(len(runs))))
        for index, value in zip(indices, entry["values"], strict=True):
            if not 0 <= index < len(built):
                raise ToolError(f"{path}: metric {name} names run {index}, which is not listed")
            built[index].metrics[name] = float(value)
    if data.get("latency") is not None:
        for index, run_latency in latency_mod.from_section(data["latency"], str(path)).items():
            if not 0 <= index < len(built):
                raise ToolError(f"{path}: latency names run {index}, which is not listed")
            built[index].latency = run_latency
    if not rs.context:
        rs.context = data.get("context", {})
        rs.config = data.get("config", {})
    rs.runs.extend(built)
    rs.skipped.extend(data.get("skipped", []))


def _reports_in(directory: Path) -> list[Path]:
    return sorted(p for p in directory.glob("*.json") if p.name != AGGREGATE_NAME)


def input_files(path: str | Path, refreshing: bool = False) -> list[Path]:
    """The files that loading `path` into a set reads: a file itself; a directory's reports and
    its aggregate.json. No output may replace one of them (outputs.Outputs). With refreshing,
    a directory's aggregate.json beside its reports is left out: `multirun --aggregate DIR`
    writes it anew from them."""
    p = Path(path)
    if not p.is_dir():
        return [p]
    reports = _reports_in(p)
    aggregate = p / AGGREGATE_NAME
    if (refreshing and reports) or not aggregate.exists():
        return reports
    return reports + [aggregate]


def _merge_run_info(rs: RunSet, aggregate_path: Path) -> None:
    """What multirun recorded beside a directory's reports (load averages, durations) joins
    the runs read from the reports themselves."""
    if not aggregate_path.is_file():
        return
    data = read_json(aggregate_path)
    if not is_aggregate(data):
        return
    check_aggregate(data, aggregate_path)
    by_name = {Path(r.get("path") or "").name: r for r in data.get("runs", [])}
    for run in rs.runs:
        extra = by_name.get(Path(run.path or "").name)
        if extra:
            run.info = dict(extra, **run.info)


def add_path(rs: RunSet, path: Path) -> None:
    """Adds a report file, an aggregate file or a directory of either to the set."""
    rs.sources.append(str(path))
    if path.is_dir():
        candidates = _reports_in(path)
        found = False
        for p in candidates:
            data = read_report_json(p)
            if is_report(data):
                _add_report(rs, p, data)
                found = True
        if found:
            _merge_run_info(rs, path / AGGREGATE_NAME)
            return
        if (path / AGGREGATE_NAME).is_file():
            _add_aggregate(rs, path / AGGREGATE_NAME, read_json(path / AGGREGATE_NAME))
            return
        subdirs = sorted(p.name for p in path.iterdir() if p.is_dir())
        hint = f" (it has the directories {', '.join(subdirs)}: name one of them)" if subdirs else ""
        raise ToolError(f"{path}: no apiary reports or {AGGREGATE_NAME} in this directory{hint}")
    if not path.exists():
        raise ToolError(f"{path}: no such file or directory")
    data = read_report_json(path)
    if is_report(data):
        _add_report(rs, path, data)
    elif is_aggregate(data):
        _add_aggregate(rs, path, data)
    else:
        raise ToolError(f"{path}: neither an apiary run report (schema_version 1 or 2) nor a multirun "
                        f"{AGGREGATE_NAME}")


def load_set(paths: Iterable[str | Path], label: str, include_invalid: bool = True) -> RunSet:
    """A set from report files, aggregate files and directories; at least one completed run
    (and valid, unless include_invalid)."""
    rs = RunSet(label=label, include_invalid=include_invalid)
    for p in paths:
        add_path(rs, Path(p))
    if rs.n == 0:
        why = "; ".join(f"{s['path']}: {s['reason']}" for s in rs.skipped[:3])
        raise ToolError(f"{label}: no completed{'' if include_invalid else ', valid'} runs in {', '.join(rs.sources)}"
                        + (f" (skipped {why})" if why else ""))
    return rs


def add_include_invalid(p: argparse.ArgumentParser) -> None:
    """The option of the tools whose sets give verdicts."""
    p.add_argument("--include-invalid", action="store_true",
                   help="count the runs whose reports are marked invalid (validity.valid false: the load generator "
                        "fell behind its schedule); by default they are skipped and named")


def load_report(path: str | Path, data: Any = None) -> dict[str, Any]:
    """One report file (or what read_report_json read of it, `data`), checked to be an apiary report."""
    data = read_report_json(path) if data is None else data
    if not is_report(data):
        raise ToolError(f"{path}: not an apiary run report (schema_version 1 or 2)")
    if data["status"] == "aborted":
        raise ToolError(f"{path}: the run was aborted by a second signal: it kept no measurements")
    return check_report(data, path)


def measured_blocks(report: dict[str, Any]) -> dict[str, np.ndarray]:
    """The columns of the measured blocks that have a cycle time (the first block of a run has
    none): num, cycle_us, transactions, ... (schemas.Blocks), each an array."""
    blocks = Blocks.of(report.get("blocks", []))
    if not len(blocks):
        return {key: np.zeros(0) for key in BLOCK_FIELDS}
    keep = (blocks.column("warmup") != 1.0) & ~np.isnan(blocks.column("cycle_us"))
    return {key: blocks.column(key)[keep] for key in BLOCK_FIELDS}


_LAST_READ: dict[tuple[int, ...], Any] = {}


def read_report_json(path: str | Path) -> Any:
    """A JSON file that may be a report, its blocks read as columns (schemas.Blocks), not as a
    dict each: what every tool that reads reports reads them with. The last file read is kept
    (by its device, inode, size and modification time): a tool that looks at a file to learn
    what it is and then loads it reads a 250 MB report once, not twice."""
    try:
        st = Path(path).stat()
        key: tuple[int, ...] | None = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    except OSError:
        key = None
    if key is not None and key in _LAST_READ:
        return _LAST_READ[key]
    data = read_json(path, arrays={"blocks": Blocks})
    _LAST_READ.clear()
    if key is not None:
        _LAST_READ[key] = data
    return data
