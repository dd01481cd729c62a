"""The optimization ladder: Hive's six cycle optimizations, switched on one at a time, and a
seventh Hive has not taken.

Hive's developers cut the full 2 MB block cycle from 750 to 312 ms in six steps (docs/design.md,
"The optimization ladder"). apiary has each of them as a run option, so the ladder starts with all of them at their slow
setting and turns them on in Hive's order, then the step the article left as a TODO:

  start  keep-alive off, dedup unified, submit async (Hive's: futures waited on by async
         tasks) + bounded queue, custom-ops state, pool-objects off, pool-undo off, rc state;
         and, on every step, reuse-pending off: a block re-applies its transactions as Hive's
         does (apiary's reuse of the pending state needs custom-ops local and rc state, so it
         would switch itself on at step 4 and off at step 7, which are not Hive's changes)
  1      --keep-alive on            undo containers reused between sessions
  2      --dedup split              pending ids in a volatile hash set
  3      --submit fire-and-forget   and --queue unbounded (the in-flight brake instead)
  4      --custom-ops local         the per-account counter in a local hash map
  5      --pool-objects on          pool allocator for state objects
  6      --pool-undo on             pool allocator for undo states
  7      --rc volatile              pending transactions' RC charges in a local map, merged into
                                    the accounts when the block is applied

Every step runs --runs times with the same seed, interleaved (start, 1, ..., 6, start, 1,
...) so that drift of the machine falls on every step alike. Per step: the mean full cycle
with its 95% t interval, the change against the previous step and against the start (the
relative change of the means, a bootstrap interval and the Mann-Whitney U p-value, from
stats.compare), whether that change is significant at --alpha, the writer's CPU time per
transaction (its task clock) with its change against the previous step, and the writer-loop
breakdown (waiting for work, locks, transactions, blocks, observing blocks, unknown). A step's verdict
against the previous step is the sequential decision (sequential.py) on the pairs of runs of
one round, on the deciding metric (deciding.py, --decide-on: the cycle or the writer's CPU
time, under auto the quieter in the step's pairs): "faster" or "slower" when its anytime-valid
interval lies wholly beyond ±2% (--threshold), "equivalent" when it lies within, else
"undecided", with the interval, the pairs and the smallest change they could detect. The
writer's CPU time counts the writer's own work only, not its waiting nor other threads': a step
that shortens the cycle by less waiting (a queue that no longer blocks) may leave it unchanged,
and ladder.md says so for a step whose two changes part; `--decide-on cycle` asks the ladder's
own question, the cycle, of every step. Beside the wall times, the instructions per
transaction of each step's core: one seeded workload replayed under callgrind with the step's
chain switches (the submission options are not part of a replay), as the CI gate counts them;
under --decide-on auto a step whose options the replay all runs is then decided on that
replay's estimated cycles and estimated memory time, deterministic (deciding.counted; where the
two part, the runs decide), the runs' decision beside it.

Modes: --mode quick (smoke-sized: 64 KiB blocks, 1,000 accounts, 20 blocks; well under a
minute) for CI, and --mode full (2 MB blocks, 40 measured blocks, 10 runs a step, then one
round more at a time while a step is undecided, up to 30 (--max-runs) or --max-time: 10 to
30 minutes on 2 cores). The interval stays valid however many rounds are added, unlike a
fixed-sample test re-run after every round. `--steps 6,7` runs only those steps and the one
before each (here 5, 6 and 7). Both
run without signing (configs/core-only.toml's choice): on two cores signing takes most of a
signed cycle while the writer waits, and every optimization of the ladder is on the writer's
side, so a signed ladder measures the signing. `-- --sign on` measures it anyway. Output:
ladder.json, ladder.md and ladder.png in --out, the Markdown on stdout, progress on stderr.
Ctrl-C stops after the run in hand and writes what completed.

With `--cluster tcp://HOST:8786` every machine of the cluster runs the whole ladder (fleet.py),
and each step is compared with the previous one and the start machine by machine
(stats.compare); the instructions are still counted here.
"""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .. import deciding, fleet, gate, history, kinds, metrics, sequential, stats
from ..common import (
    EXIT_OK,
    REPO_ROOT,
    STOP,
    Parser,
    ToolError,
    check_apiary,
    default_apiary,
    parse_csv,
    probability,
    run_main,
    utc_stamp,
    whole_number,
)
from ..ladders import BREAKDOWN, COUNTED, CPU_KEY, CPU_VS_PREVIOUS, SMALL_PCT, START, STEPS, plot, to_markdown
from ..outputs import Outputs, make_directory, write_json, write_text
from ..runner import (
    MAX_PLAN_RUNS,
    PlannedRun,
    PlanOutcome,
    RunResult,
    check_plan,
    effective_config,
    execute_rounds,
    round_values,
    with_progress_off,
)

# Both modes measure the core without signing: with signing on, two cores spend most of a
# cycle signing and the writer waits (the ladder's optimizations are all on the writer's side).
# `replay` is the workload whose replay under callgrind gives each step's instruction count.
MODES: dict[str, dict[str, Any]] = {
    "quick": {"runs": 5, "max_runs": None,
              "args": ["--config", str(REPO_ROOT / "configs" / "smoke.toml"), "--sign", "off"],
              "replay": {"transactions": 2_000, "accounts": 1_000, "block_size": "64KiB"}},
    "full": {"runs": 10, "max_runs": 30,
             "args": ["--config", str(REPO_ROOT / "configs" / "core-only.toml"), "--blocks", "40",
                      "--warmup-blocks", "5"],
             "replay": {"transactions": 20_000, "accounts": 10_000, "block_size": "256KiB"}},
}


def merge(*arg_lists: Sequence[str]) -> list[str]:
    """`--option value` lists merged, a later value replacing an earlier one (apiary takes an
    option only once)."""
    options: dict[str, str] = {}
    for args in arg_lists:
        if len(args) % 2 != 0 or any(not a.startswith("--") for a in args[::2]):
            raise ToolError(f"expected `--option value` pairs for apiary run, got: {' '.join(args)}")
        for name, value in zip(args[::2], args[1::2], strict=True):
            options.pop(name, None)
            options[name] = value
    return [item for pair in options.items() for item in pair]


def step_args(index: int) -> list[str]:
    """The options of step `index` (0: the start): the start's, overridden by every step up
    to it."""
    return merge(START.args, *(step.args for step in STEPS[:index]))


ALL_STEPS = tuple(range(len(STEPS) + 1))


def plan(prefix: list[str], base: list[str], rounds: range, out: Path,
         steps: Sequence[int] = ALL_STEPS) -> list[PlannedRun]:
    """Rounds of every step in order (start, 1, ..., 7), so drift falls on each alike."""
    runs_list = []
    for r in rounds:
        for i in steps:
            label = f"step{i}"
            runs_list.append(PlannedRun(label, r, prefix + with_progress_off(merge(base, step_args(i))),
                                        out / f"{label}-run-{r:03d}.json"))
    return runs_list


def _mean_of(figures: list[dict[str, float]], name: str, missing: float | None = None) -> float | None:
    """The mean of a figure over the runs that have it (`missing` for those that do not)."""
    values = [f.get(name, missing) for f in figures]
    present = [v for v in values if v is not None]
    return float(np.mean(present)) if present else None


def _change(a: list[tuple[float, str]], b: list[tuple[float, str]], alpha: float) -> dict[str, Any]:
    """B's values against A's (each with its machine; stats.compare), and whether significant at alpha."""
    c = stats.compare([v for v, _ in a], [v for v, _ in b], hosts_a=[h for _, h in a], hosts_b=[h for _, h in b])
    return {**c.to_dict(), "significant": c.p_value is not None and c.p_value < alpha}


def analyse(results, runs: int, alpha: float, steps: Sequence[int] = ALL_STEPS,
            judges: dict[int, deciding.Judge] | None = None) -> list[dict[str, Any]]:
    """Each step's row: its cycle over the runs whose reports have one, the writer's CPU time
    per transaction over those that have it, the writer's time, the changes against the step
    before and the start, and the sequential decision against the step before (its judge's)."""
    by_step: dict[int, list[dict[str, float]]] = {i: [] for i in range(len(STEPS) + 1)}
    hosts: dict[int, list[str]] = {i: [] for i in range(len(STEPS) + 1)}
    for res in results:
        figures = metrics.flatten(res.report) if res.completed else {}
        if metrics.CYCLE in figures:
            by_step[int(res.planned.label[4:])].append(figures)
            hosts[int(res.planned.label[4:])].append(res.host or "?")
    cycles = {i: [(f[metrics.CYCLE] / 1000, h) for f, h in zip(reps, hosts[i], strict=True)]
              for i, reps in by_step.items()}
    cpus = {i: [(f[metrics.WRITER_CPU], h) for f, h in zip(reps, hosts[i], strict=True) if metrics.WRITER_CPU in f]
            for i, reps in by_step.items()}
    rows = []
    for i in steps:
        step = START if i == 0 else STEPS[i - 1]
        row: dict[str, Any] = {"step": i, "name": step.name, "what": step.what, "options": step_args(i),
                               "runs": len(cycles[i]), "hive_ms": step.hive_ms}
        if cycles[i]:
            row["cycle_ms"] = stats.summarize_sample([v for v, _ in cycles[i]]).to_dict()
            # A report from before the observers were timed has no observe_share: 0 there.
            row["writer_share"] = {k: _mean_of(by_step[i], f"writer.{k}_share", 0.0) for k in BREAKDOWN}
            for key, name in (("tx_per_block", "aggregates.transactions_per_block.avg"),
                              ("cpu_utilization", "cpu.utilization")):
                if (mean := _mean_of(by_step[i], name)) is not None:
                    row[key] = mean
        if cpus[i]:
            row[CPU_KEY] = stats.summarize_sample([v for v, _ in cpus[i]]).to_dict()
        for key, values, other in (("vs_previous", cycles, i - 1), ("vs_start", cycles, 0),
                                   (CPU_VS_PREVIOUS, cpus, i - 1)):
            if i > 0 and values[i] and values[other]:
                row[key] = _change(values[other], values[i], alpha)
        if judges and i in judges:
            row["sequential"] = judges[i].to_dict()
        rows.append(row)
    return rows


def replay_options(binary: Path) -> set[str]:
    """The options `apiary replay` takes, as its --help lists them."""
    p = subprocess.run([str(binary), "replay", "--help"], capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise ToolError(f"{binary} replay --help failed: {p.stderr.strip()}")
    return set(re.findall(r"(?m)^\s+(--[a-z][a-z0-9-]*)", p.stdout))


def _replay_unless_stopped(name: str, binary: Path, workload: Path, work: Path, replay_args: list[str],
                           say) -> dict[str, Any] | None:
    """gate.count_replay, unless a signal came (before, or during it: it stopped the replay)."""
    if STOP.received is not None:
        return None
    try:
        return gate.count_replay(name, binary, workload, work, replay_args, say)
    except ToolError:
        if STOP.received is None:
            raise
        return None


def count_instructions(binary: Path, mode: dict[str, Any], out: Path, say,
                       steps: Sequence[int] = ALL_STEPS) -> list[dict[str, Any]] | None:
    """Each step's core under callgrind: one unsigned seeded workload, replayed with the step's
    options that a replay takes (the chain switches). None when a signal came: the replay in
    hand ends (a Ctrl-C reaches it too), no other starts."""
    if shutil.which("valgrind") is None:
        raise ToolError("valgrind is not installed (scripts/install-deps.sh installs it); or --instructions off")
    spec = mode["replay"]
    work = out / "instructions"
    make_directory(work)
    workload = gate.make_workload("ladder", binary, work / "ladder.workload", spec["transactions"], 1,
                                       spec["accounts"], ["--sign", "off"])
    allowed = replay_options(binary)
    counts = []
    for i in steps:
        args = step_args(i)
        core = [a for name, value in zip(args[::2], args[1::2], strict=True) if name in allowed for a in (name, value)]
        side = _replay_unless_stopped(f"step{i}", binary, workload, work, core + ["--block-size", spec["block_size"]],
                                      say)
        stopped = STOP.received
        if stopped is not None or side is None:   # a signal: the wall times are written without the counts
            say(f"instructions not counted: stopped by {signal.Signals(stopped).name if stopped else 'a signal'}")
            return None
        own = STEPS[i - 1].args[::2] if i > 0 else ()
        counts.append({"step": i, "options": core, **{c.per_tx_key: side[c.per_tx_key] for c in gate.GATE_COSTS},
                       "state_digest": side["state_digest"], "unreplayed": [o for o in own if o not in allowed]})
    return counts


def decide_by_counts(rows: list[dict[str, Any]], judges: dict[int, deciding.Judge], threshold_pct: float) -> None:
    """Under --decide-on auto, each judged step whose own options the replay all runs, counted
    with the step before it, is decided on the replay's counts (deciding.counted, noise 0);
    the runs' decision stays beside it."""
    for before, row in zip(rows, rows[1:], strict=False):
        count, previous, judge = row.get("instructions"), before.get("instructions"), judges.get(row["step"])
        if judge is None or not count or not previous or count["unreplayed"] or before["step"] != row["step"] - 1:
            continue
        decision = deciding.counted(judge.choice(), previous, count, threshold_pct / 100)
        if decision is not None:
            row[COUNTED] = decision


def judges_for(steps: Sequence[int], threshold_pct: float, alpha: float, max_runs: int,
               max_seconds: float | None, decide_on: str = deciding.AUTO) -> dict[int, deciding.Judge]:
    """A sequential judge of every step run with the step before it, on its deciding metric."""
    return {i: deciding.Judge(decide_on, threshold_pct / 100.0, alpha, max_pairs=max_runs, max_seconds=max_seconds)
            for i in steps if i - 1 in steps}


def feed(judges: dict[int, deciding.Judge], results: list[RunResult]) -> list[str]:
    """Each round's pairs (a step's run and its previous step's) to the steps' judges; the
    steps still undecided, with their decisions."""
    for r, reports in sorted(round_values(results, lambda report: report).items()):
        for i, judge in judges.items():
            before, after = f"step{i - 1}", f"step{i}"
            if before in reports and after in reports:
                judge.add_reports(reports[before], reports[after], (f"{before}-run-{r:03d}.json",
                                                                    f"{after}-run-{r:03d}.json"))
    return [f"{(STEPS[i - 1]).name} {judge.describe()}" for i, judge in judges.items() if not judge.decided]


def run_rounds(prefix: list[str], base: list[str], out: Path, runs: int, max_runs: int,
               judges: dict[int, deciding.Judge], steps: Sequence[int] = ALL_STEPS,
               backend=None) -> tuple[PlanOutcome, int]:
    """`runs` rounds, then one more at a time while a step's judge is undecided, up to
    `max_runs` (or its time budget). Returns the outcome of every run and the rounds run."""
    def still_open(results: list[RunResult]) -> str | None:
        open_steps = feed(judges, results)
        return "undecided: " + "; ".join(open_steps) if open_steps else None

    return execute_rounds("ladder", lambda r: plan(prefix, base, range(r, r + 1), out, steps), runs, max_runs,
                          still_open, backend=backend)


def step_list(text: str) -> list[int]:
    """--steps: the steps to judge (1 to 7), each run with the one before it: `6,7` or `1-3`."""
    chosen: set[int] = set()
    for part in parse_csv(text):
        low, _, high = part.partition("-")
        if not (low.isdigit() and (not high or high.isdigit())) or \
                not 1 <= int(low) <= int(high or low) <= len(STEPS):
            raise ToolError(f"--steps {text}: expected steps from 1 to {len(STEPS)}, such as 6,7 or 1-3")
        chosen.update(range(int(low), int(high or low) + 1))
    if not chosen:
        raise ToolError(f"--steps {text}: name at least one step")
    return sorted(chosen | {i - 1 for i in chosen})


def parser() -> Parser:
    p = Parser(prog="ladder", description=(
        "Reproduces Hive's optimization ladder: starting with all six optimizations off, turns them on one "
        "at a time in Hive's order, several interleaved runs per step, and reports each step's full cycle, "
        "its change against the previous step and the start with a 95% CI and a significance test, the "
        "writer's CPU time per transaction and its change, each step's verdict on the deciding metric "
        "(--decide-on), and the writer-loop breakdown."),
        epilog="Extra arguments after -- go to every `apiary run`. Exit status: 0 done, 1 a run failed, "
               "2 bad usage, 130 interrupted (the completed runs are still analysed and written).")
    p.add_argument("--mode", choices=sorted(MODES), default="quick",
                   help="quick: smoke-sized runs for CI; full: 2 MB blocks, 40 measured blocks; both unsigned "
                        "(default: quick)")
    p.add_argument("--runs", type=whole_number(1, MAX_PLAN_RUNS), default=None,
                   help="runs per step at least (default: quick 5, full 10)")
    p.add_argument("--max-runs", type=whole_number(1, MAX_PLAN_RUNS), default=None,
                   help="then add rounds while a step's sequential decision against the step before is undecided "
                        "(its anytime-valid interval neither beyond nor within ±--threshold), up to this many runs "
                        "per step (default: quick none added, full 30)")
    sequential.add_options(p, SMALL_PCT)
    deciding.add_option(p, "each step's verdict against the step before",
                        "with --instructions on, for a step whose options the replay all runs,")
    p.add_argument("--steps", type=str, default=None, metavar="LIST",
                   help="run only these steps, each with the step before it: 6,7 runs steps 5, 6 and 7; 1-3 "
                        "runs the start and steps 1 to 3 (default: all)")
    p.add_argument("--alpha", type=probability, default=0.05, help="significance level (default: 0.05)")
    p.add_argument("--apiary", type=Path, default=None,
                   help="the apiary binary (default: $APIARY_BIN, else the release build)")
    p.add_argument("--out", type=Path, default=None, help="output directory (default: results/ladder-<mode>-<time>); "
                   "it must be new or empty, unless --force")
    p.add_argument("--force", action="store_true",
                   help="write into an --out directory that has files in it (files of the same name are replaced)")
    p.add_argument("--instructions", choices=("on", "off"), default="on",
                   help="also count each step's instructions per transaction in a replay under callgrind "
                        "(needs valgrind) (default: on)")
    p.add_argument("extra", nargs="*", help="more `apiary run` arguments (after --)")
    fleet.add_options(p)
    history.add_history_option(p)
    return p


def _main(argv: Sequence[str]) -> int:
    args = parser().parse_args(argv)
    mode = MODES[args.mode]
    runs = args.runs if args.runs is not None else mode["runs"]
    # Quick mode adds no rounds unless asked to (None: as many as --runs).
    max_runs = max(runs, args.max_runs or mode["max_runs"] or runs)
    steps = step_list(args.steps) if args.steps is not None else list(ALL_STEPS)
    check_plan(max_runs * len(steps), "--runs and --max-runs")
    out = Outputs().directory("--out", args.out or REPO_ROOT / "results" / f"ladder-{args.mode}-{utc_stamp()}",
                              args.force, (kinds.LADDER.file, "ladder.md", "ladder.png"))
    binary = check_apiary(args.apiary or default_apiary())
    prefix = [str(binary), "run"]
    base = merge(mode["args"], args.extra)
    for i in steps:  # every step's options, judged by apiary before anything runs
        deciding.check_counted(args.decide_on, effective_config(prefix, merge(base, step_args(i)), f"step {i}"),
                               f"the options of step {i}")
    backend = fleet.ClusterBackend.from_args(args)
    make_directory(out)
    with STOP.keeping():   # the steps' completed runs are analysed and written, whatever signal comes
        return _run(args, binary, base, out, runs, max_runs, backend, steps)


def _run(args, binary: Path, base: list[str], out: Path, runs: int, max_runs: int, backend,
         steps: list[int]) -> int:
    mode = MODES[args.mode]
    judges = judges_for(steps, args.threshold, args.alpha, max_runs, args.max_time, args.decide_on)
    try:
        outcome, runs = run_rounds([str(binary), "run"], base, out, runs, max_runs, judges, steps, backend)
    finally:
        if backend is not None:
            backend.close()
    rows = analyse(outcome.results, runs, args.alpha, steps, judges)
    if args.instructions == "on" and outcome.exit_code == EXIT_OK:
        counts = count_instructions(binary, mode, out, lambda m: print(f"ladder: {m}", file=sys.stderr), steps)
        for row, counted in zip(rows, counts or [], strict=False):
            row["instructions"] = counted
        decide_by_counts(rows, judges, args.threshold)
    first: dict[str, Any] = next((r.report for r in outcome.results if r.report), {})
    ctx = first.get("context", {})
    meta = {"mode": args.mode, "runs": runs, "alpha": args.alpha, "extra_args": base,
            "threshold_pct": args.threshold, "max_runs": max_runs, "max_time_s": args.max_time,
            "decide_on": args.decide_on,
            "machine": f"{ctx.get('cpu_model', '?')}, {ctx.get('cores', '?')} cores, commit {ctx.get('commit', '?')}"
                       + (f", machines {fleet.hosts_line([r for r in outcome.results if r.completed])}"
                          if backend is not None else ""),
            "load_before": ", ".join(f"{x:.2f}"
                                     for x in (outcome.results[0].load_avg_before if outcome.results else []))}
    write_json(out / kinds.LADDER.file, kinds.LADDER.stamp({"meta": meta, "steps": rows,
                                                           "runs": [r.info() for r in outcome.results]}))
    md = to_markdown(rows, meta)
    write_text(out / "ladder.md", md + "\n")
    plot(rows, out / "ladder.png", f"apiary ladder ({args.mode})")
    print(md)
    print(f"ladder: written to {out}", file=sys.stderr)
    history.record(args.history, [out / kinds.LADDER.file], "ladder")
    outcome.raise_failure()
    return outcome.exit_code


def main(argv: Sequence[str] | None = None) -> int:
    return run_main("ladder", _main, argv)


if __name__ == "__main__":
    sys.exit(main())
