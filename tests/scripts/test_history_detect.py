"""scripts/history detect and trend: a planted step in a noisy series of 60 commits is found at
its commit (of the cycle, and of the writer's CPU time in ingested reports), a flat one gives
no change point, invalid results stay out unless asked for, commits go in git's order when git
knows them, and the trend page renders in headless Chromium with nothing loaded from outside."""

import json
import random
import re
import subprocess

import pytest

import fakes
import histories
from apiary_tools import history_db as db
from apiary_tools import history_detect as detect_mod
from apiary_tools import metrics
from apiary_tools.commands import history as history_cli
from test_report_html import check_page

METRIC = "aggregates.cycle_us.avg"


def changes(capsys, target: str, *extra: str) -> list[str]:
    assert history_cli.main(["detect", "--history", target, "--metric", METRIC, *extra]) == 0
    return [line for line in capsys.readouterr().out.splitlines() if line]


def test_a_planted_step_is_found_at_its_commit(tmp_path, capsys):
    target = str(tmp_path / "h.sqlite")
    commits = histories.plant(target, histories.noisy_series(60, seed=0, step_at=40, step=0.10))
    (line,) = changes(capsys, target)
    assert f"change at {commits[40]} (after {commits[39]})" in line
    m = re.search(r"([+-][0-9.]+)% \[([+-][0-9.]+)%, ([+-][0-9.]+)%\].* p = ([0-9.e-]+);", line)
    change, low, high, p = (float(g) for g in m.groups())
    assert 7 < change < 13 and low < 10 < high and p < 0.001
    assert "40 commits before, 20 after" in line


@pytest.mark.parametrize("seed", range(5))
def test_a_flat_series_has_no_change_point(tmp_path, capsys, seed):
    target = str(tmp_path / "h.sqlite")
    histories.plant(target, histories.noisy_series(60, seed=100 + seed))
    assert changes(capsys, target) == []


def test_a_step_smaller_than_min_magnitude_is_not_reported(tmp_path, capsys):
    target = str(tmp_path / "h.sqlite")
    histories.plant(target, histories.noisy_series(60, seed=0, step_at=40, step=0.10))
    assert changes(capsys, target, "--min-magnitude", "15") == []


def test_invalid_results_stay_out_unless_asked_for(tmp_path, capsys):
    """A step made only of invalid results (a busy machine) is no change; with
    --include-invalid it is."""
    target = str(tmp_path / "h.sqlite")
    values = histories.noisy_series(60, seed=0, step_at=40, step=0.10)
    commits = histories.plant(target, values[:40])
    engine = db.open_history(target)
    with engine.begin() as conn:
        for i, value in enumerate(values[40:], 40):
            db.insert(conn, db.Entry(kind="run", source=f"busy/{i}", commit=f"c{i:03d}", config_digest="cfg",
                                     metrics={METRIC: value}, valid=False, reasons=["busy"]), "2026-01-01T00:00:00Z")
    engine.dispose()
    assert changes(capsys, target) == []
    (line,) = changes(capsys, target, "--include-invalid")
    assert f"after {commits[39]}" in line


def test_the_writer_s_cpu_time_has_its_change_points(tmp_path, capsys):
    # Run reports of 60 commits, ingested as the tools ingest them; from commit 40 on the
    # writer spends 5 % more CPU a transaction while the cycle stays where it was.
    cpu = histories.noisy_series(60, seed=2, step_at=40, step=0.05, mean=3_500.0)
    cycles = histories.noisy_series(60, seed=3)
    for i, (ns, cycle) in enumerate(zip(cpu, cycles, strict=True)):
        report = fakes.make_report(fakes.noisy_cycles(cycle, i, spread=0.0))
        report["context"]["commit"] = f"c{i:03d}"
        report["counters"] = fakes.counters_section(240, 10)
        report["counters"]["threads"][0]["per_transaction"]["task_clock_ns"] = ns
        fakes.write_report(tmp_path / "runs" / f"r{i:03d}.json", report)
    target = str(tmp_path / "h.sqlite")
    assert history_cli.main(["ingest", "--history", target, str(tmp_path / "runs")]) == 0
    capsys.readouterr()
    assert history_cli.main(["detect", "--history", target, "--metric", metrics.WRITER_CPU]) == 0
    (line,) = [line for line in capsys.readouterr().out.splitlines() if line]
    assert line.startswith(f"{metrics.WRITER_CPU} (run, config ") and "change at c040 (after c039)" in line
    assert changes(capsys, target) == []   # the cycle's series: flat


def test_commits_go_in_git_order_when_git_knows_them(tmp_path, repo):
    listed = subprocess.run(["git", "-C", str(repo), "rev-list", "--topo-order", "--reverse", "HEAD"],
                            capture_output=True, text=True).stdout.split()
    if len(listed) < 12:
        pytest.skip("the clone has fewer than 12 commits (shallow)")
    chosen = listed[-12:]
    shuffled = random.Random(1).sample(range(12), 12)
    target = str(tmp_path / "h.sqlite")
    engine = db.open_history(target)
    with engine.begin() as conn:
        for i in shuffled:   # ingested out of order, with short hashes
            db.insert(conn, db.Entry(kind="run", source=f"r{i}", commit=chosen[i][:9], config_digest="cfg",
                                     metrics={METRIC: float(i)}), "2026-01-01T00:00:00Z")
        (series,) = detect_mod.build_series(conn, db.Filters(metric=METRIC))
    engine.dispose()
    assert series.values == [float(i) for i in range(12)]
    assert series.commits == [c[:9] for c in chosen]


def test_the_trend_page(tmp_path, capsys):
    target = str(tmp_path / "h.sqlite")
    histories.plant(target, histories.noisy_series(60, seed=0, step_at=40, step=0.10))
    histories.plant(target, histories.noisy_series(30, seed=3), metric="ir_per_tx", kind="perf-gate", prefix="g")
    # The writer's CPU time, of runs and of ladder steps, is drawn without asking; a counter that is no key
    # metric is not.
    histories.plant(target, histories.noisy_series(20, seed=4), metric=metrics.WRITER_CPU, prefix="w")
    histories.plant(target, histories.noisy_series(20, seed=5), metric="writer_cpu_ns_per_tx.mean", kind="ladder",
                    prefix="l")
    histories.plant(target, histories.noisy_series(20, seed=6), metric="counters.main.per_block.page_faults",
                    prefix="m")
    page = tmp_path / "trend.html"
    assert history_cli.main(["trend", "--history", target, "--out", str(page)]) == 0
    text = check_page(page, tmp_path, min_images=0)
    assert text.count("<svg") == 4 and "c040" in text and "No change point." in text
    assert "writer CPU per transaction (ns)" in text and "page_faults" not in text
    assert "<img" not in text


def test_detect_and_trend_errors(tmp_path, capsys):
    target = str(tmp_path / "h.sqlite")
    assert history_cli.main(["detect", "--history", target]) == 2
    assert "no series in the history" in capsys.readouterr().err
    assert history_cli.main(["detect", "--history", target, "--max-pvalue", "2"]) == 2
    assert history_cli.main(["trend", "--history", target]) == 2
    assert "--out" in capsys.readouterr().err
    histories.plant(target, [1.0, 2.0, 3.0])
    (tmp_path / "a-dir").mkdir()
    assert history_cli.main(["trend", "--history", target, "--out", str(tmp_path / "a-dir")]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_export_json_holds_what_detect_reads(tmp_path):
    """export --format json carries what detect reads: the commit and each metric."""
    target = str(tmp_path / "h.sqlite")
    histories.plant(target, [1.0, 2.0])
    engine = db.open_history(target)
    rows = json.loads(history_cli.export_text(engine, "json", db.Filters()))
    engine.dispose()
    assert [(r["commit"], r["metrics"][METRIC]) for r in rows] == [("c000", 1.0), ("c001", 2.0)]
