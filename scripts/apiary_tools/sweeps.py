"""A sweep's results as people read them: sweep.md's table (one row per value, the cycle and
the cost per transaction with their 95% CIs, and both relative to the first value) and the
sweep's figures again from its sweep.json (its schema is kinds.SWEEP's). The sweep command
(commands/sweep.py) runs the values and writes both; plot --sweep and report-html redraw them.

Floor: results. Thread safety: none; the figures are drawn by one thread (figures.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import figures, kinds, metrics
from .common import fmt_metric, markdown_table
from .reports import load_report


def sweep_series(sweep: dict[str, Any], base: Path) -> list[tuple[str, dict[str, Any]]]:
    """Each value's representative run, as many as fit in one figure."""
    out = []
    for p in sweep["points"]:
        if p.get("representative"):
            report_path = base / p["representative"]
            if report_path.is_file():
                out.append((f"--{sweep['param']} {p['value']}", load_report(report_path)))
    return out[:figures.MAX_PANELS]


def plot_sweep_dir(sweep_path: Path, out: Path) -> list[Path]:
    """The sweep's figures from its sweep.json, into `out`: the files written."""
    sweep = kinds.SWEEP.read(sweep_path)
    written = [figures.sweep_figure(sweep, out / f"sweep-{sweep['param']}.png")]
    series = sweep_series(sweep, sweep_path.parent)
    if series:
        written.append(figures.cycle_over_run(series, out / f"sweep-{sweep['param']}-cycle-over-run.png"))
        written.append(figures.cycle_histogram(series, out / f"sweep-{sweep['param']}-cycle-histogram.png"))
    return written


TABLE_NAME = "sweep.md"
# The metrics the table shows per value, after the cycle and µs per transaction with their CIs.
TABLE_METRICS = ("aggregates.cycle_us.median", "aggregates.cycle_us.p99", "aggregates.transactions_per_block.avg",
                 "aggregates.processing_us.avg", "throughput.tx_per_s", "cpu.utilization",
                 "writer.wait_work_share", "writer.unknown_share")


def _with_ci(name: str, s: dict[str, Any] | None) -> str:
    if not s:
        return "–"
    text = fmt_metric(name, s["mean"])
    if s.get("ci_low") is not None:
        text += f" ({fmt_metric(name, s['ci_low'])} … {fmt_metric(name, s['ci_high'])})"
    return text


def table_markdown(sweep: dict[str, Any], heading: str = "##") -> str:
    """One row per value: the mean of each metric over the runs, the cycle and the cost per
    transaction with their 95% CIs, and both relative to the first value."""
    pts = sweep["points"]
    param = sweep["param"]
    first = next((p for p in pts if p["n"]), None)
    header = ["--" + param, "runs", "cycle avg µs (95% CI)", "µs per tx (95% CI)"] + \
             [metrics.SHORT_NAMES.get(m, m) for m in TABLE_METRICS] + ["cycle ×", "µs per tx ×"]
    rows = []
    for p in pts:
        m = p["metrics"]
        row = [p["value"], str(p["n"]), _with_ci("aggregates.cycle_us.avg", m.get("aggregates.cycle_us.avg")),
               _with_ci("us_per_tx", m.get("us_per_tx"))]
        row += [fmt_metric(name, m[name]["mean"]) if name in m else "–" for name in TABLE_METRICS]
        for name in ("aggregates.cycle_us.avg", "us_per_tx"):
            if first and name in m and name in first["metrics"] and first["metrics"][name]["mean"]:
                row.append(f"{m[name]['mean'] / first['metrics'][name]['mean']:.2f}")
            else:
                row.append("–")
        rows.append(row)
    ctx = sweep.get("context", {})
    lines = [f"{heading} Sweep of `--{param}`", ""]
    lines.append(f"- {ctx.get('build_type', '?')} build, commit {ctx.get('commit', '?')}, "
                 f"{ctx.get('cpu_model', '?')}, {ctx.get('cores', '?')} cores")
    lines.append(f"- run arguments: `{' '.join(sweep.get('run_args', [])) or '(defaults)'}`; "
                 f"{sweep.get('runs_per_value')} runs per value, round-robin")
    before, after = sweep.get("load_avg_before"), sweep.get("load_avg_after")
    if before or after:
        lines.append(f"- load average (1, 5, 15 min): {' '.join(map(str, before or []))} before, "
                     f"{' '.join(map(str, after or []))} after")
    lines.append("- values are means over the runs; 95% CI: Student's t interval; "
                 "×: relative to the first value")
    lines += ["", markdown_table(header, rows)]
    return "\n".join(lines)
