#!/usr/bin/env python3
"""End-to-end tests of `apiary run`, `apiary workload` and `apiary replay`, run by ctest (tests/harness/CMakeLists.txt).

Each mode runs the real binary and checks what it leaves behind:

  e2e        smoke.toml with both dumps and --audit: exit 0, the audit passes; the report validates against
             harness/report.schema.json and against its own arithmetic; the dumps' bytes,
             ids and sizes check out.
  interrupt  a run without limits, SIGINT (or SIGTERM) after a moment: exit 130 (143), a
             valid report marked "interrupted": true.
  failure    an exception on the writer thread (the hidden --fail-at-block): exit 1, a valid
             report marked "failed": true with the error.
  bad-usage  bad values, keys and files: exit 2, one line on stderr naming the problem, no
             report written.
  help       `apiary run --help` lists every option scripts rely on, each with its default.
  defaults   the built-in defaults equal configs/default.toml.
  faults     smoke.toml with every --faults kind: each rejected for its own reason only.
  replay     a saved workload replays to the same state twice, and like the same workload
             generated in memory; damaged workload files and bad options: exit 2, one line.
"""

import argparse
import hashlib
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time

import jsonschema

REQUIRED_OPTIONS = [
    "--config", "--blocks", "--warmup-blocks", "--duration", "--threads", "--block-size", "--rate",
    "--seed", "--sign", "--report", "--dump-transactions", "--dump-blocks", "--transactions",
]


class Failure(Exception):
    pass


FAULT_KINDS = ["duplicate", "expired", "unknown-reference", "missing-authority", "insufficient-funds",
               "invalid-json", "custom-op-limit", "oversize", "no-rc"]


def check(cond, message):
    if not cond:
        raise Failure(message)


def close(a, b, tol):
    return abs(a - b) <= tol


# ---- the report ------------------------------------------------------------------------------

def load_schema(source_dir):
    with open(os.path.join(source_dir, "harness", "report.schema.json")) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


def validate_schema(report, schema):
    v = jsonschema.Draft202012Validator(schema)
    errors = sorted(v.iter_errors(report), key=lambda e: list(e.path))
    if errors:
        lines = ["%s: %s" % ("/".join(str(p) for p in e.path), e.message[:300]) for e in errors[:20]]
        raise Failure("the report does not match the schema:\n  " + "\n  ".join(lines))


def nearest_rank(sorted_values, p):
    rank = math.ceil(p / 100.0 * len(sorted_values))
    rank = min(max(rank, 1), len(sorted_values))
    return sorted_values[rank - 1]


def recompute_series(values, nums):
    n = len(values)
    if n == 0:
        return {"count": 0}
    s = sorted(values)
    avg = sum(values) / n
    mid = n // 2
    median = s[mid] if n % 2 == 1 else (s[mid - 1] + s[mid]) / 2
    mn, mx = min(values), max(values)
    return {
        "count": n, "min": mn, "max": mx, "avg": avg, "median": median,
        "p90": nearest_rank(s, 90), "p99": nearest_rank(s, 99),
        "stddev": math.sqrt(sum((v - avg) ** 2 for v in values) / n),
        "min_block": nums[values.index(mn)], "max_block": nums[values.index(mx)],
    }


def check_series(name, got, values, nums, tol):
    want = recompute_series(values, nums)
    check(got["count"] == want["count"], "%s: count %s, the records give %s" % (name, got["count"], want["count"]))
    if want["count"] == 0:
        return
    for key in ("min", "max", "avg", "median", "p90", "p99", "stddev"):
        check(close(got[key], want[key], tol), "%s.%s: %s, the records give %s" % (name, key, got[key], want[key]))
    # Equal values may tie: the block named must hold the extreme.
    by_num = dict(zip(nums, values, strict=True))
    check(close(by_num[got["min_block"]], want["min"], tol),
          "%s.min_block %s does not hold the minimum" % (name, got["min_block"]))
    check(close(by_num[got["max_block"]], want["max"], tol),
          "%s.max_block %s does not hold the maximum" % (name, got["max_block"]))


def check_arithmetic(r):
    if r["status"] == "aborted":  # a hard exit's: what was run, why it ended, nothing measured
        check(r["interrupted"] and not r["failed"] and r["error"], "an aborted report's flags or error")
        check(not {"blocks", "aggregates", "timing"} & set(r), "an aborted report holds measurements")
        return
    cfg = r["config"]
    blocks = r["blocks"]
    agg = r["aggregates"]

    # Status flags agree.
    check(r["interrupted"] == (r["status"] == "interrupted"), "interrupted flag and status disagree")
    check(r["failed"] == (r["status"] == "failed"), "failed flag and status disagree")
    check((r["error"] is not None) == r["failed"], "error is set exactly when the run failed")

    # Blocks: consecutive from the genesis or the snapshot's head, within the size target, warm-up first.
    first = (r["context"].get("state") or {}).get("head_block_num", 0) + 1
    for i, b in enumerate(blocks):
        check(b["num"] == first + i, "block %d has number %d" % (first + i, b["num"]))
        check(b["size_bytes"] <= cfg["block-size"],
              "block #%d is %d bytes, above the %d-byte target" % (b["num"], b["size_bytes"], cfg["block-size"]))
        check(b["warmup"] == (i < cfg["warmup-blocks"]), "block #%d: wrong warm-up flag" % b["num"])
        check((b["cycle_us"] is None) == (i == 0), "block #%d: only the first block has no cycle" % b["num"])
        check(close(b["processing_us"], b["produced_us"] + b["applied_us"], 0.0021),
              "block #%d: processing is not produced + applied" % b["num"])
        if i > 0:
            check(close(b["cycle_us"], (b["completed_ms"] - blocks[i - 1]["completed_ms"]) * 1000, 0.01),
                  "block #%d: cycle is not the time between completions" % b["num"])
    measured = [b for b in blocks if not b["warmup"]]
    check(agg["warmup_blocks"] == len(blocks) - len(measured), "aggregates.warmup_blocks")
    check(agg["measured_blocks"] == len(measured), "aggregates.measured_blocks is not the measured records")
    if r["status"] == "completed" and r["stop_reason"] == "blocks":
        check(len(measured) == cfg["blocks"], "stopped by the block limit after %d measured blocks, not %d"
              % (len(measured), cfg["blocks"]))

    # Statistics agree with the records.
    nums = [b["num"] for b in measured]
    cyc = [(b["num"], b["cycle_us"]) for b in measured if b["cycle_us"] is not None]
    check_series("cycle_us", agg["cycle_us"], [c for _, c in cyc], [n for n, _ in cyc], 0.01)
    for key in ("produced_us", "applied_us", "processing_us"):
        check_series(key, agg[key], [b[key] for b in measured], nums, 0.01)
    check_series("transactions_per_block", agg["transactions_per_block"], [b["transactions"] for b in measured], nums,
                 0.001)
    check_series("size_bytes", agg["size_bytes"], [b["size_bytes"] for b in measured], nums, 0.001)

    # Throughput over the measured window.
    t = r["throughput"]
    check(t["transactions"] == sum(b["transactions"] for b in measured), "throughput.transactions")
    check(t["bytes"] == sum(b["size_bytes"] for b in measured), "throughput.bytes")
    if measured:
        start_ms = blocks[cfg["warmup-blocks"] - 1]["completed_ms"] if cfg["warmup-blocks"] > 0 else 0.0
        window = (measured[-1]["completed_ms"] - start_ms) / 1000
        check(close(t["window_s"], window, 2e-9),
              "throughput.window_s %s, the records give %s" % (t["window_s"], window))
        if cfg["warmup-blocks"] > 0:
            check(close(t["window_s"] * 1e6, sum(b["cycle_us"] for b in measured), 1.0 + 0.001 * len(measured)),
                  "the measured window is not the sum of the measured cycles")
        if t["window_s"] > 0:
            check(close(t["tx_per_s"], t["transactions"] / t["window_s"], 0.01 + 1e-6 * t["tx_per_s"]), "tx_per_s")
    cpu = r["cpu"]
    if cpu["window_s"] > 0:
        check(close(cpu["utilization"], cpu["process_cpu_s"] / (cpu["window_s"] * cpu["cores"]), 1e-5),
              "cpu.utilization")

    # The writer's shares add up.
    w = r["writer"]
    if w["total_ms"] > 0:
        shares = (w["wait_work_share"] + w["wait_lock_share"] + w["transactions_share"] + w["blocks_share"]
                  + w["observe_share"] + w["unknown_share"])
        check(close(shares, 1.0, 1e-4), "writer shares add up to %s" % shares)
        check(close(w["unknown_ms"], w["total_ms"] - w["wait_work_ms"] - w["wait_lock_ms"] - w["transactions_ms"]
                    - w["blocks_ms"] - w["observe_ms"], 0.01), "writer.unknown_ms is not the rest")
        # Every observer a run adds, timed; together at most the whole of the observing.
        costs = w["observers_us_per_block"]
        check({"timing outbox", "window", "log", "colony head", "stop"} <= set(costs),
              "writer.observers_us_per_block lacks an observer: %s" % sorted(costs))

    # Signing bound (information) and the process-CPU bound.
    s = r["signing"]
    check(close(s["bound_us"], s["cpu_ms_per_block"] * 1000 / r["context"]["cores"], 0.01), "signing.bound_us")
    if s["cycle_to_bound"] is not None:
        check(close(s["cycle_to_bound"], agg["cycle_us"]["avg"] / s["bound_us"], 1e-4), "signing.cycle_to_bound")
    check_cpu_split(r)
    check_targets(r)
    check_counters(r)
    check_validity(r)

    # The colony: per-kind counts add up; every submitted transaction answered, by the chain or
    # (the run stopped before the writer pushed it) with shutdown; none left in flight.
    c = r["colony"]
    kinds = c["kinds"]
    check(sum(k["count"] for k in kinds) == c["generated"], "per-kind counts do not add up to generated")
    if c["generated"]:
        check(close(sum(k["share"] for k in kinds), 1.0, 1e-5), "kind shares do not add up to 1")
        total_size = sum(k["size_bytes"] for k in kinds)
        check(close(c["avg_size_bytes"], total_size / c["generated"], 0.001), "colony.avg_size_bytes")
    for k in kinds:
        if k["count"]:
            check(close(k["share"], k["count"] / c["generated"], 1e-6), "%s share" % k["kind"])
            check(close(k["avg_extra_bytes"], k["extra_bytes"] / k["count"], 0.001), "%s avg_extra_bytes" % k["kind"])
            check(close(k["avg_size_bytes"], k["size_bytes"] / k["count"], 0.001), "%s avg_size_bytes" % k["kind"])
    check(c["submitted"] <= c["generated"] + c["injected"], "more submitted than generated and injected")
    check(c["injected"] == sum(f["injected"] for f in c["faults"]), "injected is not the sum of the fault kinds")
    check(c["in_flight_at_end"] == 0, "%d transactions never answered" % c["in_flight_at_end"])
    check(c["accepted"] + c["rejected"] + c["shutdown"] == c["submitted"],
          "accepted %d + rejected %d + shutdown %d != submitted %d"
          % (c["accepted"], c["rejected"], c["shutdown"], c["submitted"]))
    check(sum(r["rejections"].values()) == c["rejected"], "rejections by reason do not add up")
    # Per producer thread: the totals are their sums, the peak their highest.
    threads = c["per_thread"]
    check(len(threads) == c["threads"], "%d per-thread records for %d threads" % (len(threads), c["threads"]))
    for key in ("generated", "submitted", "accepted", "rejected"):
        check(sum(t[key] for t in threads) == c[key], "per-thread %s does not add up to the colony's" % key)
    check(max(t["in_flight_peak"] for t in threads) == c["in_flight_peak"],
          "in_flight_peak is not the threads' highest")

    # Transactions in blocks = accepted ones minus those still pending (and dropped ones).
    led = r["ledger"]
    check(led["accepted"] == c["accepted"], "ledger.accepted != colony.accepted")
    check(led["in_blocks"] == sum(b["transactions"] for b in blocks), "ledger.in_blocks is not the blocks' sum")
    check(led["dropped"] == sum(b["dropped"] for b in blocks), "ledger.dropped is not the blocks' sum")
    check(led["in_blocks"] == led["accepted"] - led["pending_at_end"] - led["dropped"],
          "in blocks %d != accepted %d - pending %d - dropped %d"
          % (led["in_blocks"], led["accepted"], led["pending_at_end"], led["dropped"]))


def check_validity(r):
    """The validity section agrees with the schedule's and the steadiness' own figures (validity.hpp): invalid
    exactly when the generator fell behind, a reason for that, a warning for a changed level; each schedule
    interval's generator lag is its lag less the time held back, and the intervals follow each other."""
    v, s, w = r["validity"], r["schedule"], r["validity"]["steadiness"]
    behind = s is not None and s["behind"]
    check(v["valid"] == (not behind), "valid %s but the schedule behind %s" % (v["valid"], behind))
    check(len(v["reasons"]) == (1 if behind else 0), "reasons: %s" % v["reasons"])
    check(w["level_changed"] == (any("changes level" in x for x in v["warnings"])), "steadiness against warnings")
    check(w["checked"] == (w["not_checked"] is None), "steadiness: checked and not_checked disagree")
    tps = r["config"]["rate"] not in ("infinite", "block")
    check(s is None if not tps else (s is not None or r["throughput"]["window_s"] == 0),
          "a schedule section outside a tps run, or none in one with a measured window")
    if s is None:
        return
    t = 0.0
    for x in s["intervals"]:
        check(close(x["generator_lag_ms"], x["lag_ms"] - x["held_ms"], 0.003), "generator_lag_ms != lag - held: %s" % x)
        check(close(x["t_s"] - t, x["interval_s"], 0.002), "the intervals do not follow each other: %s" % x)
        t = x["t_s"]
    check(not s["behind"] or s["worst_fall_behind"] > s["limit"], "behind without falling behind by the limit")


def check_cpu_split(r):
    """The process-CPU bound and the split of the process's CPU into signing, core and harness."""
    cpu, agg, cfg = r["cpu"], r["aggregates"], r["config"]
    blocks = agg["measured_blocks"]
    # Per block from totals the report rounds to the microsecond.
    tol = 1e-3 / max(blocks, 1) + 1e-5
    if blocks:
        check(close(cpu["ms_per_block"], cpu["process_cpu_s"] * 1000 / blocks, tol), "cpu.ms_per_block")
    check(close(cpu["bound_us"], cpu["ms_per_block"] * 1000 / cpu["cores"], 0.01), "cpu.bound_us")
    if cpu["cycle_to_bound"] is not None:
        check(close(cpu["cycle_to_bound"], agg["cycle_us"]["avg"] / cpu["bound_us"], 1e-4), "cpu.cycle_to_bound")
    sp = cpu["split"]
    known = blocks > 0 and cpu["process_cpu_s"] > 0 and (not cfg["sign"] or cfg["measure-cpu"])
    check((sp is not None) == known,
          "cpu.split is %s for sign %s, measure-cpu %s" % (sp, cfg["sign"], cfg["measure-cpu"]))
    if sp is None:
        return
    w = r["writer"]
    check(close(sp["process_ms_per_block"], cpu["ms_per_block"], 1e-5), "split.process_ms_per_block")
    signing = r["signing"]["cpu_ms_per_block"] if cfg["sign"] else 0.0
    check(close(sp["signing_ms_per_block"], signing, 1e-5), "split.signing_ms_per_block")
    check(close(sp["core_ms_per_block"], (w["transactions_ms"] + w["blocks_ms"]) / blocks, tol),
          "split.core_ms_per_block is not the writer's transactions and blocks time")
    rest = sp["process_ms_per_block"] - sp["signing_ms_per_block"] - sp["core_ms_per_block"]
    check(close(sp["harness_ms_per_block"], rest, 1e-5), "split.harness_ms_per_block is not the rest")
    check(close(sp["harness_share"], rest / sp["process_ms_per_block"], 1e-5), "split.harness_share")


COUNTER_EVENTS = ("task_clock_ns", "context_switches", "cpu_migrations", "page_faults", "instructions", "cycles",
                  "cache_references", "cache_misses", "branch_misses", "llc_misses")


def check_counters(r):
    """The per-thread counters: the section --counters asks for, one entry per thread, an event null exactly where it
    is not counted, and per_block and per_transaction the window's counts over the measured blocks and over the
    transactions in them."""
    k, cfg = r["counters"], r["config"]
    check(k["enabled"] == cfg["counters"], "counters.enabled %s with --counters %s" % (k["enabled"], cfg["counters"]))
    if not k["enabled"]:
        check(k["unavailable"] is None and k["events"] == {} and k["threads"] == [], "--counters off: %s" % k)
        return
    check(set(k["events"]) == set(COUNTER_EVENTS), "counters.events: %s" % sorted(k["events"]))
    for name, e in k["events"].items():
        check(e["available"] or e["reason"], "counters.events.%s: not available and no reason" % name)
    if k["unavailable"] is not None:
        check(k["threads"] == [], "counters unavailable (%s) but threads listed" % k["unavailable"])
        return
    names = ["writer"] + ["producer-%d" % t for t in range(cfg["threads"])] + ["main"]
    check([t["name"] for t in k["threads"]] == names, "counters.threads: %s" % [t["name"] for t in k["threads"]])
    tids = [t["tid"] for t in k["threads"]]
    check(len(set(tids)) == len(tids) and min(tids) > 0, "counters: thread ids %s" % tids)
    blocks, transactions = r["aggregates"]["measured_blocks"], r["throughput"]["transactions"]
    for t in k["threads"]:
        for name in COUNTER_EVENTS:
            count, per_block, per_tx = t["window"][name], t["per_block"][name], t["per_transaction"][name]
            if not k["events"][name]["available"]:
                check(count is None and per_block is None and per_tx is None,
                      "%s: %s is not counted but has figures" % (t["name"], name))
                continue
            check(count is not None, "%s: %s is available but has no count" % (t["name"], name))
            for got, n, what in ((per_block, blocks, "per_block"), (per_tx, transactions, "per_transaction")):
                check((got is None) == (n == 0), "%s: %s.%s is %s over %d" % (t["name"], what, name, got, n))
                if n:
                    check(close(got * n, count, 1e-6 + 1e-9 * count),
                          "%s: %s.%s %r x %d is not the window's %d" % (t["name"], what, name, got, n, count))
        w = t["window"]
        ipc = w["instructions"] / w["cycles"] if w["instructions"] is not None and w["cycles"] else None
        check((t["ipc"] is None) == (ipc is None) and (ipc is None or close(t["ipc"], ipc, 1e-9)),
              "%s: ipc %s, instructions / cycles %s" % (t["name"], t["ipc"], ipc))


def check_targets(r):
    """The targets the configuration calls for, each with its value and verdict."""
    cfg, cpu = r["config"], r["cpu"]
    targets = {t["name"]: t for t in r["targets"]}
    for t in targets.values():
        check(t["met"] == (t["value"] >= t["target"] if t["name"] == "cpu_utilization" else
                           abs(t["value"] - t["target"]) <= 730 if t["name"] == "transactions_per_block" else
                           t["value"] <= t["target"]), "target %s: met is %s for %s" % (t["name"], t["met"], t))
    if not r["aggregates"]["measured_blocks"]:
        check(not targets, "targets without a measured block")
        return
    signed_infinite = cfg["sign"] and cfg["rate"] == "infinite" and cpu["cycle_to_bound"] is not None
    check(("cycle_to_cpu_bound" in targets) == signed_infinite, "cycle_to_cpu_bound applies to signed infinite runs")
    if signed_infinite:
        check(targets["cycle_to_cpu_bound"]["value"] == cpu["cycle_to_bound"], "cycle_to_cpu_bound's value")
    check(("harness_cpu_share" in targets) == (cpu["split"] is not None), "harness_cpu_share applies with a split")
    if cpu["split"] is not None:
        check(targets["harness_cpu_share"]["value"] == cpu["split"]["harness_share"], "harness_cpu_share's value")


# ---- the dumps -------------------------------------------------------------------------------

def varint_size(n):
    size = 1
    while n >= 0x80:
        n >>= 7
        size += 1
    return size


def check_transaction_dump(path, expected):
    lines = open(path).read().splitlines()
    check(len(lines) == expected, "%s: %d lines, expected %d" % (path, len(lines), expected))
    for i, line in enumerate(lines):
        d = json.loads(line)
        check(d["index"] == i, "dump line %d: index %s" % (i, d["index"]))
        packed = bytes.fromhex(d["packed_hex"])
        check(len(packed) == d["size_bytes"], "dump line %d: packed size" % i)
        sigs = len(d["transaction"]["signatures"])
        unsigned = packed[: len(packed) - varint_size(sigs) - 65 * sigs]
        check(packed[len(unsigned)] == sigs, "dump line %d: signature count" % i)
        check(hashlib.sha256(unsigned).hexdigest()[:40] == d["id"],
              "dump line %d: the id is not sha256(unsigned)[:20]" % i)
        check(len(d["signer_keys"]) == sigs, "dump line %d: a signer key per signature" % i)
        check(d["signer_keys"] == d["attached_signer_keys"],
              "dump line %d: recovered keys differ from attached ones" % i)
        for k in d["signer_keys"]:
            check(k.startswith("STM"), "dump line %d: key %s" % (i, k))
        check(d["outcome"] is None or isinstance(d["outcome"], str), "dump line %d: outcome" % i)


def check_block_dump(path, report):
    by_num = {b["num"]: b for b in report["blocks"]}
    lines = open(path).read().splitlines()
    check(len(lines) == min(report["config"]["dump-block-limit"], report["aggregates"]["measured_blocks"]),
          "%s: %d blocks" % (path, len(lines)))
    for line in lines:
        d = json.loads(line)
        n = d["block_num"]
        check(d["id_matches_chain"], "block #%d: the rebuilt block's id differs from the chain's" % n)
        check(int(d["id"][:8], 16) == n, "block #%d: the id does not encode the number" % n)
        check(len(bytes.fromhex(d["packed_hex"])) == d["size_bytes"], "block #%d: packed size" % n)
        check(d["size_bytes"] == by_num[n]["size_bytes"], "block #%d: size differs from the report's record" % n)
        check(d["transaction_count"] == by_num[n]["transactions"], "block #%d: count differs from the report" % n)
        b = d["block"]
        check(b["block_id"] == d["id"], "block #%d: block_id" % n)
        check(len(b["transactions"]) == len(b["transaction_ids"]) == d["transaction_count"], "block #%d: counts" % n)
        check(d["signing_key"].startswith("STM"), "block #%d: signing key" % n)


# ---- modes -----------------------------------------------------------------------------------

def run_apiary(args, cmd, timeout=900, env=None):
    """apiary with `cmd`, in the work directory; `env` adds to (or overrides) the environment."""
    full = dict(os.environ, **env) if env else None
    return subprocess.run([args.apiary] + cmd, capture_output=True, text=True, timeout=timeout, cwd=args.work_dir,
                          env=full)


def interval_records(path):
    """The records of an interval log, without the RC archives' own lines ({"rc_archive": ...})."""
    with open(path) as f:
        return [d for d in map(json.loads, f) if "rc_archive" not in d]


def load_report(path, schema):
    with open(path) as f:
        report = json.load(f)
    validate_schema(report, schema)
    check_arithmetic(report)
    return report


def mode_e2e(args, schema):
    report_path = os.path.join(args.work_dir, "smoke.json")
    tx_path = os.path.join(args.work_dir, "smoke-transactions.jsonl")
    block_path = os.path.join(args.work_dir, "smoke-blocks.jsonl")
    for p in (report_path, tx_path, block_path):
        if os.path.exists(p):
            os.remove(p)
    p = run_apiary(args, ["run", "--config", os.path.join(args.source_dir, "configs", "smoke.toml"),
                          "--report", report_path, "--dump-transactions", tx_path, "--dump-blocks", block_path,
                          "--dump-limit", "200", "--audit", "on"])
    sys.stdout.write(p.stdout)
    check(p.returncode == 0, "exit status %d, expected 0; stderr:\n%s" % (p.returncode, p.stderr))
    # Warnings (a busy machine) may go to stderr; a progress line may not.
    other = [line for line in p.stderr.splitlines() if not line.startswith("apiary: warning: ")]
    check(not other, "a run whose stderr is not a terminal prints no progress; stderr:\n%s" % p.stderr)
    check("Full block cycle" in p.stdout and "Report: " + report_path in p.stdout, "the summary is incomplete")
    r = load_report(report_path, schema)
    check(r["status"] == "completed" and r["stop_reason"] == "blocks",
          "status %s (%s)" % (r["status"], r["stop_reason"]))
    check(r["aggregates"]["measured_blocks"] == r["config"]["blocks"], "measured blocks")
    check(r["colony"]["kinds"][4]["count"] > 0 and r["colony"]["accepted"] > 0, "the colony produced nothing")
    check(r["dumps"]["transactions_written"] == 200, "transactions dumped")
    a = r["audit"]
    check(a["enabled"] and a["passed"] is True and not a["violations"], "the audit failed: %s" % a["violations"])
    check(a["known_transactions"] > 0 and a["undo_depth"] == r["config"]["reversible-blocks"] + 1, "audit: %s" % a)
    check("Audit: passed" in p.stdout, "the summary does not show the audit")
    check_transaction_dump(tx_path, 200)
    check_block_dump(block_path, r)
    print("e2e: report and dumps check out (%d blocks, %d transactions)" % (len(r["blocks"]), r["ledger"]["in_blocks"]))


def mode_interrupt(args, schema):
    sig = signal.SIGTERM if args.signal == "TERM" else signal.SIGINT
    expected_status = 143 if sig == signal.SIGTERM else 130
    report_path = os.path.join(args.work_dir, "interrupted-%s.json" % args.signal)
    if os.path.exists(report_path):
        os.remove(report_path)
    cmd = [args.apiary, "run", "--config", os.path.join(args.source_dir, "configs", "smoke.toml"),
           "--blocks", "0", "--audit", "on", "--report", report_path]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=args.work_dir)
    time.sleep(args.delay)
    check(proc.poll() is None, "apiary ended before it was interrupted")
    t0 = time.monotonic()
    proc.send_signal(sig)
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise Failure("apiary did not exit within 60 s of SIG%s" % args.signal) from None
    took = time.monotonic() - t0
    sys.stdout.write(out)
    check(proc.returncode == expected_status,
          "exit status %d, expected %d; stderr:\n%s" % (proc.returncode, expected_status, err))
    r = load_report(report_path, schema)
    check(r["interrupted"] is True and r["status"] == "interrupted", "the report is not marked interrupted")
    check(r["stop_reason"] == "SIG" + args.signal, "stop_reason %s" % r["stop_reason"])
    check(r["audit"]["passed"] is True, "the state after an interrupt fails the audit: %s" % r["audit"]["violations"])
    print("interrupt: SIG%s handled in %.2f s; %d blocks in the report" % (args.signal, took, len(r["blocks"])))


def mode_failure(args, schema):
    report_path = os.path.join(args.work_dir, "failed.json")
    if os.path.exists(report_path):
        os.remove(report_path)
    p = run_apiary(args, ["run", "--config", os.path.join(args.source_dir, "configs", "smoke.toml"),
                          "--report", report_path, "--fail-at-block", "5"])
    sys.stdout.write(p.stdout)
    check(p.returncode == 1, "exit status %d, expected 1; stderr:\n%s" % (p.returncode, p.stderr))
    r = load_report(report_path, schema)
    check(r["failed"] is True and r["status"] == "failed" and r["stop_reason"] == "error", "not marked failed")
    check("injected failure at block 5" in r["error"], "error: %s" % r["error"])
    check(len(r["blocks"]) == 5, "%d blocks, expected the 5 up to the failure" % len(r["blocks"]))
    check("error: " in p.stdout, "the summary does not show the error")
    print("failure: exit 1, report marked failed: %s" % r["error"])


def mode_log(args, schema):
    """--log-level info: Hive's queen lines on stderr and in the log file beside the report."""
    report_path = os.path.join(args.work_dir, "logged.json")
    log_path = os.path.join(args.work_dir, "logged.log")
    for p in (report_path, log_path):
        if os.path.exists(p):
            os.remove(p)
    p = run_apiary(args, ["run", "--config", os.path.join(args.source_dir, "configs", "smoke.toml"),
                          "--report", report_path, "--log-level", "info"])
    check(p.returncode == 0, "exit status %d, expected 0; stderr:\n%s" % (p.returncode, p.stderr))
    r = load_report(report_path, schema)
    check(r["log"]["file"] == log_path, "report's log.file %r, expected %r" % (r["log"]["file"], log_path))
    check(r["log"]["dropped"] == 0, "log messages dropped: %d" % r["log"]["dropped"])
    check(os.path.exists(log_path), "no log file beside the report")
    with open(log_path) as f:
        logged = f.read()
    cycle = r["aggregates"]["cycle_us"]
    for text in (p.stderr, logged):
        check("Blocks produced in average time of " in text, "no queen production line:\n%s" % text)
        check("Full block cycle: min = %.0fμs at #%d" % (cycle["min"], cycle["min_block"]) in text,
              "no queen cycle line agreeing with the report:\n%s" % text)
        check("Production stats for thread colony-0" in text, "no colony thread statistics:\n%s" % text)
    # At the default level stderr holds warnings only, while the file still gets info.
    p = run_apiary(args, ["run", "--config", os.path.join(args.source_dir, "configs", "smoke.toml"),
                          "--report", report_path, "--log-file", "none"])
    check(p.returncode == 0 and "Full block cycle: min" not in p.stderr, "info lines on stderr by default")
    r = load_report(report_path, schema)
    check(r["log"]["file"] is None, "--log-file none still names a log file")
    print("log: Hive's queen lines on stderr and in %s" % log_path)


def mode_bad_usage(args, schema):
    smoke = os.path.join(args.source_dir, "configs", "smoke.toml")
    tmp = tempfile.mkdtemp(dir=args.work_dir)
    unknown_key = os.path.join(tmp, "unknown-key.toml")
    with open(unknown_key, "w") as f:
        f.write("blocks = 3\nblokcs = 4\n")
    bad_value = os.path.join(tmp, "bad-value.toml")
    with open(bad_value, "w") as f:
        f.write("sign = \"maybe\"\n")
    garbage = os.path.join(tmp, "garbage.toml")
    with open(garbage, "wb") as f:
        f.write(b"\x00\xff\xfe = = [[\n")
    section = os.path.join(tmp, "section.toml")
    with open(section, "w") as f:
        f.write("[run]\nblocks = 3\n")
    cases = [
        (["--block-size", "3MiB"], "--block-size"),
        (["--block-size", "lots"], "--block-size"),
        (["--sign", "maybe"], "--sign"),
        (["--threads", "0"], "--threads"),
        (["--rate", "fast"], "--rate"),
        (["--blocks", "-3"], "blocks"),
        (["--duration", "soon"], "--duration"),
        (["--accounts", "1", "--threads", "2"], "--accounts"),
        (["--config", os.path.join(tmp, "missing.toml")], "missing.toml"),
        (["--config", unknown_key], "blokcs"),
        (["--config", bad_value], "sign"),
        (["--config", section], "section"),
        (["--no-such-option"], "no-such-option"),
        (["--report", tmp], "--report"),  # a directory
        (["--report", os.path.join(smoke, "report.json")], "--report"),  # under a file
        (["--block-size", "0"], "--block-size"),
        (["--accounts", "0"], "--accounts"),
        (["--threads", "129"], "--threads"),
        (["--blocks", "-1"], "--blocks"),
        (["--in-flight", "10000001"], "--in-flight"),
        (["--wait-for-work", "soon"], "--wait-for-work"),
        (["--mix", "article=16:100-5000^-1"], "exponent"),
        (["--mix", "poll=3"], "poll"),
        (["--mix", "article=0,reply=0,vote=0,transfer=0,custom_json=0"], "weight"),
        (["--mix", "transfer=5:400-300"], "min"),
        (["--faults", "dupe=0.1"], "dupe"),
        (["--faults", "expired=1.5"], "expired"),
        (["--faults", "missing-authority=0.1", "--sign", "off"], "--faults"),
        (["--config", tmp], "--config"),  # a directory
        (["--config", garbage], "not a TOML text file"),
    ]
    if os.geteuid() != 0:  # root reads any file
        unreadable = os.path.join(tmp, "unreadable.toml")
        with open(unreadable, "w") as f:
            f.write("blocks = 3\n")
        os.chmod(unreadable, 0)
        cases.append((["--config", unreadable], "cannot be read"))
    for extra, needle in cases:
        report = os.path.join(tmp, "report.json")
        cmd = ["run"] + (["--config", smoke] if extra[0] != "--config" else []) + extra
        if "--report" not in extra:
            cmd += ["--report", report]
        p = run_apiary(args, cmd, timeout=60)
        lines = p.stderr.splitlines()
        check(p.returncode == 2,
              "%s: exit status %d, expected 2; stderr: %s" % (" ".join(extra), p.returncode, p.stderr))
        check(len(lines) == 1, "%s: %d lines on stderr, expected one:\n%s" % (" ".join(extra), len(lines), p.stderr))
        check(needle in lines[0], "%s: the message does not name %s: %s" % (" ".join(extra), needle, lines[0]))
        check(p.stdout == "", "%s: something on stdout" % " ".join(extra))
        check(not os.path.exists(report), "%s: a report was written" % " ".join(extra))
        print("bad usage: %s -> %s" % (" ".join(extra), lines[0]))
    # Nothing but the inputs left in the temporary directory.
    left = sorted(set(os.listdir(tmp)) - {"unknown-key.toml", "bad-value.toml", "section.toml", "garbage.toml",
                                          "unreadable.toml"})
    check(not left, "files left behind: %s" % left)
    # The command line overrides the file: the file's bad value is never used.
    p = run_apiary(args, ["run", "--config", bad_value, "--sign", "off", "--print-config"], timeout=60)
    check(p.returncode == 0 and 'sign = "off"' in p.stdout,
          "the command line does not override the file: %s" % p.stderr)


def mode_help(args, schema):
    p = run_apiary(args, ["run", "--help"], timeout=60)
    check(p.returncode == 0, "run --help: exit status %d" % p.returncode)
    lines = p.stdout.splitlines()
    for opt in REQUIRED_OPTIONS:
        found = [line for line in lines if line.strip().startswith(opt + " ")]
        check(found, "run --help does not list %s" % opt)
        check("(default: " in found[0], "run --help: %s does not state its default: %s" % (opt, found[0].strip()))
    check("Exit status:" in p.stdout, "run --help does not document the exit status")
    p = run_apiary(args, [], timeout=60)
    check(p.returncode == 2 and len(p.stderr.splitlines()) == 1,
          "apiary without a subcommand: %d %s" % (p.returncode, p.stderr))
    print("help: every required option is listed with its default")


def mode_defaults(args, schema):
    builtin = run_apiary(args, ["run", "--print-config"], timeout=60)
    check(builtin.returncode == 0, "run --print-config: %s" % builtin.stderr)
    from_file = run_apiary(args, ["run", "--config", os.path.join(args.source_dir, "configs", "default.toml"),
                                  "--print-config"], timeout=60)
    check(from_file.returncode == 0, "run --config configs/default.toml --print-config: %s" % from_file.stderr)
    check(builtin.stdout == from_file.stdout,
          "configs/default.toml differs from the built-in defaults:\n--- built in\n%s--- default.toml\n%s"
          % (builtin.stdout, from_file.stdout))
    configs = os.path.join(args.source_dir, "configs")
    for name in sorted(f[:-len(".toml")] for f in os.listdir(configs) if f.endswith(".toml")):
        p = run_apiary(args, ["run", "--config", os.path.join(args.source_dir, "configs", name + ".toml"),
                              "--print-config"], timeout=60)
        check(p.returncode == 0, "configs/%s.toml does not load: %s" % (name, p.stderr))
        # What --print-config writes reads back to the same thing.
        path = os.path.join(args.work_dir, "printed-%s.toml" % name)
        with open(path, "w") as f:
            f.write(p.stdout)
        again = run_apiary(args, ["run", "--config", path, "--name", name, "--print-config"], timeout=60)
        check(again.returncode == 0 and again.stdout == p.stdout, "configs/%s.toml does not round-trip:\n%s%s"
              % (name, again.stderr, again.stdout))
    print("defaults: configs/default.toml equals the built-in defaults; every config loads and round-trips")


def mode_faults(args, schema):
    """smoke.toml with every fault kind: each companion is rejected for its own reason and
    nothing else is rejected."""
    report_path = os.path.join(args.work_dir, "faults.json")
    faults = ",".join("%s=0.01" % k for k in FAULT_KINDS)
    p = run_apiary(args, ["run", "--config", os.path.join(args.source_dir, "configs", "smoke.toml"),
                          "--faults", faults, "--audit", "on", "--report", report_path])
    check(p.returncode == 0, "exit status %d; stderr:\n%s" % (p.returncode, p.stderr))
    r = load_report(report_path, schema)
    k = r["colony"]
    check(r["config"]["faults"] == faults, "config.faults: %s" % r["config"]["faults"])
    check(k["injected"] == sum(f["injected"] for f in k["faults"]), "injected is not the sum of the kinds")
    check(k["submitted"] <= k["generated"] + k["injected"], "submitted above generated + injected")
    expected_reasons = set()
    for f in k["faults"]:
        check(f["injected"] > 0, "no %s fault was injected" % f["kind"])
        # Companions still queued when the run stopped were answered with shutdown instead.
        check(f["injected"] - k["shutdown"] <= f["rejected"] <= f["injected"],
              "%s: %d injected, %d rejected as %s" % (f["kind"], f["injected"], f["rejected"], f["reason"]))
        expected_reasons.add(f["reason"])
    others = {reason: n for reason, n in r["rejections"].items() if n and reason not in expected_reasons}
    check(not others, "rejections for other reasons: %s" % others)
    check(k["rejected"] == sum(f["rejected"] for f in k["faults"]), "rejected is not the sum of the faults")
    check(r["audit"]["passed"] is True, "the audit failed after faults: %s" % r["audit"]["violations"])
    print("faults: %d injected, %d rejected, each for its own reason" % (k["injected"], k["rejected"]))


def mode_replay(args, schema):
    """apiary workload + apiary replay: the same workload gives the same chain, a saved
    workload replays like the generated one, and damaged files are one clear line."""
    tmp = tempfile.mkdtemp(dir=args.work_dir)
    wl = os.path.join(tmp, "w.bin")
    common = ["--accounts", "500", "--seed", "7"]
    p = run_apiary(args, ["workload", "--out", wl, "--transactions", "3000"] + common, timeout=300)
    check(p.returncode == 0 and os.path.exists(wl), "apiary workload failed: %s" % p.stderr)
    first = os.path.join(tmp, "first.json")
    results = []
    for extra, report in ((["--workload", wl], first),
                          (["--workload", wl], os.path.join(tmp, "second.json")),
                          (["--transactions", "3000"] + common, os.path.join(tmp, "generated.json"))):
        p = run_apiary(args, ["replay", "--block-size", "64KiB", "--report", report] + extra, timeout=300)
        check(p.returncode == 0, "replay %s: exit %d: %s" % (extra, p.returncode, p.stderr))
        check("us per transaction" in p.stdout, "replay prints no summary: %s" % p.stdout)
        with open(report) as f:
            results.append(json.load(f))
    r = results[0]["result"]
    check(results[0]["kind"] == "replay" and not results[0]["failed"], "replay report kind/failed")
    check(r["transactions"] == 3000 and r["accepted"] + r["rejected"] == 3000, "replay counts: %s" % r)
    check(r["rejected"] == 0, "a seeded workload replays without rejections: %s" % r["rejections"])
    check(r["transactions_in_blocks"] + r["pending_at_end"] == r["accepted"], "accepted = in blocks + pending")
    check(r["blocks"] >= 10 and len(results[0]["blocks"]) == r["blocks"], "blocks: %d" % r["blocks"])
    check(all(b["size_bytes"] <= 65536 for b in results[0]["blocks"]), "a block above the size target")
    for other in results[1:]:
        for key in ("state_digest", "head_block_id", "accepted", "transactions_in_blocks"):
            check(other["result"][key] == r[key], "replays differ in %s" % key)
    # Another seed, another chain.
    p = run_apiary(args, ["replay", "--transactions", "3000", "--accounts", "500", "--seed", "8",
                          "--block-size", "64KiB"], timeout=300)
    check(p.returncode == 0 and r["state_digest"] not in p.stdout, "seed 8 replays to seed 7's state")

    with open(wl, "rb") as f:
        data = f.read()
    damaged = os.path.join(tmp, "damaged.bin")
    cases = [(data[: len(data) // 2], "checksum"), (data[:5], "APIARYWL"), (b"", "APIARYWL"),
             (data[:100] + bytes([data[100] ^ 1]) + data[101:], "checksum")]
    for content, needle in cases:
        with open(damaged, "wb") as f:
            f.write(content)
        p = run_apiary(args, ["replay", "--workload", damaged], timeout=60)
        lines = p.stderr.splitlines()
        check(p.returncode == 2 and len(lines) == 1 and needle in lines[0] and damaged in lines[0],
              "damaged workload: exit %d, stderr %r" % (p.returncode, p.stderr))
        print("damaged workload -> %s" % lines[0])
    for extra, needle in ((["--workload", os.path.join(tmp, "missing.bin")], "missing.bin"),
                          (["--workload", wl, "--seed", "3"], "--seed"),
                          (["--workload", wl, "--transactions", "5"], "--transactions"),
                          (["--transactions", "0"], "--transactions"),
                          (["--report", tmp], "--report")):
        p = run_apiary(args, ["replay"] + extra, timeout=60)
        lines = p.stderr.splitlines()
        check(p.returncode == 2 and len(lines) == 1 and needle in lines[0],
              "replay %s: exit %d, stderr %r" % (extra, p.returncode, p.stderr))
    print("replay: %d transactions, %d blocks, state %s... the same from a file, twice, and generated"
          % (r["transactions"], r["blocks"], r["state_digest"][:16]))


def run_modes(modes, description=None, options=None):
    """The entry point the end-to-end test scripts share: the options ctest gives them (tests/harness/CMakeLists.txt),
    then the mode named, called with the arguments and the report schema. `options` adds a script's own."""
    ap = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--apiary", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--sanitizer", default="", help="the build's sanitizer (APIARY_SANITIZE), if any")
    if options:
        options(ap)
    ap.add_argument("mode", choices=list(modes))
    args = ap.parse_args()
    args.apiary = os.path.abspath(args.apiary)
    args.source_dir = os.path.abspath(args.source_dir)
    args.work_dir = os.path.abspath(args.work_dir)
    os.makedirs(args.work_dir, exist_ok=True)
    schema = load_schema(args.source_dir)
    try:
        modes[args.mode](args, schema)
    except Failure as e:
        print("FAILED (%s): %s" % (args.mode, e))
        return 1
    return 0


def main():
    def options(ap):
        ap.add_argument("--signal", default="INT", choices=["INT", "TERM"])
        ap.add_argument("--delay", type=float, default=1.5)
    return run_modes({"e2e": mode_e2e, "log": mode_log, "interrupt": mode_interrupt, "failure": mode_failure,
                      "bad-usage": mode_bad_usage, "help": mode_help, "defaults": mode_defaults,
                      "replay": mode_replay, "faults": mode_faults}, __doc__, options)


if __name__ == "__main__":
    sys.exit(main())
