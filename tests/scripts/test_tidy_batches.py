"""scripts/tidy_batches.py, the batches scripts/lint gives clang-tidy: a finding in a batched source is reported at the
source's own line with this repository's .clang-tidy, and the batches follow the build's targets."""

import json
import shutil
import subprocess
import sys

import pytest

import tidy_batches

USE_AFTER_MOVE = """#include <string>
#include <utility>

namespace planted {{
std::size_t moved_{n}() {{
  std::string a = "x";
  std::string b = std::move(a);
  return a.size() + b.size();
}}
}}  // namespace planted
"""


def _tree(tmp_path, count):
    """`count` sources of one target in queen/src (a folder .clang-tidy's HeaderFilterRegex takes in), one of
    another target, and the compile commands of a build with a precompiled header that does not exist."""
    src = tmp_path / "queen" / "src"
    src.mkdir(parents=True)
    build = tmp_path / "build"
    build.mkdir()
    entries = []
    for n in range(count + 1):
        target = "apiary_queen" if n < count else "apiary_other"
        source = src / f"planted_{n}.cpp"
        source.write_text(USE_AFTER_MOVE.format(n=n))
        pch = f"{build}/queen/CMakeFiles/{target}.dir/cmake_pch.hxx"
        command = (f"/usr/bin/c++ -std=c++20 -Winvalid-pch -include {pch} "
                   f"-o queen/CMakeFiles/{target}.dir/src/planted_{n}.cpp.o -c {source}")
        entries.append({"directory": str(build), "command": command, "file": str(source)})
    db = build / "compile_commands.json"
    db.write_text(json.dumps(entries))
    return db, [src / f"planted_{n}.cpp" for n in range(count + 1)]


def test_sources_are_batched_by_target_eight_at_a_time(tmp_path):
    db, sources = _tree(tmp_path, 10)
    out = tmp_path / "out"
    p = subprocess.run([sys.executable, tidy_batches.__file__, str(db), str(out), *map(str, sources)],
                       capture_output=True, text=True, check=False)
    assert p.returncode == 0, p.stderr
    batches = [line for line in p.stdout.splitlines() if line]
    assert [b.rsplit("/", 1)[1] for b in batches] == [
        "queen_CMakeFiles_apiary_queen_0.cpp", "queen_CMakeFiles_apiary_queen_1.cpp",
        "queen_CMakeFiles_apiary_other_0.cpp"]
    included = [open(b).read().splitlines() for b in batches]
    assert included == [[f'#include "{s}"' for s in sources[:8]], [f'#include "{s}"' for s in sources[8:10]],
                        [f'#include "{sources[10]}"']]
    commands = json.loads((out / "db" / "compile_commands.json").read_text())
    assert [c["file"] for c in commands] == batches
    for c in commands:
        assert "cmake_pch" not in c["command"] and "-Winvalid-pch" not in c["command"]
        assert c["command"].endswith(f"-o {c['file']}.o -c {c['file']}")


def test_a_source_without_a_command_is_refused(tmp_path):
    db, sources = _tree(tmp_path, 1)
    stray = tmp_path / "queen" / "src" / "stray.cpp"
    stray.write_text("")
    assert tidy_batches.main([str(db), str(tmp_path / "out"), *map(str, sources), str(stray)]) == 2


def test_a_finding_in_a_batched_source_is_reported_at_its_own_line(tmp_path, repo):
    if shutil.which("clang-tidy") is None:
        pytest.skip("no clang-tidy")
    db, sources = _tree(tmp_path, 2)
    out = tmp_path / "out"
    by_target = tidy_batches.targets(json.loads(db.read_text()), {s.resolve() for s in sources})
    batches = tidy_batches.write_batches(by_target, out)
    p = subprocess.run(["clang-tidy", "-p", str(out / "db"), f"--config-file={repo / '.clang-tidy'}", "--quiet",
                        str(batches[0])], capture_output=True, text=True, check=False)
    findings = [line for line in p.stdout.splitlines() if ": warning: " in line or ": error: " in line]
    for s in sources[:2]:
        assert f"{s}:8:10: warning: 'a' used after it was moved [bugprone-use-after-move]" in findings, p.stdout
    assert all(f.startswith(str(batches[0])) == ("[bugprone-suspicious-include]" in f) for f in findings), findings
