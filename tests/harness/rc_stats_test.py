#!/usr/bin/env python3
"""End-to-end tests of Hive's RC statistics (docs/rc.md, "Hive's RC statistics"), run by ctest.

  replay  `apiary replay --rc-stats-blocks N`: floor(blocks / N) archives in the report's rc.archives, each with
          the contract's fields; their sums are rc.stats; their transactions are the blocks'; the same archives
          whatever the rc mode and --reuse-pending; --rc-stats-blocks 0 keeps none and leaves the state digest
          as it is.
  run     `apiary run --interval-log`: each archive also as its own {"rc_archive": ...} line, the same as the
          report's; rc.stats sums the archives wholly after the warm-up; the report matches the schema.
  usage   a bad --rc-stats-blocks is one line naming it, exit status 2.
"""

import json
import os
import sys

import harness_test as ht

KINDS = ["vote", "comment", "transfer", "custom_json", "multi"]
EVERY = 3


def summed(archives):
    """rc.stats as the archives give it."""
    ops = [{"kind": k, "count": 0, "cost": [0] * 4, "usage": [0] * 4} for k in KINDS]
    payers = [{"rank": r, "count": 0, "below_5": 0, "below_10": 0, "below_20": 0, "cant_afford": [0] * 3}
              for r in range(8)]
    for a in archives:
        for s, o in zip(ops, a["ops"], strict=True):
            s["count"] += o["count"]
            s["cost"] = [x + y for x, y in zip(s["cost"], o["cost"], strict=True)]
            s["usage"] = [x + y for x, y in zip(s["usage"], o["usage"], strict=True)]
        for s, p in zip(payers, a["payers"], strict=True):
            for key in ("count", "below_5", "below_10", "below_20"):
                s[key] += p[key]
            s["cant_afford"] = [x + y for x, y in zip(s["cant_afford"], p["cant_afford"], strict=True)]
    return {"ops": ops, "payers": payers}


def check_archive(a, every):
    ht.check(set(a) == {"block", "pools", "levels", "prices", "regen", "accepted", "rejected_rc", "ops", "payers"},
             "an archive's fields: %s" % sorted(a))
    ht.check(a["block"] % every == 0, "an archive at block %d, not a multiple of %d" % (a["block"], every))
    ht.check(len(a["pools"]) == len(a["levels"]) == len(a["prices"]) == 4, "pools, levels, prices: 4 each")
    ht.check(all(p > 0 for p in a["prices"]) and a["regen"] > 0, "prices and regen: %s, %s" % (a["prices"], a["regen"]))
    ht.check([o["kind"] for o in a["ops"]] == KINDS, "op kinds: %s" % [o["kind"] for o in a["ops"]])
    ht.check([p["rank"] for p in a["payers"]] == list(range(8)), "payer ranks")
    count = sum(o["count"] for o in a["ops"])
    ht.check(count == a["accepted"] == sum(p["count"] for p in a["payers"]),
             "archive at %d: %d by kind, %d accepted, %d by rank" % (a["block"], count, a["accepted"],
                                                                     sum(p["count"] for p in a["payers"])))
    for p in a["payers"]:
        ht.check(p["below_5"] <= p["below_10"] <= p["below_20"] <= p["count"], "below counts: %s" % p)


def replay(args, name, *extra):
    report = os.path.join(args.work_dir, name)
    p = ht.run_apiary(args, ["replay", "--transactions", "6000", "--accounts", "500", "--seed", "3",
                             "--sign", "off", "--block-size", "64KiB", "--report", report, *extra], timeout=300)
    ht.check(p.returncode == 0, "replay %s: exit status %d; stderr:\n%s" % (extra, p.returncode, p.stderr))
    with open(report) as f:
        return json.load(f)


def mode_replay(args, schema):
    r = replay(args, "stats.json", "--rc-stats-blocks", str(EVERY))
    rc, res = r["rc"], r["result"]
    archives = rc["archives"]
    ht.check(rc["stats_blocks"] == EVERY, "stats_blocks %s" % rc["stats_blocks"])
    ht.check(len(archives) == res["head_block_num"] // EVERY and len(archives) >= 4,
             "%d archives for %d blocks every %d" % (len(archives), res["head_block_num"], EVERY))
    ht.check([a["block"] for a in archives] == [EVERY * (i + 1) for i in range(len(archives))], "archive blocks")
    for a in archives:
        check_archive(a, EVERY)
    ht.check(rc["stats"] == summed(archives), "rc.stats is not the archives' sum")
    archived = [b for b in r["blocks"] if b["num"] <= archives[-1]["block"]]
    ht.check(sum(a["accepted"] for a in archives) == sum(b["transactions"] for b in archived),
             "the archives' transactions are not the blocks'")
    by_kind = {o["kind"]: o["count"] for o in rc["stats"]["ops"]}
    ht.check(all(by_kind[k] > 0 for k in ("vote", "comment", "transfer", "custom_json")),
             "the mix's kinds are not all counted: %s" % by_kind)
    # The default vesting, 10^11 for every account: every payer in rank 2.
    ht.check(rc["stats"]["payers"][2]["count"] == sum(by_kind.values()), "payers outside rank 2")
    # A transfer pays for market bytes, a vote does not.
    ops = {o["kind"]: o for o in rc["stats"]["ops"]}
    ht.check(ops["transfer"]["cost"][1] > 0 and ops["vote"]["cost"][1] == 0, "market costs: %s" % ops)

    other = replay(args, "volatile.json", "--rc-stats-blocks", str(EVERY), "--rc", "volatile",
                   "--reuse-pending", "off")
    ht.check(other["rc"] == rc, "the statistics depend on the switches")
    off = replay(args, "off.json", "--rc-stats-blocks", "0")
    ht.check(off["rc"]["archives"] == [] and off["result"]["state_digest"] == res["state_digest"],
             "--rc-stats-blocks 0: archives %d, digest %s against %s"
             % (len(off["rc"]["archives"]), off["result"]["state_digest"], res["state_digest"]))
    print("replay: %d blocks, %d archives, %d transactions counted: %s"
          % (res["head_block_num"], len(archives), sum(by_kind.values()), by_kind))


def mode_run(args, schema):
    report = os.path.join(args.work_dir, "rc-run.json")
    log = os.path.join(args.work_dir, "rc-run.jsonl")
    p = ht.run_apiary(args, ["run", "--config", os.path.join(args.source_dir, "configs", "smoke.toml"),
                             "--sign", "off", "--blocks", "24", "--warmup-blocks", "7",
                             "--rc-stats-blocks", "4", "--interval", "3600s", "--interval-log", log,
                             "--checkpoint-blocks", "10", "--report", report])
    ht.check(p.returncode == 0, "exit status %d; stderr:\n%s" % (p.returncode, p.stderr))
    r = ht.load_report(report, schema)
    archives = r["rc"]["archives"]
    head = r["blocks"][-1]["num"]
    ht.check(len(archives) == head // 4, "%d archives for %d blocks" % (len(archives), head))
    for a in archives:
        check_archive(a, 4)
    with open(log) as f:
        lines = [json.loads(line) for line in f]
    logged = [x["rc_archive"] for x in lines if "rc_archive" in x]
    ht.check(logged == archives, "the interval log's archives differ from the report's")
    ht.check(all(len(x) == 1 for x in lines if "rc_archive" in x), "an archive line with other fields")
    first = next(b["num"] for b in r["blocks"] if not b["warmup"])
    measured = [a for a in archives if a["block"] - 4 + 1 >= first]
    ht.check(first == 8 and [a["block"] for a in measured] == [a["block"] for a in archives][2:],
             "measured from block %d: %s" % (first, [a["block"] for a in measured]))
    ht.check(r["rc"]["stats"] == summed(measured), "rc.stats is not the sum of the measured archives")
    print("run: %d archives in the report and the log, %d measured" % (len(archives), len(measured)))


def mode_usage(args, schema):
    for value in ("-1", "x", "200000000"):
        p = ht.run_apiary(args, ["replay", "--transactions", "10", "--rc-stats-blocks", value])
        lines = p.stderr.strip().splitlines()
        ht.check(p.returncode == 2 and len(lines) == 1 and "--rc-stats-blocks" in lines[0],
                 "--rc-stats-blocks %s: exit status %d; stderr:\n%s" % (value, p.returncode, p.stderr))
        print("usage: %s" % lines[0])


def main():
    return ht.run_modes({"replay": mode_replay, "run": mode_run, "usage": mode_usage}, __doc__)


if __name__ == "__main__":
    sys.exit(main())
