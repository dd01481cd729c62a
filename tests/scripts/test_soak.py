"""The soak script's analysis on a constructed report and samples, and one short real run."""

import json

import pytest

from apiary_tools import soak


def _report(blocks: int, cycle_us: float, growth_per_block: float = 0.0):
    rows = []
    for n in range(1, blocks + 1):
        rows.append({"num": n, "warmup": n <= 2, "completed_ms": n * 100.0,
                     "cycle_us": None if n == 1 else cycle_us * (1 + (n > blocks / 2) * 0.5)})
    return {"timing": {"genesis_ms": 1000.0, "colony_start_ms": 0.0}, "blocks": rows, "peak_rss_bytes": 1 << 30,
            "aggregates": {"measured_blocks": blocks - 2}, "ledger": {"in_blocks": 1000}}


def test_growth_is_the_slope_of_rss_over_blocks():
    report = _report(2000, 10_000)
    # One sample a block, RSS = 100 MiB + 2 KiB per block until block 1,200, then flat.
    samples = []
    for n in range(1, 2001):
        t = 1.0 + n * 0.1
        rss = 100 * 2**20 + 2048 * min(n, 1200)
        samples.append((t, rss))
    a = soak.analyse(report, samples, window=100)
    assert a["peak_rss_bytes"] == 100 * 2**20 + 2048 * 1200
    assert a["rss_growth_after_expiry_bytes_per_1000_blocks"] == pytest.approx(0, abs=1.0)
    assert a["rss_growth_bytes_per_1000_blocks"] > 0
    assert a["rss_at_block_1000_bytes"] == pytest.approx(100 * 2**20 + 2048 * 1000, rel=1e-6)
    c = a["cycle_start_end"]
    assert c["start_mean_us"] == pytest.approx(10_000) and c["end_mean_us"] == pytest.approx(15_000)
    assert c["change_pct"] == pytest.approx(50) and c["mann_whitney_p"] < 1e-6
    assert "RSS growth per 1,000 blocks" in soak.to_markdown(a, report)


def test_a_short_real_soak(tmp_path, apiary_bin, repo):
    out = tmp_path / "soak"
    code = soak.main(["--apiary", str(apiary_bin), "--blocks", "30", "--window", "10", "--interval", "0.05",
                      "--config", str(repo / "configs" / "smoke.toml"), "--out", str(out)])
    assert code == 0
    a = json.loads((out / "soak.json").read_text())
    assert a["samples"] > 3 and a["peak_rss_bytes"] > 1 << 20
    assert len(a["cycle_us"]) == 30 and "cycle_start_end" in a
    assert (out / "soak.png").stat().st_size > 1000 and (out / "soak.md").exists()


def test_bad_usage(tmp_path, capsys):
    assert soak.main(["--blocks", "0"]) == 2
    assert "soak:" in capsys.readouterr().err
