"""scripts/check-layers: the repository passes, and each kind of arrow against the layers
planted in a copy of its C++ folders, or of its Python tools, is named."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

MODULE_DIRS = ("core", "colony", "queen", "harness")


def run_check(repo: Path, root: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(repo / "scripts" / "check-layers"), "--root", str(root)],
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.fixture
def tree(repo, tmp_path) -> Path:
    for name in MODULE_DIRS:
        shutil.copytree(repo / name, tmp_path / name, ignore=shutil.ignore_patterns("*.json", "cmake"))
    return tmp_path


def plant(path: Path, include: str) -> None:
    text = path.read_text()
    path.write_text(f'#include "{include}"\n' + text)


def test_the_repository_passes(repo):
    result = run_check(repo, repo)
    assert result.returncode == 0, result.stderr


def test_a_copy_passes(repo, tree):
    assert run_check(repo, tree).returncode == 0


def test_an_upward_include_inside_the_harness_is_named(repo, tree):
    plant(tree / "harness" / "src" / "io" / "error_text.cpp", "cycle/run.hpp")
    result = run_check(repo, tree)
    assert result.returncode == 1
    assert "harness/src/io/error_text.cpp:1: harness/io includes harness/cycle, a layer above it" in result.stderr


def test_an_upward_include_of_a_public_header_is_named(repo, tree):
    plant(tree / "harness" / "include" / "apiary" / "harness" / "config" / "options.hpp",
          "apiary/harness/report/statistics.hpp")
    result = run_check(repo, tree)
    assert result.returncode == 1
    assert "harness/config includes harness/report" in result.stderr


def test_colony_including_queen_is_named(repo, tree):
    plant(tree / "colony" / "src" / "colony.cpp", "apiary/queen/writer.hpp")
    result = run_check(repo, tree)
    assert result.returncode == 1
    assert "colony includes queen" in result.stderr


def test_a_harness_file_outside_the_folders_is_named(repo, tree):
    (tree / "harness" / "src" / "stray.cpp").write_text("int stray;\n")
    result = run_check(repo, tree)
    assert result.returncode == 1
    assert "harness/src/stray.cpp: a harness file outside the layer folders" in result.stderr


def test_protocol_including_the_chain_layer_is_named(repo, tree):
    plant(tree / "core" / "protocol" / "src" / "hash.cpp", "apiary/core/chain/rc.hpp")
    result = run_check(repo, tree)
    assert result.returncode == 1
    assert "core/protocol includes core/chain" in result.stderr


def test_a_core_file_outside_the_layers_is_named(repo, tree):
    (tree / "core" / "stray.hpp").write_text("#pragma once\n")
    result = run_check(repo, tree)
    assert result.returncode == 1
    assert "core/stray.hpp: a core file outside the layer folders" in result.stderr
