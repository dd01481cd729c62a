#!/usr/bin/env python3
"""What a cache miss costs on this machine: the estimate's weights fitted to wall time.

The gate's estimated cycles (docs/benchmarks.md) price an access by where valgrind's simulated
caches served it: a first-level hit 1, a last-level hit 5, memory 35 (iai-callgrind's weights).
This finds the weights that predict this machine's wall time best, over points whose memory
behaviour differs:

  the state grid    a snapshot of A accounts and B warm-up blocks of the typical mix for every
                    A of --accounts and B of --blocks (state_size.py makes them), replayed with
                    the default switches: the accounts and the ids held cost misses, not
                    instructions
  the ladder        every step of the optimization ladder (scripts/ladder) whose chain switches
                    a replay takes (the submission's step 3 is the replay of step 2 and is left
                    out), replayed from the state --ladder-at: instructions and allocation
  the plant         with --plant BINARY, a build with APIARY_PLANT_PUSH_ROUNDS replaying the
                    state --ladder-at beside --apiary: instructions alone, no memory touched

Each point's replay (`apiary replay --state`, one thread, the seeded transactions of --seed) is
counted twice under callgrind's cache simulation: with the gate's geometry, per transaction the
accesses (Ir + Dr + Dw), the first-level misses and the last-level misses; and with caches of
4 KiB lines (PAGE_GEOMETRY), which follow the pages instead of the lines: their first-level
misses are the first-level TLB's, their last-level misses the page walks. Its wall time is
the replay's µs per transaction in --rounds interleaved rounds, every point once a round in an
order rotated each round; each round is divided by its own geometric mean, so that the pace of
the machine, which moves the whole round (docs/measured/decision-trials.md), cancels, and a
point's time is the median of its rounds times the rounds' mean pace.

The fit: time = (accesses + (h - 1) x first-level misses + (m - h) x last-level misses) / f, a
last-level hit h and memory m cycles with a first-level hit 1, in the least squares of relative
error with every term non-negative; the intervals resample the rounds. Beside it each model's
error over the points (instructions alone, iai-callgrind's weights, the fitted ones, each with
its own best scale), and each ladder step's change as measured and as each model predicts it.
A second fit, "with pages", adds the TLB misses and the page walks to the three counts, each
event at its own non-negative cost in nanoseconds. Every model's error is given twice: over
the points it was fitted to, and held out (each point predicted by the fit to the others),
which is what a model with more weights cannot flatter.

    .venv/bin/python bench/tools/cost_weights.py --accounts 100000,1000000,3000000 --blocks 0,400 \\
        --rounds 10 --out results/cost-weights

writes, in --out: states/ (the snapshots, reused with --reuse), callgrind/ (the counts),
runs/<point>-<round>.json (the replays' reports: a series stopped by Ctrl-C resumes, the
reports there are kept), cost-weights.json and cost-weights.md. A benchmark, not a test: minutes
per point at millions of accounts, on a machine nothing else measures on. Arguments after `--`
go to the snapshots and every replay.
"""

from __future__ import annotations

import argparse
import math
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import state_size  # type: ignore[import-not-found]  # noqa: E402

from apiary_tools import gate  # noqa: E402
from apiary_tools.commands import ladder  # noqa: E402
from apiary_tools.common import markdown_table, parse_csv  # noqa: E402
from apiary_tools.inputs import read_json  # noqa: E402
from apiary_tools.ladders import STEPS  # noqa: E402
from apiary_tools.outputs import make_directory, write_json, write_text  # noqa: E402
from apiary_tools.runner import split_passthrough  # noqa: E402

IAI = (gate.L1_HIT_CYCLES, gate.LL_HIT_CYCLES, gate.MEMORY_CYCLES)

# The caches of pages that stand for the TLBs (gate.PAGE_GEOMETRY: the gate counts its memory
# time on them, at the prices this tool fits) and their events.
PAGE_GEOMETRY, TLB_MISS_EVENTS, PAGE_WALK_EVENTS = gate.PAGE_GEOMETRY, gate.TLB_MISS_EVENTS, gate.PAGE_WALK_EVENTS
PAGE_EVENTS = ("accesses", "first-level misses", "last-level misses", "TLB misses", "page walks")


def say(message: str) -> None:
    print(f"cost-weights: {message}", file=sys.stderr, flush=True)


@dataclass
class Point:
    name: str
    accounts: int
    state: Path
    switches: list[str]
    what: str = "the default switches"
    ladder_step: int | None = None
    versus: str | None = None   # the point it is a step from (a ladder step's previous, the plant's base)
    apiary: str | None = None   # the build that replays it, when not --apiary
    counts: dict[str, float] = field(default_factory=dict)  # per transaction: instructions, accesses, misses

    def features(self) -> np.ndarray:
        """Accesses, first-level misses, last-level misses per transaction: the fit's columns."""
        return np.array([self.counts["accesses"], self.counts["l1_misses"], self.counts["ll_misses"]])

    def page_features(self) -> np.ndarray:
        """The three, then the TLB misses and page walks per transaction (PAGE_EVENTS)."""
        return np.append(self.features(), [self.counts["tlb_misses"], self.counts["page_walks"]])


# ---- the fit ------------------------------------------------------------------------------------

def estimate(features: np.ndarray, weights: tuple[float, float, float]) -> np.ndarray:
    """Estimated cycles per transaction: accesses at the first-level weight, first-level misses
    at (last-level hit - first-level hit) more, last-level misses at (memory - last-level hit)."""
    l1, ll, mem = weights
    return features @ np.array([l1, ll - l1, mem - ll])


def nonnegative_fit(columns: np.ndarray, times: np.ndarray) -> np.ndarray:
    """The weights p >= 0 with time ≈ columns @ p in the least squares of relative error."""
    from scipy.optimize import nnls

    return nnls(columns / times[:, None], np.ones(len(times)))[0]


def fit_weights(features: np.ndarray, times: np.ndarray) -> dict[str, float] | None:
    """The non-negative least squares of relative error: time ≈ features @ p. The weights in
    cycles of a first-level hit (1 by definition), a last-level hit and memory, and the time of
    one such cycle; None when the accesses get no weight (the points cannot tell them)."""
    p = nonnegative_fit(features, times)
    if p[0] <= 0:
        return None
    ll = 1.0 + p[1] / p[0]
    return {"l1_hit": 1.0, "ll_hit": ll, "memory": ll + p[2] / p[0], "ns_per_cycle": p[0] * 1000.0}


def scale_error(predicted: np.ndarray, times: np.ndarray) -> dict[str, float]:
    """A model's error once its best single scale is applied (least squares of relative error):
    the root mean square and the largest, as fractions."""
    r = predicted / times
    s = float(np.sum(r) / np.sum(r * r))
    rel = s * r - 1.0
    return {"rms": float(np.sqrt(np.mean(rel * rel))), "max": float(np.max(np.abs(rel))), "scale": s}


def held_out_error(columns: np.ndarray, times: np.ndarray) -> dict[str, float]:
    """Each point predicted by the non-negative fit to all the others: the root mean square and
    the largest of those relative errors, as fractions."""
    rel = []
    for k in range(len(times)):
        others = np.arange(len(times)) != k
        rel.append(float(columns[k] @ nonnegative_fit(columns[others], times[others]) / times[k] - 1.0))
    r = np.array(rel)
    return {"held_out_rms": float(np.sqrt(np.mean(r * r))), "held_out_max": float(np.max(np.abs(r)))}


def point_times(times: np.ndarray) -> np.ndarray:
    """Each point's time from rounds x points of µs per transaction: every round divided by its
    geometric mean (the machine's pace that round), the median over rounds, times the rounds'
    mean pace."""
    logs = np.log(times)
    pace = logs.mean(axis=1, keepdims=True)
    return np.exp(np.median(logs - pace, axis=0) + pace.mean())


def analyse(points: list[Point], times: np.ndarray, resamples: int = 1000, seed: int = 1) -> dict[str, Any]:
    """The fit, its intervals over resampled rounds, and each model's error."""
    features = np.array([p.features() for p in points])
    pages = np.array([p.page_features() for p in points])
    v = point_times(times)
    fitted = fit_weights(features, v)
    page_ns = nonnegative_fit(pages, v) * 1000.0
    rng = np.random.default_rng(seed)
    draws, page_draws = [], []
    for _ in range(resamples):
        t = point_times(times[rng.integers(0, len(times), len(times))])
        f = fit_weights(features, t)
        if f is not None:
            draws.append(f)
        page_draws.append(nonnegative_fit(pages, t) * 1000.0)
    intervals = {k: [float(np.percentile([d[k] for d in draws], q)) for q in (2.5, 97.5)]
                 for k in ("ll_hit", "memory", "ns_per_cycle")} if draws else {}
    page_fit = {e: {"ns": float(page_ns[i]),
                    "interval": [float(np.percentile([d[i] for d in page_draws], q)) for q in (2.5, 97.5)]
                    if page_draws else []}
                for i, e in enumerate(PAGE_EVENTS)}
    predicted = {"instructions": np.array([p.counts["instructions"] for p in points]),
                 "iai-callgrind": estimate(features, IAI)}
    columns = {k: x[:, None] for k, x in predicted.items()}
    if fitted is not None:
        predicted["fitted"] = estimate(features, (1.0, fitted["ll_hit"], fitted["memory"]))
        columns["fitted"] = features
    predicted["with pages"] = pages @ page_ns / 1000.0
    columns["with pages"] = pages
    models = {k: {**scale_error(x, v), **held_out_error(columns[k], v)} for k, x in predicted.items()}
    spread = np.log(times) - np.log(times).mean(axis=1, keepdims=True)
    noise = float(np.median(np.std(spread, axis=0, ddof=1) / math.sqrt(len(times)))) if len(times) > 1 else None
    return {"us_per_tx": [float(x) for x in v], "fit": fitted, "intervals": intervals, "resamples": len(draws),
            "page_fit": page_fit,
            "models": models, "point_noise": noise, "steps": step_changes(points, {"measured": v, **predicted})}


def step_changes(points: list[Point], columns: dict[str, np.ndarray]) -> list[dict[str, Any]]:
    """Each point that is a step from another (Point.versus) against that one: the change of
    every column (the measured time, each model's prediction)."""
    at = {p.name: i for i, p in enumerate(points)}
    return [{"step": p.name, **{k: float(c[j] / c[at[p.versus]] - 1.0) for k, c in columns.items()}}
            for j, p in enumerate(points) if p.versus is not None]


# ---- the points, counted and timed ----------------------------------------------------------------

def plan(args: argparse.Namespace) -> list[Point]:
    """The grid's points, then the ladder's at --ladder-at (each step whose replayed switches
    differ from the step before it), then the plant's (--plant) beside the grid's point of that
    state, which is added to the grid when it is not in it."""
    states: dict[tuple[int, int], Path] = {}

    def state_of(accounts: int, blocks: int) -> Path:
        if (accounts, blocks) not in states:
            states[accounts, blocks] = state_size.make_state(args, accounts, blocks)[0]
        return states[accounts, blocks]

    grid = args.grid + ([args.ladder_at] if args.plant and args.ladder_at not in args.grid else [])
    points = [Point(f"{a}-{b}", a, state_of(a, b), []) for a, b in grid]
    if args.ladder_at is None:
        return points
    accounts, blocks = args.ladder_at
    state = state_of(accounts, blocks)
    allowed = ladder.replay_options(Path(args.apiary))
    last: list[str] | None = None
    for i in args.ladder_steps:
        options = ladder.step_args(i)
        switches = [a for n, v in zip(options[::2], options[1::2], strict=True) if n in allowed for a in (n, v)]
        if switches != last:
            name, what = ("start", "all off") if i == 0 else (STEPS[i - 1].name, " ".join(STEPS[i - 1].args))
            versus = points[-1].name if last is not None else None
            points.append(Point(f"ladder {name}", accounts, state, switches, what, ladder_step=i, versus=versus))
        last = switches
    if args.plant:
        points.append(Point("plant", accounts, state, [], "work in every push (--plant)", versus=f"{accounts}-{blocks}",
                            apiary=args.plant))
    return points


def replay_cmd(args: argparse.Namespace, point: Point, report: Path) -> list[str]:
    """The point's replay, by its own build."""
    return [*state_size.replay_cmd(args, point.state, point.accounts, report, point.apiary), *point.switches]


def file_name(point: Point) -> str:
    return point.name.replace(" ", "-")


def whole_replay(args: argparse.Namespace, report: Path) -> dict[str, Any]:
    """A replay report's result, if it replayed all of --transactions: one cut short by a signal,
    or left by a series of another size, is refused in one line."""
    result = read_json(report)["result"]
    if result["transactions"] != args.transactions:
        raise SystemExit(f"cost-weights: {report} replayed {result['transactions']:,} transactions, not "
                         f"--transactions {args.transactions:,}: remove it (cut short), or use another --out")
    return result


def count(args: argparse.Namespace, point: Point) -> dict[str, float]:
    """The point's replay under callgrind's cache simulation, its measured function only, with the
    gate's caches and with PAGE_GEOMETRY's: per transaction, the instructions, the accesses, the
    misses at each level, the TLB misses and the page walks."""
    def command(suffix: str, geometry: tuple[str, ...]) -> tuple[Path, Path, list[str]]:
        out = args.out / "callgrind" / f"{file_name(point)}{suffix}.callgrind"
        report = args.out / "callgrind" / f"{file_name(point)}{suffix}.json"
        return out, report, ["valgrind", "--tool=callgrind", "--cache-sim=yes", *geometry, "--instr-atstart=no",
                             f"--callgrind-out-file={out}",
                             *replay_cmd(args, point, report)]

    runs = {"lines": command("", gate.CACHE_GEOMETRY), "pages": command("-pages", PAGE_GEOMETRY)}
    todo = [cmd for out, report, cmd in runs.values() if not (args.reuse and out.is_file() and report.is_file())]
    if todo:   # one thread each: the two counts side by side
        say(f"{point.name}: counting under callgrind, the caches' lines and pages")
        with ThreadPoolExecutor(len(todo)) as pool:
            list(pool.map(lambda cmd: state_size.run(cmd, f"the count of {point.name}"), todo))

    def per_tx(kind: str, events: tuple[str, ...]) -> float:
        out, report, _ = runs[kind]
        return sum(gate.total_events(out, e) for e in events) / whole_replay(args, report)["transactions"]

    counts = {"instructions": per_tx("lines", ("Ir",)), "accesses": per_tx("lines", gate.ACCESS_EVENTS),
              "l1_misses": per_tx("lines", gate.L1_MISS_EVENTS), "ll_misses": per_tx("lines", gate.LL_MISS_EVENTS),
              "tlb_misses": per_tx("pages", TLB_MISS_EVENTS), "page_walks": per_tx("pages", PAGE_WALK_EVENTS)}
    if counts["instructions"] == 0:
        raise SystemExit(f"cost-weights: callgrind counted nothing in {point.name}'s measured function")
    return counts


def time_rounds(args: argparse.Namespace, points: list[Point]) -> np.ndarray:
    """Rounds x points of the replays' µs per transaction; a report already there is read, not
    run again."""
    times = np.zeros((args.rounds, len(points)))
    for r in range(args.rounds):
        for k in range(len(points)):
            i = (k + r) % len(points)
            p = points[i]
            report = args.out / "runs" / f"{file_name(p)}-{r + 1:02d}.json"
            if not report.is_file():   # apiary writes its report whole or not at all
                state_size.run(replay_cmd(args, p, report),
                               f"the replay of {p.name}")
            times[r, i] = float(whole_replay(args, report)["us_per_tx"])
        say(f"round {r + 1} of {args.rounds}: " + ", ".join(f"{p.name} {t:.3f}" for p, t in zip(points, times[r],
                                                                                                  strict=True)))
    return times


# ---- what it writes ----------------------------------------------------------------------------------

def _pct(x: float | None) -> str:
    return "–" if x is None else f"{x * 100:+.2f}%"


def tables(points: list[Point], result: dict[str, Any], rounds: int) -> str:
    rows = [[p.name, p.what, f"{p.counts['instructions']:,.0f}",
             f"{p.counts['accesses']:,.0f}", f"{p.counts['l1_misses']:,.1f}", f"{p.counts['ll_misses']:,.2f}",
             f"{p.counts['tlb_misses']:,.1f}", f"{p.counts['page_walks']:,.2f}",
             f"{estimate(p.features(), IAI):,.0f}", f"{t:.3f}"]
            for p, t in zip(points, result["us_per_tx"], strict=True)]
    out = [f"Per transaction ({rounds} interleaved rounds, each point's median after the round's pace):", "",
           markdown_table(["point", "what it changes", "instructions", "accesses", "L1 misses", "LL misses",
                           "TLB misses", "page walks", "estimated cycles (1, 5, 35)", "µs"], rows, "llrrrrrrrr"), ""]
    fit, iv = result["fit"], result["intervals"]
    if fit is None:
        out.append("The fit gave the accesses no weight: these points cannot tell the weights apart.")
    else:
        def ci(k: str, fmt: str) -> str:
            return f" [{format(iv[k][0], fmt)}, {format(iv[k][1], fmt)}]" if k in iv else ""
        out.append(f"Fitted weights (95% intervals over {result['resamples']} resamplings of the rounds): a "
                   f"first-level hit 1, a last-level hit {fit['ll_hit']:.1f}{ci('ll_hit', '.1f')}, memory "
                   f"{fit['memory']:.1f}{ci('memory', '.1f')}; one cycle {fit['ns_per_cycle']:.3f} ns"
                   f"{ci('ns_per_cycle', '.3f')}. iai-callgrind's: 1, 5, 35.")
    out += ["", "Fitted with pages, nanoseconds an event (95% intervals over the resampled rounds): "
            + ", ".join(f"{e} {w['ns']:.3g}" + (f" [{w['interval'][0]:.3g}, {w['interval'][1]:.3g}]"
                                                 if w["interval"] else "")
                        for e, w in result["page_fit"].items())
            + f". The gate's memory time prices a last-level miss {gate.LL_MISS_PS / 1000:g}, a TLB miss "
            f"{gate.TLB_MISS_PS / 1000:g} and a page walk {gate.PAGE_WALK_PS / 1000:g} ns (gate.MEMORY; fitted "
            "on 2026-11-30)."]
    noise = result["point_noise"]
    out += ["", "Each model's error over the points, at its own best fit, and held out (each point predicted by "
            "the fit to the others)" + (f"; a point's time is known to about ±{noise * 100:.1f}%" if noise else "")
            + ":", "",
            markdown_table(["model", "rms error", "largest error", "held out: rms", "held out: largest"],
                           [[k, f"{m['rms'] * 100:.1f}%", f"{m['max'] * 100:.1f}%", f"{m['held_out_rms'] * 100:.1f}%",
                             f"{m['held_out_max'] * 100:.1f}%"] for k, m in result["models"].items()])]
    if result["steps"]:
        out += ["", "Each ladder step against the step before it (and the plant against its base):", "",
                markdown_table(["step", "measured", "instructions", "iai-callgrind", "fitted", "with pages"],
                               [[s["step"], _pct(s["measured"]), _pct(s["instructions"]), _pct(s["iai-callgrind"]),
                                 _pct(s.get("fitted")), _pct(s["with pages"])] for s in result["steps"]])]
    return "\n".join(out) + "\n"


def state_point(text: str) -> tuple[int, int]:
    try:
        accounts, blocks = (int(x) for x in text.split("-"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected ACCOUNTS-BLOCKS such as 100000-400, got {text!r}") from None
    return accounts, blocks


def parse(argv: list[str]) -> argparse.Namespace:
    argv, extra = split_passthrough(argv)
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--accounts", default="100000,1000000,3000000", help="the grid's genesis accounts, a comma list")
    p.add_argument("--blocks", default="0,400", help="the grid's warm-up blocks, a comma list")
    p.add_argument("--ladder-at", type=lambda t: None if t == "none" else state_point(t), default=(100000, 400),
                   help="the state the ladder's steps replay from, ACCOUNTS-BLOCKS, or none (default: 100000-400)")
    p.add_argument("--ladder-steps", default=",".join(str(i) for i in ladder.ALL_STEPS),
                   help="the ladder's steps, 0 the start (default: all)")
    p.add_argument("--rounds", type=int, default=10, help="interleaved rounds of wall time (default: 10)")
    p.add_argument("--transactions", type=int, default=100000, help="transactions per replay (default: 100000)")
    p.add_argument("--seed", type=int, default=7, help="the replays' seed (default: 7)")
    p.add_argument("--reuse", action="store_true", help="keep the snapshots and counts already in --out")
    p.add_argument("--apiary", default=str(REPO / "build" / "release" / "harness" / "apiary"))
    p.add_argument("--plant", metavar="BINARY",
                   help="a build with APIARY_PLANT_PUSH_ROUNDS (docs/tools.md): one more point, its replay of "
                        "--ladder-at's state beside --apiary's, whose change is work that touches no memory")
    p.add_argument("--out", type=Path, default=REPO / "results" / "cost-weights")
    args = p.parse_args(argv)
    if args.plant and args.ladder_at is None:
        p.error("--plant: its point replays --ladder-at's state, and --ladder-at is none")
    if args.rounds < 2:
        p.error("--rounds: at least 2 (a round's pace is known only beside another's)")
    args.extra = extra
    args.grid = [(int(a), int(b)) for a in parse_csv(args.accounts) for b in parse_csv(args.blocks)]
    args.ladder_steps = sorted({int(s) for s in parse_csv(args.ladder_steps)})
    if not set(args.ladder_steps) <= set(ladder.ALL_STEPS):
        p.error(f"--ladder-steps: steps are 0 to {len(STEPS)}")
    return args


def main(argv: list[str]) -> int:
    args = parse(argv)
    if not Path(args.apiary).is_file():
        raise SystemExit(f"cost-weights: no apiary binary at {args.apiary} (build the release preset, or --apiary)")
    if args.plant and not Path(args.plant).is_file():
        raise SystemExit(f"cost-weights: --plant: no apiary binary at {args.plant}")
    for sub in ("states", "runs", "callgrind"):
        make_directory(args.out / sub)
    points = plan(args)
    if len(points) < 3:
        raise SystemExit(f"cost-weights: {len(points)} points cannot fit three weights; add accounts, blocks or steps")
    for p in points:
        p.counts = count(args, p)
    times = time_rounds(args, points)
    result = analyse(points, times)
    write_json(args.out / "cost-weights.json", {
        "transactions": args.transactions, "seed": args.seed, "rounds": args.rounds, "extra": args.extra,
        "cache_geometry": list(gate.CACHE_GEOMETRY), "page_geometry": list(PAGE_GEOMETRY), "iai_weights": list(IAI),
        "points": [{"name": p.name, "accounts": p.accounts, "state": p.state.name, "switches": p.switches,
                    "ladder_step": p.ladder_step, "versus": p.versus, "apiary": p.apiary or args.apiary,
                    "per_tx": p.counts, "us_per_tx_rounds": list(times[:, i])}
                   for i, p in enumerate(points)],
        **result})
    text = tables(points, result, args.rounds)
    write_text(args.out / "cost-weights.md", text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        say("stopped: the reports written so far are kept; run again to resume")
        sys.exit(130)
