"""The registry of result kinds: every kind of file the tools write and read back, in one table.

Each Kind is named here once with everything about it: its name (how the tools and the results
history call it), the `kind` and `version` its file carries, the file's name in its directory,
the command that writes it, its schema (what a reader may rely on) and its reader (`read`: the
file, checked). The commands stamp what they write with their kind (`stamp`) and name the file
from here; report-html and the history's ingestion recognise a file by walking the table
(`KINDS`). A run report and a multirun set are read by reports.py, which defines them: their
entries name its definitions.

Floor: results (above reports, profiles, stats, ladders and soaks, whose definitions the
schemas use). Thread safety: the table is constant; a Kind is immutable.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import deciding, ladders, profiles, reports, soaks, stats
from .common import ToolError
from .inputs import checked, read_json
from .schemas import (
    COUNT,
    NAME,
    NONNEG,
    NUMBER,
    NUMBER_OR_NULL,
    NUMBERS,
    PAIR,
    RELATIVE_PATH,
    STRING,
    STRING_OR_NULL,
    STRINGS,
    SUMMARY,
    array,
    obj,
    problem,
    report_part,
    rooted,
)


@dataclass(frozen=True, eq=False)
class Kind:
    """One kind of result. `body` is its file's schema without `kind` and `version`, which the
    registry adds (`schema`); `check` is what the schema cannot say (None: nothing more)."""
    name: str
    kind: str | None             # the file's `kind` (None: an apiary run report, known by its schema_version)
    version: int | None
    file: str                    # its name in its directory ("": any name)
    written_by: str              # the command that writes it (scripts/NAME, or apiary run)
    body: dict[str, Any] | None = None
    check: Callable[[Any], str | None] | None = None
    refuse_others: bool = False  # a file of another kind is refused before its schema is checked

    @functools.cached_property
    def schema(self) -> dict[str, Any] | None:
        if self.body is None:
            return None
        identity = {"kind": {"const": self.kind}, "version": {"const": self.version}}
        return {**self.body, "properties": {**identity, **self.body["properties"]}}

    def is_one(self, data: Any) -> bool:
        """Whether `data` (a JSON file's content) is of this kind."""
        if self.kind is None:
            return reports.is_report(data)
        return isinstance(data, dict) and data.get("kind") == self.kind

    def stamp(self, data: dict[str, Any]) -> dict[str, Any]:
        """`data` as this kind's file holds it: its kind and version first."""
        return {"kind": self.kind, "version": self.version, **data}

    def problem(self, data: Any) -> str | None:
        why = problem(self.schema, data) if self.schema is not None else None
        return why or (self.check(data) if self.check is not None else None)

    def read(self, path: Path) -> dict[str, Any]:
        """The file at `path`, checked: a ToolError names what is wrong with it."""
        if self.kind is None:
            return reports.load_report(path)
        data = read_json(path)
        if self.refuse_others and not self.is_one(data):
            raise ToolError(f"{path}: not a {self.file} written by scripts/{self.written_by}")
        return checked(data, str(path), self.problem)


# ---- the schemas ------------------------------------------------------------------------------

_SIDE = obj(("label",), label=NAME, n=COUNT, sources=STRINGS, commit=STRING_OR_NULL, name=STRING_OR_NULL,
            skipped=array(obj(("path", "reason"), path=STRING, reason=STRING)))
# comparison.json, as comparison.Comparison.to_dict writes it and report-html reads it back: the
# sides' labels name their directories beside it.
_COMPARISON = obj(("kind", "version", "a", "b", "alpha", "min_effect_pct", "ci_method", "gate"),
                  a=_SIDE, b=_SIDE,
                  alpha={"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1}, min_effect_pct=NONNEG,
                  ci_method={"enum": list(stats.CI_METHODS)}, method=STRING, latency_method=STRING,
                  multiplicity=obj(("method", "family_size"), method={"enum": list(stats.MULTIPLICITY_METHODS)},
                                   family_size=COUNT, text=STRING),
                  gate=obj(("metrics",), metrics=array(STRING, minItems=1), failed={"type": "boolean"},
                           regressions=STRINGS, alpha=NUMBER, decided={"type": "boolean"}),
                  decision=obj(("setting", "candidate", "metric"), setting={"enum": list(deciding.SETTINGS)},
                               candidate={"enum": list(deciding.BY_NAME)}, metric=STRING, text=STRING),
                  config_differences={"type": "object"}, notes=STRINGS, metrics=array({"type": "object"}),
                  profile=profiles.SCHEMA, sequential={"type": "object"})

# sweep.json, as scripts/sweep writes it: each point's directory and representative report
# are paths inside the sweep's directory.
_SWEEP = rooted(obj(
    ("kind", "version", "param", "values", "points"),
    created=STRING, param={"type": "string", "pattern": "^[a-z][a-z0-9-]*$"}, values=array(STRING, minItems=1),
    runs_per_value=COUNT, run_args=STRINGS, load_avg_before=NUMBERS, load_avg_after=NUMBERS,
    context=report_part("context"),
    points=array(obj(("value", "dir", "n", "metrics"), value=STRING, x=NUMBER_OR_NULL, dir=RELATIVE_PATH, n=COUNT,
                     metrics={"type": "object", "additionalProperties": SUMMARY},
                     representative=RELATIVE_PATH))))

# A step's change against another (stats.Change with `significant`): an interval has both ends.
_CHANGE = {**obj(change_pct=NUMBER_OR_NULL, ci_low_pct=NUMBER_OR_NULL, ci_high_pct=NUMBER_OR_NULL,
                 p_value=NUMBER_OR_NULL, significant={"type": "boolean"}),
           "allOf": [{"if": obj(("p_value",), p_value=NUMBER), "then": obj(("significant",))},
                     {"if": obj(("ci_low_pct",), ci_low_pct=NUMBER),
                      "then": obj(("ci_high_pct",), ci_high_pct=NUMBER)}]}
_STEP = obj(("step", "name", "runs", "hive_ms"), step=COUNT, name=STRING, what=STRING, options=STRINGS, runs=COUNT,
            hive_ms=NUMBER_OR_NULL, cycle_ms=obj(("mean",), mean=NUMBER, ci_low=NUMBER_OR_NULL, ci_high=NUMBER_OR_NULL),
            writer_share={"type": "object", "additionalProperties": NUMBER}, tx_per_block=NUMBER,
            cpu_utilization=NUMBER, vs_previous=_CHANGE, vs_start=_CHANGE,
            **{ladders.CPU_KEY: obj(("mean",), mean=NUMBER, ci_low=NUMBER_OR_NULL, ci_high=NUMBER_OR_NULL),
               ladders.CPU_VS_PREVIOUS: _CHANGE},
            instructions=obj(("ir_per_tx", "state_digest"), ir_per_tx=NUMBER, est_per_tx=NUMBER, mem_ns_per_tx=NUMBER,
                             state_digest=STRING))
# ladder.json, as the ladder writes it and report-html reads it back (one without kind and
# version is from before they were written): each run's report is a path inside its directory.
_LADDER = obj(("meta", "steps"),
              meta=obj(("mode", "runs", "alpha", "machine", "load_before"), mode=STRING, runs=COUNT, alpha=NUMBER,
                       machine=STRING, load_before=STRING, extra_args=STRINGS),
              steps=array(_STEP, minItems=1),
              runs=array(obj(("path",), path=RELATIVE_PATH, label=STRING, status=STRING_OR_NULL)))


def _ladder_steps(data: Any) -> str | None:
    """The steps in increasing order, each at most once (--steps runs some)."""
    for i, step in enumerate(data["steps"]):
        if not step["step"] <= len(ladders.STEPS) or (i and step["step"] <= data["steps"][i - 1]["step"]):
            return (f"steps[{i}].step: {step['step']}, expected steps in increasing order from 0 to "
                    f"{len(ladders.STEPS)}")
    return None


# soak.json, as the soak's analysis writes it and report-html reads it back.
_SOAK = obj(
    ("records", "blocks", "wall_s", "transactions", "peak_rss_bytes", "steady_from_block", "records_after_windows",
     "comments_paid", "state_end", "rc", "series"),
    records={"type": "integer", "minimum": 2}, blocks=COUNT,
    wall_s=NONNEG, transactions=COUNT, peak_rss_bytes=COUNT, report_peak_rss_bytes={"type": ["integer", "null"]},
    cashout_blocks={"type": ["integer", "null"]}, steady_from_block=NONNEG, records_after_windows=COUNT,
    comments_paid=COUNT, state_end={"type": "object", "additionalProperties": {"anyOf": [PAIR, COUNT]}},
    rss_after_windows=obj(("min_bytes", "max_bytes"), min_bytes=COUNT, max_bytes=COUNT),
    cycle_early_late=obj(("records", "early_mean_us", "late_mean_us", "change_pct", "mann_whitney_p"),
                         records=COUNT, early_mean_us=NUMBER, late_mean_us=NUMBER, change_pct=NUMBER,
                         mann_whitney_p=NUMBER),
    report=obj(("status", "cycle_median_us", "cycle_max_us", "cycle_max_block"), status={"type": "string"},
               cycle_median_us=NUMBER_OR_NULL, cycle_max_us=NUMBER_OR_NULL,
               cycle_max_block={"type": ["integer", "null"]}),
    rc=obj(("pools", "low_mana_share_max", "low_mana_share_end", "rejected", "rejected_per_block_max"),
           pools={"type": "object", "additionalProperties": obj(("start", "end", "min"), start=NUMBER, end=NUMBER,
                                                                min=NUMBER)},
           low_mana_share_max=NUMBER_OR_NULL, low_mana_share_end=NUMBER_OR_NULL, rejected=COUNT,
           rejected_per_block_max=NUMBER),
    series={**obj(soaks.SERIES, rc_levels=array(array(NUMBER, minItems=1, maxItems=4))),
            "additionalProperties": array(NUMBER_OR_NULL)},
    **{f"{name}_slope_{part}": NUMBER for name in ("rss", "state_bytes", "cycle_mean_us")
       for part in ("per_1000_blocks", "stderr")})


def _soak_series(a: Any) -> str | None:
    """Every series as long as the others."""
    lengths = {name: len(a["series"][name]) for name in soaks.SERIES}
    if len(set(lengths.values())) > 1:
        return f"series: of different lengths ({', '.join(f'{k} {n}' for k, n in lengths.items())})"
    if len({len(row) for row in a["series"]["rc_levels"]}) > 1:
        return "series.rc_levels: rows of different lengths"
    return None


def _aggregate(data: Any) -> str | None:
    return problem(reports.aggregate_schema(), data)


# ---- the table --------------------------------------------------------------------------------

RUN = Kind("run", None, None, "", "apiary run")
MULTIRUN = Kind("multirun", reports.AGGREGATE_KIND, reports.AGGREGATE_VERSION, reports.AGGREGATE_NAME, "multirun",
                check=_aggregate)
COMPARISON = Kind("compare", "apiary-compare", 1, "comparison.json", "compare", body=_COMPARISON)
SWEEP = Kind("sweep", "apiary-sweep", 1, "sweep.json", "sweep", body=_SWEEP, refuse_others=True)
LADDER = Kind("ladder", "apiary-ladder", 1, "ladder.json", "ladder", body=_LADDER, check=_ladder_steps)
SOAK = Kind("soak", "apiary-soak", 1, "soak.json", "soak", body=_SOAK, check=_soak_series)
PERF_GATE = Kind("perf-gate", "apiary-perf-gate", 1, "", "perf-gate")
MAXRATE = Kind("maxrate", "apiary-find-max-rate", 1, "maxrate.json", "find-max-rate")
RC_TUNE = Kind("rc-tune", "apiary-rc-tune", 1, "trials.json", "rc-tune")
BISECT = Kind("bisect", "apiary-bisect", 1, "bisect.json", "bisect")

KINDS = (RUN, MULTIRUN, COMPARISON, SWEEP, LADDER, SOAK, PERF_GATE, MAXRATE, RC_TUNE, BISECT)
