"""The CI performance gate: instructions per transaction, parent commit against this one.

Steps, each printed as it goes:

1. The base commit (the parent, `HEAD^`, unless --base names another) is checked out in a
   git worktree under the work directory and its `apiary` built in release mode. A base that
   does not resolve fails the gate, unless --allow-missing-base is given and none can exist
   here (HEAD is a first commit, or the clone is shallow): then it says so and passes.
2. Each side generates the same seeded workload with its own binary (`apiary workload`,
   native speed) and replays it under callgrind, counting only the measured function
   (`--toggle-collect=apiary_replay_measured`): the writer loop over the workload on one
   thread, twice at once: on the simulated caches and on caches of pages (gate.COUNTS). The
   counts are deterministic for a binary, so one replay per side is enough.
   A base that does not build, one without a replay mode (older than the gate) and a replay
   that fails fail the gate: it never passes because it could not measure.
3. The verdicts (gate.decide): fail when this commit needs more than the threshold (3%)
   more instructions per transaction than its parent, or more than the threshold more
   estimated cycles (the cache simulation's accesses priced by where they were served,
   gate.COSTS), or more than the threshold more estimated memory time (the last-level misses,
   the simulated TLB's misses and the page walks at this machine's fitted prices, gate.MEMORY):
   a change that keeps the instructions and adds cache misses or page walks fails too. Where
   they moved is read from the callgrind files (gate.side_function_costs): the functions whose
   own (self) and whose inclusive cost per transaction changed most, kept in --json always
   and printed when the gate fails, so that a red CI job names its cause.
4. For information only, a short interleaved wall-time comparison of the full cycle
   (smoke-sized `apiary run`s, A B A B ...): shared CI machines are too noisy to gate on it.
5. With $APIARY_HISTORY (or --history), this commit's count goes into the results history and
   the gate also fails on a change point at the head of its series; --junit and --markdown
   write the reports a CI system shows (ci.py, docs/ci.md).

Exit status: 0 passed (or nothing to compare, when allowed), 1 the gate failed or could not
measure (the reason on stderr and in --json), 2 bad usage or a broken current build.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from ... import builds, gate
from ...common import (
    EXIT_FAILED,
    EXIT_OK,
    REPO_ROOT,
    Parser,
    ToolError,
    finite_number,
    run_main,
    short_symbol,
    whole_number,
)
from ...metrics import flatten
from ...outputs import Outputs, check_directory, make_directory, write_json
from ...reports import load_report
from ...runner import MAX_PLAN_RUNS
from . import ci


def resolve_commit(rev: str) -> str | None:
    p = gate.run(["git", "-C", REPO_ROOT, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"])
    return p.stdout.strip() if p.returncode == 0 and p.stdout.strip() else None


def _configure_and_build(tree: Path, build: Path, jobs: int, werror: str):
    """Configures `tree` like the release preset (tests and benchmarks off) and builds apiary."""
    generator, variables = builds.preset_settings()
    configure: list[str | os.PathLike] = ["cmake", "-S", tree, "-B", build]
    configure += ["-G", generator] if generator else []
    configure += [f"-D{k}={v}" for k, v in variables.items()]
    configure += [f"-DAPIARY_WERROR={werror}", "-DAPIARY_BUILD_TESTS=OFF", "-DAPIARY_BUILD_BENCH=OFF"]
    env = dict(os.environ)
    if shutil.which("ccache"):
        configure.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
        env.update(CCACHE_BASEDIR=str(tree), CCACHE_NOHASHDIR="true")
        env.setdefault("CCACHE_DIR", str(REPO_ROOT / "build" / "ccache"))
    p = gate.run(configure, env=env)
    if p.returncode == 0:
        p = gate.run(["cmake", "--build", build, "--target", "apiary", "-j", str(jobs)], env=env)
    return p


def build_base(commit: str, work: Path, jobs: int) -> Path | None:
    """Checks out `commit` in a worktree and builds its apiary; None (with the reason logged)
    when it cannot be built. A worktree already at that commit is reused, with its build."""
    tree = work / "base"
    head = gate.run(["git", "-C", tree, "rev-parse", "HEAD"]) if tree.exists() else None
    if head is None or head.returncode != 0 or head.stdout.strip() != commit:
        if tree.exists():
            gate.run(["git", "-C", REPO_ROOT, "worktree", "remove", "--force", tree])
            shutil.rmtree(tree, ignore_errors=True)
        gate.run(["git", "-C", REPO_ROOT, "worktree", "prune"])
        p = gate.run(["git", "-C", REPO_ROOT, "worktree", "add", "--detach", tree, commit])
        if p.returncode != 0:
            gate.log(f"cannot check out {commit[:10]}: {p.stderr.strip()}")
            return None
    # The release preset's settings and its depth below the checkout (build/release): with
    # ccache, the paths hash as the current build's did, so the parent's build takes from the
    # cache what scripts/test.sh compiled for the current commit and did not change, except
    # in the targets with precompiled headers, whose bytes differ from build to build (they
    # make those targets' sources compile faster instead).
    build = tree / "build" / "release"
    t0 = time.monotonic()
    werror = os.environ.get("APIARY_WERROR", "OFF")
    p = _configure_and_build(tree, build, jobs, werror)
    if p.returncode != 0 and werror != "OFF":
        gate.log(f"the base commit {commit[:10]} does not build with APIARY_WERROR={werror}; again without")
        p = _configure_and_build(tree, build, jobs, "OFF")
    if p.returncode != 0:
        tail = "\n".join((p.stdout + p.stderr).strip().splitlines()[-5:])
        gate.log(f"the base commit {commit[:10]} does not build:\n{tail}")
        return None
    binary = build / "harness" / "apiary"
    gate.log(f"built the base {commit[:10]} in {time.monotonic() - t0:.0f} s")
    return binary if binary.is_file() else None


def wall_comparison(base: Path, current: Path, work: Path, runs: int) -> dict | None:
    """Interleaved smoke-sized cycle runs, base and current in turn; medians only."""
    config = REPO_ROOT / "configs" / "smoke.toml"
    cycle: dict[str, list[float]] = {"base": [], "current": []}
    for i in range(runs):
        for name, binary in (("base", base), ("current", current)):
            report = work / f"wall-{name}-{i}.json"
            p = gate.run([binary, "run", "--config", config, "--progress", "off", "--report", report])
            if p.returncode != 0:
                gate.log(f"wall time: the {name} run failed ({p.returncode}); skipping the comparison")
                return None
            avg = flatten(load_report(report)).get("aggregates.cycle_us.avg")
            if avg is None:
                gate.log(f"wall time: the {name} run's report has no cycle time; skipping the comparison")
                return None
            cycle[name].append(avg)
    med = {k: statistics.median(v) for k, v in cycle.items()}
    change = (med["current"] / med["base"] - 1) * 100
    gate.log(f"wall time (information only, {runs} interleaved smoke runs each): full cycle median "
        f"{med['base']:,.0f} us -> {med['current']:,.0f} us ({change:+.1f}%)")
    return {"runs": runs, "cycle_us": cycle, "median_us": med, "change_pct": change}


def parser() -> Parser:
    p = Parser(prog="perf-gate", description=(
        "CI performance gate: replays the same seeded workload with the parent commit's apiary and "
        "this one's under callgrind (on the simulated caches and, at once, on caches of pages that stand "
        "for the TLBs) and fails when the instructions, the estimated cycles or the estimated memory time "
        "per transaction grew by more than the threshold. Then prints a short interleaved wall-time "
        "comparison, for information."),
        epilog="Exit status: 0 passed (or, with --allow-missing-base, nothing to compare in a first commit or "
               "a shallow clone); 1 the gate failed, or could not measure (a base that does not resolve or "
               "does not build, a base without `apiary replay`, a replay that failed): never a pass without a "
               "measurement; 2 bad usage or no current build.")
    p.add_argument("--base", default="HEAD^", help="the commit to compare against (default: HEAD^, the parent)")
    p.add_argument("--allow-missing-base", action="store_true",
                   help="pass, with nothing to compare, when the base cannot exist in this clone: HEAD is the "
                        "first commit, or the clone is shallow (without it, a base that does not resolve fails)")
    p.add_argument("--apiary", type=Path, default=REPO_ROOT / "build" / "release" / "harness" / "apiary",
                   help="this commit's apiary (default: build/release/harness/apiary)")
    p.add_argument("--threshold", type=finite_number(0, 1000, "a percentage"),
                   default=gate.DEFAULT_THRESHOLD * 100,
                   help="the allowed growth of each count per transaction (instructions, estimated cycles, "
                        "estimated memory time), in percent (default: 3)")
    workload = gate.WORKLOAD
    p.add_argument("--transactions", type=whole_number(1, 1_000_000_000), default=workload.transactions,
                   help=f"workload size (default: {workload.transactions})")
    p.add_argument("--accounts", type=whole_number(1, 10_000_000), default=workload.accounts,
                   help=f"genesis accounts (default: {workload.accounts})")
    p.add_argument("--seed", type=whole_number(0, 2**64 - 1), default=workload.seed,
                   help=f"workload seed (default: {workload.seed})")
    p.add_argument("--block-size", default=workload.block_size,
                   help="block size target of the replay, so blocks are produced and applied often "
                        f"(default: {workload.block_size})")
    p.add_argument("--wall-runs", type=whole_number(0, MAX_PLAN_RUNS), default=3,
                   help="interleaved smoke runs per side for the wall-time information; 0: none (default: 3)")
    p.add_argument("--work", type=Path, default=REPO_ROOT / "build" / "perf-gate",
                   help="where the base worktree, its build and the profiles go (default: build/perf-gate)")
    p.add_argument("--json", metavar="PATH", help="also write the result as JSON here")
    ci.add_options(p)
    return p


def _main(argv: Sequence[str]) -> int:
    args = parser().parse_args(argv)
    if not args.apiary.is_file():
        raise ToolError(f"--apiary {args.apiary}: no such binary; build the release preset first")
    plan = Outputs().read("--apiary", [args.apiary])
    for option in ("--json", "--junit", "--markdown"):
        plan.file(option, getattr(args, option[2:]))
    check_directory("--work", args.work, force=True)   # reused: a base already built there is kept
    if shutil.which("valgrind") is None:
        raise ToolError("valgrind is not installed (scripts/install-deps.sh installs it)")
    result: dict = {"threshold_pct": args.threshold, "base": args.base}
    ci.describe(result, args, resolve_commit("HEAD"))
    try:
        code = _gate(args, result)
    except ToolError as e:   # the gate failed, or could not measure: the reason is in the result too
        result.setdefault("status", "failed")
        result.setdefault("reason", str(e))
        _finish(args, result)
        raise
    _finish(args, result)
    if not result.get("history", {}).get("passed", True):
        raise ToolError(result["history"]["message"], EXIT_FAILED)
    return code


def _finish(args, result: dict) -> None:
    """A measured result into the history and its newest segment checked (with $APIARY_HISTORY or
    --history); then the result as JSON, JUnit XML and Markdown, as asked."""
    target = ci.history_target(args)
    if target and "sides" in result:
        source = str(Path(args.json).resolve()) if args.json else f"perf-gate:{result['commit']}"
        result["history"] = ci.check_history(target, result, source, args.threshold, args.recent)
        gate.log(result["history"]["message"])
    if args.json:
        write_json(args.json, result)
    ci.write_reports(result, args.junit, args.markdown)


def base_cannot_exist() -> str | None:
    """Why no base can be found in this clone (HEAD is a first commit, or the clone is shallow),
    or None when the history is all here."""
    if gate.run(["git", "-C", REPO_ROOT, "rev-parse", "--is-shallow-repository"]).stdout.strip() == "true":
        return "this clone is shallow"
    parents = gate.run(["git", "-C", REPO_ROOT, "rev-list", "--parents", "-n", "1", "HEAD"])
    if parents.returncode == 0 and len(parents.stdout.split()) == 1:
        return "HEAD is the first commit"
    return None


def _base(args, result: dict) -> Path | None:
    """The base's apiary, built; None when there is nothing to compare and that is allowed."""
    commit = resolve_commit(args.base)
    if commit is None:
        why = base_cannot_exist()
        if why and args.allow_missing_base:
            result["status"] = "skipped"
            result["reason"] = f"{args.base} does not exist: {why}"
            gate.log(f"nothing to compare: {result['reason']}; passing, as --allow-missing-base asks")
            return None
        raise ToolError(f"--base {args.base}: not a commit in this clone" +
                        (f" ({why}; --allow-missing-base passes then)" if why else
                         " (the history is all here: a typo? --allow-missing-base passes only for a first commit "
                         "or a shallow clone)"), EXIT_FAILED)
    result["base_commit"] = commit
    make_directory(args.work)
    gate.log(f"base {args.base} = {commit[:10]}; building it in {args.work / 'base'}")
    base = build_base(commit, args.work, os.cpu_count() or 2)
    if base is None:
        raise ToolError(f"the base commit {commit[:10]} could not be built (its last lines are above); nothing "
                        "was measured", EXIT_FAILED)
    if gate.run([base, "replay", "--help"]).returncode != 0:
        raise ToolError(f"the base commit {commit[:10]} has no `apiary replay` (it predates the gate); nothing "
                        "was measured: give a later --base", EXIT_FAILED)
    return base


def _gate(args, result: dict) -> int:
    """Measures both sides and decides; a step that fails raises (exit 1), never a pass."""
    base = _base(args, result)
    if base is None:
        return EXIT_OK
    sides = {name: gate.count_side(name, binary, args.work, args)
             for name, binary in (("base", base), ("current", args.apiary))}
    result["sides"] = sides
    if sides["base"]["state_digest"] != sides["current"]["state_digest"]:
        gate.log("note: the two replays end in different states (the workload or the chain's rules changed)")
    verdicts = {c.cost: gate.decide(sides["base"][c.per_tx_key], sides["current"][c.per_tx_key],
                                    args.threshold / 100, c.cost) for c in gate.GATE_COSTS}
    for c in gate.GATE_COSTS:
        result[c.verdict_key] = verdicts[c.cost].to_dict()
    failed = [v for v in verdicts.values() if not v.passed]
    result["status"] = "failed" if failed else "passed"
    changes = {c.cost: where_it_moved(sides, result, c) for c in gate.GATE_COSTS}
    if args.wall_runs > 0:
        result["wall_time"] = wall_comparison(base, args.apiary, args.work, args.wall_runs)
    if failed:
        messages = []
        for v in failed:
            moved = changes[v.cost]
            for line in gate.changes_text(moved or {}, words=gate.BY_COST[v.cost].words):
                gate.log(line)
            message = v.message
            if moved and moved["self"] and moved["inclusive"]:
                own, inclusive = moved["self"][0], moved["inclusive"][0]
                message += (f"; moved most per transaction: {short_symbol(own.function, 80)} ({own.change:+,.1f} "
                            f"own), {short_symbol(inclusive.function, 80)} ({inclusive.change:+,.1f} with its "
                            "callees)")
            messages.append(message)
        result["reason"] = "; ".join(messages)
        raise ToolError(result["reason"], EXIT_FAILED)
    for v in verdicts.values():
        gate.log(v.message)
    return EXIT_OK


def where_it_moved(sides: dict, result: dict, cost: gate.GateCost = gate.INSTRUCTIONS
                   ) -> dict[str, list[gate.FunctionChange]] | None:
    """The functions whose `cost` per transaction moved most, from the two sides' callgrind
    files, into `result[cost.functions_key]`; None (said, and kept in the result) when a file
    cannot be read: the verdict stands on the totals either way."""
    if not all(side.get(key) for side in sides.values() for key, _ in cost.parts):
        return None
    try:
        costs = {name: gate.side_function_costs(side, cost) for name, side in sides.items()}
    except (OSError, gate.ParseError) as e:
        result[f"{cost.functions_key}_error"] = str(e)
        gate.log(f"note: where the {cost.words} moved is not known: {e}")
        return None
    changes = gate.function_changes(costs["base"], costs["current"], sides["base"]["transactions"],
                                    sides["current"]["transactions"])
    result[cost.functions_key] = {kind: [r.to_dict() for r in rows] for kind, rows in changes.items()}
    return changes


def main(argv: Sequence[str] | None = None) -> int:
    return run_main("perf-gate", _main, argv)


if __name__ == "__main__":
    sys.exit(main())
