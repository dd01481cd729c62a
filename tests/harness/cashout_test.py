#!/usr/bin/env python3
"""End-to-end tests of cashout, the state census and checkpoints (docs/cashout.md), run by ctest.

  plateau  a run much longer than a short cashout window: comments pay out, the state's comment and vote counts
           (the interval log's census) stop growing once the window is passed, no reply or vote targets a paid-out
           comment, the audit (supply with the reward fund, dedup, sessions, cashout) holds, and --checkpoint-blocks
           ends a record at least every N blocks.
  crash    a run killed with SIGKILL leaves no report, and an interval log of whole lines, each a complete record
           with the state and the RC, at most about N blocks apart: what the crash loses is the blocks after the last.
  usage    --checkpoint-blocks without --interval-log is refused with one line.
"""

import json
import os
import signal
import statistics
import subprocess
import sys
import time
from itertools import pairwise

import harness_test as ht

WINDOW = 60
EVERY = 25


def read_log(path):
    with open(path) as f:
        text = f.read()
    ht.check(text.endswith("\n"), "the interval log ends in a partial line")
    return [d for d in map(json.loads, text.splitlines()) if "rc_archive" not in d]


def check_spacing(records, every):
    last = 0
    for r in records:
        ht.check(r["blocks"] - last <= 2 * every,
                 "records %d blocks apart with --checkpoint-blocks %d" % (r["blocks"] - last, every))
        last = r["blocks"]


def mode_plateau(args, schema):
    report = os.path.join(args.work_dir, "cashout.json")
    log = os.path.join(args.work_dir, "cashout.jsonl")
    blocks = 8 * WINDOW
    p = ht.run_apiary(args, ["run", "--config", os.path.join(args.source_dir, "configs", "smoke.toml"),
                             "--sign", "off", "--blocks", str(blocks), "--cashout-blocks", str(WINDOW),
                             "--audit", "on", "--interval", "3600s", "--interval-log", log,
                             "--checkpoint-blocks", str(EVERY), "--report", report])
    ht.check(p.returncode == 0, "exit status %d; stderr:\n%s" % (p.returncode, p.stderr))
    r = ht.load_report(report, schema)
    ht.check(r["audit"]["passed"] is True, "the audit failed: %s" % r["audit"]["violations"])
    st = r["state"]
    ht.check(st["cashout_blocks"] == WINDOW and st["comments_paid"] > 0, "no comment paid out: %s" % st)
    rej = r["rejections"]
    ht.check(rej["unknown_comment"] == 0 and rej["unknown_parent"] == 0,
             "replies or votes targeted paid-out comments: %s" % rej)
    records = read_log(log)
    check_spacing(records, EVERY)
    # After two windows every record holds about a window's worth of comments and votes: no
    # record may hold more than the records' median by more than the blocks' jitter (on a busy
    # machine one record held 1.25 times another's, both within 11% of the median), and the
    # last third may not hold more on average than the first.
    # A record without a block (the run's last, carrying only latency records that came
    # after the record before it) has nothing new to pay out.
    steady = [x for x in records
              if x["blocks"] >= 2 * WINDOW + r["config"]["warmup-blocks"] and x["interval_blocks"] > 0]
    ht.check(len(steady) >= 6, "only %d records after two windows" % len(steady))
    for kind in ("comments", "votes"):
        counts = [x["state"][kind][0] for x in steady]
        ht.check(max(counts) <= 1.25 * statistics.median(counts),
                 "%s keep growing after the window: %s" % (kind, counts))
        third = len(counts) // 3
        early, late = sum(counts[:third]) / third, sum(counts[-third:]) / third
        ht.check(late <= 1.1 * early, "%s: %.0f on average late in the run, %.0f early" % (kind, late, early))
    paid = [x["state"]["comments_paid"] for x in steady]
    ht.check(all(b > a for a, b in pairwise(paid)), "comments stopped paying out: %s" % paid)
    last = records[-1]["state"]
    ht.check(last["comments"][0] == st["indexes"]["comments"]["objects"] or records[-1]["blocks"] < len(r["blocks"]),
             "the last record's census differs from the report's")
    print("plateau: %d comments paid; in state %d comments and %d votes (from %s to %s over %d records)"
          % (st["comments_paid"], st["indexes"]["comments"]["objects"], st["indexes"]["votes"]["objects"],
             min(x["state"]["votes"][0] for x in steady), max(x["state"]["votes"][0] for x in steady), len(steady)))


def mode_crash(args, schema):
    log = os.path.join(args.work_dir, "crash.jsonl")
    for old in (log, os.path.join(args.work_dir, "crash.json")):
        if os.path.exists(old):
            os.remove(old)
    cmd = [args.apiary, "run", "--config", os.path.join(args.source_dir, "configs", "smoke.toml"), "--sign", "off",
           "--blocks", "0", "--interval", "3600s", "--interval-log", log, "--checkpoint-blocks", "10",
           "--report", os.path.join(args.work_dir, "crash.json")]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=args.work_dir)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if os.path.exists(log) and sum(1 for _ in open(log)) >= 4:
            break
        time.sleep(0.05)
    ht.check(proc.poll() is None, "apiary ended by itself, exit status %s" % proc.returncode)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    records = read_log(log)
    ht.check(len(records) >= 4, "only %d records before the kill" % len(records))
    check_spacing(records, 10)
    ht.check(all("state" in x and "rc" in x for x in records), "a record without the state or the RC")
    ht.check(not os.path.exists(os.path.join(args.work_dir, "crash.json")), "a killed run left a report")
    print("crash: %d whole records, the last at block %d" % (len(records), records[-1]["blocks"]))


def mode_usage(args, schema):
    p = ht.run_apiary(args, ["run", "--checkpoint-blocks", "10", "--blocks", "1"])
    ht.check(p.returncode == 2, "exit status %d, expected 2" % p.returncode)
    lines = p.stderr.strip().splitlines()
    ht.check(len(lines) == 1 and "--checkpoint-blocks" in lines[0] and "--interval-log" in lines[0],
             "expected one line naming both options; stderr:\n%s" % p.stderr)
    print("usage: %s" % lines[0])


def main():
    return ht.run_modes({"plateau": mode_plateau, "crash": mode_crash, "usage": mode_usage}, __doc__)


if __name__ == "__main__":
    sys.exit(main())
