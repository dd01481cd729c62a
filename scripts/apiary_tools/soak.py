"""Soak test: a Hive-scale cycle run (about 2,000 full 2 MB blocks, ~14.5 million
transactions) with the process's resident memory sampled while it runs.

What it answers: does memory grow with the chain (and by how much per 1,000 blocks), what is
the peak, and is the full cycle slower at the end of the run than at its start.

- RSS is read from /proc/<pid>/status (VmRSS) every --interval seconds. Each sample is placed
  on the block axis afterwards from the report: a block's time since the process started is
  genesis + colony start + its completion on the writer's clock.
- Growth per 1,000 blocks: the least-squares slope of RSS against block number (scipy's
  linregress), over the blocks after the first tenth (genesis and warm-up allocate once).
- Start against end: the full-cycle times of the first and the last --window measured blocks,
  their means and medians, and a Mann-Whitney U test on whether they differ.

Ctrl-C stops the run (apiary writes its report, marked interrupted) and what was sampled is
still analysed and written. Exit status: 0 done, 1 the run failed, 2 bad usage, 130 interrupted.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Sequence

import numpy as np
from scipy import stats as sps

from . import fleet
from .common import (EXIT_FAILED, EXIT_OK, EXIT_SIGINT, REPO_ROOT, Parser, ToolError, check_apiary, default_apiary,
                     markdown_table, read_json, run_main, utc_stamp, write_json, write_text)

# Blocks after which the first transactions expire: Hive's 3,600-second limit, 3-second slots.
EXPIRY_BLOCKS = 1200


def read_rss_bytes(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except (FileNotFoundError, ProcessLookupError):
        return None
    return None


def block_times_s(report: dict) -> tuple[np.ndarray, np.ndarray]:
    """Each block's number and its completion time since the process started, in seconds."""
    timing = report["timing"]
    offset = (timing["genesis_ms"] + timing["colony_start_ms"]) / 1000
    nums = np.array([b["num"] for b in report["blocks"]], dtype=float)
    times = np.array([offset + b["completed_ms"] / 1000 for b in report["blocks"]], dtype=float)
    return nums, times


def analyse(report: dict, samples: list[tuple[float, int]], window: int) -> dict:
    nums, times = block_times_s(report)
    t = np.array([s[0] for s in samples])
    rss = np.array([s[1] for s in samples], dtype=float)
    out: dict = {"samples": len(samples), "peak_rss_bytes": int(rss.max()) if len(rss) else None,
                 "report_peak_rss_bytes": report.get("peak_rss_bytes"), "blocks": len(nums)}
    if len(nums) >= 2 and len(rss) >= 2:
        # The block each sample falls in (before the first block: block 0).
        at_block = np.interp(t, times, nums, left=0.0, right=nums[-1])
        keep = at_block >= nums[-1] * 0.1
        if keep.sum() >= 2 and np.ptp(at_block[keep]) > 0:
            fit = sps.linregress(at_block[keep], rss[keep])
            out["rss_growth_bytes_per_1000_blocks"] = fit.slope * 1000
            out["rss_growth_stderr_per_1000_blocks"] = fit.stderr * 1000
        # Transaction ids stay in the dedup index until they expire, an hour (1,200 blocks)
        # after their head block: until then the index grows by design. After it, growth is
        # what a leak would look like.
        steady = at_block >= EXPIRY_BLOCKS + 100
        if steady.sum() >= 10 and np.ptp(at_block[steady]) > 0:
            fit = sps.linregress(at_block[steady], rss[steady])
            out["rss_growth_after_expiry_bytes_per_1000_blocks"] = fit.slope * 1000
            out["rss_growth_after_expiry_stderr_per_1000_blocks"] = fit.stderr * 1000
        for mark in (100, 1000, 2000):
            if nums[-1] >= mark:
                out[f"rss_at_block_{mark}_bytes"] = int(np.interp(mark, at_block, rss))
        out["rss_series"] = [[round(float(b), 1), int(r)] for b, r in zip(at_block, rss)]
    cycles = [b["cycle_us"] for b in report["blocks"] if not b["warmup"] and b["cycle_us"] is not None]
    if len(cycles) >= 2 * window:
        first, last = np.array(cycles[:window]), np.array(cycles[-window:])
        p = sps.mannwhitneyu(first, last, alternative="two-sided").pvalue
        out["cycle_start_end"] = {
            "window_blocks": window,
            "start_mean_us": float(first.mean()), "start_median_us": float(np.median(first)),
            "end_mean_us": float(last.mean()), "end_median_us": float(np.median(last)),
            "change_pct": float((last.mean() / first.mean() - 1) * 100), "mann_whitney_p": float(p)}
    out["cycle_us"] = cycles
    return out


def to_markdown(a: dict, report: dict) -> str:
    mib = 1024 * 1024
    rows = [["blocks measured", f"{report['aggregates']['measured_blocks']:,}"],
            ["transactions in blocks", f"{report['ledger']['in_blocks']:,}"],
            ["peak RSS (sampled every interval)", f"{a['peak_rss_bytes'] / mib:,.1f} MiB" if a.get("peak_rss_bytes") else "-"],
            ["peak RSS (getrusage)", f"{a['report_peak_rss_bytes'] / mib:,.1f} MiB"]]
    for mark in (100, 1000, 2000):
        if f"rss_at_block_{mark}_bytes" in a:
            rows.append([f"RSS at block {mark:,}", f"{a[f'rss_at_block_{mark}_bytes'] / mib:,.1f} MiB"])
    if "rss_growth_bytes_per_1000_blocks" in a:
        rows.append(["RSS growth per 1,000 blocks",
                     f"{a['rss_growth_bytes_per_1000_blocks'] / mib:+,.1f} MiB "
                     f"(± {a['rss_growth_stderr_per_1000_blocks'] / mib:,.2f})"])
    if "rss_growth_after_expiry_bytes_per_1000_blocks" in a:
        rows.append([f"RSS growth per 1,000 blocks after block {EXPIRY_BLOCKS + 100:,} (ids expiring)",
                     f"{a['rss_growth_after_expiry_bytes_per_1000_blocks'] / mib:+,.1f} MiB "
                     f"(± {a['rss_growth_after_expiry_stderr_per_1000_blocks'] / mib:,.2f})"])
    c = a.get("cycle_start_end")
    if c:
        rows.append([f"full cycle, first {c['window_blocks']} blocks", f"{c['start_mean_us'] / 1000:,.1f} ms mean, "
                     f"{c['start_median_us'] / 1000:,.1f} ms median"])
        rows.append([f"full cycle, last {c['window_blocks']} blocks", f"{c['end_mean_us'] / 1000:,.1f} ms mean, "
                     f"{c['end_median_us'] / 1000:,.1f} ms median"])
        rows.append(["end vs start", f"{c['change_pct']:+.1f}% (Mann-Whitney p = {c['mann_whitney_p']:.3g})"])
    return markdown_table(["", "value"], rows, "lr") + "\n"


def plot(a: dict, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 6.5), sharex=True)
    series = a.get("rss_series", [])
    if series:
        top.plot([s[0] for s in series], [s[1] / (1024 * 1024) for s in series], lw=1.2)
    top.set_ylabel("RSS (MiB)")
    top.set_title("Soak: resident memory and full cycle time over the run")
    top.grid(alpha=0.3)
    cycles = np.array(a.get("cycle_us", []), dtype=float) / 1000
    if len(cycles):
        x = np.arange(1, len(cycles) + 1)
        bottom.plot(x, cycles, lw=0.5, alpha=0.5, label="per block")
        w = min(50, len(cycles))
        smooth = np.convolve(cycles, np.ones(w) / w, mode="valid")
        bottom.plot(x[w - 1:], smooth, lw=1.5, label=f"mean of {w}")
        bottom.legend()
    bottom.set_xlabel("block")
    bottom.set_ylabel("full cycle (ms)")
    bottom.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def parser() -> Parser:
    p = Parser(prog="soak", description=(
        "Runs a Hive-scale cycle test (default: 2,000 full 2 MB blocks) and samples the process's RSS; "
        "writes the report, soak.json, soak.md and soak.png with peak RSS, its growth per 1,000 blocks and "
        "the full cycle at the start against the end."),
        epilog="Extra arguments after -- go to `apiary run`. Exit status: 0 done, 1 the run failed, "
               "2 bad usage, 130 interrupted (what was sampled is still written).")
    p.add_argument("--apiary", type=Path, default=None, help="the apiary binary (default: $APIARY_BIN, else the release build)")
    p.add_argument("--blocks", type=int, default=2000, help="measured blocks (default: 2000)")
    p.add_argument("--config", type=Path, default=REPO_ROOT / "configs" / "default.toml",
                   help="the run's config (default: configs/default.toml)")
    p.add_argument("--interval", type=float, default=1.0, help="seconds between RSS samples (default: 1)")
    p.add_argument("--window", type=int, default=100, help="blocks compared at the start and the end (default: 100)")
    p.add_argument("--out", type=Path, default=None, help="output directory (default: results/soak-<time>)")
    p.add_argument("extra", nargs="*", help="more `apiary run` arguments (after --)")
    fleet.add_options(p)  # --cluster: the run, and its RSS sampling, on one worker of the cluster
    return p


def _main(argv: Sequence[str]) -> int:
    args = parser().parse_args(argv)
    if args.blocks <= 0 or args.interval <= 0 or args.window <= 0:
        raise ToolError("--blocks, --interval and --window must be above 0")
    if not args.config.is_file():
        raise ToolError(f"--config {args.config}: no such file")
    binary = check_apiary(args.apiary or default_apiary())
    out = args.out or REPO_ROOT / "results" / f"soak-{utc_stamp()}"
    out.mkdir(parents=True, exist_ok=True)
    report_path = out / "report.json"
    cmd = [str(binary), "run", "--config", str(args.config), "--blocks", str(args.blocks), "--name", "soak",
           "--report", str(report_path), *args.extra]
    print(f"soak: {' '.join(cmd)}", file=sys.stderr)
    # Its own process group: a Ctrl-C reaches only us, and we forward exactly one SIGINT.
    backend = fleet.ClusterBackend.from_args(args)
    proc = fleet.RemoteProcess(backend, cmd, args.interval) if backend else \
        subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, start_new_session=True)
    samples: list[tuple[float, int]] = []
    interrupted = False

    def on_signal(signum, frame):
        nonlocal interrupted
        interrupted = True
        proc.send_signal(signal.SIGINT)

    old = signal.signal(signal.SIGINT, on_signal)
    t0 = time.monotonic()
    last_note = t0
    try:
        while proc.poll() is None:
            rss = read_rss_bytes(proc.pid)
            now = time.monotonic()
            if rss is not None:
                samples.append((now - t0, rss))
            if now - last_note >= 60:
                print(f"soak: {now - t0:,.0f} s, RSS {rss / 2**20 if rss else 0:,.1f} MiB", file=sys.stderr)
                last_note = now
            time.sleep(args.interval)
    finally:
        signal.signal(signal.SIGINT, old)
    samples = samples or getattr(proc, "rss_samples", [])  # --cluster: sampled on the worker
    summary = proc.stdout.read() if proc.stdout else ""
    write_text(out / "summary.txt", summary)
    if not report_path.exists():
        raise ToolError(f"the run wrote no report (exit {proc.returncode}); its output is in {out / 'summary.txt'}",
                        EXIT_FAILED)
    report = read_json(report_path)
    a = analyse(report, samples, args.window)
    a["command"] = cmd
    a["exit_code"] = proc.returncode
    write_json(out / "soak.json", a)
    md = to_markdown(a, report)
    write_text(out / "soak.md", md)
    plot(a, out / "soak.png")
    print(md)
    print(f"soak: written to {out}", file=sys.stderr)
    if interrupted or proc.returncode in (130, 143):
        return EXIT_SIGINT
    return EXIT_OK if proc.returncode == 0 else EXIT_FAILED


def main(argv: Sequence[str] | None = None) -> int:
    return run_main("soak", _main, argv)


if __name__ == "__main__":
    sys.exit(main())
