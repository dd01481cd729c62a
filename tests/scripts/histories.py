"""Results of every kind for the tests of the results history, made by the tools themselves
(multirun, compare, ladder and soak driving the fake apiary), and a PostgreSQL server of the
test's own: initdb and pg_ctl in a temporary directory, listening only on a Unix socket there."""

from __future__ import annotations

import contextlib
import glob
import json
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import fakes
from apiary_tools import history
from apiary_tools import history_db as db
from apiary_tools.commands import compare, ladder, multirun, soak


def perf_gate_result(commit: str, ir_per_tx: float, parent: float | None = None) -> dict:
    """What perf-gate writes with --json (the fields the history reads), for a passed gate."""
    parent = ir_per_tx if parent is None else parent
    return {"kind": "apiary-perf-gate", "version": 1, "threshold_pct": 3.0, "base": "HEAD^", "status": "passed",
            "commit": commit, "machine": "testhost", "time": "2026-01-02T03:04:05Z",
            "environment": {"cpu_model": "Test CPU"},
            "config": {"transactions": 20000, "accounts": 10000, "seed": 1, "block_size": "256KiB"},
            "sides": {"base": {"ir_per_tx": parent, "transactions": 20000},
                      "current": {"ir_per_tx": ir_per_tx, "transactions": 20000}},
            "verdict": {"passed": True, "change_pct": (ir_per_tx / parent - 1) * 100}}


def make_results(root: Path, fake_command: str, fake_binary: Path, target: str | None = None) -> Path:
    """Every kind of result under `root`; with `target`, each tool ingests its own into it."""
    hist = ["--history", target] if target else []
    fakes.write_report(root / "runs" / "run.json", fakes.make_report(fakes.noisy_cycles(20000, 1)))
    aborted = {"schema_version": 2, "status": "aborted", "name": "x", "report_path": "x.json",
               "context": {"commit": "abcdef0"}, "config": {}}
    fakes.write_report(root / "runs" / "aborted.json", aborted)
    (root / "runs" / "truncated.json").write_text('{"schema_version": 2, "status"')
    assert multirun.main(["--runs", "2", "--command", fake_command, "--out", str(root / "multirun"), "--quiet",
                          *hist]) == 0
    assert multirun.main(["--runs", "2", "--command", fake_command, "--a", "--rate 1000", "--b", "--rate 2000",
                          "--out", str(root / "ab"), "--quiet", *hist]) in (0, 1)
    assert compare.main([str(root / "multirun"), str(root / "ab" / "b"), "--json",
                         str(root / "compare" / "comparison.json"), "--quiet", *hist]) in (0, 1)
    assert ladder.main(["--mode", "quick", "--runs", "2", "--apiary", str(fake_binary), "--instructions", "off",
                        "--out", str(root / "ladder"), *hist]) == 0
    (root / "soak").mkdir()
    (root / "soak" / "intervals.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in fakes.soak_log(blocks=8_000, window=2_000)))
    fakes.write_report(root / "soak" / "report.json", fakes.make_report(fakes.noisy_cycles(20000, 2)))
    assert soak.main(["--from", str(root / "soak"), "--cashout-blocks", "2000", *hist]) == 0
    gate = root / "gate" / "perf-gate.json"
    gate.parent.mkdir()
    gate.write_text(json.dumps(perf_gate_result("abcdef0", 12_345.5, 12_000.0)))
    history.record(target, [gate], "perf-gate")
    return root


def plant(target: str, values: list[float], metric: str = "aggregates.cycle_us.avg", kind: str = "run",
          config: str = "cfg", prefix: str = "c") -> list[str]:
    """One result per value, each of its own commit (named prefix + number), in order."""
    engine = db.open_history(target)
    commits = [f"{prefix}{i:03d}" for i in range(len(values))]
    with engine.begin() as conn:
        for commit, value in zip(commits, values, strict=True):
            db.insert(conn, db.Entry(kind=kind, source=f"planted/{commit}", commit=commit, config_digest=config,
                                     metrics={metric: value}), "2026-01-01T00:00:00Z")
    engine.dispose()
    return commits


def noisy_series(n: int, seed: int, step_at: int | None = None, step: float = 0.08, mean: float = 20_000.0) -> list:
    """Per-commit means with noise like a shared 2-core machine's: about 2% spread and a long right
    tail (a run now and then slowed by a neighbour); times 1 + step from commit step_at on."""
    rng = np.random.default_rng(seed)
    noise = 0.02 * rng.standard_normal(n) + rng.lognormal(-4.5, 1.0, n)
    values = mean * (1 + noise)
    if step_at is not None:
        values[step_at:] *= 1 + step
    return [float(v) for v in values]


# ---- a PostgreSQL server of the test's own ---------------------------------------------------

def _postgres_bin(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return candidates[-1] if candidates else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def postgres_server() -> Iterator[str]:
    """A PostgreSQL server on a Unix socket in a directory of its own; yields its URL. As root the
    server runs as the `postgres` user (initdb refuses root); the test is skipped, saying why,
    when there is no PostgreSQL or no such user."""
    initdb, pg_ctl = _postgres_bin("initdb"), _postgres_bin("pg_ctl")
    if not initdb or not pg_ctl:
        pytest.skip("PostgreSQL is not installed (initdb, pg_ctl): scripts/install-deps.sh installs it")
    as_user: list[str] = []
    directory = Path(tempfile.mkdtemp(prefix="apiary-pg-"))
    if os.geteuid() == 0:
        try:
            owner = pwd.getpwnam("postgres")
        except KeyError:
            shutil.rmtree(directory)
            pytest.skip("running as root and there is no postgres user to run initdb as")
        os.chown(directory, owner.pw_uid, owner.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
    port = _free_port()
    data = directory / "data"
    try:
        init = subprocess.run([*as_user, initdb, "-D", str(data), "-A", "trust", "-U", "apiary", "--no-sync"],
                              capture_output=True, text=True)
        if init.returncode != 0:
            pytest.skip(f"initdb failed here: {init.stderr.strip()[-300:]}")
        options = f"-k {directory} -c listen_addresses='' -p {port} -c fsync=off"
        start = subprocess.run([*as_user, pg_ctl, "-D", str(data), "-o", options, "-l", str(directory / "log"), "-w",
                                "start"], capture_output=True, text=True)
        assert start.returncode == 0, start.stderr + (directory / "log").read_text()
        try:
            yield f"postgresql://apiary@/postgres?host={directory}&port={port}"
        finally:
            subprocess.run([*as_user, pg_ctl, "-D", str(data), "-m", "fast", "-w", "stop"], capture_output=True)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
