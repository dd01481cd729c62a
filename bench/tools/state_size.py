#!/usr/bin/env python3
"""How the core's cost per transaction grows with the state it works on.

For each point of a grid, genesis accounts × warm-up blocks, this makes a state snapshot
(`apiary snapshot --accounts A --blocks B`: the typical mix's ids, votes and comments of B full
blocks on A accounts), then replays the same number of new transactions from it `--runs` times
(`apiary replay --state`: one thread, the writer and the core only) and, with `--instructions`,
once more under callgrind, counting only the measured function. It writes, in `--out`:

    states/<A>-<B>.state          the snapshots (kept: `--reuse` skips making them again)
    runs/<A>-<B>-<run>.json       the replay reports
    state-size.json               every point: what the state held, µs and instructions per transaction
    state-size.md                 the table
    state-size.png                µs and instructions per transaction against the ids the state holds

A benchmark, not a test: minutes per point at millions of accounts. Arguments after `--` go to
both the snapshot and the replays (chain switches, block size).

    .venv/bin/python bench/tools/state_size.py --accounts 100000,1000000,3000000 --blocks 0,400,1200 \\
        --runs 5 --instructions --out results/state-size
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))

from apiary_tools import gate  # noqa: E402
from apiary_tools.common import markdown_table, parse_csv  # noqa: E402
from apiary_tools.inputs import read_json  # noqa: E402
from apiary_tools.outputs import make_directory, write_figure, write_json, write_text  # noqa: E402
from apiary_tools.runner import split_passthrough  # noqa: E402
from apiary_tools.stats import summarize_sample  # noqa: E402

MEASURED_FUNCTION = "apiary_replay_measured"
INDEXES = ("accounts", "comments", "votes", "transactions")


def say(message: str) -> None:
    print(f"state-size: {message}", file=sys.stderr, flush=True)


def run(cmd: list[str], what: str) -> float:
    """Runs cmd, failing with its last stderr line; returns its wall seconds."""
    t0 = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise SystemExit(f"state-size: {what} failed ({p.returncode}): {last}")
    return time.monotonic() - t0


def make_state(args: argparse.Namespace, accounts: int, blocks: int) -> tuple[Path, float | None]:
    path = args.out / "states" / f"{accounts}-{blocks}.state"
    if args.reuse and path.is_file():
        return path, None
    say(f"making the state of {accounts:,} accounts and {blocks:,} blocks")
    seconds = run([args.apiary, "snapshot", "--accounts", str(accounts), "--blocks", str(blocks),
                   "--out", str(path), *args.extra], f"the snapshot of {path.name}")
    return path, seconds


def replay_cmd(args: argparse.Namespace, state: Path, accounts: int, report: Path,
               apiary: str | None = None) -> list[str]:
    """The replay of state by apiary (default: --apiary)."""
    return [apiary or args.apiary, "replay", "--state", str(state), "--accounts", str(accounts), "--transactions",
            str(args.transactions), "--seed", str(args.seed), "--report", str(report), *args.extra]


def instructions(args: argparse.Namespace, state: Path, accounts: int, name: str) -> float:
    """Instructions per transaction of the measured function, under callgrind."""
    out = args.out / "callgrind" / f"{name}.callgrind"
    report = args.out / "callgrind" / f"{name}.json"
    run(["valgrind", "--tool=callgrind", "--collect-atstart=no", f"--toggle-collect={MEASURED_FUNCTION}",
         f"--callgrind-out-file={out}", *replay_cmd(args, state, accounts, report)], f"callgrind of {name}")
    return gate.ir_per_tx(gate.callgrind_total_ir(out), read_json(report)["result"]["transactions"])


def measure(args: argparse.Namespace, accounts: int, blocks: int) -> dict[str, Any]:
    name = f"{accounts}-{blocks}"
    state, made_s = make_state(args, accounts, blocks)
    us: list[float] = []
    result: dict[str, Any] = {}
    load_ms: list[float] = []
    for r in range(args.runs):
        report = args.out / "runs" / f"{name}-{r + 1}.json"
        run(replay_cmd(args, state, accounts, report), f"the replay of {name}")
        result = read_json(report)["result"]
        us.append(float(result["us_per_tx"]))
        load_ms.append(float(read_json(report)["context"]["state"]["load_ms"]))
    s = summarize_sample(us)
    held = {i: result["state_at_start"]["indexes"][i]["objects"] for i in INDEXES}
    point: dict[str, Any] = {
        "accounts": accounts, "blocks": blocks, "state": str(state.relative_to(args.out)),
        "state_bytes": state.stat().st_size, "make_s": made_s, "load_ms_median": summarize_sample(load_ms).median,
        "held": held, "us_per_tx": s.to_dict(), "ir_per_tx": None}
    if args.instructions:
        point["ir_per_tx"] = instructions(args, state, accounts, name)
    ir = f", {point['ir_per_tx']:,.0f} instructions" if point["ir_per_tx"] else ""
    say(f"{name}: {s.median:.3f} µs per transaction (median of {s.n}){ir}; "
        f"{held['transactions']:,} ids, {held['votes']:,} votes, {held['comments']:,} comments held")
    return point


def table(points: list[dict[str, Any]]) -> str:
    header = ["accounts", "warm blocks", "ids held", "votes", "comments", "snapshot MB", "load s",
              "µs/tx median", "95% CI", "instructions/tx"]
    rows = []
    for p in points:
        u = p["us_per_tx"]
        ci = f"{u['ci_low']:.3f}–{u['ci_high']:.3f}" if u["ci_low"] is not None else "–"
        ir = f"{p['ir_per_tx']:,.0f}" if p["ir_per_tx"] else "–"
        h = p["held"]
        rows.append([f"{p['accounts']:,}", f"{p['blocks']:,}", f"{h['transactions']:,}", f"{h['votes']:,}",
                     f"{h['comments']:,}", f"{p['state_bytes'] / 1e6:,.0f}", f"{p['load_ms_median'] / 1e3:.2f}",
                     f"{u['median']:.3f}", ci, ir])
    return markdown_table(header, rows, "rrrrrrrrrr")


def figure(points: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for accounts in sorted({p["accounts"] for p in points}):
        series = sorted((p for p in points if p["accounts"] == accounts), key=lambda p: p["held"]["transactions"])
        x = [p["held"]["transactions"] for p in series]
        label = f"{accounts:,} accounts"
        y = [p["us_per_tx"]["median"] for p in series]
        err = [[p["us_per_tx"]["median"] - (p["us_per_tx"]["ci_low"] or p["us_per_tx"]["median"]) for p in series],
               [(p["us_per_tx"]["ci_high"] or p["us_per_tx"]["median"]) - p["us_per_tx"]["median"] for p in series]]
        axes[0].errorbar(x, y, yerr=err, marker="o", capsize=3, label=label)
        if all(p["ir_per_tx"] for p in series):
            axes[1].plot(x, [p["ir_per_tx"] for p in series], marker="o", label=label)
    axes[0].set_title("µs per transaction (median, 95% CI)")
    axes[1].set_title("instructions per transaction (callgrind)")
    for ax in axes:
        ax.set_xlabel("transaction ids the state holds at the start")
        ax.grid(True, alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend()
        ax.set_ylim(bottom=0)
    fig.tight_layout()
    write_figure(fig, path, 120)
    plt.close(fig)


def parse(argv: list[str]) -> argparse.Namespace:
    argv, extra = split_passthrough(argv)
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--accounts", default="100000,1000000", help="genesis accounts, a comma list")
    p.add_argument("--blocks", default="0,400", help="warm-up blocks of the typical mix, a comma list")
    p.add_argument("--runs", type=int, default=5, help="replays per point (default: 5)")
    p.add_argument("--transactions", type=int, default=40000, help="transactions per replay (default: 40000)")
    p.add_argument("--seed", type=int, default=7, help="the replays' seed (default: 7)")
    p.add_argument("--instructions", action="store_true", help="also count instructions under callgrind")
    p.add_argument("--reuse", action="store_true", help="keep snapshots already in --out")
    p.add_argument("--apiary", default=str(REPO / "build" / "release" / "harness" / "apiary"))
    p.add_argument("--out", type=Path, default=REPO / "results" / "state-size")
    args = p.parse_args(argv)
    args.extra = extra
    args.grid = [(int(a), int(b)) for a in parse_csv(args.accounts) for b in parse_csv(args.blocks)]
    return args


def main(argv: list[str]) -> int:
    args = parse(argv)
    for sub in ("states", "runs", "callgrind"):
        make_directory(args.out / sub)
    points = [measure(args, a, b) for a, b in args.grid]
    write_json(args.out / "state-size.json", {"transactions": args.transactions, "runs": args.runs,
                                              "extra": args.extra, "points": points})
    write_text(args.out / "state-size.md", table(points) + "\n")
    figure(points, args.out / "state-size.png")
    print(table(points))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
