#!/usr/bin/env python3
"""The life of a realistic state: made, written, opened, prefaulted and run on, beside the heap snapshot.

For each genesis size (`--accounts`), with `--blocks` blocks of the mix behind the head (1200: an
hour of full blocks), this

  1. makes the state twice with `apiary snapshot --sign off`: as a state file (`--state-memory
     mapped`) and as a heap snapshot, and takes from each its making and writing times, its
     size and its size on disk;
  2. runs the core-only cycle (configs/mainnet-scale.toml's options, `--warmup-blocks 0`, so
     the first block after opening is measured) `--run-blocks` blocks from each: the state
     file with a cold page cache (`echo 3 > /proc/sys/vm/drop_caches`, as root) and a warm one,
     each with `--state-prefault on` and `off`; the snapshot loaded into the heap;
  3. writes, in `--out`:

    states/<accounts>.state, .snap   the states (kept: `--reuse` skips making them again)
    runs/<accounts>-<case>.json       the run reports
    state-life.json                   every size: the states and each run's figures
    state-life.md                     the tables

A benchmark, not a test: minutes per size at millions of accounts. Dropping the page cache
needs root (`--cold auto`, the default, drops it where /proc/sys/vm/drop_caches can be
written and says why not elsewhere; the cold rows then read "unavailable"). Arguments after
`--` go to the snapshots and the runs.

    .venv/bin/python bench/tools/state_life.py --accounts 100000,1000000,3000000 --out results/state-life
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))

from apiary_tools.common import markdown_table, parse_csv  # noqa: E402
from apiary_tools.inputs import read_json  # noqa: E402
from apiary_tools.outputs import make_directory, write_json, write_text  # noqa: E402
from apiary_tools.runner import split_passthrough  # noqa: E402

DROP_CACHES = Path("/proc/sys/vm/drop_caches")
# (case name, the state's suffix, page cache cold, prefault): the runs of one size, in order.
CASES = (("cold, prefault on", "state", True, "on"), ("warm, prefault on", "state", False, "on"),
         ("cold, prefault off", "state", True, "off"), ("warm, prefault off", "state", False, "off"),
         ("heap snapshot", "snap", False, None))


def say(message: str) -> None:
    print(f"state-life: {message}", file=sys.stderr, flush=True)


def run(cmd: list[str], what: str) -> str:
    """Runs cmd; its stdout, or a clear failure with its last stderr line."""
    p = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise SystemExit(f"state-life: {what} failed ({p.returncode}): {last}")
    return p.stdout


def cold_unavailable(mode: str) -> str | None:
    """Why the page cache cannot be dropped (None: it can)."""
    if mode == "off":
        return "--cold off"
    if not os.access(DROP_CACHES, os.W_OK):
        why = f"{DROP_CACHES} is not writable (dropping the page cache needs root)"
        if mode == "on":
            raise SystemExit(f"state-life: --cold on: {why}")
        return why
    return None


def drop_caches() -> None:
    os.sync()
    DROP_CACHES.write_text("3\n")


def make_state(args: argparse.Namespace, accounts: int, suffix: str) -> dict[str, Any]:
    """Makes (or, with --reuse, finds) one state: its path, making and writing seconds, sizes."""
    path = args.out / "states" / f"{accounts}.{suffix}"
    made: dict[str, Any] = {"path": str(path.relative_to(args.out)), "make_s": None, "write_s": None}
    if not (args.reuse and path.is_file()):
        say(f"making the {'state file' if suffix == 'state' else 'heap snapshot'} of {accounts:,} accounts")
        memory = ["--state-memory", "mapped" if suffix == "state" else "heap"]
        t0 = time.monotonic()
        out = run([args.apiary, "snapshot", "--accounts", str(accounts), "--blocks", str(args.blocks), "--sign", "off",
                   *memory, "--out", str(path), *args.extra], f"the snapshot {path.name}")
        made["total_s"] = time.monotonic() - t0
        blocks = re.search(r"made in ([0-9.]+) s", out)
        written = re.search(r"written to .* in ([0-9.]+) s", out)
        made["make_s"] = float(blocks.group(1)) if blocks else None
        made["write_s"] = float(written.group(1)) if written else None
    st = path.stat()
    made["bytes"] = st.st_size
    made["disk_bytes"] = st.st_blocks * 512
    return made


def run_case(args: argparse.Namespace, accounts: int, case: tuple[str, str, bool, str | None],
             cold_why: str | None) -> dict[str, Any]:
    name, suffix, cold, prefault = case
    if cold and cold_why:
        return {"case": name, "unavailable": cold_why}
    state = args.out / "states" / f"{accounts}.{suffix}"
    report = args.out / "runs" / f"{accounts}-{name.replace(', ', '-').replace(' ', '-')}.json"
    memory = ["--state-prefault", prefault] if prefault else ["--state-memory", "heap"]
    if cold:
        drop_caches()
    run([args.apiary, "run", "--config", str(REPO / "configs" / "mainnet-scale.toml"), "--state-blocks", "0",
         "--state", str(state), "--accounts", str(accounts), "--blocks", str(args.run_blocks), "--warmup-blocks", "0",
         *memory, "--progress", "off", "--report", str(report), *args.extra], f"the run {report.name}")
    r = read_json(report)
    s = r["context"]["state"]
    blocks = [b for b in r["blocks"] if not b["warmup"]]
    applied = [b["applied_us"] / 1e3 for b in blocks]
    ten = max(1, min(10, len(applied) // 2))
    faults = r["cpu"].get("window_page_faults", {})
    return {"case": name, "report": str(report.relative_to(args.out)), "load_ms": s["load_ms"],
            "open_ms": s["open_ms"], "prefault_ms": s["prefault_ms"], "resident_bytes": s.get("resident_bytes"),
            "first_applied_ms": applied[0], "first_processing_ms": blocks[0]["processing_us"] / 1e3,
            "cycle_median_ms": statistics.median(b["cycle_us"] / 1e3 for b in blocks if b["cycle_us"] is not None),
            "applied_first10_ms": statistics.median(applied[:ten]),
            "applied_last10_ms": statistics.median(applied[-ten:]),
            "minor_faults": faults.get("minor"), "major_faults": faults.get("major"),
            "machine_busy_share": r["cpu"].get("machine_busy_share")}


def measure(args: argparse.Namespace, accounts: int, cold_why: str | None) -> dict[str, Any]:
    states = {suffix: make_state(args, accounts, suffix) for suffix in ("state", "snap")}
    runs = [run_case(args, accounts, case, cold_why) for case in CASES]
    for r in runs:
        if "unavailable" not in r:
            say(f"{accounts:,} accounts, {r['case']}: ready in {r['load_ms'] / 1e3:.2f} s, first block applied in "
                f"{r['first_applied_ms']:.1f} ms, cycle median {r['cycle_median_ms']:.1f} ms")
    return {"accounts": accounts, "states": states, "runs": runs}


def number(v: float | None, fmt: str) -> str:
    return "–" if v is None else format(v, fmt)


def tables(points: list[dict[str, Any]]) -> str:
    made_rows = []
    for p in points:
        for suffix, what in (("state", "state file"), ("snap", "heap snapshot")):
            s = p["states"][suffix]
            made_rows.append([f"{p['accounts']:,}", what, number(s["make_s"], ".1f"), number(s["write_s"], ".1f"),
                              f"{s['bytes'] / 2**20:,.0f}", f"{s['disk_bytes'] / 2**20:,.0f}"])
    made = markdown_table(["accounts", "state", "blocks made s", "written s", "MiB", "MiB on disk"], made_rows,
                          "llrrrr")
    run_rows = []
    for p in points:
        for r in p["runs"]:
            if "unavailable" in r:
                missing = ["–"] * 8
                run_rows.append([f"{p['accounts']:,}", r["case"], f"unavailable: {r['unavailable']}", *missing])
                continue
            run_rows.append([f"{p['accounts']:,}", r["case"], f"{r['open_ms']:.2f}", f"{r['prefault_ms'] / 1e3:.2f}",
                             f"{r['load_ms'] / 1e3:.2f}", number((r["resident_bytes"] or 0) / 2**20, ",.0f"),
                             f"{r['first_applied_ms']:.1f}", f"{r['applied_first10_ms']:.1f}",
                             f"{r['applied_last10_ms']:.1f}", f"{r['cycle_median_ms']:.1f}",
                             number(r["minor_faults"], ",d")])
    header = ["accounts", "run", "open ms", "prefault s", "ready s", "resident MiB", "first block applied ms",
              "apply first 10 ms", "apply last 10 ms", "cycle median ms", "faults in window"]
    ran = markdown_table(header, run_rows, "llrrrrrrrrr")
    return made + "\n\n" + ran


def parse(argv: list[str]) -> argparse.Namespace:
    argv, extra = split_passthrough(argv)
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--accounts", default="100000,1000000,3000000", help="genesis accounts, a comma list")
    p.add_argument("--blocks", type=int, default=1200, help="blocks of the mix behind the head (default: 1200)")
    p.add_argument("--run-blocks", type=int, default=200, help="measured blocks of each run (default: 200)")
    p.add_argument("--cold", choices=("auto", "on", "off"), default="auto",
                   help="drop the page cache before the cold runs: auto (where allowed), on (or fail), off")
    p.add_argument("--reuse", action="store_true", help="keep states already in --out")
    p.add_argument("--apiary", default=str(REPO / "build" / "release" / "harness" / "apiary"))
    p.add_argument("--out", type=Path, default=REPO / "results" / "state-life")
    args = p.parse_args(argv)
    args.extra = extra
    args.sizes = [int(a) for a in parse_csv(args.accounts)]
    return args


def main(argv: list[str]) -> int:
    args = parse(argv)
    for sub in ("states", "runs"):
        make_directory(args.out / sub)
    cold_why = cold_unavailable(args.cold)
    if cold_why:
        say(f"cold runs unavailable: {cold_why}")
    points = [measure(args, a, cold_why) for a in args.sizes]
    write_json(args.out / "state-life.json", {"blocks": args.blocks, "run_blocks": args.run_blocks,
                                              "extra": args.extra, "cold_unavailable": cold_why, "points": points})
    text = tables(points)
    write_text(args.out / "state-life.md", text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
