"""Runs on a Dask cluster (fleet.py): a scheduler and two workers on this machine, named host-1
and host-2 by $APIARY_HOST, running the fake apiary (fake_apiary.py). An A/B through
--cluster against the same A/B run here, a failed run retried on the other worker, a refused
commit, bad addresses, and (last: it kills a worker) a worker killed in the middle of a run."""

import contextlib
import http.server
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from apiary_tools import fleet, stats
from apiary_tools.commands import multirun

REPO = Path(__file__).resolve().parents[2]
AB = ["--runs", "2", "--a", "--dedup split", "--b", "--dedup unified"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(condition, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """tcp://127.0.0.1:PORT with two workers; yields (address, {host: worker process})."""
    from distributed import Client

    logs = tmp_path_factory.mktemp("cluster")
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    dask = [sys.executable, "-m", "dask"]
    procs = [subprocess.Popen(dask + ["scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
                              stdout=subprocess.DEVNULL, stderr=open(logs / "scheduler.log", "w"))]
    workers = {}
    for host in ("host-1", "host-2"):
        env = dict(os.environ, APIARY_HOST=host, PYTHONPATH=str(REPO / "scripts"), TMPDIR=str(logs),
                   FAKE_APIARY_COMMIT=fleet.checkout_commit())
        workers[host] = subprocess.Popen(dask + ["worker", address, "--nthreads", "1", "--resources", "apiary=1",
                                                 "--no-nanny", "--no-dashboard", "--name", host],
                                         cwd=REPO, env=env, stdout=subprocess.DEVNULL,
                                         stderr=open(logs / f"{host}.log", "w"))
        procs.append(workers[host])
    try:
        with Client(address, timeout=30, set_as_default=False) as client:
            client.wait_for_workers(2, timeout=60)
        yield address, workers
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.terminate()
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()


def comparison_shape(out: Path) -> tuple[list[str], list[str]]:
    """The comparison table's header and the metrics of its rows."""
    lines = (out / "comparison.md").read_text().splitlines()
    header = next(line for line in lines if line.startswith("| metric"))
    data = json.loads((out / "comparison.json").read_text())
    return header.split(" | "), [m["metric"] for m in data["metrics"]]


def hosts(out: Path, side: str) -> dict[str, int]:
    runs = json.loads((out / side / "aggregate.json").read_text())["runs"]
    counts: dict[str, int] = {}
    for r in runs:
        counts[r["host"]] = counts.get(r["host"], 0) + 1
    return counts


def test_ab_on_the_cluster_has_the_shape_of_a_local_run(cluster, tmp_path, fake_command, capsys):
    address, _ = cluster
    assert multirun.main(AB + ["--command", fake_command, "--out", str(tmp_path / "here")]) == 0
    assert multirun.main(AB + ["--command", fake_command, "--out", str(tmp_path / "fleet"), "--cluster", address]) == 0
    err = capsys.readouterr().err
    assert "8 runs on 2 machines (host-1, host-2)" in err and "8/8 runs completed (4 on host-1, 4 on host-2)" in err
    assert comparison_shape(tmp_path / "fleet") == comparison_shape(tmp_path / "here")
    for side in ("a", "b"):
        assert hosts(tmp_path / "fleet", side) == {"host-1": 2, "host-2": 2}
        assert sorted(p.name for p in (tmp_path / "fleet" / side).glob("run-*.json")) == \
            ["run-001@host-1.json", "run-001@host-2.json", "run-002@host-1.json", "run-002@host-2.json"]
    cycle = next(m for m in json.loads((tmp_path / "fleet" / "comparison.json").read_text())["metrics"]
                 if m["metric"] == "aggregates.cycle_us.avg")
    assert cycle["test"] == "stratified permutation" and cycle["machines"] == 2
    assert [m["machine"] for m in cycle["per_machine"]] == ["host-1", "host-2"]
    assert "Per machine" in (tmp_path / "fleet" / "comparison.md").read_text()


def test_failed_run_is_retried_on_the_other_worker(cluster, tmp_path, fake_command, capsys):
    address, _ = cluster
    out = tmp_path / "o"
    assert multirun.main(AB + ["--command", fake_command, "--out", str(out), "--cluster", address,
                               "--", "--fail-on-host", "host-1"]) == 0
    err = capsys.readouterr().err
    assert "failed on host-1 (exit status 1); once more on host-2" in err
    for side in ("a", "b"):
        runs = json.loads((out / side / "aggregate.json").read_text())["runs"]
        assert len(runs) == 4 and {r["host"] for r in runs} == {"host-2"}
        retried = [r for r in runs if r.get("retried")]
        assert len(retried) == 2 and all(r["retried"][0]["host"] == "host-1" for r in retried)


def test_a_report_of_another_commit_is_refused(cluster, tmp_path, fake_command, capsys):
    address, _ = cluster
    assert multirun.main(["--runs", "1", "--command", fake_command, "--out", str(tmp_path / "o"),
                          "--cluster", address, "--", "--fake-commit", "0000000"]) == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("multirun: --cluster: worker host-") and "built at commit 0000000" in last


def test_bad_cluster_address(tmp_path, fake_command, capsys):
    assert multirun.main(["--command", fake_command, "--out", str(tmp_path / "o"), "--cluster", "scheduler:8786",
                          "--cluster-timeout", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "multirun: --cluster scheduler:8786: expected a scheduler address such as tcp://HOST:8786"
    assert not (tmp_path / "o").exists()


@contextlib.contextmanager
def silent_listener():
    """A port whose listener accepts connections (the kernel does, into its backlog) and never
    says or reads a thing."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(16)
        yield s.getsockname()[1]


@contextlib.contextmanager
def web_server():
    """A tiny HTTP server, which answers a request and says nothing before one."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def closed_port():
    yield free_port()


TIMEOUT_S = 2.0


@pytest.mark.parametrize("listener, message, within", [
    (closed_port, "connection refused: nothing listens there", 1.5),
    (silent_listener, "not a Dask scheduler", TIMEOUT_S + 3),
    (web_server, "not a Dask scheduler", TIMEOUT_S + 3),
], ids=["closed port", "silent listener", "web server"])
def test_what_answers_at_the_address_is_named_within_the_timeout(listener, message, within, repo, tmp_path,
                                                                   fake_command):
    with listener() as port:
        t0 = time.monotonic()
        try:
            proc = subprocess.run([sys.executable, "-m", "apiary_tools.commands.multirun", "--command", fake_command,
                                   "--out", str(tmp_path / "o"), "--cluster", f"tcp://127.0.0.1:{port}",
                                   "--cluster-timeout", str(TIMEOUT_S)], capture_output=True, text=True,
                                  timeout=TIMEOUT_S + 30, env=dict(os.environ, PYTHONPATH=str(repo / "scripts")))
        except subprocess.TimeoutExpired:
            pytest.fail(f"--cluster at a {listener.__name__} hung past --cluster-timeout {TIMEOUT_S}")
        elapsed = time.monotonic() - t0
    err = proc.stderr.strip()
    assert proc.returncode == 2 and "\n" not in err and "Traceback" not in err, err
    assert err.startswith(f"multirun: --cluster tcp://127.0.0.1:{port}: ") and message in err, err
    assert elapsed < within + 2.5, f"{elapsed:.1f} s"   # the tool's own start-up: about 2 s on a busy machine
    assert not (tmp_path / "o").exists()


def test_commits_match_across_abbreviations():
    assert fleet.same_commit("abcdef0", "abcdef0123")
    assert not fleet.same_commit("abcdef0", "abcdef0-dirty")
    assert not fleet.same_commit("unknown", "unknown")
    assert not fleet.same_commit("abcdef0", "abcdef1")


def test_paths_inside_the_checkout_are_the_workers(tmp_path):
    args = [str(REPO / "configs" / "smoke.toml"), f"--config={REPO / 'configs' / 'smoke.toml'}", "--blocks", "5",
            str(tmp_path)]
    items = fleet.portable(args)
    assert [i[0] for i in items] == ["repo", "repo", "arg", "arg", "arg"]
    assert fleet.localize(items, Path("/elsewhere")) == [
        "/elsewhere/configs/smoke.toml", "--config=/elsewhere/configs/smoke.toml", "--blocks", "5", str(tmp_path)]


def test_stratified_comparison_sees_what_pooling_hides():
    # Two machines 20% apart, B 2% slower on each: pooled, the machines' gap drowns the change.
    a = [100, 101, 99, 100, 120, 121, 119, 120]
    b = [x * 1.02 for x in a]
    machines = ["m1"] * 4 + ["m2"] * 4
    pooled = stats.compare(a, b)
    split = stats.compare(a, b, hosts_a=machines, hosts_b=machines)
    assert pooled.p_value > 0.05 and split.p_value < 0.001
    assert split.change_pct == pytest.approx(2.0) and split.ci_low_pct < 2.0 < split.ci_high_pct
    assert split.between_sd_pct > 10 > 1 > split.within_sd_pct


def test_a_killed_worker_is_survived(cluster, tmp_path):
    """Runs on host-2 sleep; once one has started, host-2's worker is killed, and its runs,
    the one in hand included, complete on host-1."""
    address, workers = cluster
    started = tmp_path / "started"
    started.mkdir()
    out = tmp_path / "o"
    fake = REPO / "tests" / "scripts" / "fake_apiary.py"
    proc = subprocess.Popen([str(REPO / "scripts" / "multirun"), *AB, "--command", f"{sys.executable} {fake}",
                             "--out", str(out), "--cluster", address, "--",
                             "--sleep-on-host", "host-2", "--started-dir", str(started)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: any(started.iterdir()), 60, "a run to start on host-2")
        workers["host-2"].send_signal(signal.SIGKILL)
        for pid_file in started.iterdir():   # the run the dead worker left behind
            os.kill(int(pid_file.name), signal.SIGKILL)
        stdout, stderr = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stderr
    assert "worker host-2 left:" in stderr and "8/8 runs completed" in stderr
    assert "Gate:" in stdout
    for side in ("a", "b"):
        runs = json.loads((out / side / "aggregate.json").read_text())["runs"]
        assert len(runs) == 4 and {r["host"] for r in runs} == {"host-1"}
        assert any(r.get("retried", [{}])[0].get("reason") == "worker left" for r in runs)
