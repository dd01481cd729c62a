#!/usr/bin/env python3
"""End-to-end tests of blocks on the chain's clock (--blocks-by clock, docs/usage.md and docs/rc.md), run by ctest.

  empty     --genesis-vesting 0: every account's RC maximum is 0, so every transaction is rejected as
            insufficient_rc, yet a block comes every slot: the run produces empty blocks until --blocks and exits 0,
            with the audit passing.
  overflow  slots that offer more than a 64 KiB block holds: the blocks stay within the size target, what does not
            fit stays pending for the next slots, every slot's transactions are answered, and the audit holds.
  converge  the deterministic replay with a tiny vesting: once the genesis mana is spent, the accepted transactions
            per block match what the accounts regenerate, accounts x regen / cost, within 5%.
  answered  a slot that takes longer than --stall-timeout to answer is no stall on the clock: its transactions are
            answered (rejected), and its block comes once they all are; by size the same rejections are one.
  replay    a clock replay of a saved workload twice, and of the same workload generated: the same blocks and state.
  usage     bad slot schedules and options that cannot take effect with --blocks-by clock: one line, exit 2.
"""

import json
import os
import sys
import tempfile

import harness_test as ht

# Hive's RC arithmetic as apiary has it (core/chain/include/apiary/core/chain/rc.hpp): a manabar refills in five days
# of 3-second blocks.
REGEN_BLOCKS = 5 * 24 * 3600 // 3  # 144,000


def smoke(args):
    return ["run", "--config", os.path.join(args.source_dir, "configs", "smoke.toml"), "--blocks-by", "clock"]


def run_ok(args, schema, name, extra):
    report = os.path.join(args.work_dir, name + ".json")
    p = ht.run_apiary(args, smoke(args) + ["--audit", "on", "--report", report] + extra)
    ht.check(p.returncode == 0, "%s: exit status %d; stderr:\n%s" % (name, p.returncode, p.stderr))
    r = ht.load_report(report, schema)
    ht.check(r["audit"]["passed"] is True, "%s: the audit failed: %s" % (name, r["audit"]["violations"]))
    ht.check(r["config"]["blocks-by"] == "clock", "%s: the report's config says blocks-by %s"
             % (name, r["config"]["blocks-by"]))
    return r


def clock_config(args, name, keys):
    """smoke.toml with `keys` added: the clock's options from a config file, as every run option."""
    with open(os.path.join(args.source_dir, "configs", "smoke.toml")) as f:
        text = f.read()
    path = os.path.join(args.work_dir, name + ".toml")
    with open(path, "w") as f:
        f.write(text + "".join("%s = %s\n" % (k, v) for k, v in keys.items()))
    return path


def mode_empty(args, schema):
    blocks = 10
    config = clock_config(args, "clock-empty", {"blocks-by": '"clock"', "slot-transactions": '"poisson:150"',
                                                "genesis-vesting": 0})
    report = os.path.join(args.work_dir, "clock-empty.json")
    p = ht.run_apiary(args, ["run", "--config", config, "--audit", "on", "--report", report, "--blocks", str(blocks)])
    ht.check(p.returncode == 0, "exit status %d; stderr:\n%s" % (p.returncode, p.stderr))
    r = ht.load_report(report, schema)
    ht.check(r["audit"]["passed"] is True, "the audit failed: %s" % r["audit"]["violations"])
    ht.check(r["config"]["blocks-by"] == "clock" and r["config"]["slot-transactions"] == "poisson:150",
             "the report's config: %s" % r["config"])
    ht.check("blocks by clock, poisson:150 per slot" in p.stdout, "the summary does not name the mode:\n%s" % p.stdout)
    ht.check(r["stop_reason"] == "blocks", "stopped by %s, not by --blocks" % r["stop_reason"])
    measured = [b for b in r["blocks"] if not b["warmup"]]
    ht.check(len(measured) == blocks, "%d measured blocks, expected %d" % (len(measured), blocks))
    ht.check(all(b["transactions"] == 0 and b["pending_after"] == 0 for b in r["blocks"]),
             "a block holds transactions: %s" % [b["transactions"] for b in r["blocks"]])
    k = r["colony"]
    others = {n: v for n, v in r["rejections"].items() if v and n != "insufficient_rc"}
    ht.check(k["accepted"] == 0 and not others, "accepted %d, other rejections %s" % (k["accepted"], others))
    ht.check(r["rejections"]["insufficient_rc"] == k["rejected"] > 0,
             "%d rejected, %d as insufficient_rc" % (k["rejected"], r["rejections"]["insufficient_rc"]))
    # Each block came once its slot's Poisson(150) draw was answered: at least one slot's worth in all.
    ht.check(k["rejected"] >= 100 * len(r["blocks"]), "%d rejections over %d blocks: slots left unanswered"
             % (k["rejected"], len(r["blocks"])))
    print("empty: %d empty blocks, %d transactions all rejected as insufficient_rc, audit passed"
          % (len(r["blocks"]), k["rejected"]))


def mode_overflow(args, schema):
    r = run_ok(args, schema, "clock-overflow", ["--sign", "off", "--slot-transactions", "uniform:300..400",
                                                "--blocks", "20"])
    sizes = [b["size_bytes"] for b in r["blocks"]]
    ht.check(max(sizes) <= 65536, "a block of %d bytes above the 64 KiB target" % max(sizes))
    pending = [b["pending_after"] for b in r["blocks"]]
    ht.check(max(pending) > 0, "no block left transactions pending: the slots never overflowed")
    # Overflow carries over: the pending list grows while each slot offers more than a block holds.
    ht.check(pending[-1] > pending[0], "the pending list did not grow: %s" % pending)
    k = r["colony"]
    ht.check(k["submitted"] >= 300 * len(r["blocks"]), "%d submitted for %d slots of 300 to 400"
             % (k["submitted"], len(r["blocks"])))
    print("overflow: %d blocks at most %d bytes, %d pending at the end, audit passed"
          % (len(r["blocks"]), max(sizes), pending[-1]))


def mode_answered(args, schema):
    # 300,000 unsigned transactions a slot, every one rejected (vesting 0): seconds to answer on the 2-core machine,
    # against a --stall-timeout of 0.3 s. (Were the machine fast enough to answer a slot within it, this would pass
    # without proving anything, never fail.)
    report = os.path.join(args.work_dir, "clock-answered.json")
    p = ht.run_apiary(args, smoke(args) + ["--sign", "off", "--slot-transactions", "300000", "--genesis-vesting", "0",
                                           "--warmup-blocks", "0", "--blocks", "2", "--stall-timeout", "0.3s",
                                           "--report", report])
    ht.check(p.returncode == 0, "exit status %d; stderr:\n%s" % (p.returncode, p.stderr))
    r = ht.load_report(report, schema)
    ht.check(len(r["blocks"]) == 2 and r["colony"]["rejected"] >= 600000,
             "%d blocks, %d rejected" % (len(r["blocks"]), r["colony"]["rejected"]))
    print("answered: 2 blocks of 300,000 rejections each, no stall at --stall-timeout 0.3 s")


def replay(args, extra, report, blocks_by="clock"):
    p = ht.run_apiary(args, ["replay", "--blocks-by", blocks_by, "--report", report] + extra, timeout=300)
    ht.check(p.returncode == 0, "replay %s: exit %d: %s" % (extra, p.returncode, p.stderr))
    with open(report) as f:
        return json.load(f)


def mode_converge(args, schema):
    """20 accounts, each with 5,760 micro-VESTS: each regenerates 5,760 / 144,000 = 0.04 mana per block (exactly 1
    every 25 blocks, so nothing is lost to rounding when it pays as soon as it can). The mix is custom_json only,
    which uses three resources (history bytes, state bytes, execution time; no market bytes), and with all the
    vesting regenerating 20 x 0.04 < 1 mana per block every price is the floor of 1 per resource: each transaction
    costs 3. Each slot offers 6 per account (round-robin), 5 of which fit the custom-op limit, so the genesis mana
    (1,920 transactions each) is spent in 384 blocks; then 20 x 0.04 / 3 = 0.267 transactions per block are
    accepted. Measured over whole periods of 75 blocks (3 / 0.04), from block 450 to 1125, before the workload's
    transactions expire (an hour, 1,200 blocks)."""
    accounts, vesting, cost, per_account, blocks = 20, 5760, 3, 6, 1150
    first, last = 450, 1125
    slot = accounts * per_account
    r = replay(args, ["--accounts", str(accounts), "--threads", "1", "--sign", "off",
                      "--mix", "article=0,reply=0,vote=0,transfer=0", "--genesis-vesting", str(vesting),
                      "--slot-transactions", str(slot), "--transactions", str(slot * blocks)],
               os.path.join(args.work_dir, "clock-converge.json"))
    res = r["result"]
    ht.check(res["blocks"] == blocks, "%d blocks, expected one per slot: %d" % (res["blocks"], blocks))
    ht.check(res["rejections"]["insufficient_rc"] > 0, "no transaction ran out of RC: %s" % res["rejections"])
    counts = [b["transactions"] for b in r["blocks"]]
    ht.check(counts[0] == accounts * 5, "block 1 holds %d, expected %d (5 custom ops per account)"
             % (counts[0], accounts * 5))
    expected = accounts * (vesting / REGEN_BLOCKS) / cost
    got = sum(counts[first:last]) / (last - first)
    ht.check(abs(got - expected) <= 0.05 * expected,
             "%.4f transactions per block accepted in blocks %d..%d, expected %.4f (accounts %d x regen %.3f / "
             "cost %d)" % (got, first + 1, last, expected, accounts, vesting / REGEN_BLOCKS, cost))
    print("converge: %.4f accepted per block over blocks %d..%d, expected %.4f; %d rejected as insufficient_rc"
          % (got, first + 1, last, expected, res["rejections"]["insufficient_rc"]))


def mode_replay(args, schema):
    tmp = tempfile.mkdtemp(dir=args.work_dir)
    wl = os.path.join(tmp, "w.bin")
    common = ["--accounts", "200", "--seed", "11", "--sign", "off"]
    p = ht.run_apiary(args, ["workload", "--out", wl, "--transactions", "6000"] + common, timeout=300)
    ht.check(p.returncode == 0, "apiary workload failed: %s" % p.stderr)
    clock = ["--genesis-vesting", "30", "--slot-transactions", "poisson:300", "--block-size", "64KiB"]
    results = [replay(args, clock + ["--workload", wl], os.path.join(tmp, "a.json")),
               replay(args, clock + ["--workload", wl], os.path.join(tmp, "b.json")),
               replay(args, clock + ["--transactions", "6000"] + common, os.path.join(tmp, "c.json"))]
    r = results[0]["result"]
    ht.check(r["rejections"]["insufficient_rc"] > 0, "no scarcity: %s" % r["rejections"])
    ht.check(20 - 6 <= r["blocks"] <= 20 + 6, "%d blocks for 6,000 transactions in slots of about 300" % r["blocks"])
    for other in results[1:]:
        ht.check([b["transactions"] for b in other["blocks"]] == [b["transactions"] for b in results[0]["blocks"]],
                 "replays cut different blocks")
        for key in ("state_digest", "head_block_id", "accepted"):
            ht.check(other["result"][key] == r[key], "replays differ in %s" % key)
    sized = replay(args, ["--workload", wl, "--genesis-vesting", "30", "--block-size", "64KiB"],
                   os.path.join(tmp, "size.json"), "size")
    ht.check(sized["result"]["state_digest"] != r["state_digest"], "blocks by size and by clock give one state")
    # --blocks N: exactly the slots' transactions of N blocks, so the replay ends at block N
    counted = replay(args, clock + common + ["--blocks", "9"], os.path.join(tmp, "blocks.json"))["result"]
    offered = counted["accepted"] + sum(counted["rejections"].values())
    ht.check(counted["blocks"] == 9 and offered == counted["transactions"],
             "--blocks 9: %d blocks, %d of %d transactions answered" % (counted["blocks"], offered,
                                                                         counted["transactions"]))
    print("replay: %d blocks, %d accepted, state %s... the same twice and generated; --blocks 9 gives 9 blocks of "
          "%d transactions" % (r["blocks"], r["accepted"], r["state_digest"][:16], counted["transactions"]))


def mode_usage(args, schema):
    cases = [(["run", "--blocks-by", "clock", "--slot-transactions", "poisson:0"], "poisson:0"),
             (["run", "--blocks-by", "clock", "--slot-transactions", "uniform:9..3"], "uniform:9..3"),
             (["run", "--blocks-by", "clock", "--slot-transactions", "lots"], "lots"),
             (["run", "--blocks-by", "hourly"], "hourly"),
             (["run", "--slot-transactions", "500"], "--blocks-by clock"),
             (["run", "--blocks-by", "clock", "--rate", "5000"], "--rate"),
             (["run", "--blocks-by", "clock", "--block-transactions", "100"], "--block-transactions"),
             (["run", "--rate", "block", "--blocks-by", "clock", "--block-budget", "100"], "--block-budget"),
             (["run", "--genesis-vesting", "0"], "--genesis-vesting 0"),
             (["replay", "--blocks-by", "clock", "--slot-transactions", "uniform:1..x"], "uniform:1..x"),
             (["replay", "--blocks", "5"], "--blocks-by clock"),
             (["replay", "--blocks-by", "clock", "--blocks", "5", "--transactions", "10"], "--transactions"),
             (["replay", "--blocks-by", "clock", "--blocks", "5", "--faults", "duplicate=0.1"], "--faults")]
    bad = clock_config(args, "clock-bad", {"blocks-by": '"clock"', "slot-transactions": '"uniform:5"'})
    cases.append((["run", "--config", bad], "uniform:5"))
    for cmd, needle in cases:
        p = ht.run_apiary(args, cmd + ["--blocks", "1"] if cmd[0] == "run" else cmd, timeout=60)
        lines = p.stderr.strip().splitlines()
        ht.check(p.returncode == 2 and len(lines) == 1 and needle in lines[0],
                 "%s: exit %d, expected 2 and one line naming %r; stderr:\n%s" % (cmd, p.returncode, needle, p.stderr))
        print("usage: %s" % lines[0])


def main():
    return ht.run_modes({"empty": mode_empty, "overflow": mode_overflow, "converge": mode_converge,
                         "answered": mode_answered, "replay": mode_replay, "usage": mode_usage}, __doc__)


if __name__ == "__main__":
    sys.exit(main())
