"""scripts/check-thread-safety: sources that keep the rule pass; a guarded member used without its mutex,
planted in a copy of the C++ folders, is named; and it says so when it cannot run. And scripts/lint's clang-tidy
pass, which runs the same analysis in its parse of each source: it names the planted read too."""

import importlib.machinery
import os
import re
import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest

MODULE_DIRS = ("core", "colony", "queen", "harness")
QUEUE = Path("queen/src/writer_queue.cpp")
LOCKED_SIZE = """std::size_t writer_queue::size() const {
  core::lock_guard lock(mutex_);
  return items_.size();
}
"""


def run_check(repo: Path, root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(repo / "scripts" / "check-thread-safety"), "--root", str(root), *args],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )


@pytest.fixture
def tree(repo, tmp_path) -> Path:
    for name in MODULE_DIRS:
        shutil.copytree(repo / name, tmp_path / name, ignore=shutil.ignore_patterns("*.json", "cmake"))
    return tmp_path


def plant(path: Path, old: str, new: str) -> int:
    """Replaces old by new in the file; the line new starts on."""
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    return text[: text.index(old)].count("\n") + 1


def test_sources_that_keep_the_rule_pass(repo):
    # The whole repository is scripts/lint --tidy's to check (test.sh runs it after the release
    # build); here the sources the planted findings go into, as they are.
    result = run_check(repo, repo, str(QUEUE), "colony/src/start_gate.cpp")
    assert result.returncode == 0, result.stderr
    assert "every guarded member is used with its mutex held" in result.stdout


def test_an_unguarded_read_is_named(repo, tree):
    line = plant(tree / QUEUE, LOCKED_SIZE, LOCKED_SIZE.replace("  core::lock_guard lock(mutex_);\n", ""))
    result = run_check(repo, tree, str(QUEUE))
    assert result.returncode == 1
    assert f"{QUEUE}:{line + 1}: reading variable 'items_' requires holding mutex 'mutex_'" in result.stderr
    assert "1 finding(s)" in result.stderr


def test_a_write_after_unlock_is_named(repo, tree):
    source = Path("colony/src/start_gate.cpp")
    locked = "    core::lock_guard lock(mutex_);\n    open_ = true;\n  }\n"
    line = plant(tree / source, locked, "    core::lock_guard lock(mutex_);\n  }\n  open_ = true;\n")
    result = run_check(repo, tree, str(source))
    assert result.returncode == 1
    assert f"{source}:{line + 2}: writing variable 'open_' requires holding mutex 'mutex_' exclusively" in (
        result.stderr
    )


def test_the_sources_checked_are_those_that_include_the_mutex(repo):
    result = run_check(repo, repo, "--list")
    assert result.returncode == 0, result.stderr
    listed = result.stdout.split()
    assert str(QUEUE) in listed and "harness/src/cycle/run.cpp" in listed
    assert "core/chain/src/chain.cpp" not in listed  # the core's layers use no mutex


def test_no_clang_is_exit_2_in_one_line(repo):
    env = dict(os.environ, APIARY_CLANGXX="no-such-clang++")
    result = run_check(repo, repo, str(QUEUE), env=env)
    assert result.returncode == 2
    missing = "check-thread-safety: clang++ is missing (scripts/install-deps.sh installs it)"
    assert result.stderr.splitlines() == [missing]


def test_a_source_that_does_not_compile_is_exit_2_in_one_line(repo, tree):
    plant(tree / QUEUE, LOCKED_SIZE, LOCKED_SIZE.replace("return items_.size();", "return items_.size()"))
    result = run_check(repo, tree, str(QUEUE))
    assert result.returncode == 2
    assert len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith(f"check-thread-safety: cannot check {QUEUE}:")


def test_lint_clang_tidy_names_an_unguarded_read(repo, tree):
    """The flags scripts/lint gives clang-tidy and the checks of .clang-tidy, over the planted source (the include
    paths and defines as check-thread-safety computes them: a compile command of the release build's)."""
    if shutil.which("clang-tidy") is None:
        pytest.skip("no clang-tidy")
    flags = re.findall(r"--extra-arg=\S+", (repo / "scripts" / "lint").read_text())
    assert "--extra-arg=-Wthread-safety" in flags
    loader = importlib.machinery.SourceFileLoader("check_thread_safety", str(repo / "scripts" / "check-thread-safety"))
    check = types.ModuleType(loader.name)
    loader.exec_module(check)
    compile_flags = ["-std=c++20", *check.DEFINES, *(f"-I{d}" for d in check.include_dirs(tree))]
    line = plant(tree / QUEUE, LOCKED_SIZE, LOCKED_SIZE.replace("  core::lock_guard lock(mutex_);\n", ""))
    result = subprocess.run(["clang-tidy", f"--config-file={repo / '.clang-tidy'}", "--quiet", *flags,
                             str(tree / QUEUE), "--", *compile_flags],
                            capture_output=True, text=True, check=False)
    expected = (f"{tree / QUEUE}:{line + 1}:10: warning: reading variable 'items_' requires holding mutex 'mutex_' "
                "[clang-diagnostic-thread-safety-analysis]")
    assert expected in result.stdout, result.stdout + result.stderr
