#!/usr/bin/env python3
"""The Python tools on a synthetic million-block report: wall time and peak RSS of each.

A long soak's report holds a million blocks (about 235 MB); every tool that reads reports must
handle one in under 30 s and 1 GB (docs/tools.md, "Large reports"). This writes such a report
(tests/scripts/bigreport.py), runs each tool on it as its user would, `--repeat` times, and prints
a Markdown table of the median wall time and the largest peak RSS of each, and whether it is within
the bounds. A benchmark, not a test: it takes minutes and is run by hand.

    .venv/bin/python bench/tools/million_blocks.py [--blocks 1000000] [--repeat 3] [--work DIR] [--only TOOL,...]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "scripts"))

import fakes  # noqa: E402
from bigreport import write_big_report  # noqa: E402

BOUND_S, BOUND_MB = 30.0, 1024.0


def commands(work: Path, report: Path) -> dict[str, list[str]]:
    """Each tool's command on the report (the run, a set of one, a soak directory)."""
    s = REPO / "scripts"
    out = work / "out"
    return {
        "gb-export": [str(s / "gb-export"), str(report), "-o", str(out / "gb.json")],
        "gb-export --per-run": [str(s / "gb-export"), str(report), "--per-run", "-o", str(out / "gb-run.json")],
        "plot": [str(s / "plot"), str(report), "--out", str(out / "plot"), "--force"],
        "report-html": [str(s / "report-html"), str(report), "--out", str(out / "report.html")],
        "compare": [str(s / "compare"), str(work / "a"), str(work / "b"), "--json", str(out / "compare.json"),
                    "--quiet"],
        "multirun --aggregate": [str(s / "multirun"), "--aggregate", str(work / "a"), "--out", str(out / "agg"),
                                 "--force", "--quiet"],
        "soak --from": [str(s / "soak"), "--from", str(work / "soak"), "--cashout-blocks", "1000"],
        "history ingest": [str(s / "history"), "ingest", "--history", str(out / "history.sqlite"), str(report)],
    }


def prepare(work: Path, blocks: int) -> Path:
    report = work / "report.json"
    if not report.is_file():
        print(f"writing a report of {blocks:,} blocks", file=sys.stderr)
        write_big_report(report, blocks)
    for name in ("a", "b", "soak"):
        (work / name).mkdir(exist_ok=True)
        target = work / name / ("report.json" if name == "soak" else "run-001.json")
        if not target.exists():
            os.link(report, target)
    log = work / "soak" / "intervals.jsonl"
    if not log.exists():
        log.write_text("".join(json.dumps(r) + "\n" for r in fakes.soak_log(blocks=blocks, window=1_000)))
    (work / "out").mkdir(exist_ok=True)
    return report


def measure(cmd: list[str]) -> tuple[float, float, int]:
    """Wall seconds, peak RSS in MB (of the tool's process) and the exit status."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.returncode != 0:
        print(f"{cmd[0]}: exit {proc.returncode}: {err.strip().splitlines()[-1:] }", file=sys.stderr)
    return time.monotonic() - start, usage.ru_maxrss / 1024, proc.returncode


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--blocks", type=int, default=1_000_000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--work", type=Path, default=None, help="where the report and the outputs go (kept)")
    p.add_argument("--only", default="", help="tools to run, comma-separated (default: all)")
    args = p.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="million-blocks-"))
    work.mkdir(parents=True, exist_ok=True)
    report = prepare(work, args.blocks)
    only = [t for t in args.only.split(",") if t]
    print(f"{args.blocks:,} blocks, {report.stat().st_size / 1e6:,.0f} MB; median of {args.repeat}\n")
    print("| tool | wall s | peak RSS MB | exit | within bounds |\n|---|---:|---:|---:|---|")
    for name, cmd in commands(work, report).items():
        if only and name not in only:
            continue
        runs = [measure(cmd) for _ in range(args.repeat)]
        wall, rss, code = statistics.median(r[0] for r in runs), max(r[1] for r in runs), max(r[2] for r in runs)
        ok = "yes" if wall < BOUND_S and rss < BOUND_MB and code == 0 else "no"
        print(f"| {name} | {wall:.1f} | {rss:,.0f} | {code} | {ok} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
