"""scripts/history: results of every kind ingested (by the tools' --history and by walking their
directories) into SQLite and into a PostgreSQL server of the test's own, read back with the
same figures; the schema's migration from version 1; what is skipped and why; the one-line
errors."""

import json
import os
import shlex
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa

import fakes
import histories
from apiary_tools import history_db as db
from apiary_tools import history_ingest as ingest_mod
from apiary_tools.commands import compare, multirun
from apiary_tools.commands import history as history_cli
from apiary_tools.common import ToolError


@pytest.fixture(scope="module")
def tree(tmp_path_factory, fake_command):
    """Every kind of result, written once for the module, each tool ingesting its own."""
    root = tmp_path_factory.mktemp("results")
    fake = fake_command
    binary = root / "fake-bin" / "apiary"
    binary.parent.mkdir()
    binary.write_text(f"#!/bin/sh\nexec {fake} \"$@\"\n")
    binary.chmod(0o755)
    by_tools = str(root / "by-tools.sqlite")
    histories.make_results(root / "out", fake, binary, by_tools)
    return root / "out", by_tools


@pytest.fixture(scope="module")
def fake_command():
    """conftest's, for the module's results."""
    return shlex.join([sys.executable, str(Path(__file__).resolve().parent / "fake_apiary.py")])


def exported(target: str) -> list[dict]:
    """Every result and its metrics, without what differs between two ingestions (ids, times)."""
    engine = db.open_history(target)
    rows = json.loads(history_cli.export_text(engine, "json", db.Filters()))
    engine.dispose()
    for row in rows:
        del row["id"]
    return sorted(rows, key=lambda r: (r["kind"], r["source"], r["label"]))


def the_only_result(target):
    """The one result a history holds: its row, its metrics and its histograms."""
    engine = db.open_history(target)
    with engine.connect() as conn:
        (row,) = db.select_results(conn, db.Filters())
        values = db.metrics_of(conn, [row["id"]])[row["id"]]
        hists = db.histograms_of(conn, row["id"])
    engine.dispose()
    return row, values, hists

def test_every_kind_is_ingested_by_the_tools_and_by_a_walk(tree, tmp_path, capsys):
    out, by_tools = tree
    walked = str(tmp_path / "walked.sqlite")
    assert history_cli.main(["ingest", "--history", walked, str(out)]) == 0
    err = capsys.readouterr().err
    # What is not a result is named, with why.
    assert "aborted.json: the run is aborted" in err and "truncated.json: " in err
    rows = exported(walked)
    assert {r["kind"] for r in rows} == set(ingest_mod.KINDS)
    # The tools ingested the same, but the lone report, which no tool wrote.
    assert [r for r in rows if r["kind"] != "run"] == exported(by_tools)
    # A second ingestion adds nothing.
    assert history_cli.main(["ingest", "--history", walked, str(out)]) == 0
    assert "0 result(s) added" in capsys.readouterr().err
    # A comparison's rows are its metrics' changes, named by the metric.
    compared = next(r for r in rows if r["kind"] == "compare" and r["source"].endswith("compare/comparison.json"))
    assert "aggregates.cycle_us.avg.change_pct" in compared["metrics"]
    assert "throughput.tx_per_s.p_value" in compared["metrics"]
    assert len(exported(walked)) == len(rows)
    # One result per multirun side, per ladder step, per comparison.
    assert sorted(r["label"] for r in rows if r["kind"] == "multirun") == ["a", "b", "multirun"]
    assert len([r for r in rows if r["kind"] == "ladder"]) == 8
    gate = next(r for r in rows if r["kind"] == "perf-gate")
    assert gate["metrics"]["ir_per_tx"] == 12_345.5 and gate["commit"] == "abcdef0"


@pytest.fixture
def postgres_url():
    """A PostgreSQL server of the test's own (initdb in a temporary directory, a Unix socket
    there), stopped and removed after the test."""
    with histories.postgres_server() as url:
        yield url


def test_postgresql_reads_back_the_same_figures(tree, tmp_path, postgres_url):
    out, _ = tree
    lite = str(tmp_path / "h.sqlite")
    for target in (lite, postgres_url):
        engine = db.open_history(target)
        added, skipped = ingest_mod.ingest_paths(engine, [out], lambda _: None)
        engine.dispose()
        # a report, 3 multirun sets, 2 comparisons (the A/B's and compare's), 8 ladder steps, a soak, a gate
        assert len(added) == 16 and len(skipped) == 2
    assert exported(postgres_url) == exported(lite)
    engine = sa.create_engine(db.engine_url(postgres_url))
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT version FROM schema_version")).scalar() == db.VERSION
        bins = conn.execute(sa.text("SELECT count(*) FROM histogram_bins")).scalar()
    engine.dispose()
    with sqlite3.connect(lite) as conn:
        assert conn.execute("SELECT count(*) FROM histogram_bins").fetchone()[0] == bins > 0


def test_a_report_s_figures_and_histograms(tmp_path):
    report = fakes.make_report(fakes.noisy_cycles(20000, 3))
    report["validity"] = {"valid": False, "reasons": ["the machine was busy"]}
    path = fakes.write_report(tmp_path / "r.json", report)
    target = str(tmp_path / "h.sqlite")
    assert history_cli.main(["ingest", "--history", target, str(path)]) == 0
    row, values, hists = the_only_result(target)
    assert values["aggregates.cycle_us.avg"] == report["aggregates"]["cycle_us"]["avg"]
    assert values["throughput.tx_per_s"] == report["throughput"]["tx_per_s"]
    assert values["writer.unknown_share"] == report["writer"]["unknown_share"]
    assert values["latency.inclusion.p99_us"] == pytest.approx(report["latency"]["inclusion"]["p99_us"])
    assert hists["inclusion"]["counts"] == report["latency"]["inclusion"]["bins"]
    assert (row["kind"], row["commit"], row["machine"], row["valid"]) == ("run", "abcdef0", "testhost", False)
    assert json.loads(row["validity_reasons"]) == ["the machine was busy"]
    assert json.loads(row["environment"])["cpu_model"] == "Test CPU @ 2.50GHz"


def test_a_set_with_an_invalid_run_is_invalid(tmp_path):
    """multirun leaves an invalid run out of its set, so the set it records is valid; asked to count
    it (--include-invalid), the set is invalid and names the run."""
    fakes.write_set(tmp_path / "set", [20000, 20100, 19900])
    report = json.loads((tmp_path / "set" / "run-002.json").read_text())
    report["validity"] = {"valid": False, "reasons": ["load average 3.1 above 1.5"]}
    fakes.write_report(tmp_path / "set" / "run-002.json", report)
    target = str(tmp_path / "h.sqlite")
    assert multirun.main(["--aggregate", str(tmp_path / "set"), "--history", target]) == 0
    aggregate = json.loads((tmp_path / "set" / "aggregate.json").read_text())
    assert aggregate["n_runs"] == 2 and "invalid: load average" in aggregate["skipped"][0]["reason"]
    with_invalid = str(tmp_path / "with-invalid.sqlite")
    assert multirun.main(["--aggregate", str(tmp_path / "set"), "--include-invalid", "--force",
                          "--history", with_invalid]) == 0
    rows = []
    for path in (target, with_invalid):
        engine = db.open_history(path)
        with engine.connect() as conn:
            (row,) = db.select_results(conn, db.Filters())
            rows.append(row)
        engine.dispose()
    assert [(r["kind"], r["valid"]) for r in rows] == [("multirun", True), ("multirun", False)]
    assert json.loads(rows[1]["validity_reasons"]) == ["run-002.json: load average 3.1 above 1.5"]


def test_the_config_digest_ignores_key_order_and_output_names():
    a = {"blocks": 20, "threads": 2, "report": "x.json", "name": "one"}
    b = {"threads": 2, "name": "two", "blocks": 20, "report": "y.json"}
    assert ingest_mod.config_digest(a) == ingest_mod.config_digest(b)
    assert ingest_mod.config_digest(a) != ingest_mod.config_digest(dict(a, threads=4))


def test_a_version_1_history_is_migrated_when_opened(tmp_path):
    target = str(tmp_path / "old.sqlite")
    db.open_history(target, upto=1).dispose()
    with sqlite3.connect(target) as conn:
        assert {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")} == \
            {"schema_version", "results", "metrics"}
        conn.execute("INSERT INTO results (kind, \"commit\", source, label, valid, ingested) "
                     "VALUES ('run', 'abc1234', 'old.json', '', 1, '2026-01-01T00:00:00Z')")
        conn.execute("INSERT INTO metrics VALUES (1, 'aggregates.cycle_us.avg', 123.0)")
    assert history_cli.main(["list", "--history", target]) == 0
    with sqlite3.connect(target) as conn:
        assert conn.execute("SELECT version FROM schema_version").fetchall() == [(db.VERSION,)]
        assert {"histograms", "histogram_bins"} <= {r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type='table'")}
        assert "validity_reasons" in [r[1] for r in conn.execute("PRAGMA table_info(results)")]
        assert conn.execute("SELECT value FROM metrics").fetchall() == [(123.0,)]


def test_list_show_and_export(tree, capsys, tmp_path):
    _, by_tools = tree
    assert history_cli.main(["list", "--history", by_tools, "--kind", "ladder",
                         "--metric", "cycle_ms.mean"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 9 and "cycle_ms.mean" in lines[0] and "keep-alive" in lines[2]
    assert history_cli.main(["show", "--history", by_tools, "1"]) == 0
    shown = capsys.readouterr().out
    assert "kind: multirun" in shown and "aggregates.cycle_us.avg = " in shown and "histogram inclusion:" in shown
    csv_path = tmp_path / "all.csv"
    assert history_cli.main(["export", "--history", by_tools, "--format", "csv", "--out", str(csv_path)]) == 0
    text = csv_path.read_text().splitlines()
    assert text[0] == "id,kind,commit,config_digest,machine,time,source,label,valid,metric,value"
    assert any(",perf-gate," in line and ",ir_per_tx,12345.5" in line for line in text)


def test_one_line_errors(tmp_path, capsys):
    assert history_cli.main(["list", "--history", "mysql://x/y"]) == 2
    assert "a file path or a postgresql:// URL" in capsys.readouterr().err
    target = str(tmp_path / "h.sqlite")
    assert history_cli.main(["show", "--history", target, "7"]) == 2
    assert "no result 7 in the history" in capsys.readouterr().err
    assert history_cli.main(["ingest", "--history", target, str(tmp_path / "missing")]) == 2
    assert "no such file or directory" in capsys.readouterr().err
    assert history_cli.main(["list", "--history", "postgresql://u:secret@/db?host=/nonexistent"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "secret" not in err
    assert compare.main(["a", "b", "--history", target]) == 2
    assert "give --json PATH too" in capsys.readouterr().err
    (tmp_path / "junk.sqlite").write_text("not a database")
    assert history_cli.main(["list", "--history", str(tmp_path / "junk.sqlite")]) == 1
    assert capsys.readouterr().err.startswith("history: --history ")


@pytest.mark.parametrize("since", ["yesterday", "2026-13-01", "2026-02-30", "2026-11-01T25:00", "2026-11-01+02:00",
                                   "1700000000", ""])
def test_since_that_is_no_utc_time_is_refused(tmp_path, capsys, since):
    target = str(tmp_path / "h.sqlite")
    for command in (["list"], ["export", "--format", "csv"]):
        assert history_cli.main([*command, "--history", target, "--since", since]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("history: argument --since: expected a UTC time, YYYY-MM-DD")
    assert not Path(target).exists()


def test_since_keeps_the_results_from_that_time_on(tmp_path, capsys):
    target = str(tmp_path / "h.sqlite")
    engine = db.open_history(target)
    with engine.begin() as conn:
        for i, time in enumerate(("2026-10-31T23:59:59Z", "2026-11-01T00:00:00Z", "2026-11-01T14:30:00.5Z")):
            db.insert(conn, db.Entry(kind="run", source=f"r{i}", commit=f"c{i}", time=time), "2026-12-01T00:00:00Z")
    engine.dispose()
    for since, kept in (("2026-11-01", ["c1", "c2"]), ("2026-11-01T14:30Z", ["c2"]),
                        ("2026-11-01 14:30:01+00:00", []), ("2026-10-31T23:59:59", ["c0", "c1", "c2"])):
        assert history_cli.main(["list", "--history", target, "--since", since]) == 0
        rows = capsys.readouterr().out.splitlines()[1:]
        assert [r.split()[2] for r in rows] == kept, since


def test_two_ingestions_of_one_folder_at_once_both_succeed(tmp_path, repo):
    """Two processes ingesting the same folder into a new history take turns: both exit 0, each
    result is there once, whole."""
    for i in range(40):
        fakes.write_report(tmp_path / "many" / f"r{i:03d}.json", fakes.make_report(fakes.noisy_cycles(20000, i)))
    target = tmp_path / "h.sqlite"
    command = [str(repo / "scripts" / "history"), "ingest", "--history", str(target), str(tmp_path / "many")]
    procs = [subprocess.Popen(command, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    errors = [p.communicate(timeout=120)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], errors
    assert all("Traceback" not in e and "internal error" not in e for e in errors), errors
    with sqlite3.connect(target) as conn:
        assert conn.execute("SELECT count(*) FROM results").fetchone()[0] == 40
        assert {n for (n,) in conn.execute("SELECT count(*) FROM metrics GROUP BY result_id")} == {
            conn.execute("SELECT count(*) FROM metrics").fetchone()[0] // 40}


def test_a_history_it_cannot_open_is_one_line(tmp_path, capsys):
    """A history SQLite cannot open (a link into a directory that is not there; below, a
    read-only directory, which root writes all the same) is one line naming it, exit 1."""
    report = tmp_path / "r.json"
    fakes.write_report(report, fakes.make_report(fakes.noisy_cycles(20000, 1)))
    (tmp_path / "h.sqlite").symlink_to(tmp_path / "gone" / "h.sqlite")
    assert history_cli.main(["ingest", "--history", str(tmp_path / "h.sqlite"), str(report)]) == 1
    err = capsys.readouterr().err
    assert err == f"history: --history {tmp_path / 'h.sqlite'}: unable to open database file\n"
    if os.geteuid() == 0:
        return
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        assert history_cli.main(["ingest", "--history", str(locked / "h.sqlite"), str(report)]) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith(f"history: --history {locked / 'h.sqlite'}: ")
    finally:
        locked.chmod(0o755)


def test_a_full_or_read_only_history_is_one_line(tmp_path, capsys):
    """SQLite's own errors while writing (a read-only file here; a full disk is the same path)
    are one line naming the history, exit 1, and the history is as it was."""
    report = tmp_path / "r.json"
    fakes.write_report(report, fakes.make_report(fakes.noisy_cycles(20000, 1)))
    target = tmp_path / "h.sqlite"
    db.open_history(str(target)).dispose()
    before = target.read_bytes()
    engine = db.open_history(str(target))
    with pytest.raises(ToolError, match=r"^--history .*h\.sqlite: attempt to write a readonly database$"):
        with engine.connect() as conn:
            conn.exec_driver_sql("PRAGMA query_only=ON")
            conn.commit()
            with conn.begin():
                db.insert(conn, db.Entry(kind="run", source="x"), "2026-01-01T00:00:00Z")
    engine.dispose()
    assert history_cli.main(["list", "--history", str(target)]) == 0   # reading needs no write lock
    capsys.readouterr()
    target.chmod(0o444)
    try:
        if os.geteuid() != 0:
            assert history_cli.main(["ingest", "--history", str(target), str(report)]) == 1
            err = capsys.readouterr().err
            assert err.count("\n") == 1 and "readonly database" in err, err
            assert history_cli.main(["list", "--history", str(target)]) == 0
    finally:
        target.chmod(0o644)
    assert target.read_bytes() == before


@pytest.mark.parametrize("url, why", [
    ("postgresql://", "no host"), ("postgresql:///apiary", "no host"), ("postgresql://u@h:port/db", "not a URL"),
    ("postgresql://u@h:99999/db", "the port 99999"), ("postgresql://u@h:0/db", "the port 0"),
    ("postgresql://%%%/db", "is no host name"), ("postgresql:// spaces here", "is no host name"),
    ("postgresql+psycopg2://u@h/db", "only the psycopg driver")])
def test_a_malformed_postgresql_url_is_one_line_naming_the_option(tmp_path, capsys, url, why):
    assert history_cli.main(["list", "--history", url]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("history: --history ") and why in err, err
    assert multirun.main(["--runs", "1", "--command", "false", "--out", str(tmp_path / "o"), "--history", url]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("multirun: --history ") and why in err, err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("bins, rows, why", [
    (1047, [(-2, 5)], "bin [-2, 5] is out of range"), (1047, [(1048, 5)], "bin [1048, 5] is out of range"),
    (1047, [(3, -5)], "bin [3, -5] is out of range"), (0, [(0, 1)], "an axis of 0 bins")])
def test_a_history_s_impossible_histogram_is_one_line(tmp_path, capsys, bins, rows, why):
    """A history's histogram bins read back are checked as a report's: `show` refuses an index
    below -1 or past the axis, a negative count, an axis of no bins."""
    target = str(tmp_path / "h.sqlite")
    engine = db.open_history(target)
    with engine.begin() as conn:
        rid = db.insert(conn, db.Entry(kind="run", source="x", histograms={"inclusion": ((100.0, 1e11, 1047),
                                                                                         [(3, 1)])}), "t")
    with engine.begin() as conn:
        conn.execute(sa.update(db.histograms).values(bins=bins))
        conn.execute(sa.delete(db.histogram_bins))
        conn.execute(sa.insert(db.histogram_bins), [{"result_id": rid, "stage": "inclusion", "bin": b, "count": n}
                                                    for b, n in rows])
    engine.dispose()
    assert history_cli.main(["show", "--history", target, str(rid)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"history: the history's result {rid}, latency histogram "
                                                    "inclusion: ") and why in err, err


def test_a_real_run_s_report(tmp_path, apiary_bin, repo):
    """A report of the real binary: its figures and histograms read back as it wrote them."""
    report = tmp_path / "smoke.json"
    subprocess.run([str(apiary_bin), "run", "--config", str(repo / "configs" / "smoke.toml"), "--blocks", "6",
                    "--progress", "off", "--report", str(report)], check=True, capture_output=True)
    target = str(tmp_path / "h.sqlite")
    assert history_cli.main(["ingest", "--history", target, str(report)]) == 0
    data = json.loads(report.read_text())
    row, values, hists = the_only_result(target)
    assert row["commit"] == data["context"]["commit"] and row["machine"] == data["context"]["hostname"]
    assert values["aggregates.cycle_us.avg"] == data["aggregates"]["cycle_us"]["avg"]
    writer = next(t for t in data["counters"]["threads"] if t["name"] == "writer")
    assert values["counters.writer.per_transaction.task_clock_ns"] == writer["per_transaction"]["task_clock_ns"]
    for stage in ("queue_wait", "inclusion", "end_to_end"):
        assert hists[stage]["counts"] == data["latency"][stage]["bins"]
        assert values[f"latency.{stage}.p99_us"] == pytest.approx(data["latency"][stage]["p99_us"], rel=0.011)


def test_a_signal_keeps_the_results_ingested_before_it(tmp_path, repo):
    """Each file is one transaction: SIGINT during a long ingestion ends it with 130, and every
    result added before it is there whole (all its metrics), none half-written."""
    for i in range(300):
        fakes.write_report(tmp_path / "many" / f"r{i:03d}.json", fakes.make_report(fakes.noisy_cycles(20000, i)))
    target = tmp_path / "h.sqlite"
    proc = subprocess.Popen([str(repo / "scripts" / "history"), "ingest", "--history", str(target),
                             str(tmp_path / "many")], stderr=subprocess.PIPE, text=True)
    seen = [proc.stderr.readline() for _ in range(3)]   # three files in
    proc.send_signal(signal.SIGINT)
    rest = proc.stderr.read()
    assert proc.wait(timeout=60) == 130 and all("result(s) added" in line for line in seen)
    assert rest.strip().splitlines()[-1] == "history: stopped by SIGINT"
    with sqlite3.connect(target) as conn:
        added = conn.execute("SELECT count(*) FROM results").fetchone()[0]
        per_result = {n for (n,) in conn.execute("SELECT count(*) FROM metrics GROUP BY result_id")}
    assert 3 <= added < 300 and len(per_result) == 1
