"""The CI gate driver (apiary_tools.perf_gate): it fails closed. A base that does not resolve,
a base that does not build, a replay that does not run: exit 1 with the reason, never a pass
because nothing could be measured. --allow-missing-base passes when the base cannot exist in
this clone (HEAD is a first commit, or the clone is shallow), and only then. A count that grew
fails. Building a real parent takes minutes, so the worktree build is replaced by fakes here;
scripts/test.sh runs the real gate on every submission."""

import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from apiary_tools import gate as gate_mod
from apiary_tools.commands import perf_gate


def _script(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + textwrap.dedent(body))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture
def current(tmp_path, monkeypatch) -> Path:
    monkeypatch.setattr(perf_gate.shutil, "which", lambda name: "/usr/bin/" + name)
    return _script(tmp_path / "current-apiary", "exit 0\n")


def git_repo(path: Path, commits: int) -> Path:
    """A repository of `commits` commits, for the gate to resolve its base in."""
    path.mkdir()
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t")
    subprocess.run(["git", "init", "-q", str(path)], check=True, env=env)
    for i in range(commits):
        subprocess.run(["git", "-C", str(path), "commit", "-q", "--allow-empty", "-m", f"c{i}"], check=True, env=env)
    return path


def gate(tmp_path, current, *extra) -> tuple[int, dict]:
    out = tmp_path / "gate.json"
    code = perf_gate.main(["--apiary", str(current), "--work", str(tmp_path / "work"), "--json", str(out),
                           "--wall-runs", "0", *extra])
    return code, json.loads(out.read_text())


def test_a_base_that_does_not_resolve_fails(tmp_path, current, capsys):
    code, result = gate(tmp_path, current, "--base", "no-such-revision-anywhere")
    assert code == 1 and result["status"] == "failed"
    err = capsys.readouterr().err.strip()
    assert err.startswith("perf-gate: ") and "no-such-revision-anywhere" in err and "\n" not in err
    assert "--allow-missing-base" in err


@pytest.mark.parametrize("commits, shallow, expected", [(1, False, 0), (2, False, 1), (3, True, 0)],
                         ids=["first commit", "full clone", "shallow clone"])
def test_allow_missing_base_passes_only_where_the_base_cannot_exist(commits, shallow, expected, tmp_path, current,
                                                                     monkeypatch, capsys):
    repo = git_repo(tmp_path / "origin", commits)
    if shallow:
        clone = tmp_path / "clone"
        subprocess.run(["git", "clone", "-q", "--depth", "1", repo.as_uri(), str(clone)], check=True)
        repo = clone
    monkeypatch.setattr(perf_gate, "REPO_ROOT", repo)
    code, result = gate(tmp_path, current, "--base", "HEAD^" if expected == 0 else "HEAD~5", "--allow-missing-base")
    assert code == expected
    assert result["status"] == ("skipped" if expected == 0 else "failed")
    if expected == 0:
        assert "nothing to compare" in capsys.readouterr().out


def test_a_parent_without_replay_fails(tmp_path, current, monkeypatch, capsys):
    # An apiary from before the gate: CLI11 rejects the unknown subcommand with exit 2.
    old = _script(tmp_path / "old-apiary",
                  'echo "apiary: The following argument was not expected: replay" >&2\nexit 2\n')
    monkeypatch.setattr(perf_gate, "resolve_commit", lambda rev: "0" * 40)
    monkeypatch.setattr(perf_gate, "build_base", lambda commit, work, jobs: old)
    code, result = gate(tmp_path, current)
    assert code == 1 and result["status"] == "failed" and "no `apiary replay`" in result["reason"]
    assert "no `apiary replay`" in capsys.readouterr().err


def test_a_base_that_does_not_build_fails(tmp_path, current, monkeypatch, capsys):
    monkeypatch.setattr(perf_gate, "resolve_commit", lambda rev: "0" * 40)
    monkeypatch.setattr(perf_gate, "build_base", lambda commit, work, jobs: None)
    code, result = gate(tmp_path, current)
    assert code == 1 and result["status"] == "failed" and "could not be built" in result["reason"]
    assert "could not be built" in capsys.readouterr().err


def test_a_replay_that_does_not_run_fails(tmp_path, current, monkeypatch, capsys):
    # It has a replay (its --help works), but its workload cannot be made.
    broken = _script(tmp_path / "broken-apiary", 'case "$1 $2" in "replay --help") exit 0 ;; esac\n'
                                                 'echo "apiary workload: out of memory" >&2\nexit 1\n')
    monkeypatch.setattr(perf_gate, "resolve_commit", lambda rev: "0" * 40)
    monkeypatch.setattr(perf_gate, "build_base", lambda commit, work, jobs: broken)
    code, result = gate(tmp_path, current)
    assert code == 1 and result["status"] == "failed"
    assert "apiary workload failed" in capsys.readouterr().err


@pytest.mark.parametrize("base_ir, current_ir, expected", [(1_000_000, 1_020_000, 0), (1_000_000, 1_040_000, 1),
                                                            (1_000_000, 900_000, 0)])
def test_the_verdict_decides_the_exit_status(tmp_path, current, monkeypatch, base_ir, current_ir, expected):
    monkeypatch.setattr(perf_gate, "resolve_commit", lambda rev: "0" * 40)
    base = _script(tmp_path / "base-apiary", "exit 0\n")
    monkeypatch.setattr(perf_gate, "build_base", lambda commit, work, jobs: base)
    counts = {"base": base_ir, "current": current_ir}

    def fake_count(name, binary, work, args):
        return {"instructions": counts[name], "transactions": 1000, "ir_per_tx": counts[name] / 1000,
                "est_per_tx": 2 * counts[name] / 1000, "mem_ns_per_tx": counts[name] / 2000, "state_digest": "same",
                "blocks": 4, "accepted": 1000}

    monkeypatch.setattr(gate_mod, "count_side", fake_count)
    out = tmp_path / "gate.json"
    code = perf_gate.main(["--apiary", str(current), "--work", str(tmp_path / "w"), "--wall-runs", "0",
                           "--json", str(out)])
    assert code == expected
    assert json.loads(out.read_text())["status"] == ("passed" if expected == 0 else "failed")


def test_bad_usage_is_one_line_and_exit_2(tmp_path, capsys):
    assert perf_gate.main(["--transactions", "0", "--apiary", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("perf-gate:")


@pytest.mark.skipif(not os.path.exists("/usr/bin/valgrind"), reason="valgrind is not installed")
def test_a_real_count_of_the_current_binary(tmp_path, apiary_bin):
    """count_side on the real binary, twice: the instruction count does not move."""
    args = perf_gate.parser().parse_args(["--transactions", "300", "--accounts", "200", "--block-size", "64KiB"])
    a = gate_mod.count_side("current", apiary_bin, tmp_path, args)
    b = gate_mod.count_side("current", apiary_bin, tmp_path, args)
    assert a["instructions"] == b["instructions"] > 0 and a["estimated_cycles"] == b["estimated_cycles"]
    assert a["memory_ns"] == b["memory_ns"] > 0
    assert a["est_per_tx"] > a["ir_per_tx"] and a["instrumented"] == "by the measured function"
    # The memory time is the lines' last-level misses and the pages' TLB misses and walks at their prices.
    lines, pages = (gate_mod.total_events(a[key], "Ir") for key in ("callgrind", "pages_callgrind"))
    # One replay counted twice: its report's path differs by a few bytes, and so a few instructions.
    assert lines == a["instructions"] and pages == pytest.approx(lines, rel=1e-3)
    walks = sum(gate_mod.total_events(a["pages_callgrind"], e) for e in gate_mod.PAGE_WALK_EVENTS)
    tlb = sum(gate_mod.total_events(a["pages_callgrind"], e) for e in gate_mod.TLB_MISS_EVENTS)
    ll = sum(gate_mod.total_events(a["callgrind"], e) for e in gate_mod.LL_MISS_EVENTS)
    assert walks > 0 and tlb > walks
    assert a["memory_ns"] == pytest.approx((ll * gate_mod.LL_MISS_PS + tlb * gate_mod.TLB_MISS_PS
                                            + walks * gate_mod.PAGE_WALK_PS) / 1000)
    assert a["mem_ns_per_tx"] == pytest.approx(a["memory_ns"] / 300)
    assert a["transactions"] == 300 and a["blocks"] >= 1


# A stand-in for `apiary` under the real callgrind: `replay --help` and `workload` succeed,
# `replay ... --report PATH` runs apiary_replay_measured (the function the gate counts) over
# 100 transactions and writes the replay's report. Built with -DSLOW, find_comment does 400
# more steps a transaction: the planted cause the gate must name. Built with -DSTRIDE=N,
# look_up reads its 50 bytes a transaction N bytes apart in a 64 MiB table instead of all at
# one place: the same instructions (the stride is read at run time), a miss each.
STAND_IN = r"""
#include <stdio.h>
#include <string.h>
#ifndef SLOW
#define SLOW 0
#endif
#ifndef STRIDE
#define STRIDE 0
#endif
static volatile unsigned long sink;
static volatile unsigned long stride = STRIDE;
unsigned char table[1ul << 26];   // not static: its loads must stay
__attribute__((noinline)) static void look_up(int t) {
  const unsigned long s = stride;
  for (unsigned long i = 0; i < 50; ++i) sink += table[((unsigned long)t * 50 + i) * s % sizeof table];
}
__attribute__((noinline)) static void find_comment(int t) { for (int i = 0; i < 200 + SLOW; ++i) sink += i ^ t; }
__attribute__((noinline)) static void push(int t) {
  for (int i = 0; i < 300; ++i) sink += i * t;
  find_comment(t);
  look_up(t);
}
__attribute__((noinline)) static void produce_block(void) { for (int i = 0; i < 5000; ++i) sink ^= i; }
__attribute__((noinline)) void apiary_replay_measured(int transactions) {
  for (int t = 0; t < transactions; ++t) push(t);
  produce_block();
}
int main(int argc, char** argv) {
  if (argc < 2 || strcmp(argv[1], "replay") != 0) return 0;
  for (int i = 2; i + 1 < argc; ++i) {
    if (strcmp(argv[i], "--report") == 0) {
      apiary_replay_measured(100);
      FILE* f = fopen(argv[i + 1], "w");
      if (!f) return 1;
      fprintf(f, "{\"result\": {\"transactions\": 100, \"accepted\": 100, \"blocks\": 1, \"state_digest\": \"d\"}}\n");
      return fclose(f) == 0 ? 0 : 1;
    }
  }
  return 0;
}
"""


def _stand_ins(tmp_path, monkeypatch, current_flags, base_flags=()):
    """The stand-in built with `base_flags` as the base and with `current_flags` as the current
    build; the gate's base is the former."""
    source = tmp_path / "stand_in.c"
    source.write_text(STAND_IN)
    binaries = {}
    for name, flags in (("base", list(base_flags)), ("current", current_flags)):
        binaries[name] = tmp_path / f"{name}-apiary"
        subprocess.run(["cc", "-O1", "-g", *flags, "-o", str(binaries[name]), str(source)], check=True)
    monkeypatch.setattr(perf_gate, "resolve_commit", lambda rev: "0" * 40)
    monkeypatch.setattr(perf_gate, "build_base", lambda commit, work, jobs: binaries["base"])
    return binaries


@pytest.mark.skipif(not (shutil.which("valgrind") and shutil.which("cc")), reason="needs valgrind and a C compiler")
def test_cache_misses_fail_the_gate_on_the_estimate_alone(tmp_path, current, monkeypatch, capsys):
    """The same instructions and a cache miss per byte looked up: the instructions pass, the
    estimated cycles fail, and the function the estimate names first is the one that misses,
    which the instructions do not name at all."""
    binaries = _stand_ins(tmp_path, monkeypatch, ["-DSTRIDE=65984"])
    code, result = gate(tmp_path, binaries["current"], "--transactions", "100")
    err = capsys.readouterr().err.strip()
    assert code == 1 and result["status"] == "failed"
    assert result["verdict"]["passed"] and result["verdict"]["change_pct"] == 0
    estimate = result["estimate_verdict"]
    assert not estimate["passed"] and estimate["change_pct"] > 20 and estimate["cost"] == "EstCycles"
    by_estimate = result["functions_by_estimate"]["self"]
    assert by_estimate[0]["function"] == "look_up" and by_estimate[0]["change_per_tx"] > 0
    assert "look_up" not in [r["function"] for r in result["functions"]["self"]]
    for side in result["sides"].values():
        assert side["est_per_tx"] > side["ir_per_tx"] > 0
        # the stand-in has no client requests: counted again, instrumented from the start
        assert side["instrumented"].startswith("from the start")
    assert "\n" not in err and err.startswith("perf-gate: FAIL: estimated cycles per transaction")
    assert "moved most per transaction: look_up" in err


@pytest.mark.skipif(not (shutil.which("valgrind") and shutil.which("cc")), reason="needs valgrind and a C compiler")
def test_page_walks_fail_the_gate_on_the_memory_time_alone(tmp_path, current, monkeypatch, capsys):
    """The same instructions and the same cache misses, one line missed each byte looked up,
    but the current build's lines lie a page apart where the base's were next to each other: a
    TLB miss and a page walk each. The instructions and the estimated cycles pass, the memory
    time fails, and names the function that walks."""
    binaries = _stand_ins(tmp_path, monkeypatch, ["-DSTRIDE=4160"], ["-DSTRIDE=64"])
    code, result = gate(tmp_path, binaries["current"], "--transactions", "100")
    err = capsys.readouterr().err.strip()
    assert code == 1 and result["status"] == "failed"
    assert result["verdict"]["passed"] and result["verdict"]["change_pct"] == 0
    estimate = result["estimate_verdict"]
    assert estimate["passed"] and abs(estimate["change_pct"]) < 0.5, estimate
    memory = result["memory_verdict"]
    assert not memory["passed"] and memory["change_pct"] > 100 and memory["cost"] == "Memory"
    by_memory = result["functions_by_memory"]["self"]
    assert by_memory[0]["function"] == "look_up" and by_memory[0]["change_per_tx"] > 0
    for side in result["sides"].values():
        assert side["mem_ns_per_tx"] > 0 and side["pages_callgrind"].endswith("-pages.callgrind")
    assert "\n" not in err and err.startswith("perf-gate: FAIL: estimated memory ns per transaction")
    assert "moved most per transaction: look_up" in err


@pytest.mark.skipif(not (shutil.which("valgrind") and shutil.which("cc")), reason="needs valgrind and a C compiler")
def test_a_failed_gate_names_the_function_that_grew(tmp_path, current, monkeypatch, capsys):
    """The whole gate under the real callgrind, on a stand-in built twice: the current build
    has a slower find_comment, and the failed gate names it first, on stdout, in its one line
    on stderr and in --json."""
    binaries = _stand_ins(tmp_path, monkeypatch, ["-DSLOW=400"])
    code, result = gate(tmp_path, binaries["current"], "--transactions", "100")
    captured = capsys.readouterr()
    assert code == 1 and result["status"] == "failed"
    moved = result["functions"]["self"]
    assert moved[0]["function"] == "find_comment" and moved[0]["change_per_tx"] > 400
    assert moved[0]["current_per_tx"] > moved[0]["base_per_tx"] > 0
    inclusive = [r["function"] for r in result["functions"]["inclusive"]]
    assert inclusive[:3] == ["find_comment", "push", "apiary_replay_measured"]   # the callee first
    table = captured.out[captured.out.index("functions whose own instructions"):].splitlines()
    assert table[1].split()[-1] == "find_comment"
    err = captured.err.strip()
    assert "\n" not in err and err.startswith("perf-gate: FAIL")
    assert re.search(r"moved most per transaction: find_comment \(\+[0-9,.]+ own\), find_comment \(\+[0-9,.]+ with "
                     r"its callees\)", err), err


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_an_interrupted_count_leaves_neither_replay_running(tmp_path):
    """Both counts of a replay run at once; a Ctrl-C to the tool while they run stops both."""
    pids = tmp_path / "pids"
    pids.mkdir()
    stand_in = _script(tmp_path / "apiary", f'echo $$ > {pids}/$$\nexec sleep 60\n')
    script = ("import sys\nfrom pathlib import Path\nfrom apiary_tools import gate\n"
              f"gate.count_replay('x', Path({str(stand_in)!r}), Path('w'), Path({str(tmp_path)!r}), [])\n")
    env = dict(os.environ, PYTHONPATH=str(Path(gate_mod.__file__).parents[1]))
    tool = subprocess.Popen([sys.executable, "-c", script], env=env, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while len(list(pids.iterdir())) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    started = [int(p.name) for p in pids.iterdir()]
    assert len(started) == 2, "both replays should have started"
    tool.send_signal(signal.SIGINT)
    _, err = tool.communicate(timeout=30)
    assert tool.returncode != 0 and "KeyboardInterrupt" in err
    for pid in started:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
