"""Builds of other commits: the `apiary` binary of any git ref, each in its own worktree,
cached by commit id, so that tools can compare or bisect commits without touching the working
tree (multirun --base, bisect).

Layout, under the build directory (default build/commits/, git-ignored):

    <sha>/src/            `git worktree add --detach` of the commit
    <sha>/build/          its build tree; the binary is build/harness/apiary
    <sha>/build.log       what the configure and build steps printed
    <sha>/checked-out     written when the worktree's checkout completed
    <sha>/built           written last, when the binary is there: a second request reuses it
    <sha>.lock            held while a request for the commit is in hand (fcntl lock), so
                          concurrent requests for one commit build it once

The build is configured like the release preset of this tree's CMakePresets.json (its
generator and cache variables; a variable taken from the environment, APIARY_WERROR, is left
off: an older commit may warn under a newer compiler) with ccache as compiler launcher,
and builds the `apiary` target only, without precompiled headers (APIARY_PCH=OFF, which
an older commit ignores). All the builds share one ccache directory
(build/ccache/, or $CCACHE_DIR when set), each with its worktree as ccache's base directory,
so a file that did not change between two commits compiles once.

A build command given instead (`--build-command`, for tests on small synthetic repositories)
runs through the shell in the worktree, with APIARY_SOURCE_DIR and APIARY_BUILD_DIR set; it
must leave an executable at $APIARY_BUILD_DIR/harness/apiary.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from .common import EXIT_FAILED, REPO_ROOT, ToolError, shown, shown_path

BINARY = Path("harness") / "apiary"
PRESET = "release"
TARGET = "apiary"
BUILT_MARK = "built"


def stderr_line(tool: str) -> Callable[[str], None]:
    def say(text: str) -> None:
        print(f"{tool}: {text}", file=sys.stderr, flush=True)
    return say


def git(repo: Path, *args: str | os.PathLike) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(repo), *map(str, args)], capture_output=True, text=True)


def resolve(repo: Path, ref: str, option: str = "ref") -> str:
    """The full commit id of `ref` in `repo`, or one line saying it is none."""
    p = git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
    if p.returncode != 0 or not p.stdout.strip():
        raise ToolError(f"{option} {shown(ref)}: not a commit of {shown_path(str(repo))}")
    return p.stdout.strip()


def preset_settings(repo: Path = REPO_ROOT, name: str = PRESET) -> tuple[str | None, dict[str, str]]:
    """The generator and the cache variables of a configure preset, its `inherits` followed;
    values taken from the environment ($env{...}) are left out."""
    try:
        presets = {p["name"]: p for p in json.loads((repo / "CMakePresets.json").read_text(encoding="utf-8"))
                   ["configurePresets"]}
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ToolError(f"CMakePresets.json: cannot read the {name} preset: {e}") from None

    def chain(preset: str) -> list[dict]:
        p = presets.get(preset)
        if p is None:
            raise ToolError(f"CMakePresets.json: no configure preset {preset!r}")
        parents = p.get("inherits", [])
        return [x for parent in ([parents] if isinstance(parents, str) else parents) for x in chain(parent)] + [p]

    generator, variables = None, {}
    for p in chain(name):
        generator = p.get("generator", generator)
        for key, value in p.get("cacheVariables", {}).items():
            value = value.get("value") if isinstance(value, dict) else value
            if isinstance(value, str) and "$env{" not in value:
                variables[key] = value
    return generator, variables


def default_steps(src: Path, build: Path) -> list[list[str]]:
    """Configure like the release preset, with ccache, and build the apiary target."""
    generator, variables = preset_settings()
    configure = ["cmake", "-S", str(src), "-B", str(build)] + (["-G", generator] if generator else [])
    configure += [f"-D{k}={v}" for k, v in variables.items()]
    configure += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", "-DCMAKE_C_COMPILER_LAUNCHER=ccache"]
    # No precompiled headers: GCC's differ in their bytes from build to build, so every source
    # that used one would miss the cache shared between the commits' builds.
    configure += ["-DAPIARY_PCH=OFF"]
    return [configure, ["cmake", "--build", str(build), "--target", TARGET]]


class Builds:
    """Builds (or finds, already built) the apiary of a commit of `repo` under `root`."""

    def __init__(self, repo: Path = REPO_ROOT, root: Path | None = None, command: str | None = None,
                 say: Callable[[str], None] | None = None):
        self.repo = repo
        self.root = root if root is not None else repo / "build" / "commits"
        self.command = command
        self.say = say or stderr_line("builds")

    def paths(self, sha: str) -> tuple[Path, Path, Path]:
        """(worktree, build tree, log) of a commit."""
        top = self.root / sha
        return top / "src", top / "build", top / "build.log"

    def binary(self, sha: str) -> Path:
        return self.paths(sha)[1] / BINARY

    def is_built(self, sha: str) -> bool:
        return (self.root / sha / BUILT_MARK).is_file() and self.binary(sha).is_file()

    def build(self, ref: str, option: str = "ref") -> Path:
        """The apiary of `ref`, built if it is not yet; ToolError (exit 1) naming the commit and
        its log when the build fails (exit 2, naming `option`, when `ref` is no commit)."""
        sha = resolve(self.repo, ref, option)
        if self.is_built(sha):
            self.say(f"{sha[:10]}: built already ({self.binary(sha)})")
            return self.binary(sha)
        self.root.mkdir(parents=True, exist_ok=True)
        with self._locked(sha):
            if self.is_built(sha):   # another request built it while this one waited
                self.say(f"{sha[:10]}: built by another request ({self.binary(sha)})")
                return self.binary(sha)
            return self._build(sha)

    @contextlib.contextmanager
    def _locked(self, sha: str) -> Iterator[None]:
        with open(self.root / f"{sha}.lock", "a+") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                self.say(f"{sha[:10]}: another request is building it; waiting")
                fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _build(self, sha: str) -> Path:
        src, build, log = self.paths(sha)
        self._checkout(sha, src)
        (self.root / sha / BUILT_MARK).unlink(missing_ok=True)
        self.say(f"{sha[:10]}: building ({'the given command' if self.command else 'release, ccache'}; log {log})")
        t0 = time.monotonic()
        ok = self._run_steps(src, build, log)
        binary = self.binary(sha)
        if not ok or not (binary.is_file() and os.access(binary, os.X_OK)):
            why = "the build failed" if not ok else f"the build left no {BINARY}"
            raise ToolError(f"commit {sha[:10]}: {why}; its log is {log}", EXIT_FAILED)
        (self.root / sha / BUILT_MARK).write_text(f"{time.monotonic() - t0:.1f}\n", encoding="utf-8")
        self.say(f"{sha[:10]}: built in {time.monotonic() - t0:.0f} s ({binary})")
        return binary

    def _checkout(self, sha: str, src: Path) -> None:
        """The commit's worktree: reused when its checkout completed (a `checked-out` mark: a
        `git worktree add` that was stopped half-way leaves HEAD at the commit and files
        missing) at the commit, else made afresh."""
        mark = self.root / sha / "checked-out"
        head = git(src, "rev-parse", "HEAD") if mark.is_file() and (src / ".git").exists() else None
        if head is not None and head.returncode == 0 and head.stdout.strip() == sha:
            return
        mark.unlink(missing_ok=True)
        # A `worktree add` stopped half-way leaves its worktree locked ("initializing"), which
        # neither remove (without a second --force) nor prune clears.
        git(self.repo, "worktree", "unlock", src)
        if src.exists():
            git(self.repo, "worktree", "remove", "--force", src)
            shutil.rmtree(src, ignore_errors=True)
        git(self.repo, "worktree", "prune")
        p = git(self.repo, "worktree", "add", "--detach", src, sha)
        if p.returncode != 0:
            raise ToolError(f"commit {sha[:10]}: cannot check it out in {src}: "
                            f"{(p.stderr.strip().splitlines() or ['?'])[-1]}", EXIT_FAILED)
        mark.write_text(f"{sha}\n", encoding="utf-8")

    def _run_steps(self, src: Path, build: Path, log: Path) -> bool:
        env = dict(os.environ, APIARY_SOURCE_DIR=str(src), APIARY_BUILD_DIR=str(build),
                   CCACHE_BASEDIR=str(src), CCACHE_NOHASHDIR="true")
        env.setdefault("CCACHE_DIR", str(self.repo / "build" / "ccache"))
        steps: list[list[str] | str] = [self.command] if self.command else list(default_steps(src, build))
        build.mkdir(parents=True, exist_ok=True)
        with open(log, "w", encoding="utf-8") as out:
            for step in steps:
                out.write(f"$ {step if isinstance(step, str) else ' '.join(step)}\n")
                out.flush()
                p = subprocess.run(step, shell=isinstance(step, str), cwd=src, env=env, stdout=out,
                                   stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
                if p.returncode != 0:
                    return False
        return True
