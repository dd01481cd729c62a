#!/usr/bin/env python3
"""Can an A/B on this machine decide a 2% slowdown? Real A/A and planted trials, and their rates by simulation.

Each trial is one comparison of two builds as a user runs it, `scripts/multirun --adaptive`
(docs/tools.md, "Adaptive repetition" and "The deciding metric"):

  A/A      the build (`--base`) against a copy of itself: any "slower" or "faster" is false;
  planted  the build against one made with APIARY_PLANT_PUSH_ROUNDS (`--planted`): rounds of
           work in every transaction push, a known slowdown of the writer's push path.

The trials alternate (planted, A/A, planted, ...), `--trials` of each kind, each within
`--max-time` of wall time at `--threshold`, on the runs' arguments after `--` (default:
configs/core-only.toml, 100 blocks). A trial's directory is `--out`/NN-planted or NN-aa, with
multirun's outputs and `trial.json` (its command and minutes), written once multirun has
finished: a directory without it (a trial cut short) is run again, the others are kept, so a
series stopped by Ctrl-C resumes where it stopped.

Each trial gives two verdicts: the runs' (the sequential decision on the deciding metric, the
mean cycle or the writer's CPU time per transaction, whichever is quieter), and the count's (the
seeded replay's estimated cycles and estimated memory time per transaction under callgrind,
deterministic), which decides
the comparison under `--decide-on auto` with two builds. The rates of the runs' decision at the
noise the trials met are then simulated: the pairs' log-ratios of both metrics, each trial's
centred on its own mean and pooled, drawn at random into `--sim-trials` comparisons judged as
multirun judges them (deciding.Judge, a look after every pair, up to the most pairs a trial
ran): as they are (A/A: the false calls) and with B's CPU time and cycle 2% higher (the share
found slower, and the median pairs it took), at `--threshold` and at 0.

Where the noise comes from: every trial also gives the writer's CPU time per transaction over
the producers' (`writer/producers`), and the summary how the writer's and the producers' CPU
times move together across all the runs. Both threads' task clocks are their own CPU time, so
preemption is not in them; a correlation near 1 says the whole machine ran faster or slower
from run to run, which the ratio cancels (it is a fair measure only of changes that leave the
producers' work alone, as the planted one does).

    .venv/bin/python bench/tools/decision_trials.py --planted build/plant40/harness/apiary \\
        --out results/decision-trials

writes, beside the trials, trials.json (every trial's verdicts, pairs, minutes and noise; the
simulation's rates) and trials.md (the tables). A benchmark, not a test: up to
2 x trials x max-time of wall time (about 3.5 hours at the defaults), on a machine nothing else
measures on. `--summarize` only reads the trials already there.
"""

from __future__ import annotations

import argparse
import math
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))

from apiary_tools import deciding, metrics, sequential  # noqa: E402
from apiary_tools.common import markdown_table  # noqa: E402
from apiary_tools.inputs import read_json  # noqa: E402
from apiary_tools.outputs import make_directory, write_json, write_text  # noqa: E402
from apiary_tools.runner import split_passthrough  # noqa: E402

KINDS = ("planted", "aa")
KIND_NAMES = {"planted": "planted", "aa": "A/A"}
RUN_ARGS = ["--config", "configs/core-only.toml", "--blocks", "100"]
PLANTED_EFFECT = 0.02   # the simulated slowdown: B's CPU time and cycle 2% higher
MEASURED = {c.name: c.metric for c in deciding.MEASURED}   # cycle, cpu: their report metrics
# The writer's CPU time per transaction over the producers' (their mean): a machine that runs
# every thread slower for a while moves both, and the ratio cancels it (docs/tools.md).
NORMALIZED = "writer/producers"
PRODUCER_CPU = re.compile(r"counters\.producer-\d+\.per_transaction\.task_clock_ns")


def say(message: str) -> None:
    print(f"decision-trials: {message}", file=sys.stderr, flush=True)


def planted_rounds(binary: Path, work: Path) -> int:
    """The rounds a build plants (its report's context.planted_push_rounds), from a run of one block."""
    report = work / "probe.json"
    p = subprocess.run([str(binary), "run", *RUN_ARGS[:2], "--blocks", "1", "--warmup-blocks", "0",
                        "--report", str(report)], capture_output=True, text=True, check=False, cwd=REPO)
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise SystemExit(f"decision-trials: {binary} cannot run ({p.returncode}): {last}")
    rounds = read_json(report)["context"].get("planted_push_rounds")
    report.unlink()
    if rounds is None:
        raise SystemExit(f"decision-trials: {binary} does not state planted_push_rounds: "
                         "an apiary older than the option")
    return int(rounds)


def run_trial(args: argparse.Namespace, kind: str, number: int, b_binary: Path) -> Path:
    """One comparison, unless a finished one is there: its directory."""
    directory = args.out / f"{number:02d}-{kind}"
    if (directory / "trial.json").exists():
        return directory
    if directory.exists():
        shutil.rmtree(directory)   # cut short: run again whole
    cmd = [str(REPO / "scripts" / "multirun"), "--adaptive", "--threshold", str(args.threshold),
           "--max-runs", str(args.max_runs), "--max-time", args.max_time, "--a-apiary", str(args.base),
           "--b-apiary", str(b_binary), "--out", str(directory), "--quiet", "--", *args.run_args]
    say(f"trial {number} {KIND_NAMES[kind]}: {' '.join(cmd)}")
    start = time.monotonic()
    p = subprocess.run(cmd, cwd=REPO, check=False)
    if p.returncode != 0:
        raise SystemExit(f"decision-trials: trial {number} {KIND_NAMES[kind]} failed (multirun exit {p.returncode})")
    write_json(directory / "trial.json", {"kind": kind, "command": cmd, "minutes": (time.monotonic() - start) / 60})
    return directory


def run_values(path: Path) -> dict[str, float]:
    """One run's deciding metrics, and the writer's CPU time over the producers' where it has both."""
    flat = metrics.flatten(read_json(path))
    out = {name: flat[metric] for name, metric in MEASURED.items() if flat.get(metric)}
    producers = [v for k, v in flat.items() if PRODUCER_CPU.fullmatch(k) and v]
    if "cpu" in out and producers:
        out[NORMALIZED] = out["cpu"] / statistics.fmean(producers)
        out["producers"] = statistics.fmean(producers)
    return out


def trial_runs(directory: Path) -> list[tuple[dict[str, float], dict[str, float]]]:
    """The trial's interleaved pairs, (A's run, B's run), in the order they ran."""
    a_runs, b_runs = sorted((directory / "a").glob("run-*.json")), sorted((directory / "b").glob("run-*.json"))
    return [(run_values(a), run_values(b)) for a, b in zip(a_runs, b_runs, strict=False)]


def pair_log_ratios(pairs: list[tuple[dict[str, float], dict[str, float]]]) -> dict[str, list[float]]:
    """Each metric's log(B/A) of the pairs, in the order they ran."""
    out: dict[str, list[float]] = {name: [] for name in (*MEASURED, NORMALIZED)}
    for a, b in pairs:
        for name, values in out.items():
            if name in a and name in b:
                values.append(math.log(b[name] / a[name]))
    return out


def speed_correlation(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Across every run of every trial, how the writer's CPU time per transaction and the
    producers' move together: the correlation of their logarithms, of consecutive runs'
    differences, and the spread of each; None without the producers' times."""
    runs = [run for row in rows for pair in row["pairs"] for run in pair if "producers" in run]
    if len(runs) < 3:
        return None
    writer = np.log([r["cpu"] for r in runs])
    producers = np.log([r["producers"] for r in runs])
    return {"runs": len(runs), "correlation": float(np.corrcoef(writer, producers)[0, 1]),
            "consecutive_correlation": float(np.corrcoef(np.diff(writer), np.diff(producers))[0, 1]),
            "writer_sd": float(writer.std(ddof=1)), "producers_sd": float(producers.std(ddof=1))}


def trial_row(directory: Path) -> dict[str, Any]:
    """What one finished trial decided, by its runs and by the count, and the noise it met."""
    trial, comparison = read_json(directory / "trial.json"), read_json(directory / "comparison.json")
    seq, count = comparison.get("sequential") or {}, (comparison.get("decision") or {}).get("count") or {}
    pairs = trial_runs(directory)
    ratios = pair_log_ratios(pairs)
    return {"trial": directory.name, "kind": trial["kind"], "minutes": trial["minutes"],
            "runs": {"verdict": seq.get("verdict"), "change": seq.get("change"), "low": seq.get("low"),
                     "high": seq.get("high"), "pairs": seq.get("pairs"), "metric": seq.get("metric")},
            "count": {"verdict": count.get("verdict"), "change": count.get("change")},
            "mean_change": {name: statistics.fmean(r) if r else None for name, r in ratios.items()},
            "noise": {name: statistics.stdev(r) if len(r) > 1 else None for name, r in ratios.items()},
            "ratios": ratios, "pairs": pairs}


def simulate(rows: list[dict[str, Any]], threshold: float, trials: int, pairs: int, effect: float,
             seed: int) -> dict[str, Any]:
    """The runs' decision on pairs drawn from the trials' own (each trial's log-ratios centred,
    both metrics of a pair kept together), B `effect` slower in both: the verdicts' shares and
    the median pairs a decided comparison took."""
    pool = np.array([[cycle - row["mean_change"]["cycle"], cpu - row["mean_change"]["cpu"]] for row in rows
                     if len(row["ratios"]["cycle"]) == len(row["ratios"]["cpu"])
                     for cycle, cpu in zip(row["ratios"]["cycle"], row["ratios"]["cpu"], strict=True)])
    if len(pool) < 10:
        return {"unavailable": f"{len(pool)} pairs in the trials: too few to draw from"}
    rng = np.random.default_rng(seed)
    counts = dict.fromkeys(sequential.VERDICTS, 0)
    used = []
    shift = math.log1p(effect)
    for _ in range(trials):
        judge = deciding.Judge(deciding.AUTO, threshold, max_pairs=pairs)
        for cycle, cpu in pool[rng.integers(0, len(pool), pairs)]:
            b = {MEASURED["cycle"]: math.exp(cycle + shift), MEASURED["cpu"]: math.exp(cpu + shift)}
            judge.add({MEASURED["cycle"]: 1.0, MEASURED["cpu"]: 1.0}, b, no_reason, no_reason)
            if judge.decided:
                break
        counts[judge.decision().verdict] += 1
        used.append(judge.pairs)
    return {"threshold": threshold, "effect": effect, "trials": trials, "max_pairs": pairs, "pool_pairs": len(pool),
            "shares": {v: n / trials for v, n in counts.items()}, "median_pairs": int(statistics.median(used))}


def no_reason(_metric: str) -> str:
    return "always there"


def pct(x: float | None, digits: int = 2) -> str:
    return "–" if x is None else f"{100 * x:+.{digits}f}%"


def trials_table(rows: list[dict[str, Any]]) -> str:
    body = []
    for r in rows:
        runs = r["runs"]
        decided_on = "cpu" if runs["metric"] == MEASURED["cpu"] else "cycle"
        body.append([r["trial"], KIND_NAMES[r["kind"]], f"{r['minutes']:.1f}", str(runs["pairs"]),
                     f"{runs['verdict']} {pct(runs['change'])} [{pct(runs['low'], 1)}, {pct(runs['high'], 1)}] "
                     f"on {decided_on}",
                     f"{r['count']['verdict']} {pct(r['count']['change'])}",
                     pct(r["mean_change"]["cpu"]), pct(r["mean_change"]["cycle"]),
                     pct(r["noise"]["cpu"], 1).lstrip("+"), pct(r["noise"]["cycle"], 1).lstrip("+"),
                     pct(r["mean_change"][NORMALIZED]), pct(r["noise"][NORMALIZED], 1).lstrip("+")])
    return markdown_table(["trial", "kind", "minutes", "pairs", "the runs' decision", "the count's decision",
                           "CPU/tx change", "cycle change", "CPU noise a pair", "cycle noise a pair",
                           "CPU/tx over the producers': change", "its noise a pair"], body, "llrrllrrrrrr")


def simulation_table(sims: list[dict[str, Any]]) -> str:
    body = []
    for s in sims:
        if "unavailable" in s:
            body.append(["–"] * 4 + [s["unavailable"]])
            continue
        sh = s["shares"]
        body.append([pct(s["effect"], 0), f"{100 * s['threshold']:.1f}%", f"{s['trials']} × ≤{s['max_pairs']}",
                     str(s["median_pairs"]),
                     f"slower {sh['slower']:.1%}, faster {sh['faster']:.1%}, equivalent {sh['equivalent']:.1%}, "
                     f"undecided {sh['undecided']:.1%}"])
    return markdown_table(["B slower by", "threshold", "comparisons × pairs", "median pairs", "verdicts"], body,
                          "lllrl")


def tally(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Each kind's trials, and how many of them each verdict took, by the runs and by the count."""
    def counted(kind: str, by: str) -> dict[str, int]:
        return {v: sum(r["kind"] == kind and r[by]["verdict"] == v for r in rows) for v in sequential.VERDICTS}

    def pooled(kind: str) -> dict[str, Any]:
        """Each metric's mean log-ratio over every pair of the kind's trials, with its 95% half-width."""
        out = {}
        for name in (*MEASURED, NORMALIZED):
            values = [x for r in rows if r["kind"] == kind for x in r["ratios"][name]]
            if len(values) > 1:
                out[name] = {"mean": statistics.fmean(values), "pairs": len(values),
                             "half_width": 1.96 * statistics.stdev(values) / math.sqrt(len(values))}
        return out

    return {kind: {"trials": sum(r["kind"] == kind for r in rows), "runs": counted(kind, "runs"),
                   "count": counted(kind, "count"), "pooled": pooled(kind)} for kind in KINDS}


def budget_pairs(rows: list[dict[str, Any]], budget_minutes: float) -> int:
    """The pairs a comparison's time budget holds at the trials' pace (their whole minutes, the
    count's included, over their pairs: a pair's time, rounded up)."""
    minutes = sum(r["minutes"] for r in rows)
    pairs = sum(r["runs"]["pairs"] or 0 for r in rows)
    return max(5, int(budget_minutes * pairs / minutes)) if minutes > 0 else 5


def summarize(args: argparse.Namespace) -> int:
    rows = [trial_row(d) for d in sorted(args.out.glob("[0-9][0-9]-*")) if (d / "trial.json").exists()]
    if not rows:
        raise SystemExit(f"decision-trials: no finished trial in {args.out}")
    horizons = sorted({max(r["runs"]["pairs"] or 0 for r in rows), budget_pairs(rows, args.budget_minutes)})
    sims = [simulate(rows, threshold, args.sim_trials, pairs, effect, seed=1)
            for pairs in horizons for threshold in sorted({args.threshold / 100.0, 0.0}, reverse=True)
            for effect in (0.0, PLANTED_EFFECT)]
    kinds = tally(rows)
    speed = speed_correlation(rows)
    write_json(args.out / "trials.json", {"trials": [{k: v for k, v in r.items() if k not in ("ratios", "pairs")}
                                                     for r in rows],
                                          "tally": kinds, "simulation": sims, "speed": speed})
    text = ["# Decision trials", "", trials_table(rows), "", "Verdicts by kind (the runs' / the count's):", ""]
    for kind, t in kinds.items():
        text.append(f"- {KIND_NAMES[kind]}, {t['trials']} trials: runs {t['runs']}; count {t['count']}")
        for name, p in t["pooled"].items():
            text.append(f"  - {name} over all {p['pairs']} pairs: {pct(p['mean'])} ± {100 * p['half_width']:.2f}%")
    if speed is not None:
        text += ["", f"Across {speed['runs']} runs the writer's CPU time per transaction and the producers' "
                 f"(spread {speed['writer_sd']:.1%} and {speed['producers_sd']:.1%} a run) correlate "
                 f"{speed['correlation']:.2f}, consecutive runs' changes {speed['consecutive_correlation']:.2f}."]
    text += ["", "The runs' decision by simulation, on the trials' own pairs:", "", simulation_table(sims), ""]
    write_text(args.out / "trials.md", "\n".join(text))
    print("\n".join(text))
    return 0


def parse(argv: list[str]) -> argparse.Namespace:
    own, passthrough = split_passthrough(argv)
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--base", type=Path, default=REPO / "build" / "release" / "harness" / "apiary",
                   help="the build under test, planting nothing (default: build/release/harness/apiary)")
    p.add_argument("--planted", type=Path, help="a build of the same commit made with APIARY_PLANT_PUSH_ROUNDS")
    p.add_argument("--trials", type=int, default=5, help="trials of each kind (default: 5)")
    p.add_argument("--threshold", type=float, default=1.0, help="multirun's --threshold, percent (default: 1)")
    p.add_argument("--max-time", default="20m", help="each comparison's time budget (default: 20m)")
    p.add_argument("--max-runs", type=int, default=30,
                   help="each comparison's most runs a side (default: 30, multirun's own)")
    p.add_argument("--sim-trials", type=int, default=500, help="simulated comparisons a row (default: 500)")
    p.add_argument("--budget-minutes", type=float, default=20.0,
                   help="the simulation also judges as many pairs as this many minutes hold (default: 20)")
    p.add_argument("--summarize", action="store_true", help="only read the trials already in --out")
    p.add_argument("--out", type=Path, default=REPO / "results" / "decision-trials")
    args = p.parse_args(own)
    args.run_args = passthrough or RUN_ARGS
    if not args.summarize and args.planted is None:
        p.error("--planted BIN is needed to run trials (or --summarize to read them)")
    if args.trials < 1 or args.max_runs < 5 or args.sim_trials < 1:
        p.error("--trials and --sim-trials must be at least 1, --max-runs at least 5")
    return args


def main(argv: list[str]) -> int:
    args = parse(argv)
    make_directory(args.out)
    if not args.summarize:
        base_copy = args.out / "base-copy" / "harness" / "apiary"   # the A/A's B: the same bytes, another path
        make_directory(base_copy.parent)
        shutil.copy2(args.base, base_copy)
        for binary, planted in ((args.base, False), (args.planted, True)):
            rounds = planted_rounds(binary, args.out)
            if (rounds > 0) != planted:
                raise SystemExit(f"decision-trials: {binary} plants {rounds} rounds: --base must plant none, "
                                 "--planted some (cmake -DAPIARY_PLANT_PUSH_ROUNDS=N)")
        try:
            for number in range(1, args.trials + 1):
                for kind in KINDS:
                    run_trial(args, kind, number, args.planted if kind == "planted" else base_copy)
        except KeyboardInterrupt:
            say("interrupted: the finished trials are kept, and summarized")
    return summarize(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
