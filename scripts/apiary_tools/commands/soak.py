"""Soak test: one long cycle run, observed from its interval log while it goes.

What it answers: once transaction ids expire (an hour, 1,200 blocks) and comments pay out (the cashout window,
--cashout-blocks), does resident memory stop growing; is the full cycle slower late in the run than early; and how do
the resource-credit pools, the accounts low on mana and the RC rejections behave over the run.

- The run writes its interval log (--interval-log): every --interval seconds, and at least every --checkpoint-blocks
  blocks, one JSON line with the blocks so far, the interval's cycle (mean, max), the process's RSS, the state's object
  counts and bytes per index, the RC pools' levels, the RC rejections so far and the share of accounts under 10% of
  their RC (estimated from 1,024 accounts). Everything here is read from those records, so a run that crashes loses at
  most --checkpoint-blocks blocks of them, and `--from DIR` analyses what such a run left.
- After the windows (the block past both the expiry and the cashout window, plus a tenth of the run's remaining blocks
  for the pools to level off): the least-squares slopes (scipy's linregress) of RSS, of the state's bytes and of the
  interval's mean cycle against the block number. The harness keeps one 112-byte record per block for the report, so
  a flat state still shows RSS growing by about 0.11 MiB per 1,000 blocks; the table gives that expected share.
- Early against late: the interval mean cycles of the first and the last tenth of the records after the windows,
  their means and a Mann-Whitney U test.

Ctrl-C forwards one SIGINT (a SIGTERM one SIGTERM): apiary writes its report (marked interrupted) and what was logged
is still analysed. Exit status: 0 done, 1 the run failed, 2 bad usage, 130 interrupted (143 by a SIGTERM).
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .. import fleet, history, kinds, proc
from ..common import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_SIGINT,
    EXIT_SIGTERM,
    REPO_ROOT,
    STOP,
    Parser,
    ToolError,
    check_apiary,
    default_apiary,
    finite_number,
    run_main,
    utc_stamp,
    whole_number,
)
from ..inputs import check_file, read_interval_log
from ..outputs import Outputs, make_directory, open_stream, write_json, write_text
from ..reports import load_report
from ..schemas import COUNT, NONNEG, PAIR, array, obj, problem
from ..soaks import INTERVAL_LOG, MIB, RC_RESOURCES, RUN_REPORT, plot, to_markdown
from ..stats import scipy_stats

# Blocks after which the first transaction ids expire: Hive's 3,600-second limit, 3-second slots.
EXPIRY_BLOCKS = 1200
# apiary run's largest --blocks, --cashout-blocks and --checkpoint-blocks (harness/src/config/options.cpp).
APIARY_MAX_BLOCKS = 100_000_000
# How often a line says how far the run is.
PROGRESS_EVERY_S = 60
# What the soak writes beside the run's report.json, intervals.jsonl and summary.txt.
OUTPUTS = (kinds.SOAK.file, "soak.md", "soak.png")

# What the soak reads of an interval record (docs/report.md; harness/src/cycle/interval_log.cpp).
RECORD = obj(("t_s", "blocks", "interval_blocks", "transactions", "rss_bytes", "cycle_us", "state", "rc"),
             t_s=NONNEG, blocks=COUNT, interval_blocks=COUNT, transactions=COUNT, rss_bytes=COUNT,
             cycle_us={"type": ["object", "null"], "required": ["mean", "max"],
                       "properties": {"mean": NONNEG, "max": NONNEG}},
             state={**obj(("comments", "votes", "transactions", "comments_paid"), comments=PAIR, votes=PAIR,
                          transactions=PAIR, comments_paid=COUNT), "additionalProperties": {"anyOf": [PAIR, COUNT]}},
             rc=obj(("levels", "rejected", "low_mana_share"), levels=array(NONNEG, minItems=1, maxItems=4),
                    rejected=COUNT, low_mana_share={"type": ["number", "null"], "minimum": 0, "maximum": 1}))


def record_check():
    """The check of each interval record: the soak's fields typed, and as many RC pools in
    every record as in the first."""
    pools: list[int] = []

    def check(record: Any) -> str | None:
        why = problem(RECORD, record)
        if why:
            return why
        n = len(record["rc"]["levels"])
        if pools and pools[0] != n:
            return f"rc.levels: {n} pools, the first record has {pools[0]}"
        pools.append(n)
        return None

    return check


def series(records: list[dict[str, Any]]) -> dict[str, np.ndarray]:
    """The interval log as arrays on the block axis (one value per record)."""
    def col(f):
        return np.array([f(r) for r in records], dtype=float)

    def state_bytes(r):
        return sum(v[1] for k, v in r["state"].items() if isinstance(v, list))

    blocks = col(lambda r: r["blocks"])
    interval_blocks = col(lambda r: r["interval_blocks"])
    rejected = col(lambda r: r["rc"]["rejected"])
    per_block = np.diff(rejected, prepend=0.0) / np.maximum(interval_blocks, 1)
    return {
        "block": blocks, "t_s": col(lambda r: r["t_s"]), "rss": col(lambda r: r["rss_bytes"]),
        "state_bytes": col(state_bytes),
        "comments": col(lambda r: r["state"]["comments"][0]), "votes": col(lambda r: r["state"]["votes"][0]),
        "transactions": col(lambda r: r["state"]["transactions"][0]),
        "cycle_mean": col(lambda r: r["cycle_us"]["mean"] if r["cycle_us"] else np.nan),
        "cycle_max": col(lambda r: r["cycle_us"]["max"] if r["cycle_us"] else np.nan),
        "low_mana": col(lambda r: np.nan if r["rc"]["low_mana_share"] is None else r["rc"]["low_mana_share"]),
        "rc_rejected_per_block": per_block,
        "rc_levels": np.array([r["rc"]["levels"] for r in records], dtype=float).reshape(len(records), -1),
        "comments_paid": col(lambda r: r["state"]["comments_paid"]),
    }


def slope_per_1000(x: np.ndarray, y: np.ndarray) -> tuple[float, float] | None:
    keep = ~np.isnan(y)
    if keep.sum() < 3 or np.ptp(x[keep]) == 0:
        return None
    fit = scipy_stats().linregress(x[keep], y[keep])
    # A constant series has no spread to estimate from: scipy gives nan, which is 0 here.
    return float(fit.slope * 1000), 0.0 if np.isnan(fit.stderr) else float(fit.stderr * 1000)


def steady_block(last_block: float, cashout_blocks: int | None) -> float:
    windows = max(EXPIRY_BLOCKS, cashout_blocks or 0)
    return windows + 0.1 * max(last_block - windows, 0)


def analyse(records: list[dict[str, Any]], report: dict | None, cashout_blocks: int | None) -> dict:
    if len(records) < 2:
        raise ToolError(f"the interval log has {len(records)} records; the soak needs at least 2", EXIT_FAILED)
    s = series(records)
    last = s["block"][-1]
    steady = steady_block(last, cashout_blocks)
    after = s["block"] >= steady
    out: dict[str, Any] = {
        "records": len(records), "blocks": int(last), "wall_s": float(s["t_s"][-1]),
        "transactions": int(records[-1]["transactions"]), "peak_rss_bytes": int(s["rss"].max()),
        "report_peak_rss_bytes": (report or {}).get("peak_rss_bytes"), "cashout_blocks": cashout_blocks,
        "steady_from_block": float(steady), "records_after_windows": int(after.sum()),
        "comments_paid": int(s["comments_paid"][-1]),
        "state_end": records[-1]["state"],
    }
    if after.sum() >= 3:
        x = s["block"][after]
        for name, key in (("rss", "rss"), ("state_bytes", "state_bytes"), ("cycle_mean_us", "cycle_mean")):
            fit = slope_per_1000(x, s[key][after])
            if fit:
                out[f"{name}_slope_per_1000_blocks"], out[f"{name}_slope_stderr"] = fit
        out["rss_after_windows"] = {"min_bytes": int(s["rss"][after].min()), "max_bytes": int(s["rss"][after].max())}
        cycles = s["cycle_mean"][after]
        cycles = cycles[~np.isnan(cycles)]
        k = max(3, len(cycles) // 10)
        if len(cycles) >= 2 * k:
            early, late = cycles[:k], cycles[-k:]
            out["cycle_early_late"] = {
                "records": k, "early_mean_us": float(early.mean()), "late_mean_us": float(late.mean()),
                "change_pct": float((late.mean() / early.mean() - 1) * 100),
                "mann_whitney_p": float(scipy_stats().mannwhitneyu(early, late, alternative="two-sided").pvalue)}
    levels = s["rc_levels"]
    out["rc"] = {
        "pools": {name: {"start": float(levels[0, i]), "end": float(levels[-1, i]), "min": float(levels[:, i].min())}
                  for i, name in enumerate(RC_RESOURCES[:levels.shape[1]])},
        "low_mana_share_max": float(np.nanmax(s["low_mana"])) if not np.isnan(s["low_mana"]).all() else None,
        "low_mana_share_end": None if np.isnan(s["low_mana"][-1]) else float(s["low_mana"][-1]),
        "rejected": int(records[-1]["rc"]["rejected"]),
        "rejected_per_block_max": float(s["rc_rejected_per_block"].max()),
    }
    if report:
        aggregates = report.get("aggregates") or {}
        cyc = aggregates.get("cycle_us") or {}
        out["report"] = {"status": report["status"], "measured_blocks": aggregates.get("measured_blocks"),
                         "in_blocks": (report.get("ledger") or {}).get("in_blocks"),
                         "cycle_median_us": cyc.get("median"), "cycle_max_us": cyc.get("max"),
                         "cycle_max_block": cyc.get("max_block")}
    out["series"] = {k: [None if np.isnan(v) else round(float(v), 6) for v in a.ravel()] if k != "rc_levels" else
                     a.round(6).tolist() for k, a in s.items()}
    return out


def parser() -> Parser:
    p = Parser(prog="soak", description=(
        "Runs one long cycle test (default: 2,000 full 2 MB blocks of configs/default.toml) and follows it through "
        "its interval log; writes report.json, intervals.jsonl, soak.json, soak.md and soak.png with the peak RSS, "
        "the slopes of RSS, state and cycle once the expiry and cashout windows are passed, and the RC pools, the "
        "accounts low on mana and the RC rejections over the run."),
        epilog="Extra arguments after -- go to `apiary run`. Exit status: 0 done, 1 the run failed, "
               "2 bad usage, 130 interrupted, 143 stopped by SIGTERM (what was logged is still "
               "analysed).")
    p.add_argument("--apiary", type=Path, default=None,
                   help="the apiary binary (default: $APIARY_BIN, else the release build)")
    p.add_argument("--blocks", type=whole_number(1, APIARY_MAX_BLOCKS), default=2000,
                   help="measured blocks (default: 2000)")
    p.add_argument("--block-size", default=None, help="apiary's --block-size, e.g. 64KiB (default: the config's)")
    p.add_argument("--cashout-blocks", type=whole_number(1, APIARY_MAX_BLOCKS), default=None,
                   help="apiary's --cashout-blocks, the comments' payout window (default: the config's, else "
                        "Hive's 201,600)")
    p.add_argument("--config", type=Path, default=REPO_ROOT / "configs" / "default.toml",
                   help="the run's config (default: configs/default.toml)")
    p.add_argument("--interval", type=finite_number(0.05, 86_400, "seconds"), default=1.0,
                   help="seconds between interval records, from 0.05 to 86,400 (default: 1)")
    p.add_argument("--checkpoint-blocks", type=whole_number(1, APIARY_MAX_BLOCKS), default=None,
                   help="a record at least every N blocks, so a crash loses at most N (default: blocks / 200, "
                        "at least 1)")
    p.add_argument("--out", type=Path, default=None, help="output directory (default: results/soak-<time>); it "
                   "must be new or empty, unless --force")
    p.add_argument("--force", action="store_true",
                   help="write into an --out directory that has files in it (files of the same name are replaced)")
    p.add_argument("--from", dest="from_dir", type=Path, default=None,
                   help="analyse what a soak left in DIR (after a crash, say) instead of running one")
    p.add_argument("extra", nargs="*", help="more `apiary run` arguments (after --)")
    fleet.add_options(p)  # --cluster: the run on one worker of the cluster
    history.add_history_option(p)
    return p


def run_soak(args, out: Path) -> tuple[int, list[str]]:
    """Runs the soak's apiary (here, or on a worker with --cluster): its exit status and its
    command line. A signal to the soak is passed on to it (once: apiary finishes its block and
    writes its report), and noted (common.STOP): the soak then exits 130 or 143."""
    binary = check_apiary(args.apiary or default_apiary())
    every = args.checkpoint_blocks or max(1, args.blocks // 200)
    cmd = [str(binary), "run", "--config", str(args.config), "--blocks", str(args.blocks), "--name", "soak",
           "--report", str(out / RUN_REPORT), "--interval", f"{args.interval}s",
           "--interval-log", str(out / INTERVAL_LOG), "--checkpoint-blocks", str(every)]
    if args.block_size:
        cmd += ["--block-size", args.block_size]
    if args.cashout_blocks:
        cmd += ["--cashout-blocks", str(args.cashout_blocks)]
    cmd += args.extra
    print(f"soak: {' '.join(cmd)}", file=sys.stderr)
    backend = fleet.ClusterBackend.from_args(args)
    last_note = time.monotonic()

    def note_now_and_then() -> None:
        nonlocal last_note
        if time.monotonic() - last_note >= PROGRESS_EVERY_S:
            last_note = time.monotonic()
            note_progress(out / INTERVAL_LOG, args.blocks)

    # The run in its own process group: a Ctrl-C reaches only us, and we forward exactly one
    # SIGINT (or SIGTERM); apiary finishes its block and writes its report.
    with open_stream(out / "summary.txt") as summary, proc.Forwarding(once=True) as signals:
        if backend:
            run: proc.Child = fleet.RemoteProcess(backend, cmd)
            signals.child = run
        else:
            run = signals.start(cmd, stdout=summary, stderr=subprocess.PIPE, text=True)
        code = proc.wait(run, tick=note_now_and_then, every=0.5).returncode
        err = run.stderr.read() if isinstance(run, subprocess.Popen) and run.stderr else ""
        if isinstance(run, fleet.RemoteProcess) and run.stdout:
            summary.write(run.stdout.read())
    if err:
        sys.stderr.write(err)
    return code, cmd


def note_progress(log: Path, blocks: int) -> None:
    try:
        records = read_interval_log(log, record_check(), partial_tail=True)
    except ToolError:
        return
    if records:
        r = records[-1]
        cyc = r["cycle_us"]["mean"] / 1000 if r["cycle_us"] else 0
        print(f"soak: block {r['blocks']:,} of {blocks:,}, {r['t_s'] / 60:,.1f} min, "
              f"RSS {r['rss_bytes'] / MIB:,.1f} MiB, cycle {cyc:,.2f} ms", file=sys.stderr)


def _main(argv: Sequence[str]) -> int:
    args = parser().parse_args(argv)
    if args.from_dir:
        out = args.from_dir
        if not (out / INTERVAL_LOG).is_file():
            raise ToolError(f"--from {out}: no intervals.jsonl there")
        plan = Outputs().read("--from", [out / INTERVAL_LOG, out / RUN_REPORT])
        for output in OUTPUTS:
            plan.file("--from", out / output)
    else:
        check_file("--config", args.config, "a config file")
        out = Outputs().read("--config", [args.config]).directory(
            "--out", args.out or REPO_ROOT / "results" / f"soak-{utc_stamp()}", args.force, OUTPUTS)
    with STOP.keeping():   # what the run logged is analysed, whatever signal comes
        code, cmd = run_soak(args, make_directory(out)) if not args.from_dir else (0, None)
        write_analysis(args, out, code, cmd)
    if code in (EXIT_SIGINT, EXIT_SIGTERM):  # stopped by a signal that came to it, not through us
        return code
    return EXIT_OK if code == 0 else EXIT_FAILED


def write_analysis(args, out: Path, code: int, cmd: list[str] | None) -> None:
    """soak.json, soak.md and soak.png from what the run left in `out`."""
    report = load_report(out / RUN_REPORT) if (out / RUN_REPORT).is_file() else None
    records = read_interval_log(out / INTERVAL_LOG, record_check(), partial_tail=True)
    cashout = args.cashout_blocks or (report or {}).get("state", {}).get("cashout_blocks")
    a = kinds.SOAK.stamp(analyse(records, report, cashout))
    if cmd:
        a["command"] = cmd
        a["exit_code"] = code
    write_json(out / kinds.SOAK.file, a)
    history.record(args.history, [out / kinds.SOAK.file], "soak")
    md = to_markdown(a)
    write_text(out / "soak.md", md)
    plot(a, out / "soak.png")
    print(md)
    if report is None:
        print("soak: no report.json: the figures come from the interval log alone", file=sys.stderr)
    print(f"soak: written to {out}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    return run_main("soak", _main, argv)


if __name__ == "__main__":
    sys.exit(main())
