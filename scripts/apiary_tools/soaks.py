"""A soak's results as people read them: soak.md's table (to_markdown) and soak.png (plot),
from the analysis the soak command writes as soak.json (its schema is kinds.SOAK's, its series
named in SERIES here). The soak command (commands/soak.py) runs and analyses; report-html shows
a soak.json with these.

Floor: results. Thread safety: constants and pure functions; plot draws with matplotlib, which
is not thread-safe.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .common import markdown_table
from .outputs import write_figure

# A soak's directory: soak.json (kinds.SOAK) beside the run's report and its interval log.
RUN_REPORT = "report.json"
INTERVAL_LOG = "intervals.jsonl"
# What the harness keeps per block for the report (queen::block_record), whatever the state does.
BLOCK_RECORD_BYTES = 112
RC_RESOURCES = ("history_bytes", "market_bytes", "state_bytes", "execution_time")
MIB = 1024 * 1024
SERIES = ("block", "t_s", "rss", "state_bytes", "comments", "votes", "transactions", "cycle_mean", "cycle_max",
          "low_mana", "rc_rejected_per_block", "rc_levels", "comments_paid")


def _slope_row(a: dict, name: str, label: str, unit: float, unit_name: str) -> list[str] | None:
    key = f"{name}_slope_per_1000_blocks"
    if key not in a:
        return None
    stderr = a.get(f"{name}_slope_stderr") or 0.0
    return [label, f"{a[key] / unit:+,.3f} {unit_name} (± {stderr / unit:,.3f})"]


def to_markdown(a: dict) -> str:
    rows = [["blocks", f"{a['blocks']:,}"], ["transactions in blocks", f"{a['transactions']:,}"],
            ["wall time", f"{a['wall_s'] / 60:,.1f} min"],
            ["peak RSS (interval records)", f"{a['peak_rss_bytes'] / MIB:,.1f} MiB"]]
    if a.get("report_peak_rss_bytes"):
        rows.append(["peak RSS (getrusage)", f"{a['report_peak_rss_bytes'] / MIB:,.1f} MiB"])
    if a.get("cashout_blocks"):
        rows.append(["cashout window", f"{a['cashout_blocks']:,} blocks; {a['comments_paid']:,} comments paid"])
    rows.append(["after the windows",
                 f"from block {a['steady_from_block']:,.0f} ({a['records_after_windows']} records)"])
    if "rss_after_windows" in a:
        r = a["rss_after_windows"]
        rows.append(["RSS after the windows", f"{r['min_bytes'] / MIB:,.1f} to {r['max_bytes'] / MIB:,.1f} MiB"])
    for row in (_slope_row(a, "rss", "RSS slope after the windows, per 1,000 blocks", MIB, "MiB"),
                _slope_row(a, "state_bytes", "state bytes slope after the windows, per 1,000 blocks", MIB, "MiB"),
                _slope_row(a, "cycle_mean_us", "mean cycle slope after the windows, per 1,000 blocks", 1, "µs")):
        if row:
            rows.append(row)
    rows.append(["per-block records the harness keeps", f"{BLOCK_RECORD_BYTES * 1000 / MIB:,.3f} MiB per 1,000 blocks"])
    c = a.get("cycle_early_late")
    if c:
        rows.append([f"mean cycle, first / last {c['records']} records after the windows",
                     f"{c['early_mean_us'] / 1000:,.2f} / {c['late_mean_us'] / 1000:,.2f} ms "
                     f"({c['change_pct']:+.1f}%, Mann-Whitney p = {c['mann_whitney_p']:.3g})"])
    r = a.get("report") or {}
    if r.get("cycle_median_us") is not None:
        rows.append(["cycle median (report)", f"{r['cycle_median_us'] / 1000:,.2f} ms"])
    if r.get("cycle_max_us") is not None and r.get("cycle_max_block") is not None:
        rows.append(["slowest cycle (report)", f"{r['cycle_max_us'] / 1000:,.1f} ms at block {r['cycle_max_block']:,}"])
    rc = a["rc"]
    pools = ", ".join(f"{k} {v['start']:.3f} → {v['end']:.3f} (min {v['min']:.3f})" for k, v in rc["pools"].items())
    rows.append(["RC pool levels (pool / equilibrium)", pools])
    low, end = rc["low_mana_share_max"], rc["low_mana_share_end"]
    rows.append(["accounts under 10% RC", "-" if low is None else f"at most {low:.1%}" +
                 ("" if end is None else f", {end:.1%} at the end")])
    rows.append(["RC rejections", f"{rc['rejected']:,} (at most {rc['rejected_per_block_max']:,.1f} per block)"])
    st = a["state_end"]
    rows.append(["state at the end", ", ".join(f"{k} {v[0]:,}" for k, v in st.items() if isinstance(v, list))])
    return markdown_table(["", "value"], rows, "lr") + "\n"


def plot(a: dict, path: Path) -> None:
    import matplotlib  # lazy for start-up time: only the figure needs it
    import matplotlib.ticker
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    s = {k: np.array(v, dtype=float) for k, v in a["series"].items()}
    x = s["block"] / 1000
    fig, ax = plt.subplots(5, 1, figsize=(9, 13), sharex=True)
    ax[0].plot(x, s["rss"] / MIB, label="RSS")
    ax[0].plot(x, s["state_bytes"] / MIB, label="state objects (census)")
    ax[0].set_ylabel("MiB")
    ax[0].set_title("Soak: memory, state, cycle and resource credits over the run")
    for key in ("comments", "votes", "transactions"):
        ax[1].plot(x, s[key] / 1000, label=key)
    ax[1].set_ylabel("objects (thousands)")
    ax[2].plot(x, s["cycle_mean"] / 1000, label="mean per interval")
    ax[2].plot(x, s["cycle_max"] / 1000, lw=0.6, alpha=0.6, label="slowest per interval")
    ax[2].set_yscale("log")
    ax[2].yaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
    ax[2].yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax[2].set_ylabel("full cycle (ms)")
    for i, name in enumerate(RC_RESOURCES[:s["rc_levels"].shape[1]]):
        ax[3].plot(x, s["rc_levels"][:, i], label=name)
    ax[3].set_ylabel("RC pool / equilibrium")
    ax[4].plot(x, s["low_mana"] * 100, label="accounts under 10% RC (%)")
    ax[4].plot(x, s["rc_rejected_per_block"], label="RC rejections per block")
    ax[4].set_xlabel("block (thousands)")
    for a_ in ax:
        a_.grid(alpha=0.3)
        a_.legend(fontsize=8, loc="best")
        if a.get("steady_from_block"):
            a_.axvline(a["steady_from_block"] / 1000, color="grey", ls=":", lw=1)
    fig.tight_layout()
    try:
        write_figure(fig, path, 100)
    finally:
        plt.close(fig)
