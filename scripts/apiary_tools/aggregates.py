"""A multirun set's aggregate: aggregate.json's content (every run's value of every metric and
their statistics, the latency pooled over the runs) and summary.md's Markdown (key metrics
first, then latency, counters and the rest). runner.write_set writes both; multirun,
sweep and report-html show them. The file's kind, name and schema are reports.py's (AGGREGATE_*),
listed in kinds.MULTIRUN.

Floor: data. Thread safety: pure functions of their arguments.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from . import latency, metrics, stats
from .common import fmt_metric, fmt_number, markdown_table, utc_iso
from .reports import AGGREGATE_KIND, AGGREGATE_VERSION, RunSet

SUMMARY_NAME = "summary.md"


def _relative(path: str | None, base: Path | None) -> str | None:
    if path is None or base is None:
        return path
    try:
        return os.path.relpath(path, base)
    except ValueError:
        return path


def aggregate(rs: RunSet, extra: dict[str, Any] | None = None, base: Path | None = None) -> dict[str, Any]:
    """The aggregate file's content: each run's value of each metric and their statistics.
    Run paths are relative to `base` (the aggregate's directory) so the directory can move."""
    per_metric = {}
    for name in rs.metric_names():
        indices = [i for i, run in enumerate(rs.runs) if name in run.metrics]
        values = [rs.runs[i].metrics[name] for i in indices]
        entry = stats.summarize_sample(values).to_dict()
        entry["values"] = values
        if len(indices) != rs.n:
            entry["runs"] = indices
        per_metric[name] = entry
    data = {
        "kind": AGGREGATE_KIND,
        "version": AGGREGATE_VERSION,
        "label": rs.label,
        "created": utc_iso(),
        "sources": rs.sources,
        "n_runs": rs.n,
        "runs": [dict(run.info, path=_relative(run.path, base)) for run in rs.runs],
        "skipped": rs.skipped,
        "include_invalid": rs.include_invalid,   # whether runs marked invalid were counted
        "context": rs.context,
        "config": rs.config,
        "config_differences": rs.config_differences(),
        "metrics": per_metric,
    }
    section = rs.latency_section()
    if section is not None:
        data["latency"] = section
    if extra:
        data.update(extra)
    return data


def _ci(entry: dict[str, Any], name: str) -> str:
    if entry.get("ci_low") is None:
        return "–"
    return f"{fmt_metric(name, entry['ci_low'])} … {fmt_metric(name, entry['ci_high'])}"
LATENCY_COLUMNS = (("mean_us", "mean"), ("p50_us", "p50"), ("p90_us", "p90"), ("p99_us", "p99"),
                   ("p999_us", "p99.9"), ("max_us", "max"))


def latency_markdown(agg: dict[str, Any]) -> list[str]:
    """The pooled latency table: each stage's percentiles over all the runs' transactions (the
    runs' histograms merged), or nothing when the reports have no latency (schema_version 1)."""
    section = agg.get("latency")
    if not section:
        return []
    n = len(section["runs"])
    of = "" if n == agg["n_runs"] else f" ({agg['n_runs'] - n} of the {agg['n_runs']} runs have no latency)"
    rows = []
    for name in latency.SHOWN_STAGES:
        s = section["pooled"].get(name)
        if s:
            rows.append([latency.STAGE_LABELS[name], fmt_number(s["count"])]
                        + [fmt_number(s[key]) for key, _ in LATENCY_COLUMNS])
    header = ["stage", "transactions"] + [f"{title} (µs)" for _, title in LATENCY_COLUMNS]
    return [f"Transaction latency, pooled over {n} runs' histograms{of}:", "",
            markdown_table(header, rows)]


def counters_markdown(agg: dict[str, Any]) -> list[str]:
    """Each thread's counts per transaction and its instructions per cycle over the runs
    (`apiary run --counters on`), or nothing."""
    names = metrics.per_transaction_counters(agg["metrics"])
    if not names:
        return []
    rows = []
    for name in names:
        e = agg["metrics"][name]
        thread, _, event = metrics.counter_parts(name) or ("", "", name)
        rows.append([thread, event, fmt_metric(name, e["mean"]), _ci(e, name), fmt_metric(name, e["min"]),
                     fmt_metric(name, e["max"]), str(e.get("n", len(e["values"])))])
    return ["Counters per transaction (`apiary run --counters on`; each thread's own):", "",
            markdown_table(["thread", "counter", "mean", "95% CI", "min", "max", "runs"], rows, "llrrrrr")]


def summary_markdown(agg: dict[str, Any], show_all: bool = True, heading: str = "##") -> str:
    """Key metrics first (cycle, per transaction, throughput, writer shares, CPU), then the rest."""
    ctx, cfg = agg.get("context", {}), agg.get("config", {})
    lines = [f"{heading} {agg['label']}: {agg['n_runs']} runs of `{cfg.get('name', '?')}`", ""]
    lines.append(f"- {ctx.get('build_type', '?')} build, commit {ctx.get('commit', '?')}, "
                 f"{ctx.get('cpu_model', '?')}, {ctx.get('cores', '?')} cores, host {ctx.get('hostname', '?')}")
    loads = [r.get("load_avg_before") for r in agg.get("runs", []) if r.get("load_avg_before")]
    if loads:
        lines.append(f"- load average (1 min) before the runs: {min(load[0] for load in loads):.2f} … "
                     f"{max(load[0] for load in loads):.2f}")
    for s in agg.get("skipped", []):
        lines.append(f"- skipped {s['path']}: {s['reason']}")
    for key, values in agg.get("config_differences", {}).items():
        lines.append(f"- warning: the runs differ in `{key}`: {values}")
    lines += ["- 95% CI: Student's t interval of the mean; stddev: sample (n − 1)", ""]
    header = ["metric", "mean", "95% CI", "median", "stddev", "min", "max"]

    def row(name):
        e = agg["metrics"][name]
        return [metrics.label(name), fmt_metric(name, e["mean"]), _ci(e, name), fmt_metric(name, e["median"]),
                fmt_metric(name, e["stddev"]), fmt_metric(name, e["min"]), fmt_metric(name, e["max"])]

    names = metrics.ordered(agg["metrics"])
    key = [n for n in names if n in metrics.KEY_METRICS]
    lines.append(markdown_table(header, [row(n) for n in key]))
    lines += latency_markdown(agg)
    lines += counters_markdown(agg)
    if show_all:
        counters = set(metrics.per_transaction_counters(names))
        rest = [n for n in names if n not in metrics.KEY_METRICS and n not in counters]
        lines += ["<details><summary>All other metrics</summary>", "",
                  markdown_table(header, [row(n) for n in rest]), "</details>", ""]
    return "\n".join(lines)
