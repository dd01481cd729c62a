"""The soak script: its analysis of a constructed interval log, `--from` on what a killed run left, one short
real run."""

import json

import pytest

import fakes
from apiary_tools import inputs, soaks
from apiary_tools.commands import report_html, soak
from apiary_tools.common import ToolError


def test_slopes_after_the_windows_are_flat_when_the_state_is():
    a = soak.analyse(fakes.soak_log(), None, 5_000)
    assert a["steady_from_block"] == pytest.approx(5_000 + 0.1 * 15_000)
    assert a["rss_slope_per_1000_blocks"] == pytest.approx(0, abs=1e-6)
    assert a["state_bytes_slope_per_1000_blocks"] == pytest.approx(0, abs=1e-6)
    assert a["peak_rss_bytes"] == 100 * 2**20 + 4096 * 5_000
    assert a["rc"]["pools"]["execution_time"] == {"start": 0.8, "end": 0.8, "min": 0.8}
    assert a["rc"]["rejected"] == 20 and a["rc"]["low_mana_share_max"] == pytest.approx(0.02)
    md = soaks.to_markdown(a)
    assert "RSS slope after the windows" in md and "cashout window" in md


def test_growth_and_a_slower_end_are_found():
    records = fakes.soak_log(cycle_late=1.5)
    for r in records:
        r["rss_bytes"] += 1024 * r["blocks"]  # a leak of 1 KiB a block
    a = soak.analyse(records, None, 5_000)
    assert a["rss_slope_per_1000_blocks"] == pytest.approx(1024 * 1000, rel=1e-6)
    c = a["cycle_early_late"]
    assert c["change_pct"] == pytest.approx(50) and c["mann_whitney_p"] < 1e-3


def test_from_reads_what_a_killed_run_left(tmp_path, capsys):
    lines = [json.dumps(r) for r in fakes.soak_log(blocks=8_000, window=2_000)]
    # Killed while writing: the last line has no newline.
    (tmp_path / "intervals.jsonl").write_text("\n".join(lines) + "\n" + lines[-1][:40])
    assert soak.main(["--from", str(tmp_path), "--cashout-blocks", "2000"]) == 0
    a = json.loads((tmp_path / "soak.json").read_text())
    assert a["blocks"] == 8_000 and a["records"] == len(lines)
    assert (tmp_path / "soak.png").stat().st_size > 1000
    assert "no report.json" in capsys.readouterr().err


def test_the_html_page_of_a_soak_without_its_report(tmp_path):
    log = fakes.soak_log(blocks=4_000, window=1_000)
    (tmp_path / "intervals.jsonl").write_text("".join(json.dumps(r) + "\n" for r in log))
    assert soak.main(["--from", str(tmp_path), "--cashout-blocks", "1000"]) == 0
    page = report_html.write_page(tmp_path)
    text = page.read_text()
    assert "apiary soak" in text and "RSS slope after the windows" in text and "data:image/png;base64," in text


def test_a_malformed_record_is_one_line(tmp_path):
    (tmp_path / "intervals.jsonl").write_text('{"blocks": 1}\nnot json\n{"blocks": 2}\n')
    with pytest.raises(ToolError, match="intervals.jsonl:2: not a JSON line"):
        inputs.read_interval_log(tmp_path / "intervals.jsonl")


def test_a_short_real_soak(tmp_path, apiary_bin, repo):
    out = tmp_path / "soak"
    code = soak.main(["--apiary", str(apiary_bin), "--blocks", "400", "--block-size", "64KiB", "--cashout-blocks",
                      "60", "--interval", "0.05", "--checkpoint-blocks", "20", "--config",
                      str(repo / "configs" / "core-only.toml"), "--out", str(out), "--", "--accounts", "2000"])
    assert code == 0
    a = json.loads((out / "soak.json").read_text())
    assert a["records"] >= 20 and a["comments_paid"] > 0 and a["report"]["status"] == "completed"
    assert a["blocks"] >= 400 and a["state_end"]["comments"][0] > 0
    assert (out / "soak.png").stat().st_size > 1000 and (out / "soak.md").exists()


def test_bad_usage(tmp_path, capsys):
    assert soak.main(["--blocks", "0"]) == 2
    assert "soak:" in capsys.readouterr().err
    assert soak.main(["--from", str(tmp_path)]) == 2
    assert "no intervals.jsonl" in capsys.readouterr().err
