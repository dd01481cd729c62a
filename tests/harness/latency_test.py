#!/usr/bin/env python3
"""End-to-end tests of apiary's latency records (docs/latency.md), run by ctest (tests/harness/CMakeLists.txt).

  records        smoke.toml with every latency output: each dumped transaction's moments are in order
                 (intended <= submitted <= accepted <= included or rejected); the histograms' counts equal the
                 ledger's and the colony's; the percentiles follow from the bins by the documented rule; the
                 .hgrm files, the interval log and the Prometheus textfile (parsed by prometheus_client) agree
                 with the report.
  below-capacity a rate-limited run well below capacity: the median inclusion latency is half the time a block
                 takes to fill (transactions per block / rate), within 25%.
  above-capacity a rate far above capacity: the end-to-end latency, counted from the rate schedule's slots,
                 grows from interval to interval.
"""

import json
import os
import sys
from itertools import pairwise

import harness_test as ht
from prometheus_client.parser import text_string_to_metric_families

# The percentile rule has one owner, the tools' latency module: the report is held to it.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "scripts"))
from apiary_tools import latency
from apiary_tools.common import ToolError

STAGES = ("queue_wait", "inclusion", "end_to_end", "rejection")


def percentile_from_bins(axis, stage, name, q):
    """The percentile the tools give for the stage's bins (latency.Stage.percentile_us)."""
    try:
        histogram = latency.stage_from(stage, latency.axis_from(axis, name), name)
    except ToolError as e:
        raise ht.Failure(str(e)) from None
    return histogram.percentile_us(q)


def check_stage(name, stage, axis):
    ht.check(sum(n for _, n in stage["bins"]) == stage["count"], "%s: the bins do not add up to the count" % name)
    ht.check([i for i, _ in stage["bins"]] == sorted({i for i, _ in stage["bins"]}), "%s: bins out of order" % name)
    if stage["count"] == 0:
        return
    ht.check(stage["min_us"] <= stage["mean_us"] <= stage["max_us"], "%s: mean outside [min, max]" % name)
    last = 0
    for key, q in latency.QUANTILES:
        want = percentile_from_bins(axis, stage, name, q)
        ht.check(abs(stage[key] - want) <= 1e-3 + 1e-6 * want,
                 "%s.%s: %s, the bins give %s" % (name, key, stage[key], want))
        ht.check(stage[key] >= last, "%s: percentiles not ascending" % name)
        last = stage[key]


def check_moments(path):
    checked = 0
    for line in open(path):
        d = json.loads(line)
        if d["outcome"] == "shutdown":
            continue
        end = d[{"accepted": "included_us", "dropped": "dropped_us"}.get(d["outcome"], "rejected_us")]
        moments = [d["intended_us"], d["submitted_us"], d["accepted_us"], end]
        ht.check(all(a <= b for a, b in pairwise(moments)),
                 "dumped transaction %d: moments out of order: %s" % (d["index"], moments))
        checked += 1
    ht.check(checked > 0, "no dumped transaction had its moments")
    return checked


def check_hgrm(path, stage):
    lines = open(path).read().splitlines()
    ht.check(lines[0].split() == ["Value", "Percentile", "TotalCount", "1/(1-Percentile)"], "%s: header" % path)
    rows = [line.split() for line in lines[2:] if line and not line.startswith("#")]
    ht.check(int(rows[-1][2]) == stage["count"] and float(rows[-1][1]) == 1.0,
             "%s: the last row is not the total" % path)
    ht.check(abs(float(rows[-1][0]) - stage["max_us"]) < 1e-3 + 1e-6 * stage["max_us"],
             "%s: the last row is not the max" % path)
    ht.check(any(line.startswith("#[Max") and str(stage["count"]) in line for line in lines),
             "%s: the footer's count" % path)


def check_prometheus(path, report, last_interval):
    """The textfile holds the last interval's figures (last_interval: the interval log's last record)."""
    families = {f.name: f for f in text_string_to_metric_families(open(path).read())}
    for name in ("apiary_blocks", "apiary_transactions", "apiary_latency_seconds", "apiary_writer_share",
                 "apiary_queue_depth", "apiary_in_flight", "apiary_resident_memory_bytes"):
        ht.check(name in families, "%s: no %s" % (path, name))
    total = [s.value for s in families["apiary_transactions"].samples if s.name == "apiary_transactions_total"]
    ht.check(total == [report["ledger"]["in_blocks"]], "%s: transactions_total %s" % (path, total))
    # A block figure is over the interval's blocks: an interval that applied none (a slow,
    # sanitized run's last 100 ms) has none to give.
    want = {"mean", "max"} if last_interval["interval_blocks"] > 0 else set()
    for name in block_figures(report):
        stats = {s.labels["stat"] for s in families.get("apiary_block_" + name, Empty).samples}
        ht.check(stats == want, "%s: apiary_block_%s has %s, not %s (the last interval applied %d blocks)"
                 % (path, name, stats, want or "none", last_interval["interval_blocks"]))


class Empty:
    samples: list = []


def block_figures(report):
    """The names of the block figures: every series among the report's aggregates."""
    return [k for k, v in report["aggregates"].items() if isinstance(v, dict) and "avg" in v]


def check_interval_log(path, report):
    records = ht.interval_records(path)
    ht.check(len(records) >= 2, "%s: %d records" % (path, len(records)))
    for a, b in pairwise(records):
        ht.check(b["t_s"] > a["t_s"] and b["transactions"] >= a["transactions"] and b["blocks"] >= a["blocks"],
                 "%s: records do not move forward" % path)
    ht.check(records[-1]["transactions"] == report["ledger"]["in_blocks"], "%s: the last record's total" % path)
    ht.check(sum(r["latency"]["inclusion"]["count"] for r in records) == report["ledger"]["in_blocks"],
             "%s: the intervals' counts do not add up to the run's" % path)
    ht.check(sum(r["interval_blocks"] for r in records) == len(report["blocks"]), "%s: blocks" % path)
    # Each block figure in every record: its mean and max over the record's blocks, or null
    # without a block; the largest of the maxima bounds the report's measured maximum.
    for name in block_figures(report):
        values = [r[name] for r in records if r["interval_blocks"] > 0 and r[name] is not None]
        ht.check(all(v["mean"] <= v["max"] + 1e-3 for v in values), "%s: %s mean above max" % (path, name))
        ht.check(bool(values) and max(v["max"] for v in values) >= report["aggregates"][name]["max"] - 1e-3,
                 "%s: %s: no interval holds the report's maximum" % (path, name))


def mode_records(args, schema):
    w = args.work_dir
    paths = {k: os.path.join(w, "latency-" + k) for k in ("report.json", "tx.jsonl", "intervals.jsonl", "metrics.prom",
                                                           "hgrm")}
    p = ht.run_apiary(args, ["run", "--config", os.path.join(args.source_dir, "configs", "smoke.toml"),
                             "--blocks", "40", "--faults", "duplicate=0.05", "--report", paths["report.json"],
                             "--dump-transactions", paths["tx.jsonl"], "--dump-limit", "3000",
                             "--interval", "100ms", "--interval-log", paths["intervals.jsonl"],
                             "--prometheus-textfile", paths["metrics.prom"], "--hgrm-dir", paths["hgrm"]])
    ht.check(p.returncode == 0, "exit status %d; stderr:\n%s" % (p.returncode, p.stderr))
    r = ht.load_report(paths["report.json"], schema)
    lat = r["latency"]
    for s in STAGES:
        check_stage(s, lat[s], lat["histogram"])
    in_blocks = r["ledger"]["in_blocks"]
    for s in ("queue_wait", "inclusion", "end_to_end"):
        ht.check(lat[s]["count"] == in_blocks,
                 "latency.%s.count %d, the ledger's in_blocks %d" % (s, lat[s]["count"], in_blocks))
        by_kind = sum(k[s]["count"] for k in lat["by_kind"].values())
        ht.check(by_kind == in_blocks, "latency.by_kind: %s counts add up to %d, not %d" % (s, by_kind, in_blocks))
    ht.check(lat["rejection"]["count"] == r["colony"]["rejected"] > 0,
             "latency.rejection.count %d, the colony rejected %d"
             % (lat["rejection"]["count"], r["colony"]["rejected"]))
    checked = check_moments(paths["tx.jsonl"])
    for s in STAGES:
        check_hgrm(os.path.join(paths["hgrm"], s + ".hgrm"), lat[s])
    check_prometheus(paths["metrics.prom"], r, ht.interval_records(paths["intervals.jsonl"])[-1])
    check_interval_log(paths["intervals.jsonl"], r)
    ht.check("Latency inclusion:" in p.stdout, "the summary has no latency line")
    print("records: %d transactions in the histograms, %d dumped ones in order" % (in_blocks, checked))


def mode_below_capacity(args, schema):
    # Slower under a sanitizer, so a lower rate keeps the run below capacity there too.
    rate = 500 if args.sanitizer else 2000
    report = os.path.join(args.work_dir, "latency-below.json")
    p = ht.run_apiary(args, ["run", "--config", os.path.join(args.source_dir, "configs", "smoke.toml"),
                             "--rate", str(rate), "--sign", "off", "--blocks", "16", "--report", report])
    ht.check(p.returncode == 0, "exit status %d; stderr:\n%s" % (p.returncode, p.stderr))
    r = ht.load_report(report, schema)
    per_block = r["ledger"]["in_blocks"] / len(r["blocks"])
    fill_us = per_block / rate * 1e6
    median = r["latency"]["inclusion"]["p50_us"]
    ht.check(abs(median - fill_us / 2) <= 0.25 * fill_us / 2,
             "median inclusion %.0f us, half the fill time (%.1f transactions per block at %d tx/s) is %.0f us"
             % (median, per_block, rate, fill_us / 2))
    print("below-capacity: median inclusion %.0f us against half the fill time %.0f us" % (median, fill_us / 2))


def mode_above_capacity(args, schema):
    report = os.path.join(args.work_dir, "latency-above.json")
    log = os.path.join(args.work_dir, "latency-above.jsonl")
    p = ht.run_apiary(args, ["run", "--config", os.path.join(args.source_dir, "configs", "smoke.toml"),
                             "--rate", "10000000", "--blocks", "0", "--duration", "3s", "--interval", "500ms",
                             "--interval-log", log, "--report", report])
    ht.check(p.returncode == 0, "exit status %d; stderr:\n%s" % (p.returncode, p.stderr))
    ht.load_report(report, schema)
    medians = [rec["latency"]["end_to_end"]["p50_us"] for rec in ht.interval_records(log)
               if rec["latency"]["end_to_end"]["count"] > 0]
    ht.check(len(medians) >= 4, "only %d intervals with transactions" % len(medians))
    rising = all(b > a for a, b in pairwise(medians[1:]))
    ht.check(rising and medians[-1] > 2 * medians[1],
             "end-to-end medians per interval do not grow: %s" % ["%.0f" % m for m in medians])
    print("above-capacity: end-to-end medians per interval %s us" % ["%.0f" % m for m in medians])


def main():
    return ht.run_modes({"records": mode_records, "below-capacity": mode_below_capacity,
                         "above-capacity": mode_above_capacity}, __doc__)


if __name__ == "__main__":
    sys.exit(main())
