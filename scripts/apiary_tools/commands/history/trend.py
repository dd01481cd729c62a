"""`scripts/history trend`: one self-contained HTML page of each metric over commits, the change
points marked (docs/history.md#the-trend-page). The figures are matplotlib's SVG written into
the page itself (no image files, nothing loaded from anywhere, no script), beside a table of
the change points; the page is pages.py's, so it looks like the other tools' pages.
"""

from __future__ import annotations

import html
import io
from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)

from ... import gate, ladders  # noqa: E402
from ... import metrics as metrics_mod  # noqa: E402
from ...common import fmt_number, markdown_table  # noqa: E402
from ...history_detect import ChangePoint, Series  # noqa: E402
from ...pages import Page  # noqa: E402

# The metrics the page draws unless --metric names one: the key ones (the writer's CPU time among
# them), the gate's, and a ladder step's cycle and writer's CPU time.
TREND_METRICS = frozenset(metrics_mod.KEY_METRICS) | {c.per_tx_key for c in gate.GATE_COSTS} | {
    "instructions.ir_per_tx", "cycle_ms.mean", f"{ladders.CPU_KEY}.mean"}
MAX_TICKS = 30


def figure_svg(s: Series, points: Sequence[ChangePoint]) -> str:
    """The series as an inline <svg>: each commit's value, each segment's mean, the change
    points as vertical lines."""
    fig, ax = plt.subplots(figsize=(11, 3.6))
    x = list(range(len(s.values)))
    ax.plot(x, s.values, marker="o", markersize=3, linewidth=0.8, color="#4060a0", label="mean of the commit's results")
    bounds = [0, *(cp.index for cp in points), len(s.values)]
    for start, end in zip(bounds, bounds[1:], strict=False):
        segment = s.values[start:end]
        ax.hlines(sum(segment) / len(segment), start - 0.4, end - 0.6, colors="#d08000", linewidth=2)
    for cp in points:
        ax.axvline(cp.index - 0.5, color="#c03030", linestyle="--", linewidth=1.2)
        pct = cp.change.change_pct
        ax.annotate(f"{cp.commit[:10]} {pct:+.1f}%" if pct is not None else cp.commit[:10],
                    (cp.index - 0.5, 1.0), xycoords=("data", "axes fraction"), ha="left", va="top",
                    fontsize=8, color="#c03030")
    step = max(1, len(x) // MAX_TICKS)
    ax.set_xticks(x[::step], [c[:8] for c in s.commits[::step]], rotation=60, fontsize=7)
    ax.set_xlabel("commit (oldest first)")
    ax.set_ylabel(s.metric)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    buf = io.StringIO()
    fig.savefig(buf, format="svg")
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):]


def _table(points: Sequence[ChangePoint]) -> str:
    rows = []
    for cp in points:
        d = cp.to_dict()
        ci = "" if d["ci_low_pct"] is None else f"{d['ci_low_pct']:+.1f}% … {d['ci_high_pct']:+.1f}%"
        rows.append([d["commit"], fmt_number(d["mean_before"]), fmt_number(d["mean_after"]),
                     f"{d['change_pct']:+.1f}%", ci, f"{d['p_value']:.2g}"])
    return markdown_table(["change at", "mean before", "mean after", "change", "95% interval (Welch)", "p"], rows)


def page(series: Sequence[Series], points: dict[int, list[ChangePoint]], source: str) -> str:
    p = Page("apiary results over commits", f"{source}; {len(series)} series", tool="history trend")
    for s in series:
        found = points[id(s)]
        p.heading(f"{s.metric} ({s.kind}, configuration {(s.config or '-')[:10]})")
        name = html.escape(metrics_mod.SHORT_NAMES.get(s.metric, s.metric))
        p.parts.append(f"<figure>{figure_svg(s, found)}<figcaption>{name}: "
                       f"{len(s.commits)} commits, {sum(s.counts)} results; dashed lines: change points, "
                       "orange: each segment's mean</figcaption></figure>")
        p.markdown(_table(found) if found else "No change point.")
    return p.render()
