"""A synthetic report of many blocks (a million: a long soak's), written as a stream.

`write_big_report(path, blocks)` writes a completed schema-2 report (fakes.make_report's
sections) whose `blocks` array has `blocks` measured blocks after one warm-up block, each a
record of the fields apiary writes, with deterministic cycle times (a slow drift and noise,
seeded) and writer phases that are shares of the cycle. The aggregates are computed from the
same columns, so the tools' figures agree with the blocks. Only the columns (numpy arrays)
are held, never a list of block dicts: the blocks are formatted and written in chunks.

    python tests/scripts/bigreport.py OUT.json [BLOCKS]   (default 1,000,000)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from fakes import _series, make_report

TX_PER_BLOCK = 240
CHUNK = 20_000
BLOCK = ('{{"num": {num}, "warmup": false, "transactions": {tx}, "size_bytes": {size}, "pending_after": 0, '
         '"dropped": 0, "produced_us": {produced:.3f}, "applied_us": {applied:.3f}, "processing_us": {processing:.3f}, '
         '"cycle_us": {cycle:.3f}, "completed_ms": {completed:.3f}}}')


def columns(blocks: int, seed: int = 0) -> dict[str, np.ndarray]:
    """The measured blocks' columns: cycle times around 20 ms drifting up by 10% over the run."""
    rng = np.random.default_rng(seed)
    drift = 1 + 0.1 * np.arange(blocks) / max(blocks, 1)
    cycle = np.round(20_000 * drift * rng.lognormal(0, 0.05, blocks), 3)
    tx = rng.integers(TX_PER_BLOCK - 20, TX_PER_BLOCK + 21, blocks)
    produced, applied = np.round(cycle * 0.01, 3), np.round(cycle * 0.02, 3)
    return {"num": np.arange(2, blocks + 2), "transactions": tx, "size_bytes": tx * 275, "cycle_us": cycle,
            "produced_us": produced, "applied_us": applied, "processing_us": np.round(produced + applied, 3),
            "completed_ms": 10.0 + np.cumsum(cycle) / 1000}


def template(cols: dict[str, np.ndarray]) -> dict:
    """fakes.make_report's report with aggregates, throughput and timings of these blocks."""
    n = len(cols["cycle_us"])
    report = make_report([20_000.0] * 10, tx_per_block=TX_PER_BLOCK, config={"blocks": n})
    report["blocks"] = report["blocks"][:1]
    aggregates = report["aggregates"]
    aggregates["measured_blocks"] = n
    for name in ("cycle_us", "produced_us", "applied_us", "processing_us", "size_bytes"):
        aggregates[name] = _series(cols[name], 2)
    aggregates["transactions_per_block"] = _series(cols["transactions"], 2)
    window = float(cols["cycle_us"].sum()) / 1e6
    transactions = int(cols["transactions"].sum())
    report["timing"].update(run_s=window + 0.1, measured_s=window)
    report["throughput"] = {"transactions": transactions, "bytes": int(cols["size_bytes"].sum()), "window_s": window,
                            "tx_per_s": transactions / window, "blocks_per_s": n / window}
    report["cpu"].update(process_cpu_s=window * 2 * 0.9, window_s=window)
    report["writer"]["total_ms"] = window * 1000
    for key in ("accepted", "in_blocks"):
        report["ledger"][key] = transactions
    return report


def write_big_report(path: Path, blocks: int = 1_000_000, seed: int = 0) -> Path:
    """Writes the report to `path` (see the module's docstring) and returns it."""
    cols = columns(blocks, seed)
    head, tail = json.dumps(template(cols)).split('"blocks": [', 1)
    warmup, tail = tail.split("]", 1)
    names = list(cols)
    with open(path, "w", encoding="utf-8") as f:
        f.write(head + '"blocks": [' + warmup)
        for start in range(0, blocks, CHUNK):
            rows = zip(*(cols[k][start:start + CHUNK].tolist() for k in names), strict=True)
            f.write("".join(", " + BLOCK.format(num=r[0], tx=r[1], size=r[2], cycle=r[3], produced=r[4],
                                                applied=r[5], processing=r[6], completed=r[7]) for r in rows))
        f.write("]" + tail)
    return path


if __name__ == "__main__":
    write_big_report(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000)
