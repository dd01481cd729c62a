"""Constructed `apiary run` reports with known numbers, for testing the tools without running
the binary. Only the fields the tools read are filled in, with values derived from the
per-block cycle times the test chooses, so the expected statistics can be worked out by hand."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Sequence

import numpy as np


def _series(values: Sequence[float], first_block: int) -> dict:
    x = np.asarray(values, dtype=float)
    s = np.sort(x)

    def rank(p):
        return float(s[min(max(math.ceil(p / 100 * len(s)), 1), len(s)) - 1])

    return {"count": int(x.size), "min": float(s[0]), "min_block": first_block + int(np.argmin(x)),
            "avg": float(np.mean(x)), "max": float(s[-1]), "max_block": first_block + int(np.argmax(x)),
            "median": float(np.median(x)), "p90": rank(90), "p99": rank(99), "stddev": float(np.std(x))}


def make_report(cycles_us: Sequence[float], tx_per_block: int = 240, name: str = "fake",
                status: str = "completed", config: dict | None = None, utilization: float = 0.9,
                unknown_share: float = 0.01) -> dict:
    """A report whose measured blocks have these cycle times (block 1 is a warm-up block)."""
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
        "schema_version": 1, "name": name, "status": status,
        "interrupted": status == "interrupted", "failed": status == "failed",
        "error": "injected failure" if status == "failed" else None,
        "stop_reason": {"completed": "blocks", "interrupted": "SIGINT", "failed": "error"}[status],
        "report_path": "fake.json",
        "context": {"cpu_model": "Test CPU @ 2.50GHz", "cores": 2, "compiler": "gcc 12.2.0",
                    "build_type": "Release", "sanitizer": "", "commit": "abcdef0", "version": "0.1.0",
                    "hostname": "testhost", "command_line": "apiary run --config configs/smoke.toml",
                    "start_time": "2026-01-02T03:04:05Z", "seed": 1, "chain_id": "0" * 64},
        "config": cfg,
        "timing": {"genesis_ms": 50.0, "run_s": window + 0.1, "measured_s": window},
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
                   "transactions_share": 0.05, "blocks_share": 0.05, "unknown_share": unknown_share,
                   "queue_policy": "unbounded"},
        "signing": {"enabled": True, "cpu_ms_per_block": 10.0, "bound_us": 5000.0, "cycle_to_bound": 2.0},
        "colony": {"generated": transactions, "accepted": transactions, "rejected": 0, "sink_closed": True,
                   "kinds": [{"kind": "vote", "count": transactions // 4, "share": 0.25},
                             {"kind": "custom_json", "count": transactions - transactions // 4, "share": 0.75}]},
        "rejections": {"duplicate": 0, "expired": 0},
        "ledger": {"accepted": transactions, "in_blocks": transactions, "dropped": 0, "pending_at_end": 0},
        "targets": [{"name": "cpu_utilization", "description": "busy", "target": 0.9,
                     "value": utilization, "met": utilization >= 0.9}],
        "dumps": {"transactions": None, "blocks": None},
        "peak_rss_bytes": 15_000_000,
    }
    return report


def noisy_cycles(mean: float, run: int, blocks: int = 10, spread: float = 0.01) -> list[float]:
    """Deterministic cycle times around `mean`: run `run`'s blocks differ by ±spread."""
    rng = np.random.default_rng(1000 + run)
    return list(mean * (1 + spread * rng.uniform(-1, 1, size=blocks)))


def write_report(path: Path, report: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report), encoding="utf-8")
    return path


def write_set(directory: Path, means: Sequence[float], spread: float = 0.01, **kwargs) -> Path:
    """A directory with one report per run, run i's blocks within ±spread of means[i]."""
    for i, m in enumerate(means, 1):
        write_report(directory / f"run-{i:03d}.json", make_report(noisy_cycles(m, i, spread=spread), **kwargs))
    return directory
