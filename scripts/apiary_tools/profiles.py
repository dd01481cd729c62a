"""Profiles in comparisons: each side's runs' folded stacks (`apiary run --profile DIR`) summed,
the functions whose share of the samples moved most, and inferno's flame graphs.

- A run's profile is the directory its report's `profile.dir` names, as apiary was given it:
  an absolute path; else relative to the report's directory, then to the current directory;
  and, when the directory moved with its reports, the directory of that name beside the
  report. Its `window.folded` holds the measured window's stacks, all threads, the first frame
  of each the thread (`writer;...`, `producer-0;...`, `main;...`).
- A side is the sum of its runs' stacks. The two sides have different numbers of samples, so
  they are compared by shares: a function's self share (the samples in which it is the leaf,
  of all the side's samples) and its total share (the samples in which it is anywhere on the
  stack). The table lists the TOP functions whose self share moved most, in percentage
  points.
- The flame graphs are inferno's (`inferno-flamegraph`, `inferno-diff-folded`): each side's,
  and the differential one, `inferno-diff-folded --normalize a.folded b.folded |
  inferno-flamegraph`: frames as wide as B's samples, red where B has more than A (A's counts
  scaled to B's total), blue where it has fewer.

The programs are looked up on PATH, then in the venv's bin directory, then in ~/.cargo/bin
(scripts/install-deps.sh installs them into one of these); an option that needs them and does
not find them is one line and exit 2, before any work.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .common import EXIT_FAILED, EXIT_USAGE, ToolError, markdown_table, short_symbols, shown, shown_path
from .inputs import read_folded
from .outputs import Outputs, descriptor_of, write_bytes
from .reports import Run, RunSet
from .schemas import COUNT, NAME, NUMBER_OR_NULL, STRING, array, obj

FOLDED_NAME = "window.folded"
FLAMEGRAPH, DIFF_FOLDED = "inferno-flamegraph", "inferno-diff-folded"
# The functions a comparison lists, by how far their self share moved.
TOP = 10
# What a profile comparison writes, by role.
FILES = {"a_folded": "a.folded", "b_folded": "b.folded", "a_svg": "a.svg", "b_svg": "b.svg",
         "diff_svg": "profile-diff.svg"}
# The longest function name a Markdown table shows (a C++ signature can take a screen).
NAME_LIMIT = 100

METHOD = ("each side's runs' stacks summed (window.folded); shares of each side's own samples: self, the "
          "samples with the function as the leaf; total, with the function anywhere on the stack; change in "
          "percentage points (pp); differential flame graph: inferno-diff-folded --normalize, widths from B, "
          "red where B has more samples than A scaled to B's total, blue where fewer")

_ROW = obj(("function", "a_self_share", "b_self_share", "change_pp"), function=STRING,
           a_self_share=NUMBER_OR_NULL, b_self_share=NUMBER_OR_NULL, change_pp=NUMBER_OR_NULL,
           a_total_share=NUMBER_OR_NULL, b_total_share=NUMBER_OR_NULL, a_self_samples=COUNT, b_self_samples=COUNT)
_SIDE = obj(("runs", "samples"), runs=COUNT, samples=COUNT)
# The `profile` of a comparison.json: `dir` is where the files are, relative to the JSON's
# directory (or absolute), the files by role.
SCHEMA = obj(("a", "b", "functions", "files"), dir=STRING, method=STRING, a=_SIDE, b=_SIDE,
             functions=array(_ROW, maxItems=1000), files=obj(tuple(FILES), **{role: NAME for role in FILES}))


# ---- the programs -------------------------------------------------------------------------------

def search_path() -> list[Path]:
    """Where the inferno programs are looked for after PATH: the venv's bin, then ~/.cargo/bin."""
    return [Path(sys.executable).parent, Path.home() / ".cargo" / "bin"]


def find_program(name: str) -> str:
    """The path of one of inferno's programs, or one line and exit 2 naming where it looked."""
    for candidate in (shutil.which(name), *(directory / name for directory in search_path())):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return str(candidate)
    raise ToolError(f"{name} is missing (the flame graphs are inferno's, 0.12 or later): scripts/install-deps.sh "
                    "installs it; looked on PATH, in the venv's bin and in ~/.cargo/bin", EXIT_USAGE)


def find_programs() -> dict[str, str]:
    return {name: find_program(name) for name in (FLAMEGRAPH, DIFF_FOLDED)}


def _run(command: Sequence[str], data: bytes | None = None) -> bytes:
    try:
        p = subprocess.run(list(command), input=data, capture_output=True, check=False)
    except OSError as e:
        raise ToolError(f"cannot run {Path(command[0]).name}: {e.strerror}", EXIT_FAILED) from None
    if p.returncode != 0:
        last = (p.stderr.decode("utf-8", "replace").strip().splitlines() or ["no message"])[-1]
        raise ToolError(f"{Path(command[0]).name} failed with exit status {p.returncode}: {shown(last, 200)}",
                        EXIT_FAILED)
    return p.stdout


# ---- finding and reading the runs' profiles ------------------------------------------------------

def _unique(paths: list[Path]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        if p not in out:
            out.append(p)
    return out


def profile_dir(run: Run) -> Path:
    """The directory of a run's profile, by its report's `profile.dir` (see the module's docstring)."""
    where = shown_path(run.path or "a run")
    if run.report is None:
        raise ToolError(f"{where}: read from an aggregate file, which keeps no profile; give the directory of the "
                        "runs' reports")
    section = run.report.get("profile")
    if not section:
        raise ToolError(f"{where}: the run has no profile (run it with `apiary run --profile DIR`, or "
                        "`multirun --profile`)")
    given = Path(section["dir"])
    beside = Path(run.path or ".").parent
    tried = [given] if given.is_absolute() else [beside / given, Path.cwd() / given]
    tried = _unique(tried + ([beside / given.name] if given.name else []))
    for candidate in tried:
        folded = candidate / FOLDED_NAME
        if folded.exists() or folded.is_symlink():   # read_folded refuses what is not a regular file
            return candidate
    missing = "is not there" if not any(c.is_dir() for c in tried) else f"has no {FOLDED_NAME}"
    raise ToolError(f"{where}: its profile (profile.dir {shown_path(section['dir'])}) {missing}; looked in "
                    + ", ".join(shown_path(str(c)) for c in tried))


def folded_files(rs: RunSet) -> list[Path]:
    """Every run's window.folded, the runs' order."""
    return [profile_dir(run) / FOLDED_NAME for run in rs.runs]


@dataclass
class SideProfile:
    """One side's runs' stacks, summed."""
    label: str
    runs: int
    stacks: dict[str, int]

    @property
    def samples(self) -> int:
        return sum(self.stacks.values())

    def functions(self) -> dict[str, tuple[int, int]]:
        """(self, total) samples of every function: the leaf, and anywhere on the stack, once
        a stack however deep it recurses. The first frame, the thread, is no function."""
        out: dict[str, list[int]] = {}
        for stack, count in self.stacks.items():
            frames = stack.split(";")[1:]
            if not frames:
                continue
            out.setdefault(frames[-1], [0, 0])[0] += count
            for frame in set(frames):
                out.setdefault(frame, [0, 0])[1] += count
        return {name: (own, total) for name, (own, total) in out.items()}

    def folded(self) -> str:
        return "".join(f"{stack} {count}\n" for stack, count in sorted(self.stacks.items()))


def read_side(rs: RunSet, paths: Sequence[Path]) -> SideProfile:
    stacks: dict[str, int] = {}
    for path in paths:
        for stack, count in read_folded(path).items():
            stacks[stack] = stacks.get(stack, 0) + count
    side = SideProfile(rs.label, len(paths), stacks)
    if side.samples == 0:
        named = ", ".join(shown_path(str(p)) for p in paths[:3]) + (", …" if len(paths) > 3 else "")
        raise ToolError(f"{rs.label}: its runs' profiles hold no samples ({named})")
    return side


# ---- the comparison ---------------------------------------------------------------------------

def moved_functions(a: SideProfile, b: SideProfile, top: int = TOP) -> list[dict[str, Any]]:
    """The `top` functions whose self share moved most, largest absolute change first."""
    fa, fb = a.functions(), b.functions()
    rows: list[dict[str, Any]] = []
    for name in fa.keys() | fb.keys():
        (sa, ta), (sb, tb) = fa.get(name, (0, 0)), fb.get(name, (0, 0))
        rows.append({"function": name, "a_self_share": sa / a.samples, "b_self_share": sb / b.samples,
                     "change_pp": (sb / b.samples - sa / a.samples) * 100, "a_total_share": ta / a.samples,
                     "b_total_share": tb / b.samples, "a_self_samples": sa, "b_self_samples": sb})
    rows = [r for r in rows if r["change_pp"] != 0]
    return sorted(rows, key=lambda r: (-abs(r["change_pp"]), r["function"]))[:top]


@dataclass
class ProfileComparison:
    """What a comparison keeps of the profiles: the sides' sizes, the functions that moved, and
    where the folded stacks and the flame graphs were written."""
    a_label: str
    b_label: str
    a: dict[str, int]          # runs, samples
    b: dict[str, int]
    functions: list[dict[str, Any]]
    directory: str | None = None   # where the files are, as the command line gave it
    files: dict[str, str] = field(default_factory=lambda: dict(FILES))
    json_dir: str | None = None    # the same, relative to the comparison's JSON when there is one

    def to_dict(self) -> dict[str, Any]:
        return {"dir": self.json_dir or self.directory or ".", "method": METHOD, "a": self.a, "b": self.b,
                "functions": self.functions, "files": self.files}

    @classmethod
    def from_dict(cls, data: dict[str, Any], a_label: str, b_label: str) -> ProfileComparison:
        return cls(a_label, b_label, data["a"], data["b"], data["functions"], data.get("dir"), data["files"],
                   data.get("dir"))

    def markdown(self) -> list[str]:
        def share(value: float | None) -> str:
            return "–" if value is None else f"{value * 100:.2f}%"

        def name(text: str) -> str:
            cut = shown(text, NAME_LIMIT)
            return f"`{cut}`" if "`" not in cut else cut

        names = short_symbols([r["function"] for r in self.functions], NAME_LIMIT)
        rows = [[name(n), share(r["a_self_share"]), share(r["b_self_share"]), f"{r['change_pp']:+.2f} pp",
                 share(r.get("a_total_share")), share(r.get("b_total_share"))]
                for r, n in zip(self.functions, names, strict=True)]
        lines = [f"Profile: the functions whose self share moved most ({self.a_label}: {self.a['samples']:,} "
                 f"samples in {self.a['runs']} runs; {self.b_label}: {self.b['samples']:,} in {self.b['runs']}; "
                 "shares of each side's own samples):", ""]
        if rows:
            lines.append(markdown_table(["function", f"A: {self.a_label} self", f"B: {self.b_label} self", "change",
                                         "A total", "B total"], rows))
        else:
            lines += ["No function's self share moved.", ""]
        where = "" if self.directory in (None, ".") else f" in {self.directory}"
        lines += [f"Flame graphs{where}: {self.files['a_svg']} (A), {self.files['b_svg']} (B), "
                  f"{self.files['diff_svg']} (B against A: widths from B, red where B has more of the samples, "
                  f"blue where fewer); the summed stacks: {self.files['a_folded']}, {self.files['b_folded']}.", ""]
        return lines


def flame_graphs(a: SideProfile, b: SideProfile, programs: dict[str, str]) -> dict[str, bytes]:
    """The files a profile comparison writes, by name: each side's stacks, and its flame graph
    and the differential one, drawn by inferno from copies in a directory of our own."""
    out = {FILES["a_folded"]: a.folded().encode(), FILES["b_folded"]: b.folded().encode()}
    graph = programs[FLAMEGRAPH]
    with tempfile.TemporaryDirectory(prefix="apiary-profile-") as tmp:
        paths = {}
        for role, side in (("a", a), ("b", b)):
            paths[role] = Path(tmp) / f"{role}.folded"
            paths[role].write_bytes(out[FILES[f"{role}_folded"]])
            out[FILES[f"{role}_svg"]] = _run([graph, "--deterministic", "--title", f"{role.upper()}: {side.label}",
                                              "--subtitle", f"{side.samples:,} samples in {side.runs} runs",
                                              str(paths[role])])
        diff = _run([programs[DIFF_FOLDED], "--normalize", str(paths["a"]), str(paths["b"])])
        out[FILES["diff_svg"]] = _run([graph, "--deterministic", "--title", f"{b.label} (B) against {a.label} (A)",
                                       "--subtitle", "widths: B's samples; red: more than A (scaled to B's "
                                       "samples), blue: fewer", "-"], diff)
    return out


def output_dir(out: str | None, json_path: str | None) -> Path:
    """Where a comparison writes its profile files: --out, else beside its --json file."""
    if out is not None:
        return Path(out)
    if json_path is not None and descriptor_of(json_path) is None:
        target = Path(json_path)
        if not target.exists() or target.is_file():
            return target.parent
    raise ToolError("--profile writes flame graphs and folded stacks: give --out DIR, or --json FILE to write them "
                    "beside it")


def plan(outputs: Outputs, directory: Path, own_directory: bool, force: bool) -> None:
    """Checks the profile files' outputs: in a directory of their own (--out: new or empty
    unless --force), or each file beside the comparison's JSON."""
    if own_directory:
        outputs.directory("--out", directory, force, FILES.values())
    else:
        for name in FILES.values():
            outputs.file("--profile", directory / name)


def compare(a: RunSet, b: RunSet, outputs: Outputs, programs: dict[str, str],
            directory: Path) -> tuple[ProfileComparison, dict[str, bytes]]:
    """Both sides' profiles read (each folded file checked as an input against the outputs),
    compared, and drawn; the files are returned, for the caller to write after its checks."""
    sides = []
    for rs, option in ((a, "A"), (b, "B")):
        paths = folded_files(rs)
        outputs.read(f"{option}'s profile", paths)
        sides.append(read_side(rs, paths))
    sa, sb = sides
    result = ProfileComparison(a.label, b.label, {"runs": sa.runs, "samples": sa.samples},
                               {"runs": sb.runs, "samples": sb.samples}, moved_functions(sa, sb), str(directory))
    return result, flame_graphs(sa, sb, programs)


def write(files: dict[str, bytes], directory: Path) -> None:
    for name, data in files.items():
        write_bytes(directory / name, data)


def relative_to(directory: Path, base: Path) -> str:
    """`directory` as the comparison's JSON in `base` names it: relative when it can be."""
    try:
        return os.path.relpath(os.path.abspath(directory), os.path.abspath(base))
    except ValueError:
        return os.path.abspath(directory)
