"""Constructed `apiary run` reports with known numbers, for testing the tools without running
the binary. Only the fields the tools read are filled in, with values derived from the
per-block cycle times the test chooses, so the expected statistics can be worked out by hand.

Reports are of schema_version 2, with a latency section built from per-transaction times
(`latency_section`): the bins, percentiles and means are computed here from the samples, by
arithmetic of their own, not by apiary_tools.latency, so that the tests check one against the
other. `load_model` makes the times depend on the offered rate the way a node with a fixed
capacity would: flat below it, a backlog that grows (and a tail above one block interval)
at or above it.

Plain Python, no numpy: the fake `apiary` (fake_apiary.py) imports this module, and the suite
starts it some 600 times."""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Sequence
from pathlib import Path

# The report's histogram axis: log-spaced from 100 ns to 100 s, under 1% relative error.
AXIS = {"lowest_ns": 100, "highest_ns": 100_000_000_000, "bins": 1047}
KINDS = ("article", "reply", "vote", "transfer", "custom_json")
STAGES = ("queue_wait", "inclusion", "end_to_end")
QUANTILES = (("p50_us", 0.5), ("p90_us", 0.9), ("p99_us", 0.99), ("p999_us", 0.999), ("p9999_us", 0.9999))
BLOCK_INTERVAL_S = 3.0
# The most transactions make_report's own latency section times (see make_report).
LIGHT_LOAD_SAMPLES = 100_000


def _mean(x: Sequence[float]) -> float:
    return math.fsum(x) / len(x)


def _series(values: Sequence[float], first_block: int) -> dict:
    x = [float(v) for v in values]
    s = sorted(x)
    n = len(s)

    def rank(p):
        return s[min(max(math.ceil(p / 100 * n), 1), n) - 1]

    mean = _mean(x)
    median = s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2
    return {"count": n, "min": s[0], "min_block": first_block + x.index(s[0]),
            "avg": mean, "max": s[-1], "max_block": first_block + x.index(s[-1]),
            "median": median, "p90": rank(90), "p99": rank(99),
            "stddev": math.sqrt(math.fsum((v - mean) ** 2 for v in x) / n)}


# ---- latency --------------------------------------------------------------------------------

def bin_indices(values_ns, axis: dict = AXIS) -> list[int]:
    """Each time's bin: -1 below lowest, `bins` at or above highest, else floor(log_r(t / lowest))."""
    lo, hi, n = axis["lowest_ns"], axis["highest_ns"], axis["bins"]
    log_range = math.log(hi / lo)

    def one(t: float) -> int:
        if t < lo:
            return -1
        if t >= hi:
            return n
        return min(math.floor(math.log(t / lo) / log_range * n), n - 1)

    return [one(float(t)) for t in values_ns]


def stage(values_ns, axis: dict = AXIS, with_bins: bool = True, idx: list[int] | None = None) -> dict:
    """A stage as apiary writes it, from the transactions' times in nanoseconds (and their
    bins, bin_indices, when the caller has them)."""
    x = [float(t) for t in values_ns]
    out = {"count": len(x), "mean_us": None, "min_us": None}
    out.update({key: None for key, _ in QUANTILES})
    out["max_us"] = None
    if with_bins:
        out["bins"] = []
    if not x:
        return out
    if idx is None:
        idx = bin_indices(x, axis)
    ordered = sorted(idx)
    lo, r = axis["lowest_ns"], (axis["highest_ns"] / axis["lowest_ns"]) ** (1 / axis["bins"])
    out.update(mean_us=_mean(x) / 1000, min_us=min(x) / 1000, max_us=max(x) / 1000)
    for key, q in QUANTILES:
        i = ordered[max(1, math.ceil(q * len(x))) - 1]   # the bin of the rank-th smallest time
        if i < 0:
            out[key] = out["min_us"]
        elif i >= axis["bins"]:
            out[key] = out["max_us"]
        else:
            out[key] = min(max(lo * r ** (i + 0.5) / 1000, out["min_us"]), out["max_us"])
    if with_bins:
        counts: dict[int, int] = {}
        for i in idx:
            counts[i] = counts.get(i, 0) + 1
        out["bins"] = [[i, counts[i]] for i in sorted(counts)]
    return out


def latency_section(samples: dict, axis: dict = AXIS) -> dict:
    """The report's latency section from each stage's per-transaction times (ns, in the order
    the transactions were sent; transaction i is of kind KINDS[i % 5]); no rejections."""
    section = {"histogram": dict(axis)}
    bins = {name: bin_indices(samples[name], axis) for name in STAGES}
    for name in STAGES:
        section[name] = stage(samples[name], axis, idx=bins[name])
    section["rejection"] = stage([], axis)
    section["by_kind"] = {kind: {name: stage(list(samples[name])[k::len(KINDS)], axis, with_bins=False,
                                             idx=bins[name][k::len(KINDS)])
                                 for name in STAGES} for k, kind in enumerate(KINDS)}
    return section


def load_model(n: int, rate: float | None, capacity: float, seed: int, duration_s: float) -> dict:
    """Per-transaction times (ns) of n transactions sent evenly over duration_s at `rate` tx/s
    (None: as fast as the node takes them) to a node that includes `capacity` tx/s. Below
    capacity a transaction waits for its block, about half a block interval scaled by the load;
    at or above it every transaction waits more than a block interval, and more the later it
    was sent (the backlog grows at rate − capacity)."""
    rng = random.Random(seed)
    load = 0.9 if rate is None else rate / capacity
    sent_s = [i / max(n, 1) * duration_s for i in range(n)]
    queue_wait = [rng.lognormvariate(math.log(30e3), 0.5) for _ in range(n)]
    wait_s = [rng.uniform(0, 0.2 * (1 + min(load, 1.0))) for _ in range(n)]
    if load >= 1:
        wait_s = [w + 1.5 * BLOCK_INTERVAL_S + (load - 1) * t for w, t in zip(wait_s, sent_s, strict=True)]
    inclusion = [q + w * 1e9 for q, w in zip(queue_wait, wait_s, strict=True)]
    end_to_end = [i + rng.lognormvariate(math.log(20e3), 0.5) for i in inclusion]
    return {"queue_wait": queue_wait, "inclusion": inclusion, "end_to_end": end_to_end, "sent_s": sent_s}


def interval_lines(samples: dict, rate: float | None, capacity: float, interval_s: float,
                   intervals: int, blocks: int) -> list[dict]:
    """What `apiary run --interval-log` writes, one dict per interval, from the same model."""
    sent = samples["sent_s"]
    offered = capacity * 0.9 if rate is None else rate
    achieved = min(offered, capacity)
    lines = []
    for k in range(1, intervals + 1):
        t = k * interval_s
        inside = [t - interval_s <= s < t for s in sent]
        sawtooth = 0.05 * offered * (k % 3)   # blocks take transactions in steps
        backlog = 0.2 * offered + sawtooth + max(0.0, offered - capacity) * t
        latency = {}
        for name in STAGES:
            s = stage([v for v, keep in zip(samples[name], inside, strict=True) if keep], with_bins=False)
            latency[name] = {key: s[key] for key in ("count", "p50_us", "p90_us", "p99_us", "max_us")}
        lines.append({"t_s": t, "interval_s": interval_s, "blocks": k * blocks // intervals,
                      "interval_blocks": blocks // intervals, "transactions": int(achieved * t),
                      "tx_per_s": achieved, "cycle_us": {"mean": 20000.0, "max": 25000.0},
                      "latency": latency,
                      "writer": {"wait_work": 0.8, "wait_lock": 0.0, "tx": 0.1, "block": 0.09, "unknown": 0.01},
                      "queue_depth": int(backlog * 0.1), "in_flight": int(backlog * 0.9),
                      "rss_bytes": 15_000_000})
    return lines


# ---- reports --------------------------------------------------------------------------------

def make_report(cycles_us: Sequence[float], tx_per_block: int = 240, name: str = "fake",
                status: str = "completed", config: dict | None = None, utilization: float = 0.9,
                unknown_share: float = 0.01, schema_version: int = 2, latency: dict | None = None) -> dict:
    """A report whose measured blocks have these cycle times (block 1 is a warm-up block).

    Schema 2 has a latency section: `latency` (per-stage times, see load_model), else times of a
    node under light load seeded from the cycle times, at most LIGHT_LOAD_SAMPLES of them (a
    report of many blocks stands for its latency with a sample). Schema 1 has none."""
    warmup = 1
    blocks = [{"num": 1, "warmup": True, "transactions": tx_per_block, "size_bytes": tx_per_block * 275,
               "pending_after": 0, "dropped": 0, "produced_us": 200.0, "applied_us": 300.0,
               "processing_us": 500.0, "cycle_us": None, "completed_ms": 10.0}]
    completed = 10.0
    for i, c in enumerate(cycles_us):
        completed += c / 1000
        blocks.append({"num": warmup + 1 + i, "warmup": False, "transactions": tx_per_block,
                       "size_bytes": tx_per_block * 275, "pending_after": 0, "dropped": 0,
                       "produced_us": c * 0.01, "applied_us": c * 0.02, "processing_us": c * 0.03,
                       "cycle_us": float(c), "completed_ms": completed})
    measured = [b for b in blocks if not b["warmup"]]
    window = sum(cycles_us) / 1e6
    transactions = tx_per_block * len(measured)
    cfg = {"blocks": len(measured), "warmup-blocks": warmup, "threads": 2, "rate": "infinite",
           "sign": True, "block-size": 65536, "max-block-size": 2097152, "dedup": "split",
           "name": name, "report": "fake.json", "progress": "off"}
    cfg.update(config or {})
    report = {
        "schema_version": schema_version, "name": name, "status": status,
        "interrupted": status == "interrupted", "failed": status == "failed",
        "error": "injected failure" if status == "failed" else None,
        "stop_reason": {"completed": "blocks", "interrupted": "SIGINT", "failed": "error"}[status],
        "report_path": "fake.json",
        "context": {"cpu_model": "Test CPU @ 2.50GHz", "cores": 2, "compiler": "gcc 12.2.0",
                    "build_type": "Release", "sanitizer": "", "planted_push_rounds": 0, "commit": "abcdef0",
                    "version": "0.1.0",
                    "hostname": "testhost", "command_line": "apiary run --config configs/smoke.toml",
                    "start_time": "2026-01-02T03:04:05Z", "seed": 1, "chain_id": "0" * 64},
        "config": cfg,
        "timing": {"genesis_ms": 50.0, "colony_start_ms": 5.0, "run_s": window + 0.1, "measured_s": window},
        "blocks": blocks,
        "aggregates": {
            "warmup_blocks": warmup, "measured_blocks": len(measured),
            "cycle_us": _series([b["cycle_us"] for b in measured], warmup + 1),
            "produced_us": _series([b["produced_us"] for b in measured], warmup + 1),
            "applied_us": _series([b["applied_us"] for b in measured], warmup + 1),
            "processing_us": _series([b["processing_us"] for b in measured], warmup + 1),
            "transactions_per_block": _series([b["transactions"] for b in measured], warmup + 1),
            "size_bytes": _series([b["size_bytes"] for b in measured], warmup + 1),
        },
        "throughput": {"transactions": transactions, "bytes": transactions * 275, "window_s": window,
                       "tx_per_s": transactions / window, "blocks_per_s": len(measured) / window},
        "cpu": {"cores": 2, "process_cpu_s": window * 2 * utilization, "window_s": window,
                "utilization": utilization, "machine_busy_share": utilization,
                "other_processes_share": 0.0},
        "writer": {"total_ms": window * 1000, "wait_work_share": 0.9 - unknown_share, "wait_lock_share": 0.0,
                   "transactions_share": 0.05, "blocks_share": 0.05, "observe_share": 0.0,
                   "unknown_share": unknown_share,
                   "queue_policy": "unbounded"},
        "signing": {"enabled": True, "cpu_ms_per_block": 10.0, "bound_us": 5000.0, "cycle_to_bound": 2.0},
        "colony": {"generated": transactions, "accepted": transactions, "rejected": 0, "sink_closed": True,
                   "kinds": [{"kind": "vote", "count": transactions // 4, "share": 0.25},
                             {"kind": "custom_json", "count": transactions - transactions // 4, "share": 0.75}]
                   + [{"kind": kind, "count": 0, "share": 0.0} for kind in ("article", "reply", "transfer")]},
        "rejections": {"duplicate": 0, "expired": 0},
        "ledger": {"accepted": transactions, "in_blocks": transactions, "dropped": 0, "pending_at_end": 0},
        "targets": [{"name": "cpu_utilization", "description": "busy", "target": 0.9,
                     "value": utilization, "met": utilization >= 0.9}],
        "dumps": {"transactions": None, "blocks": None},
        "peak_rss_bytes": 15_000_000,
    }
    if schema_version >= 2:
        if latency is None:
            seed = int(sum(cycles_us)) % 2**32
            latency = load_model(min(transactions, LIGHT_LOAD_SAMPLES), None, 10_000.0, seed, max(window, 1e-3))
        report["latency"] = latency_section(latency)
    return report


def noisy_cycles(mean: float, run: int, blocks: int = 10, spread: float = 0.01) -> list[float]:
    """Deterministic cycle times around `mean`: run `run`'s blocks differ by ±spread."""
    rng = random.Random(1000 + run)
    return [mean * (1 + spread * rng.uniform(-1, 1)) for _ in range(blocks)]


# What a hanging fake run prints once its signal handlers are in place (fake_apiary.py).
WAITING_FOR_SIGNAL = "fake apiary: waiting for SIGINT or SIGTERM"


def wait_for_hanging_run(out_file: Path, timeout_s: float = 60) -> None:
    """Waits until the fake run whose stdout goes to out_file hangs with its handlers in place:
    a signal sent before that (a slow start on a loaded machine) would kill it unhandled."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if out_file.exists() and WAITING_FOR_SIGNAL in out_file.read_text(errors="replace"):
            return
        time.sleep(0.05)
    raise AssertionError(f"{out_file}: the fake run never said it was waiting for a signal")


def write_report(path: Path, report: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report), encoding="utf-8")
    return path


def write_set(directory: Path, means: Sequence[float], spread: float = 0.01, **kwargs) -> Path:
    """A directory with one report per run, run i's blocks within ±spread of means[i]."""
    for i, m in enumerate(means, 1):
        write_report(directory / f"run-{i:03d}.json", make_report(noisy_cycles(m, i, spread=spread), **kwargs))
    return directory


def write_latency_set(directory: Path, rate: float, runs: int = 5, capacity: float = 4000.0,
                      seed: int = 0, **kwargs) -> Path:
    """A directory of runs at an offered `rate` against a node of `capacity` tx/s (load_model),
    each run's rate 1% off the last so that the runs differ a little."""
    for i in range(1, runs + 1):
        times = load_model(2400, rate * (1 + 0.01 * (i - 3)), capacity, seed * 100 + i, 20.0)
        write_report(directory / f"run-{i:03d}.json",
                     make_report(noisy_cycles(20000, i), latency=times, **kwargs))
    return directory


# ---- counters and profiles -------------------------------------------------------------------

THREADS = ("writer", "producer-0", "producer-1", "main")
SOFTWARE_EVENTS = ("task_clock_ns", "context_switches", "cpu_migrations", "page_faults")
HARDWARE_EVENTS = ("instructions", "cycles", "cache_references", "cache_misses", "branch_misses", "llc_misses")
# Each thread's counts per transaction against the writer's, and the hardware counts of a writer
# transaction of 4 µs (none on a VM without hardware counters).
THREAD_SHARE = {"writer": 1.0, "producer-0": 0.6, "producer-1": 0.6, "main": 0.05}
HARDWARE_PER_TX = {"instructions": 11_000.0, "cycles": 9_000.0, "cache_references": 300.0, "cache_misses": 40.0,
                   "branch_misses": 20.0, "llc_misses": 10.0}


def counters_section(tx_per_block: int, blocks: int, writer_ns_per_tx: float = 4000.0, hardware: bool = False,
                     seed: int = 0) -> dict:
    """The report's `counters` as `apiary run --counters on` writes it: every thread's software
    events; the hardware ones null, as on a VM, unless `hardware`. Each thread's counts are
    within ±1% of THREAD_SHARE times the writer's."""
    rng = random.Random(seed)
    reason = None if hardware else "perf_event_open: not supported"
    events = {e: {"available": True, "reason": None} for e in SOFTWARE_EVENTS}
    events.update({e: {"available": hardware, "reason": reason} for e in HARDWARE_EVENTS})
    transactions = tx_per_block * blocks
    threads = []
    for i, name in enumerate(THREADS):
        scale = THREAD_SHARE[name] * (1 + 0.01 * rng.uniform(-1, 1))
        per_tx: dict = {"task_clock_ns": writer_ns_per_tx * scale, "context_switches": 0.01 * scale,
                        "cpu_migrations": 0.001 * scale, "page_faults": 0.05 * scale}
        per_tx.update({e: HARDWARE_PER_TX[e] * scale if hardware else None for e in HARDWARE_EVENTS})
        window = {e: None if v is None else round(v * transactions) for e, v in per_tx.items()}
        window.update(voluntary_switches=round(0.008 * scale * transactions),
                      involuntary_switches=round(0.002 * scale * transactions))
        threads.append({"name": name, "tid": 1000 + i, "window": window,
                        "per_block": {e: None if v is None else v * tx_per_block for e, v in per_tx.items()},
                        "per_transaction": per_tx,
                        "ipc": per_tx["instructions"] / per_tx["cycles"] if hardware else None})
    return {"enabled": True, "unavailable": None if hardware else f"hardware events: {reason}", "events": events,
            "threads": threads}


_LOOP = "writer;apiary::queen::writer_loop"
_PUSH = _LOOP + ";apiary::core::chain::push"
_PRODUCE = _LOOP + ";apiary::queen::block_producer::produce"
# The stacks of a core-only run as `apiary run --profile` folds them, each with its share of
# the samples.
STACKS = {
    _PUSH + ";apiary::core::chain::apply_vote": 0.16,
    _PUSH + ";apiary::core::chain::find_comment": 0.11,
    _PUSH + ";apiary::core::dedup_index::contains": 0.10,
    _PUSH + ";apiary::core::chain::find_account": 0.07,
    _PUSH + ";apiary::core::json::validate": 0.03,
    _PUSH: 0.04,
    _PRODUCE + ";apiary::core::transaction_index::insert": 0.08,
    _PRODUCE + ";apiary::core::merkle_root;sha256_block_data_order": 0.04,
    _LOOP: 0.03,
    "producer-0;apiary::colony::producer::run;apiary::colony::build_transaction": 0.08,
    "producer-0;apiary::colony::producer::run;apiary::colony::build_transaction;sha256_block_data_order": 0.04,
    "producer-1;apiary::colony::producer::run;apiary::colony::build_transaction": 0.08,
    "producer-1;apiary::colony::producer::run;apiary::colony::build_transaction;sha256_block_data_order": 0.04,
    "main;apiary::harness::drain_outbox;free": 0.10,
}


def folded_stacks(samples: int = 20_000, slow: str | None = None, factor: float = 2.0, seed: int = 0) -> dict:
    """A run's folded stacks: STACKS' shares of `samples`, each within ±3%; with `slow`, the
    stacks whose leaf is that function have `factor` times their samples (a planted slowdown)."""
    rng = random.Random(seed)
    out = {}
    for stack, share in STACKS.items():
        n = share * samples * (1 + 0.03 * rng.uniform(-1, 1))
        if slow is not None and stack.rsplit(";", 1)[-1] == slow:
            n *= factor
        out[stack] = max(1, round(n))
    return out


def folded_text(stacks: dict) -> str:
    return "".join(f"{stack} {count}\n" for stack, count in sorted(stacks.items()))


def write_profile(directory: Path, stacks: dict, given: str | None = None) -> dict:
    """What `apiary run --profile DIR` writes in DIR (the flame graph a stand-in), and the
    report's `profile` section, whose `dir` is DIR as given on the command line."""
    (directory / "threads").mkdir(parents=True, exist_ok=True)
    (directory / "window.folded").write_text(folded_text(stacks), encoding="utf-8")
    per_thread: dict = {}
    for stack, count in stacks.items():
        thread, _, rest = stack.partition(";")
        per_thread.setdefault(thread, {})[rest] = count
    for thread, thread_stacks in per_thread.items():
        (directory / "threads" / f"{thread}.folded").write_text(folded_text(thread_stacks), encoding="utf-8")
    (directory / "flamegraph.svg").write_text(
        '<?xml version="1.0" standalone="no"?><svg version="1.1" width="1200" height="60" '
        'xmlns="http://www.w3.org/2000/svg"><rect x="0" y="0" width="1200" height="60" fill="#e8a33d"/>'
        '<text x="10" y="35">fake flame graph</text></svg>\n', encoding="utf-8")
    total = sum(stacks.values())
    leaves: dict = {}
    for stack, count in stacks.items():
        leaf = stack.rsplit(";", 1)[-1]
        leaves[leaf] = leaves.get(leaf, 0) + count
    top = [{"function": f, "self_share": n / total, "self_samples": n}
           for f, n in sorted(leaves.items(), key=lambda kv: -kv[1])[:10]]
    (directory / "top.tsv").write_text("function\tself_share\ttotal_share\tself_samples\ttotal_samples\n" + "".join(
        f"{t['function']}\t{t['self_share']:.4f}\t0\t{t['self_samples']}\t0\n" for t in top), encoding="utf-8")
    return {"dir": given if given is not None else str(directory), "samples": total, "frequency_hz": 999,
            "threads": {t: sum(s.values()) for t, s in per_thread.items()}, "top": top, "cost": {}}


def write_profiled_set(directory: Path, means: Sequence[float], slow: str | None = None, hardware: bool = False,
                       writer_ns_per_tx: float = 4000.0, seed: int = 0, **kwargs) -> Path:
    """write_set's runs with counters and a profile each (in run-NNN.profile/ beside the report,
    its `dir` relative to the report's directory); `slow` plants a slowdown in that function."""
    for i, m in enumerate(means, 1):
        report = make_report(noisy_cycles(m, i), **kwargs)
        blocks = report["aggregates"]["measured_blocks"]
        tx = report["aggregates"]["transactions_per_block"]["avg"]
        report["counters"] = counters_section(int(tx), blocks, writer_ns_per_tx * (1 + 0.005 * (i - 3)), hardware,
                                              seed * 100 + i)
        name = f"run-{i:03d}.profile"
        report["profile"] = write_profile(directory / name, folded_stacks(slow=slow, seed=seed * 100 + i), name)
        write_report(directory / f"run-{i:03d}.json", report)
    return directory


# ---- soak interval logs ----------------------------------------------------------------------

def soak_record(block: int, rss: int, comments: int, cycle_us: float, rejected: int = 0, low=0.0):
    return {"t_s": block * 0.01, "interval_s": 1.0, "blocks": block, "interval_blocks": 100,
            "transactions": block * 300,
            "cycle_us": {"mean": cycle_us, "max": cycle_us * 2}, "rss_bytes": rss,
            "state": {"accounts": [1000, 100_000], "comments": [comments, comments * 300], "votes": [comments * 10, 0],
                      "transactions": [min(block, 1200) * 300, 0], "object_pool_bytes": 0, "comments_paid": block},
            "rc": {"levels": [1.0, 1.0, 0.9, 0.8], "rejected": rejected, "low_mana_share": low}}


def soak_log(blocks=20_000, window=5_000, step=100, cycle_late=1.0):
    """RSS and comments grow until the window, then stay; the cycle is 1 ms, times cycle_late in the last half."""
    return [soak_record(b, 100 * 2**20 + 4096 * min(b, window), 3 * min(b, window),
                        1000.0 * (cycle_late if b > blocks / 2 else 1.0), rejected=b // 1000, low=0.02)
            for b in range(step, blocks + 1, step)]


# ---- resource credits: the pools of `apiary replay --rc-scale` (scripts/rc-tune) ----------------

# name, unit, base budget per block, tau (blocks), budget_scale_factor, price_scale_factor and
# usage per transaction. The characteristic times are short, so that a trial of a few hundred
# blocks shows whether a pool settles.
RC_RESOURCES = (("history", 1, 100_000, 2_000, 10_000, 0, 200),
                ("market", 10, 20_000, 1_000, 10_000, 0, 30),
                ("state", 1, 5_000_000, 2_000, 967, 161, 8_000),
                ("execution", 1, 50_000_000, 500, 10_000, 3_548, 60_000))
RC_OPS = (("vote", 0.3), ("comment", 0.05), ("transfer", 0.1), ("custom_json", 0.5), ("multi", 0.05))
RC_RANKS = (0.05, 0.1, 0.2, 0.25, 0.2, 0.1, 0.07, 0.03)
# The share of payers who cannot afford a reference operation at a price index of 1 (every pool
# at half its equilibrium, price_scale_factor 0); it goes with the index's cube.
RC_LOW_SHARE = 0.1


def rc_resources(scale: int, factors: dict) -> list[dict]:
    """rc.params' resources for a scale and {name: {budget_scale_factor, price_scale_factor}}."""
    out = []
    for name, unit, base, tau, bsf, psf, _ in RC_RESOURCES:
        given = factors.get(name, {})
        bsf, psf = given.get("budget_scale_factor", bsf), given.get("price_scale_factor", psf)
        budget = base * (1 + bsf * (scale - 1) / 10_000)
        equilibrium = budget * tau
        out.append({"name": name, "unit": unit, "budget": round(budget), "tau_blocks": tau,
                    "equilibrium": round(equilibrium), "max_pool": round(2 * equilibrium), "coeff_a": 1,
                    "coeff_b": round(equilibrium / 128 * (1 + psf * (scale - 1) / 10_000)), "shift": 0,
                    "price_scale": 10_000 + psf * (scale - 1), "budget_scale_factor": bsf, "price_scale_factor": psf})
    return out


def rc_params_text(tables: dict) -> str:
    """`apiary rc-params`: the base parameters, a table per resource, with `tables`' keys."""
    text = ""
    for name, _, base, tau, bsf, psf, _ in RC_RESOURCES:
        given = {"budget": base, "tau_blocks": tau, "budget_scale_factor": bsf, "price_scale_factor": psf,
                 "initial_level": 1.0, **tables.get(name, {})}
        text += f"[{name}]\n" + "".join(f"{k} = {v!r}\n" for k, v in given.items()) + "\n"
    return text


def rc_usage(transactions: float) -> list[float]:
    return [transactions * r[6] for r in RC_RESOURCES]


def rc_settled_level(resource: dict, transactions: float) -> float:
    """Where the fake's pool of one resource settles: pool = (pool - u)(1 - 1/tau) + b."""
    u = rc_usage(transactions)[[r[0] for r in RC_RESOURCES].index(resource["name"])]
    return 1 - u / resource["budget"] * (1 - 1 / resource["tau_blocks"])


def _rc_block_transactions(block: int, per_slot: int) -> int:
    """Transactions of one block: the slot's ±10%, the same for a block number in every trial."""
    return round(per_slot * (0.9 + 0.2 * random.Random(block).random()))


def _rc_archive(block: int, pools: list[float], resources: list[dict], used: list[float], n: int) -> dict:
    eqs = [r["equilibrium"] for r in resources]
    flat = [r["coeff_b"] * 10_000 / r["price_scale"] for r in resources]   # coeff_b at price_scale_factor 0
    prices = [(f + 0.5 * e) / (r["coeff_b"] + max(p, 0.0))
              for f, e, r, p in zip(flat, eqs, resources, pools, strict=True)]
    share = min(1.0, RC_LOW_SHARE * (sum(prices) / len(prices)) ** 3)
    ops = [{"kind": kind, "count": round(n * w), "cost": [round(n * w * p * 100) for p in prices],
            "usage": [round(u * w) for u in used]} for kind, w in RC_OPS]
    payers = []
    for rank, w in enumerate(RC_RANKS):
        count = round(n * w)
        payers.append({"rank": rank, "count": count, "below_5": round(count * 0.01), "below_10": round(count * 0.02),
                       "below_20": round(count * 0.05), "cant_afford": [round(count * share)] * 3})
    levels = [p / e for p, e in zip(pools, eqs, strict=True)]
    return {"block": block, "pools": [round(p) for p in pools], "levels": levels,
            "prices": prices, "regen": 1_000_000, "accepted": n, "rejected_rc": 0, "ops": ops, "payers": payers}


def rc_replay_section(scale: int, params: dict, blocks: int, every: int, per_slot: int) -> dict:
    """The report's rc section of a replay under the fake pool model: each block
    pool' = (pool - used)(1 - 1/tau) + budget, from initial_level × equilibrium."""
    tables = {k: v for k, v in params.items() if isinstance(v, dict)}
    resources = rc_resources(scale, tables)
    pools = [tables.get(r["name"], {}).get("initial_level", 1.0) * r["equilibrium"] for r in resources]
    archives, used, n = [], [0.0] * len(resources), 0
    for block in range(1, blocks + 1):
        txs = _rc_block_transactions(block, per_slot)
        u = rc_usage(txs)
        pools = [(p - x) * (1 - 1 / r["tau_blocks"]) + r["budget"]
                 for p, x, r in zip(pools, u, resources, strict=True)]
        used, n = [a + b for a, b in zip(used, u, strict=True)], n + txs
        if block % every == 0:
            archives.append(_rc_archive(block, pools, resources, used, n))
            used, n = [0.0] * len(resources), 0
    return {"params": {"scale": scale, "file": params.get("file"), "resources": resources}, "archives": archives}
