"""scripts/bisect and the builds of other commits (builds.py), end to end over a small git
repository made here: six commits, the fourth of which plants a slowdown. Each commit's
"build" writes a launcher of the fake apiary (fake_apiary.py) with that commit's settings
(the file `fake.env`): from the fourth commit on, 10% more replay instructions a transaction
(FAKE_APIARY_INSTRUCTIONS, counted by the fake valgrind, fake_valgrind/valgrind, first on
PATH), a 10% longer cycle (FAKE_APIARY_CYCLE_US) and, in counted runs, 10% more of the writer's
CPU time a transaction (FAKE_APIARY_CPU_NS). Every build and every replay
appends a line to a log, so that the tests see what was reused."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import fakes
from apiary_tools.builds import Builds
from apiary_tools.common import ToolError

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
FAKE = HERE / "fake_apiary.py"
PLANTED = 3   # the fourth commit (0-based)


def git(repo: Path, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.org", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.org")
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


@pytest.fixture
def history(tmp_path) -> tuple[Path, list[str]]:
    return make_history(tmp_path)


def make_history(tmp_path: Path, broken: int | None = None) -> tuple[Path, list[str]]:
    """The synthetic repository and its six commits, oldest first; commit `broken` does not build."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / ".gitignore").write_text("build/\n")
    commits = []
    for i in range(6):
        slow = i >= PLANTED
        (repo / "fake.env").write_text(f"FAKE_APIARY_INSTRUCTIONS={1100 if slow else 1000} "
                                       f"FAKE_APIARY_CYCLE_US={22000 if slow else 20000} "
                                       f"FAKE_APIARY_CPU_NS={4400 if slow else 4000}\n")
        (repo / "notes.txt").write_text(f"change {i}\n")
        (repo / "broken").unlink(missing_ok=True)
        if i == broken:
            (repo / "broken").write_text("a syntax error\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", f"change {i}" + (": the planted slowdown" if i == PLANTED else ""))
        commits.append(git(repo, "rev-parse", "HEAD"))
    return repo, commits


def build_command(log: Path) -> str:
    """A build: the fake apiary's launcher with the commit's settings; a line in `log` each time."""
    script = log.with_name("build.sh")
    script.write_text(f"""set -e
git rev-parse HEAD >> {shlex.quote(str(log))}
if [ -e broken ]; then echo "error: $(cat broken)"; exit 1; fi
mkdir -p "$APIARY_BUILD_DIR/harness"
printf '#!/bin/sh\\n%s exec {shlex.join([sys.executable, str(FAKE)])} "$@"\\n' \\
    "$(cat fake.env)" > "$APIARY_BUILD_DIR/harness/apiary"
chmod +x "$APIARY_BUILD_DIR/harness/apiary"
""")
    return f"sh {shlex.quote(str(script))}"


def bisect(repo: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=f"{HERE / 'fake_valgrind'}{os.pathsep}{os.environ['PATH']}",
               FAKE_VALGRIND_LOG=str(tmp_path / "replays.log"))
    return subprocess.run([str(REPO / "scripts" / "bisect"), "--repo", str(repo), "--build-command",
                           build_command(tmp_path / "builds.log"), *args],
                          capture_output=True, text=True, env=env, timeout=300)


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def test_bisect_finds_the_planted_commit_and_confirms_it(history, tmp_path):
    repo, commits = history
    out = tmp_path / "out"
    p = bisect(repo, tmp_path, "--good", commits[0], "--bad", commits[-1], "--out", str(out))
    assert p.returncode == 0, p.stderr
    state = json.loads((out / "bisect.json").read_text())
    result = state["result"]
    assert result["status"] == "found" and result["culprit"] == commits[PLANTED]
    values = {row["commit"]: row["value"] for row in result["evidence"]}
    assert values[commits[0]] == 1000 and values[commits[-1]] == 1100
    assert all(values[c] == (1100 if i >= PLANTED else 1000) for i, c in enumerate(commits) if c in values)
    assert len(values) < len(commits)   # a binary search: not every commit was measured
    culprit_row = next(r for r in result["evidence"] if r["commit"] == commits[PLANTED])
    assert culprit_row["verdict"] == "bad: the culprit" and culprit_row["change_pct"] == pytest.approx(10)
    decision = result["confirmation"]["decision"]
    assert decision["verdict"] == "slower" and decision["change"] == pytest.approx(0.10, abs=0.01)
    # The runs are not counted: the cycle decides, and says why the writer's CPU time could not.
    assert decision["metric"] == "aggregates.cycle_us.avg"
    assert decision["decided_on"]["unavailable"]["cpu"] == ("parent run-001.json: its report has no counters (an "
                                                            "apiary older than --counters)")
    assert len(set(lines(tmp_path / "builds.log"))) == len(lines(tmp_path / "builds.log"))  # each built once
    table = (out / "bisect.md").read_text()
    assert commits[PLANTED][:10] in table and "the planted slowdown" in table and "**slower**" in table
    assert p.stdout == table


def test_a_rerun_with_the_same_out_reuses_what_was_measured(history, tmp_path):
    repo, commits = history
    out = tmp_path / "out"
    first = bisect(repo, tmp_path, "--good", commits[0], "--bad", commits[-1], "--out", str(out), "--max-pairs", "0")
    assert first.returncode == 0, first.stderr
    assert "confirmation" not in json.loads((out / "bisect.json").read_text())["result"]
    builds, replays = lines(tmp_path / "builds.log"), lines(tmp_path / "replays.log")
    assert builds and len(replays) == 2 * len(builds)   # a commit's replay counted on the lines and the pages
    again = bisect(repo, tmp_path, "--good", commits[0], "--bad", commits[-1], "--out", str(out))
    assert again.returncode == 0, again.stderr
    assert lines(tmp_path / "builds.log") == builds and lines(tmp_path / "replays.log") == replays
    assert again.stderr.count("measured before") == len(builds)
    result = json.loads((out / "bisect.json").read_text())["result"]
    assert result["culprit"] == commits[PLANTED] and result["confirmation"]["decision"]["verdict"] == "slower"
    pairs = len(result["confirmation"]["pairs"])
    third = bisect(repo, tmp_path, "--good", commits[0], "--bad", commits[-1], "--out", str(out))
    assert third.returncode == 0, third.stderr
    assert len(json.loads((out / "bisect.json").read_text())["result"]["confirmation"]["pairs"]) == pairs
    assert "confirmation pair" not in third.stderr


def test_bisect_by_a_wall_time_metric(history, tmp_path):
    repo, commits = history
    out = tmp_path / "out"
    p = bisect(repo, tmp_path, "--good", commits[0], "--bad", commits[-1], "--out", str(out), "--metric", "cycle",
               "--runs", "2", "--max-pairs", "0")
    assert p.returncode == 0, p.stderr
    result = json.loads((out / "bisect.json").read_text())["result"]
    assert result["culprit"] == commits[PLANTED] and not lines(tmp_path / "replays.log")
    assert all(r["change_pct"] == pytest.approx(10 if i >= PLANTED else 0, abs=0.01)
               for i, r in ((commits.index(r["commit"]), r) for r in result["evidence"]))
    assert len(list((out / "commits" / commits[0][:12]).glob("run-*.json"))) == 2


def test_the_confirmation_decides_on_the_quieter_metric(history, tmp_path, monkeypatch):
    # Counted runs, the cycle scattering by 3 % a run and the writer's CPU time by 0.3 %: the
    # culprit's 10 % more CPU a transaction confirms it, decided on the CPU time.
    monkeypatch.setenv("FAKE_APIARY_NOISE", "0.03")
    monkeypatch.setenv("FAKE_APIARY_CPU_NOISE", "0.003")
    repo, commits = history
    out = tmp_path / "out"
    p = bisect(repo, tmp_path, "--good", commits[0], "--bad", commits[-1], "--out", str(out), "--",
               "--counters", "on")
    assert p.returncode == 0, p.stderr
    confirmation = json.loads((out / "bisect.json").read_text())["result"]["confirmation"]
    d = confirmation["decision"]
    assert d["metric"] == "counters.writer.per_transaction.task_clock_ns" and d["verdict"] == "slower"
    assert d["decided_on"]["candidate"] == "cpu" and d["candidates"]["cpu"]["alpha"] == 0.025
    assert d["change"] == pytest.approx(0.10, abs=0.01) and len(confirmation["pairs"]) == d["pairs"]
    assert set(confirmation["pairs"][0][0]) == {"aggregates.cycle_us.avg",
                                                "counters.writer.per_transaction.task_clock_ns"}
    table = (out / "bisect.md").read_text()
    assert "The confirmation decided on the writer's CPU time per transaction (noise ±" in table
    assert "confirmation pair 1: cycle avg (µs): parent " in p.stderr


def test_the_cpu_time_forced_where_the_runs_have_none_is_one_line(history, tmp_path):
    repo, commits = history
    out = tmp_path / "out"
    p = bisect(repo, tmp_path, "--good", commits[0], "--bad", commits[-1], "--out", str(out), "--decide-on", "cpu")
    assert p.returncode == 2
    assert p.stderr.strip().splitlines()[-1] == (
        "bisect: --decide-on cpu: the writer's CPU time per transaction is unavailable: parent run-001.json: its "
        "report has no counters (an apiary older than --counters)")
    # The search's evidence was written before the confirmation began.
    assert json.loads((out / "bisect.json").read_text())["result"]["culprit"] == commits[PLANTED]


def test_a_range_without_a_slowdown_is_refused(history, tmp_path):
    repo, commits = history
    out = tmp_path / "out"
    p = bisect(repo, tmp_path, "--good", commits[0], "--bad", commits[PLANTED - 1], "--out", str(out))
    assert p.returncode == 1
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith("bisect: nothing to bisect:") and "+0.00%" in last and "threshold of 3%" in last
    assert json.loads((out / "bisect.json").read_text())["result"]["status"] == "nothing to bisect"
    assert p.stdout == ""


def test_a_commit_that_does_not_build_is_skipped(tmp_path):
    repo, commits = make_history(tmp_path, broken=PLANTED - 1)
    out = tmp_path / "out"
    p = bisect(repo, tmp_path, "--good", commits[0], "--bad", commits[-1], "--out", str(out))
    assert p.returncode == 0, p.stderr
    result = json.loads((out / "bisect.json").read_text())["result"]
    assert result["status"] == "ambiguous" and result["candidates"] == commits[PLANTED - 1:PLANTED + 1]
    assert "confirmation" not in result
    skipped = next(r for r in result["evidence"] if r["commit"] == commits[PLANTED - 1])
    log = repo / "build" / "commits" / commits[PLANTED - 1] / "build.log"
    assert skipped["verdict"] == "skipped" and skipped["error"] == f"commit {commits[PLANTED - 1][:10]}: the " \
        f"build failed; its log is {log}"
    assert "error: a syntax error" in log.read_text()
    assert f"the culprit is one of the 2 commits after {commits[PLANTED - 2][:10]}" in p.stdout


@pytest.mark.parametrize("args, message", [
    (["--good", "nosuchref", "--bad", "HEAD"], "--good nosuchref: not a commit of"),
    (["--good", "HEAD", "--bad", "HEAD~2"], "has no commits after --good"),
    (["--good", "HEAD~2", "--bad", "HEAD", "--metric", "aggregates.transactions"], "no better direction"),
    (["--good", "HEAD~2", "--bad", "HEAD", "--threshold", "0"], "expected a percentage above 0"),
    (["--good", "HEAD~2", "--bad", "HEAD", "--metric", "us_per_tx", "--decide-on", "cpu"],
     "--decide-on cpu: with --metric us_per_tx the confirmation is by that metric"),
])
def test_bad_usage_is_one_line_and_exit_2(history, tmp_path, args, message):
    repo, _ = history
    p = bisect(repo, tmp_path, *args, "--out", str(tmp_path / "out"))
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and message in p.stderr, p.stderr
    assert not lines(tmp_path / "builds.log")


def test_a_state_measured_otherwise_is_not_mixed_in(history, tmp_path):
    repo, commits = history
    out = tmp_path / "out"
    refused = bisect(repo, tmp_path, "--good", commits[0], "--bad", commits[PLANTED - 1], "--out", str(out))
    assert refused.returncode == 1
    p = bisect(repo, tmp_path, "--good", commits[0], "--bad", commits[-1], "--out", str(out), "--metric", "cycle")
    assert p.returncode == 2 and "holds a bisection measured otherwise" in p.stderr


# ---- builds.py ---------------------------------------------------------------------------------

def test_a_build_is_kept_by_commit_and_concurrent_requests_build_once(history, tmp_path):
    repo, commits = history
    log = tmp_path / "builds.log"
    said: list[str] = []
    builds = Builds(repo, command=build_command(log) + " && sleep 1", say=said.append)
    binaries: list[Path] = []
    threads = [threading.Thread(target=lambda: binaries.append(builds.build(commits[1]))) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert lines(log) == [commits[1]]
    assert len(set(binaries)) == 1
    assert binaries[0] == repo / "build" / "commits" / commits[1] / "build" / "harness" / "apiary"
    assert any("waiting" in s for s in said)
    assert builds.build("HEAD~4") == binaries[0] and lines(log) == [commits[1]]   # a ref resolves to its commit
    src = repo / "build" / "commits" / commits[1] / "src"
    assert git(src, "rev-parse", "HEAD") == commits[1] and git(repo, "status", "--porcelain") == ""


def test_a_worktree_add_stopped_half_way_is_cleared_and_made_again(history, tmp_path):
    """A Ctrl-C during `git worktree add` leaves the worktree registered and locked, its
    directory missing or half filled: the next build clears it and checks the commit out."""
    repo, commits = history
    src = repo / "build" / "commits" / commits[3] / "src"
    src.parent.mkdir(parents=True)
    git(repo, "worktree", "add", "--detach", str(src), commits[3])
    git(repo, "worktree", "lock", "--reason", "initializing", str(src))
    shutil.rmtree(src)
    binary = Builds(repo, command=build_command(tmp_path / "builds.log"), say=lambda _: None).build(commits[3])
    assert binary.is_file() and git(src, "rev-parse", "HEAD") == commits[3]


def test_a_failed_build_names_the_commit_and_its_log(history):
    repo, commits = history
    builds = Builds(repo, command="echo compiling; exit 3", say=lambda _: None)
    with pytest.raises(ToolError) as e:
        builds.build(commits[2])
    log = repo / "build" / "commits" / commits[2] / "build.log"
    assert str(e.value) == f"commit {commits[2][:10]}: the build failed; its log is {log}"
    assert e.value.code == 1 and "compiling" in log.read_text()
    with pytest.raises(ToolError, match="left no harness/apiary"):
        Builds(repo, command="true", say=lambda _: None).build(commits[2])


# ---- multirun with a binary per side -------------------------------------------------------------

def launcher(path: Path, cycle_us: int, instructions: int) -> Path:
    path.write_text(f"#!/bin/sh\nFAKE_APIARY_CYCLE_US={cycle_us} FAKE_APIARY_INSTRUCTIONS={instructions} exec "
                    f"{shlex.join([sys.executable, str(FAKE)])} \"$@\"\n")
    path.chmod(0o755)
    return path


def multirun(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=f"{HERE / 'fake_valgrind'}{os.pathsep}{os.environ['PATH']}")
    return subprocess.run([str(REPO / "scripts" / "multirun"), *args], capture_output=True, text=True, env=env,
                          timeout=300)


def test_multirun_runs_a_binary_a_side_and_counts_each_ones_instructions(tmp_path):
    a, b = launcher(tmp_path / "a", 20000, 1000), launcher(tmp_path / "b", 22000, 1100)
    out = tmp_path / "out"
    p = multirun(tmp_path, "--a-apiary", str(a), "--b-apiary", str(b), "--runs", "3", "--out", str(out),
                 "--config", str(REPO / "configs" / "smoke.toml"))
    assert p.returncode == 0, p.stderr
    runs = [json.loads(line) for line in (out / "a" / "run-001.out").read_text().splitlines()[1:]]
    assert runs == [{"fake": True, "run": 1}]
    assert (out / "a" / "run-001.out").read_text().startswith(f"$ {a} run")
    assert (out / "b" / "run-002.out").read_text().startswith(f"$ {b} run")
    data = json.loads((out / "comparison.json").read_text())
    sides = data["instructions"]["sides"]
    assert sides["a"]["ir_per_tx"] == 1000 and sides["b"]["ir_per_tx"] == 1100
    assert data["instructions"]["change_pct"] == pytest.approx(10)
    cycle = next(m for m in data["metrics"] if m["metric"] == "aggregates.cycle_us.avg")
    assert cycle["change_pct"] == pytest.approx(10, abs=0.5)
    text = (out / "comparison.md").read_text()
    assert "Instructions, estimated cycles and estimated memory time per transaction" in text and p.stdout == text
    assert "b against a +10.00% instructions, +10.00% estimated cycles, +10.00% estimated memory ns" in text
    # The count, deterministic, decides under --decide-on auto; the runs' own choice stays beside it.
    count = data["decision"]["count"]
    assert count["candidate"] == "estimated-cycles" and count["verdict"] == "slower"
    assert count["change"] == pytest.approx(0.10) and data["decision"]["candidate"] == "cycle"
    assert count["changes"] == {"est_per_tx": pytest.approx(0.10), "mem_ns_per_tx": pytest.approx(0.10, rel=1e-3)}
    assert ("Decision: **slower**, decided on the replay's counts (deterministic, noise 0; in the runs the mean "
            "cycle ") in text and "estimated cycles +10.00%, estimated memory ns +10.00%; beyond ±1%" in text
    # compare counts the two builds beside the same two sets, as multirun did.
    env = dict(os.environ, PATH=f"{HERE / 'fake_valgrind'}{os.pathsep}{os.environ['PATH']}")
    c = subprocess.run([str(REPO / "scripts" / "compare"), str(out / "a"), str(out / "b"), "--a-apiary", str(a),
                        "--b-apiary", str(b), "--json", str(tmp_path / "cmp.json")], capture_output=True, text=True,
                       env=env, timeout=300)
    assert c.returncode in (0, 1), c.stderr
    cmp = json.loads((tmp_path / "cmp.json").read_text())
    assert cmp["instructions"]["sides"]["a"]["ir_per_tx"] == 1000 and cmp["instructions"]["mem_change_pct"] > 9
    assert cmp["decision"]["count"]["verdict"] == "slower"
    assert "b against a +10.00% instructions" in c.stdout
    assert "Decision: **slower**, decided on the replay's" in c.stdout


@pytest.mark.parametrize("args, message", [
    (["--a-apiary", "x"], "--a-apiary and --b-apiary go together"),
    (["--a-apiary", "/nonexistent/a", "--b-apiary", "/nonexistent/b"], "--a-apiary /nonexistent/a: no executable"),
])
def test_compare_refuses_a_build_it_cannot_count(tmp_path, args, message):
    report = fakes.write_report(tmp_path / "r.json", fakes.make_report([20000.0] * 10))
    c = subprocess.run([str(REPO / "scripts" / "compare"), str(report), str(report), *args], capture_output=True,
                       text=True, timeout=120)
    assert c.returncode == 2 and c.stderr.startswith("compare: ") and message in c.stderr
    assert len(c.stderr.strip().splitlines()) == 1


def test_multirun_with_a_metric_forced_leaves_the_count_undecisive(tmp_path):
    a, b = launcher(tmp_path / "a", 20000, 1000), launcher(tmp_path / "b", 22000, 1100)
    out = tmp_path / "out"
    p = multirun(tmp_path, "--a-apiary", str(a), "--b-apiary", str(b), "--runs", "3", "--decide-on", "cycle",
                 "--out", str(out), "--config", str(REPO / "configs" / "smoke.toml"))
    assert p.returncode == 0, p.stderr
    data = json.loads((out / "comparison.json").read_text())
    assert "count" not in data["decision"] and data["instructions"]["est_change_pct"] == pytest.approx(10)
    assert "Decision: " not in (out / "comparison.md").read_text()


@pytest.mark.parametrize("args, message", [
    (["--base", "HEAD", "--a-apiary", "x"], "give --base or --a-apiary, not both"),
    (["--b-apiary", "B", "--command", "true"], "--command replaces the binary"),
    (["--base", "no-such-ref-anywhere"], "--base no-such-ref-anywhere: not a commit of"),
    (["--aggregate", "x", "--base", "HEAD"], "--aggregate runs nothing"),
])
def test_multirun_binaries_bad_usage(tmp_path, args, message):
    b = launcher(tmp_path / "B", 20000, 1000)
    p = multirun(tmp_path, *[str(b) if x == "B" else x for x in args], "--out", str(tmp_path / "out"))
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and message in p.stderr, p.stderr


def test_multirun_adaptive_runs_a_binary_a_side(tmp_path):
    a, b = launcher(tmp_path / "a", 20000, 1000), launcher(tmp_path / "b", 22000, 1100)
    out = tmp_path / "out"
    p = multirun(tmp_path, "--a-apiary", str(a), "--b-apiary", str(b), "--adaptive", "--runs", "5",
                 "--max-runs", "10", "--out", str(out), "--config", str(REPO / "configs" / "smoke.toml"))
    assert p.returncode == 0, p.stderr
    data = json.loads((out / "comparison.json").read_text())
    assert data["sequential"]["verdict"] == "slower" and data["sequential"]["change"] == pytest.approx(0.10, abs=0.01)
    assert data["instructions"]["change_pct"] == pytest.approx(10)
    assert all((out / side / "run-005.out").read_text().startswith(f"$ {binary} run")
               for side, binary in (("a", a), ("b", b)))


def test_an_interrupted_bisection_keeps_what_it_measured(history, tmp_path):
    repo, commits = history
    out = tmp_path / "out"
    env = dict(os.environ, PATH=f"{HERE / 'fake_valgrind'}{os.pathsep}{os.environ['PATH']}")
    proc = subprocess.Popen([str(REPO / "scripts" / "bisect"), "--repo", str(repo), "--build-command",
                             build_command(tmp_path / "builds.log"), "--good", commits[0], "--bad", commits[-1],
                             "--out", str(out)], stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 120
    while not (out / "bisect.json").exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and err.strip().splitlines()[-1] == "bisect: stopped by SIGINT", err
    kept = json.loads((out / "bisect.json").read_text())["measured"]
    assert commits[0] in kept and kept[commits[0]]["value"] == 1000
    again = bisect(repo, tmp_path, "--good", commits[0], "--bad", commits[-1], "--out", str(out), "--max-pairs", "0")
    assert again.returncode == 0 and f"{commits[0][:10]}: measured before" in again.stderr
