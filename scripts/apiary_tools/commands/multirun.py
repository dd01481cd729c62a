"""multirun: repeat `apiary run` and aggregate every scalar metric across the runs.

One run varies by several percent on a shared machine, so a number worth quoting is a mean
over runs with its confidence interval. Transaction latency is the exception: its
percentiles are taken from the runs' histograms merged (latency.py), the percentiles of all
the runs' transactions, not a mean of each run's. Modes:

- N runs of one configuration: `multirun --runs 5 --config configs/smoke.toml`;
- an A/B pair, interleaved A B A B … so that drift of the machine (other jobs, heat) falls on
  both sides alike: `multirun --runs 5 --a "--dedup split" --b "--dedup unified" -- --config …`;
  the comparison (see comparison.py) is written beside the two sets;
- an adaptive A/B (`--adaptive`): --runs pairs, then one interleaved pair at a time until the
  sequential decision on the deciding metric (sequential.py: anytime-valid, so looking after
  every pair keeps its α; deciding.py: the mean cycle or the writer's CPU time per
  transaction, --decide-on) is settled, or --max-runs or --max-time is spent; the decision is
  in the comparison;
- no runs, only aggregation of existing reports: `multirun --aggregate DIR_OR_REPORTS…`.

Two builds in one command: `--a-apiary BIN` and `--b-apiary BIN` give each side its own binary
(an A/B, with or without --a/--b), and `--base REF` makes side A the apiary of that commit, built
in its own worktree (builds.py: build/commits/<sha>/, the release preset, ccache; kept for the next
time), against the current build (or --b-apiary). Beside the wall-time comparison, each binary's
instructions, estimated cycles and estimated memory time per transaction are counted as the
CI gate counts them (gate.py: the seeded replay under callgrind, deterministic), and written in
comparison.md and .json; under --decide-on auto the estimated cycles and memory time of that
replay, noise 0, decide (deciding.counted; where the two part, the runs do).

With `--cluster tcp://HOST:8786` every machine of the cluster runs the whole plan (fleet.py),
its reports named run-001@HOST.json; the A/B comparison then pairs each machine's runs with
its own (stats.compare).

Output directory (default results/multirun-<UTC time>/): run-001.json … (the reports),
run-001.out … (apiary's summary; its log is run-001.log), aggregate.json (every run's value of every metric and the
statistics), summary.md. An A/B run puts each side in its own subdirectory and adds
comparison.md and comparison.json. With --profile every run is profiled into run-001.profile/
beside its report (`apiary run --profile`, given the absolute path), and an A/B's profiles are
compared beside the comparison (profiles.py): profile-diff.svg, a.svg, b.svg, a.folded,
b.folded, and the functions that moved in comparison.md and .json.

Exit status: 0 all runs completed; 1 a run failed (its log is named; the aggregate of the
runs that completed is still written); 2 bad usage (also when apiary rejects the arguments);
130/143 interrupted by SIGINT/SIGTERM (the completed runs are aggregated).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .. import comparison as compare_mod
from .. import deciding, fleet, gate, history, kinds, profiles, sequential
from ..aggregates import SUMMARY_NAME, aggregate, summary_markdown
from ..builds import Builds, stderr_line
from ..common import (
    EXIT_FAILED,
    EXIT_OK,
    REPO_ROOT,
    STOP,
    Parser,
    ToolError,
    check_apiary,
    default_apiary,
    load_avg,
    name_type,
    percent,
    probability,
    run_main,
    split_args,
    utc_stamp,
    whole_number,
)
from ..inputs import check_file
from ..outputs import Outputs, make_directory, write_json, write_text
from ..reports import (
    AGGREGATE_NAME,
    RunSet,
    add_include_invalid,
    input_files,
    load_set,
)
from ..runner import (
    MAX_PLAN_RUNS,
    PlannedRun,
    PlanOutcome,
    Progress,
    RunResult,
    apiary_command,
    check_plan,
    effective_config,
    execute,
    execute_rounds,
    glue_values,
    round_values,
    set_from_results,
    split_passthrough,
    with_progress_off,
    write_set,
)

# --adaptive's budget of runs a side without --max-runs (the interval is tuned for it).
DEFAULT_MAX_RUNS = sequential.DEFAULT_EXPECTED_PAIRS


# ---- aggregation -----------------------------------------------------------------------------


# ---- running ---------------------------------------------------------------------------------

def profile_dir(report_path: Path) -> Path:
    """Where a run's profile goes with --profile: beside its report, run-001.profile/, named
    absolutely so that the report's profile.dir is found wherever the reader stands."""
    return Path(os.path.abspath(report_path.with_suffix(".profile")))


def plan_runs(prefix: list[str], sides: list[tuple[str, list[str]]], runs: int, out: Path,
              nested: bool, profile: bool = False, prefixes: dict[str, list[str]] | None = None) -> list[PlannedRun]:
    """Interleaves the sides: run 1 of every side, then run 2 of every side, and so on. A side
    in `prefixes` runs its own binary."""
    plan = []
    for i in range(1, runs + 1):
        for label, args in sides:
            report = (out / label if nested else out) / f"run-{i:03d}.json"
            own = ["--profile", str(profile_dir(report))] if profile else []
            plan.append(PlannedRun(label, i, (prefixes or {}).get(label, prefix) + with_progress_off(args) + own,
                                   report))
    return plan


def parser() -> Parser:
    p = Parser(
        prog="multirun",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run `apiary run` N times (or two configurations A and B interleaved, N times each), "
                    "keep every report, and aggregate every scalar metric: mean, median, stddev, min, max "
                    "and the 95% confidence interval of the mean; transaction latency (reports of schema_version 2) "
                    "as percentiles of the runs' histograms merged. Arguments after `--` go to every "
                    "`apiary run`.",
        epilog="""examples:
  scripts/multirun --runs 5 --config configs/smoke.toml
  scripts/multirun --runs 5 --a "--dedup split" --b "--dedup unified" --a-label split \\
      --b-label unified -- --config configs/smoke.toml
  scripts/multirun --base main --runs 5 --config configs/smoke.toml
  scripts/multirun --a-apiary old/apiary --b-apiary new/apiary --runs 5 --config configs/smoke.toml
  scripts/multirun --adaptive --threshold 1 --max-runs 40 --max-time 30m --a "--dedup split" \\
      --b "--dedup unified" -- --config configs/smoke.toml
  scripts/multirun --aggregate results/multirun-20260101T000000Z
  scripts/multirun --cluster tcp://scheduler:8786 --runs 5 --a "--dedup split" --b "--dedup unified" \\
      -- --config configs/smoke.toml

an A/B is decided on the mean cycle or on the writer's CPU time per transaction (--decide-on): under
auto the one whose noise in these runs is lower, each judged at alpha/2; the comparison says which.
with two binaries (--a-apiary, --b-apiary, --base) each one's replay is also counted under callgrind
(instructions per transaction, as the CI gate counts them) into the comparison.
with --cluster every worker (one a machine) runs the whole plan, and the A/B comparison pairs
each machine's runs with its own: see docs/fleet.md.

output: DIR/run-NNN.json, .out (what it printed) and .log (its log) per run, DIR/aggregate.json,
DIR/summary.md; with --a/--b each side in DIR/<label>/ and the comparison in DIR/comparison.md and .json;
with --profile each run's profile in run-NNN.profile/ and, for an A/B, DIR/profile-diff.svg, a.svg,
b.svg, a.folded and b.folded.
progress goes to stderr; the summary (or the comparison) to stdout.
exit status: 0 all runs completed, 1 a run failed, 2 bad usage, 130/143 interrupted (the
completed runs are still aggregated). The A/B comparison's verdict does not change it: for a
gate, run `scripts/compare` on the two directories.""")
    p.add_argument("--runs", type=whole_number(1, MAX_PLAN_RUNS), default=5, metavar="N",
                   help="runs (per side with --a/--b) (default: %(default)s)")
    p.add_argument("--config", metavar="FILE", help="shorthand for `-- --config FILE`")
    p.add_argument("--a", metavar="ARGS", help="arguments of side A (one string, shell-quoted)")
    p.add_argument("--b", metavar="ARGS", help="arguments of side B (one string, shell-quoted)")
    p.add_argument("--a-label", type=name_type, default="a",
                   help="name of side A and its directory (default: %(default)s)")
    p.add_argument("--b-label", type=name_type, default="b",
                   help="name of side B and its directory (default: %(default)s)")
    p.add_argument("--label", type=name_type,
                   help="name of the set without --a/--b (default: the output directory's name)")
    p.add_argument("--apiary", metavar="BIN",
                   help="the apiary binary (default: $APIARY_BIN, else build/release/harness/apiary)")
    add_binary_options(p)
    p.add_argument("--command", metavar="CMD",
                   help="run this instead of `<apiary> run` (e.g. \"taskset -c 1 build/release/harness/apiary "
                        "run\"); --report and --progress off are appended")
    p.add_argument("--out", metavar="DIR", help="output directory (default: results/multirun-<UTC time>); "
                   "it must be new or empty, unless --force")
    p.add_argument("--force", action="store_true",
                   help="write into an --out directory that has files in it (files of the same name are replaced)")
    p.add_argument("--keep-going", action="store_true", help="go on after a failed run (default: stop)")
    add_include_invalid(p)
    p.add_argument("--aggregate", nargs="+", metavar="PATH",
                   help="run nothing: aggregate these reports / directories / aggregate files")
    add_ab_options(p)
    p.add_argument("--profile", action="store_true",
                   help="profile every run (`apiary run --profile DIR`, DIR the run's run-NNN.profile/ beside its "
                        "report) and keep the profiles; with --a/--b also compare them: the functions whose self "
                        "share moved most, a.folded, b.folded, a.svg, b.svg and profile-diff.svg (needs inferno)")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    fleet.add_options(p)
    history.add_history_option(p)
    return p


def add_ab_options(p: Parser) -> None:
    """How an A/B is judged: its tests, its deciding metric, its adaptive repetition."""
    p.add_argument("--alpha", type=probability, default=compare_mod.DEFAULT_ALPHA,
                   help="significance level of the A/B comparison (default: %(default)s)")
    p.add_argument("--min-effect", type=percent, default=compare_mod.DEFAULT_MIN_EFFECT_PCT,
                   metavar="PCT",
                   help="smallest change in percent the A/B comparison calls significant (default: %(default)s)")
    compare_mod.add_correction_option(p)
    deciding.add_option(p, "an A/B's verdict (its gate row and its sequential decision)",
                        "with two binaries (--a-apiary, --b-apiary, --base), whose replays are counted,")
    p.add_argument("--adaptive", action="store_true",
                   help="with --a/--b: after --runs pairs, add one interleaved pair at a time until the sequential "
                        "decision on the deciding metric (--decide-on) is settled (slower or faster beyond "
                        "±--threshold, or equivalent within it) or --max-runs or --max-time is spent")
    p.add_argument("--max-runs", type=whole_number(1, MAX_PLAN_RUNS // 2), default=None, metavar="N",
                   help=f"with --adaptive: at most N runs a side (default: {DEFAULT_MAX_RUNS}, or --runs if more)")
    sequential.add_options(p, compare_mod.DEFAULT_MIN_EFFECT_PCT)


def _default_out() -> Path:
    return REPO_ROOT / "results" / f"multirun-{utc_stamp()}"


def _aggregate_only(args) -> int:
    in_place = not args.out and len(args.aggregate) == 1 and Path(args.aggregate[0]).is_dir()
    plan = Outputs().read("--aggregate", [f for p in args.aggregate for f in input_files(p, refreshing=in_place)])
    if in_place:   # a directory's own aggregate and summary, written anew from its reports
        out = Path(args.aggregate[0])
        plan.file("--aggregate", out / AGGREGATE_NAME)
        plan.file("--aggregate", out / SUMMARY_NAME)
    else:
        out = plan.directory("--out", Path(args.out) if args.out else _default_out(), args.force,
                             (AGGREGATE_NAME, SUMMARY_NAME))
    rs = load_set(args.aggregate, args.label or "runs", args.include_invalid)
    make_directory(out)
    if not args.label:
        rs.label = out.name
    agg = write_set(rs, out)
    history.record(args.history, [out], "multirun")
    print(summary_markdown(agg, show_all=False), end="")
    if not args.quiet:
        print(f"\naggregate: {out / AGGREGATE_NAME}\nsummary: {out / SUMMARY_NAME}", file=sys.stderr)
    return EXIT_OK


def _main(argv: Sequence[str]) -> int:
    own, passthrough = split_passthrough(argv)
    args = parser().parse_args(glue_values(own, ("--a", "--b", "--command")))
    if args.aggregate:
        if args.a or args.b or passthrough or args.config or args.cluster or \
                args.a_apiary or args.b_apiary or args.base or args.decide_on != deciding.AUTO:
            raise ToolError("--aggregate runs nothing: it takes no --a/--b, --config, --cluster, --a-apiary, "
                            "--b-apiary, --base, --decide-on or run arguments")
        return _aggregate_only(args)
    if bool(args.a is not None) != bool(args.b is not None):
        raise ToolError("--a and --b come together: give both sides")
    binaries = side_binaries(args)
    if binaries is not None and args.a is None:
        args.a = args.b = ""   # one configuration, two binaries
    if args.a is not None and args.a_label == args.b_label:
        raise ToolError(f"--a-label and --b-label are both {args.a_label!r}: the sides need different names")
    check_plan(args.runs * (2 if args.a is not None else 1), "--runs")
    common = list(passthrough)
    side_a, side_b = split_args("--a", args.a or ""), split_args("--b", args.b or "")
    for a in common + side_a + side_b:
        if a == "--report" or a.startswith("--report="):
            raise ToolError("--report: multirun names every run's report itself (see --out)")
        if a == "--profile" or a.startswith("--profile="):
            raise ToolError("--profile: give it to multirun, which names every run's profile directory itself")
    if args.profile and args.cluster:
        raise ToolError("--profile runs on this machine only: a worker's profiles would stay on the worker")
    check_adaptive(args)
    programs = profiles.find_programs() if args.profile and args.a is not None else {}
    if args.config:
        check_file("--config", args.config, "a config file")
        common = ["--config", args.config] + common
    plan = Outputs().read("--config", [args.config] if args.config else [])
    out = plan.directory("--out", Path(args.out) if args.out else _default_out(), args.force,
                         (AGGREGATE_NAME, SUMMARY_NAME, "comparison.md", kinds.COMPARISON.file,
                          *(profiles.FILES.values() if programs else ())))
    prefix = apiary_command(binaries["b"] if binaries else None if args.command else
                            check_apiary(args.apiary or default_apiary()), args.command)
    ab = args.a is not None
    if ab:
        sides = [(args.a_label, common + side_a), (args.b_label, common + side_b)]
    else:
        sides = [("run", common)]
    if binaries is not None:
        args.prefixes = {label: [str(binaries[side]), "run"] for (label, _), side in zip(sides, "ab", strict=True)}
    for label, side_args in sides:
        what = f"the arguments of {label}" if ab else "the run arguments"
        deciding.check_counted(args.decide_on, effective_config(args.prefixes.get(label, prefix), side_args, what),
                               what)

    backend = fleet.ClusterBackend.from_args(args)
    try:
        with STOP.keeping():   # the runs that complete are aggregated, whatever signal comes
            return _run(args, prefix, sides, ab, out, backend, programs)
    finally:
        if backend is not None:
            backend.close()


def _run(args, prefix: list[str], sides: list[tuple[str, list[str]]], ab: bool, out: Path, backend,
         programs: dict[str, str]) -> int:
    make_directory(out)
    plan = plan_runs(prefix, sides, args.runs, out, nested=ab, profile=args.profile, prefixes=args.prefixes)
    progress = Progress("multirun", plan, quiet=args.quiet)
    per_machine = " a machine" if backend is not None else ""
    judge = None
    if args.adaptive:
        progress.say(f"adaptive: {args.runs} pairs, then one at a time up to {max_runs(args)}, into {out} "
                     f"(load average {' '.join(map(str, load_avg()))})")
        outcome, judge = run_adaptive(args, prefix, sides, out)
        plan = [r.planned for r in outcome.results]
    else:
        progress.say(f"{len(plan)} runs{per_machine} into {out} (load average {' '.join(map(str, load_avg()))})")
        outcome = execute(plan, progress, keep_going=args.keep_going, backend=backend)

    extra = {"command": {"prefix": prefix, "sides": {label: a for label, a in sides},
                         **({"prefixes": args.prefixes} if args.prefixes else {})},
             "load_avg_after": load_avg()}
    sets: dict[str, RunSet] = {}
    for label, _ in sides:
        rs = set_from_results(label if ab else (args.label or out.name),
                              [r for r in outcome.results if r.planned.label == label], args.include_invalid)
        if rs is None:
            progress.say(f"{label}: no completed{'' if args.include_invalid else ', valid'} runs, nothing to aggregate")
            continue
        write_set(rs, out / label if ab else out, extra)
        sets[label] = rs

    profile_failed = None
    if ab and len(sets) == 2:
        cmp = compare_mod.from_sets(sets[args.a_label], sets[args.b_label], args.alpha, args.min_effect,
                                    threshold_pct=args.threshold, correction=args.correction,
                                    decide_on=args.decide_on)
        if judge is not None:   # the loop's own decision, with the budget it was given
            cmp.sequential, cmp.sequential_note = judge.to_dict(), None
        if programs:
            profile_failed = compare_profiles(cmp, out, programs, progress)
        text, data = compare_mod.to_markdown(cmp), cmp.to_dict()
        if args.prefixes and outcome.stopped_by is None:
            text += instructions_section(args, sides, out, progress, data, cmp.decision)
        write_text(out / "comparison.md", text)
        write_json(out / kinds.COMPARISON.file, data)
        print(text, end="")
    elif not ab and sets:
        print(summary_markdown(aggregate(next(iter(sets.values()))), show_all=False), end="")
    done = [r for r in outcome.results if r.completed]
    where = f" ({fleet.hosts_line(done)})" if backend is not None else ""
    progress.say(f"{len(done)}/{len(plan) * (len(backend.workers) if backend else 1)} runs completed{where} in {out}")
    history.record(args.history, [out] if sets else [], "multirun")
    outcome.raise_failure()
    if profile_failed is not None and outcome.stopped_by is None:
        raise ToolError(f"the profiles were not compared: {profile_failed}", EXIT_FAILED)
    return outcome.exit_code


def add_binary_options(p: Parser) -> None:
    """--a-apiary, --b-apiary and --base: a binary a side (side_binaries)."""
    p.add_argument("--a-apiary", metavar="BIN",
                   help="side A's apiary binary: an A/B of two builds (--a/--b are then optional); the side not "
                        "given runs --apiary's binary")
    p.add_argument("--b-apiary", metavar="BIN", help="side B's apiary binary (see --a-apiary)")
    p.add_argument("--base", metavar="REF",
                   help="side A is the apiary of this commit, built in its own worktree (build/commits/<sha>/, "
                        "release preset, ccache; kept for the next time); B the current build or --b-apiary")


def side_binaries(args) -> dict[str, Path] | None:
    """Each side's apiary when they differ (--a-apiary, --b-apiary, --base: A is REF built in
    its own worktree), else None; sets args.prefixes to {} (filled in with the sides' labels)."""
    args.prefixes = {}
    if args.a_apiary is None and args.b_apiary is None and args.base is None:
        return None
    if args.base is not None and args.a_apiary is not None:
        raise ToolError("--base builds side A's apiary: give --base or --a-apiary, not both")
    if args.command:
        raise ToolError("--command replaces the binary: it takes no --a-apiary, --b-apiary or --base")
    if args.cluster:
        raise ToolError("--a-apiary, --b-apiary and --base run on this machine only: a worker has no such binary")
    default = args.apiary or default_apiary()
    b = check_apiary(args.b_apiary or default)
    if args.base is not None:
        a = Builds(say=stderr_line("multirun")).build(args.base, "--base")
    else:
        a = check_apiary(args.a_apiary or default)
    return {"a": a, "b": b}


def instructions_section(args, sides: list[tuple[str, list[str]]], out: Path, progress: Progress,
                         data: dict[str, Any], choice: deciding.Choice) -> str:
    """Each binary's replay under callgrind (the CI gate's count, gate.py): the comparison's
    section in Markdown, and data["instructions"]; under --decide-on auto the decision on the
    counts (deciding.counted), also as data["decision"]["count"] (compare_mod.counts_section).
    Without valgrind: said, and nothing."""
    if shutil.which("valgrind") is None:
        progress.say("valgrind is not installed: no instructions per transaction (scripts/install-deps.sh installs it)")
        return ""
    work = make_directory(out / "instructions")
    counted = {label: gate.count_side(label, Path(args.prefixes[label][0]), work, gate.WORKLOAD,
                                           progress.say) for label, _ in sides}
    return compare_mod.counts_section(counted, choice, args.threshold, data)


def check_adaptive(args) -> None:
    """--adaptive's options: an A/B on this machine; its budget options only with it. And
    --decide-on, which decides an A/B."""
    if args.decide_on != deciding.AUTO and args.a is None:
        raise ToolError("--decide-on decides an A/B: give --a and --b (or two binaries)")
    if not args.adaptive:
        if args.max_runs is not None or args.max_time is not None:
            raise ToolError("--max-runs and --max-time are the budget of --adaptive: give --adaptive too")
        return
    if args.a is None:
        raise ToolError("--adaptive decides an A/B: give --a and --b")
    if args.cluster:
        raise ToolError("--adaptive runs on this machine only: with --cluster every machine runs a fixed plan")


def max_runs(args) -> int:
    return max(args.runs, args.max_runs or DEFAULT_MAX_RUNS)


def run_adaptive(args, prefix: list[str], sides: list[tuple[str, list[str]]],
                 out: Path) -> tuple[PlanOutcome, deciding.Judge]:
    """--runs interleaved pairs, then one more at a time until the sequential decision on the
    deciding metric is settled or the budget is spent. Returns the outcome of every run and the
    decision's judge."""
    budget = max_runs(args)
    judge = deciding.Judge(args.decide_on, args.threshold / 100.0, args.alpha, max_pairs=budget,
                           max_seconds=args.max_time)
    (label_a, _), (label_b, _) = sides

    def make_round(r: int) -> list[PlannedRun]:
        return plan_runs(prefix, sides, r, out, nested=True, profile=args.profile,
                         prefixes=args.prefixes)[-len(sides):]

    def still_open(results: list[RunResult]) -> str | None:
        for i, reports in sorted(round_values(results, lambda report: report).items()):
            if label_a in reports and label_b in reports:
                judge.add_reports(reports[label_a], reports[label_b], (f"{label_a} run-{i:03d}.json",
                                                                       f"{label_b} run-{i:03d}.json"))
        return None if judge.decided else judge.describe()

    outcome, _ = execute_rounds("multirun", make_round, args.runs, budget, still_open, args.keep_going, args.quiet)
    return outcome, judge


def compare_profiles(cmp: compare_mod.Comparison, out: Path, programs: dict[str, str],
                     progress: Progress) -> ToolError | None:
    """The A/B's profiles compared into `out`, beside comparison.json; what went wrong, if
    anything (the comparison of the metrics is written all the same)."""
    try:
        cmp.profile, files = profiles.compare(cmp.a, cmp.b, Outputs(), programs, out)
        cmp.profile.json_dir = "."
        profiles.write(files, out)
    except ToolError as e:
        progress.say(f"the profiles were not compared: {e}")
        cmp.profile = None
        return e
    return None


def main(argv: Sequence[str] | None = None) -> int:
    return run_main("multirun", _main, argv)


if __name__ == "__main__":
    raise SystemExit(main())
