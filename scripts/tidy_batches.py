#!/usr/bin/env python3
"""The batches scripts/lint gives clang-tidy: the sources of each target, eight at a time in the
order of the build's compile commands, as CMake's unity build groups them (APIARY_UNITY), so a
batch parses the shared headers and runs the checks over them once instead of once a source.

A batch is a file in OUT/batches that includes its sources by absolute path; OUT/db holds a
compile_commands.json with one command a batch, its target's command less GCC's precompiled
header (clang cannot load it), so each source gets the includes it names. clang-tidy reports a
finding in a source at the source's own line when .clang-tidy's HeaderFilterRegex takes in
its folder; its one finding in the batch file itself is that it includes .cpp files. Prints
the batch files, one a line.

    scripts/tidy_batches.py COMPILE_COMMANDS OUT SOURCE...
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

PER_BATCH = 8  # CMake's default unity batch size, which the sanitizer builds compile with
PCH = re.compile(r"\s+(-Winvalid-pch|-include\s+\S*cmake_pch\.hxx)(?=\s)")
OUTPUT = re.compile(r"\s-o\s+(\S+)")


@dataclass
class Target:
    directory: str
    command: str  # one source's command, its precompiled header taken out
    output: str  # that command's object file
    source: str  # and its source, as the command names it
    sources: list[Path] = field(default_factory=list)


def targets(entries: list[dict[str, str]], wanted: set[Path]) -> dict[str, Target]:
    """The wanted sources by target (the folder of their objects), in the commands' order."""
    out: dict[str, Target] = {}
    for e in entries:
        source = (Path(e["directory"]) / e["file"]).resolve()
        output = OUTPUT.search(e["command"])
        if source not in wanted or output is None:
            continue
        target = output.group(1).split(".dir/")[0]
        if target not in out:
            out[target] = Target(e["directory"], PCH.sub("", e["command"]), output.group(1), e["file"])
        out[target].sources.append(source)
    return out


def write_batches(by_target: dict[str, Target], out: Path) -> list[Path]:
    (out / "batches").mkdir(parents=True, exist_ok=True)
    (out / "db").mkdir(parents=True, exist_ok=True)
    db = []
    batches = []
    for name, t in by_target.items():
        for n in range(0, len(t.sources), PER_BATCH):
            batch = out / "batches" / f"{name.replace('/', '_')}_{n // PER_BATCH}.cpp"
            batch.write_text("".join(f'#include "{s}"\n' for s in t.sources[n : n + PER_BATCH]), encoding="utf-8")
            command = t.command.replace(t.output, f"{batch}.o").replace(t.source, str(batch))
            db.append({"directory": t.directory, "file": str(batch), "command": command})
            batches.append(batch)
    (out / "db" / "compile_commands.json").write_text(json.dumps(db), encoding="utf-8")
    return batches


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("tidy_batches: usage: scripts/tidy_batches.py COMPILE_COMMANDS OUT SOURCE...", file=sys.stderr)
        return 2
    try:
        entries = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        print(f"tidy_batches: cannot read {argv[0]}: {e}", file=sys.stderr)
        return 2
    wanted = {Path(s).resolve() for s in argv[2:]}
    by_target = targets(entries, wanted)
    missing = len(wanted) - sum(len(t.sources) for t in by_target.values())
    if missing:
        print(f"tidy_batches: {missing} of the sources have no command in {argv[0]}", file=sys.stderr)
        return 2
    print("\n".join(str(b) for b in write_batches(by_target, Path(argv[1]))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
