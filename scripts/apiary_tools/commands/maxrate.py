"""find-max-rate: the highest offered rate (`apiary run --rate N`) the node sustains.

A rate passes when the p99 inclusion latency (submitted → included, the report's
`latency.inclusion.p99_us`) stays within --bound (default 3 s, one block interval) and the
queue does not grow. The search is a bisection between --low and --high, as Antelope's
performance harness searches its transactions per second: --low must pass and --high is
tried next (if it passes, it is the answer and the ceiling was too low); then the midpoint
of the last passing and the first failing rate is tried until they are closer than
--precision. Each rate runs --runs times; its figures are the medians of the runs, and its
queue grows when it grows in more than half of them.

The queue rule, on each run's interval log (`apiary run --interval T --interval-log PATH`):
the first quarter of the intervals is warm-up and left out; the rest is split into an
earlier and a later half. A series grows when every later value is above every earlier value
and the later half's median is more than 10% above the earlier half's. Two series are
judged, and either growing is enough: the backlog, `in_flight + queue_depth` (transactions
sent and not yet included), and the interval's median end-to-end latency
(`latency.end_to_end.p50_us`), which grows even when a brake holds the backlog still. Blocks
take transactions in steps, so the backlog saw-tooths; requiring the halves not to overlap
keeps a saw-tooth or one slow interval from reading as growth. A run needs at least
MIN_INTERVALS lines.

Output directory (default results/find-max-rate-<UTC time>/): per run its report
(rate-<R>-run-NNN.json), what it printed (.out) and its interval log (.intervals.jsonl);
the table of the rates tried as maxrate.csv, maxrate.md and maxrate.json, replaced whole
after every rate so that an interrupted or failed search keeps what it tried, and the plot
maxrate.png (p99 inclusion latency against the rate, with the bound).
"""

from __future__ import annotations

import argparse
import csv
import io
import math
import os
import re
import signal
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .. import kinds
from ..common import (
    EXIT_FAILED,
    EXIT_OK,
    REPO_ROOT,
    STOP,
    Parser,
    ToolError,
    check_apiary,
    default_apiary,
    exit_code_for,
    fmt_number,
    markdown_table,
    positive_seconds,
    run_main,
    utc_iso,
    utc_stamp,
    whole_number,
)
from ..inputs import read_interval_log
from ..outputs import Outputs, make_directory, write_figure, write_json, write_text
from ..runner import (
    MAX_PLAN_RUNS,
    PlannedRun,
    Progress,
    RunResult,
    apiary_command,
    effective_config,
    execute,
    glue_values,
    split_passthrough,
    with_progress_off,
)
from ..schemas import COUNT, obj, problem

DEFAULT_BOUND_S = 3.0
# apiary run's largest --rate (harness/src/config/options.cpp).
APIARY_MAX_RATE = 1_000_000_000
DEFAULT_INTERVAL = "1s"
MIN_INTERVALS = 6
GROWTH_MARGIN = 0.10
OWN_OPTIONS = ("--rate", "--report", "--interval", "--interval-log")
NAME = kinds.MAXRATE.file.removesuffix(".json")
# What the queue rule reads of an interval record.
RECORD = obj(("in_flight", "queue_depth", "latency"), in_flight=COUNT, queue_depth=COUNT,
             latency=obj(("end_to_end",), end_to_end=obj(("p50_us",), p50_us={"type": ["number", "null"],
                                                                              "minimum": 0})))


# ---- one run, one rate -------------------------------------------------------------------------

def grows(values: Sequence[float | None]) -> bool:
    """The growth rule of one series (see the module's docstring); missing values are left out."""
    judged = [v for v in values[len(values) // 4:] if v is not None]
    half = len(judged) // 2
    earlier, later = judged[:half], judged[half:]
    if len(earlier) < 2:
        return False
    return min(later) > max(earlier) and float(np.median(later)) > (1 + GROWTH_MARGIN) * float(np.median(earlier))


def queue_grows(lines: Sequence[dict[str, Any]]) -> bool:
    backlog = [line["in_flight"] + line["queue_depth"] for line in lines]
    median_e2e = [line["latency"]["end_to_end"]["p50_us"] for line in lines]
    return grows(backlog) or grows(median_e2e)


@dataclass
class RunFigures:
    achieved_tx_per_s: float | None
    p50_us: float | None
    p99_us: float | None
    intervals: int
    queue_grows: bool


def run_figures(result: RunResult, log_path: Path) -> RunFigures:
    report = result.report or {}
    inclusion = (report.get("latency") or {}).get("inclusion")
    if inclusion is None:
        raise ToolError(f"{result.planned.report_path}: the report has no latency section: this apiary is "
                        "older than the latency histograms (report schema_version 2)", EXIT_FAILED)
    lines = read_interval_log(log_path, lambda record: problem(RECORD, record))
    if len(lines) < MIN_INTERVALS:
        raise ToolError(f"{log_path}: {len(lines)} intervals, the queue rule needs at least {MIN_INTERVALS}: "
                        "make the runs longer (e.g. `-- --blocks N`) or --interval shorter", EXIT_FAILED)
    grows_now = queue_grows(lines)
    return RunFigures((report.get("throughput") or {}).get("tx_per_s"), inclusion.get("p50_us"),
                      inclusion.get("p99_us"), len(lines), grows_now)


def _median(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return float(np.median(present)) if present else None


@dataclass
class Trial:
    rate: int
    order: int
    runs: list[RunFigures] = field(default_factory=list)
    bound_us: float = DEFAULT_BOUND_S * 1e6

    @property
    def achieved(self) -> float | None:
        return _median([r.achieved_tx_per_s for r in self.runs])

    @property
    def p50_us(self) -> float | None:
        return _median([r.p50_us for r in self.runs])

    @property
    def p99_us(self) -> float | None:
        return _median([r.p99_us for r in self.runs])

    @property
    def queue_grows(self) -> bool:
        return sum(r.queue_grows for r in self.runs) * 2 > len(self.runs)

    @property
    def passed(self) -> bool:
        return self.p99_us is not None and self.p99_us <= self.bound_us and not self.queue_grows

    def row(self) -> dict[str, Any]:
        return {"rate": self.rate, "order": self.order, "runs": len(self.runs), "achieved_tx_per_s": self.achieved,
                "p50_inclusion_us": self.p50_us, "p99_inclusion_us": self.p99_us,
                "queue": "growing" if self.queue_grows else "steady", "passed": self.passed}


# ---- the search --------------------------------------------------------------------------------

@dataclass
class Precision:
    value: float
    relative: bool

    def close(self, low: float, high: float) -> bool:
        return high - low < (self.value / 100 * low if self.relative else self.value)

    def __str__(self) -> str:
        return f"{self.value:g}%" if self.relative else f"{self.value:g} tx/s"


class Search:
    """The bisection over the rates; `trial(rate)` runs one rate and says whether it passed."""

    def __init__(self, trial, low: int, high: int, precision: Precision):
        self.trial = trial
        self.low, self.high = low, high
        self.precision = precision
        self.best: int | None = None
        self.first_failing: int | None = None
        self.status = "running"

    def run(self) -> None:
        if not self.trial(self.low):
            self.status = "no rate passed"
            self.first_failing = self.low
            return
        self.best = self.low
        if self.trial(self.high):
            self.best, self.status = self.high, "the highest rate passed"
            return
        self.first_failing = self.high
        while not self.precision.close(self.best, self.first_failing):
            mid = round((self.best + self.first_failing) / 2)
            if mid in (self.best, self.first_failing):
                break
            if self.trial(mid):
                self.best = mid
            else:
                self.first_failing = mid
        self.status = "found"


# ---- tables and the plot -----------------------------------------------------------------------

CSV_FIELDS = ("rate", "order", "runs", "achieved_tx_per_s", "p50_inclusion_us", "p99_inclusion_us", "queue",
              "passed")


def _ms(us: float | None) -> str:
    return "–" if us is None else fmt_number(us / 1000)


def to_csv(trials: Sequence[Trial]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, CSV_FIELDS, lineterminator="\n")
    writer.writeheader()
    for t in sorted(trials, key=lambda t: t.rate):
        writer.writerow({k: ("" if v is None else v) for k, v in t.row().items()})
    return out.getvalue()


def verdict_line(search: Search, bound_s: float) -> str:
    if search.status == "found":
        return (f"highest sustainable rate: {search.best:,} tx/s ({search.first_failing:,} tx/s failed; "
                f"p99 inclusion within {bound_s:g} s and a steady queue)")
    if search.status == "the highest rate passed":
        return f"highest sustainable rate: at least {search.best:,} tx/s, the --high given: raise --high"
    if search.status == "no rate passed":
        return f"no rate passed: --low {search.low:,} tx/s already failed; lower --low"
    best = f"{search.best:,} tx/s passed" if search.best is not None else "no rate passed yet"
    return f"search {search.status}: so far {best}"


def to_markdown(trials: Sequence[Trial], search: Search, bound_s: float) -> str:
    rows = [[f"{t.rate:,}", fmt_number(t.achieved), _ms(t.p50_us), _ms(t.p99_us),
             "growing" if t.queue_grows else "steady", "pass" if t.passed else "**fail**", str(t.order)]
            for t in sorted(trials, key=lambda t: t.rate)]
    table = markdown_table(["rate (tx/s)", "achieved (tx/s)", "p50 inclusion (ms)", "p99 inclusion (ms)", "queue",
                            "result", "tried"], rows, "rrrrllr")
    return f"{table}\n{verdict_line(search, bound_s)}\n"


def plot(trials: Sequence[Trial], search: Search, bound_s: float, path: Path) -> None:
    import matplotlib  # lazy for start-up time: only the figure needs it
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.8))
    for passed, marker, color, label in ((True, "o", "#55a868", "pass"), (False, "x", "#c44e52", "fail")):
        chosen = [(t.rate, t.p99_us / 1e6) for t in trials if t.passed == passed and t.p99_us is not None]
        ax.scatter([rate for rate, _ in chosen], [p99 for _, p99 in chosen], label=label, zorder=3, marker=marker,
                   color=color)
    ax.axhline(bound_s, color="#555555", linestyle="--", label=f"bound {bound_s:g} s")
    if search.best is not None:
        ax.axvline(search.best, color="#4c72b0", linestyle=":", label=f"highest passing {search.best:,} tx/s")
    ax.set_yscale("log")
    ax.set_xlabel("offered rate (--rate, tx/s)")
    ax.set_ylabel("p99 inclusion latency (s)")
    ax.set_title("apiary: p99 inclusion latency against the offered rate")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    try:
        write_figure(fig, path, 110)
    finally:
        plt.close(fig)


def write_tables(out: Path, trials: Sequence[Trial], search: Search, meta: dict[str, Any]) -> None:
    """The three tables, each replaced whole: a reader never sees one half-written."""
    write_text(out / f"{NAME}.csv", to_csv(trials))
    write_text(out / f"{NAME}.md", to_markdown(trials, search, meta["bound_s"]))
    write_json(out / kinds.MAXRATE.file, dict(meta, status=search.status, max_rate=search.best,
                                              first_failing=search.first_failing,
                                              trials=[dict(t.row(), run_figures=[asdict(r) for r in t.runs])
                                                      for t in sorted(trials, key=lambda t: t.rate)]))


# ---- the command -------------------------------------------------------------------------------

def positive_rate(text: str) -> int:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a rate in tx/s, such as 2000") from None
    if not (math.isfinite(value) and 1 <= value <= APIARY_MAX_RATE):
        raise argparse.ArgumentTypeError(f"{text}: expected a rate from 1 to {APIARY_MAX_RATE:,} tx/s")
    return round(value)


def precision(text: str) -> Precision:
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*(%?)\s*", text)
    if not m or float(m.group(1)) <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: expected tx/s (e.g. 50) or a percentage (e.g. 2%), above 0")
    return Precision(float(m.group(1)), m.group(2) == "%")


def parser() -> Parser:
    p = Parser(
        prog="find-max-rate",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Search `apiary run --rate` by bisection for the highest rate (tx/s) at which the p99 "
                    "inclusion latency stays within a bound and the queue does not grow. Arguments after `--` "
                    "go to every `apiary run`.",
        epilog=f"""pass/fail of a rate (medians over --runs runs):
  the report's latency.inclusion.p99_us is at most --bound, and the queue does not grow in
  more than half of the runs. The queue rule, on each run's interval log: leave out the
  first quarter of the intervals, split the rest into an earlier and a later half; a series
  grows when every later value is above every earlier one and the later median is more than
  {GROWTH_MARGIN:.0%} above the earlier. The queue grows when the backlog (in_flight + queue_depth)
  or the interval's end-to-end p50 grows: inclusion latency counts from submission, so when a
  brake holds the producers back an overload shows in the end-to-end latency instead.
  A run needs {MIN_INTERVALS} intervals or more.

search: --low must pass; --high is tried next (passing, it is the answer: raise it); then the
midpoint of the highest passing and the lowest failing rate, until they are closer than
--precision (tx/s, or a percentage of the passing rate).

output: DIR/rate-<R>-run-NNN.json, .out, .intervals.jsonl per run; DIR/maxrate.csv, .md,
.json (the rates tried, rewritten after each rate) and maxrate.png. Ctrl-C stops the run in
hand (not counted) and keeps the table of what was tried.
exit status: 0 a rate passed, 1 no rate passed or a run failed, 2 bad usage, 130/143 interrupted.

Give every run the same length whatever its rate (`--blocks 0 --duration 20s`): a run ended
by a count of blocks is short at a high rate and long at a low one.

examples:
  scripts/find-max-rate --low 500 --high 8000 -- --block-size 64KiB --blocks 0 --duration 20s
  scripts/find-max-rate --low 1000 --high 4000 --precision 50 --runs 3 --bound 1.5 -- --blocks 0 --duration 30s""")
    p.add_argument("--low", type=positive_rate, required=True, metavar="TX/S", help="a rate expected to pass")
    p.add_argument("--high", type=positive_rate, required=True, metavar="TX/S", help="a rate expected to fail")
    p.add_argument("--precision", type=precision, default=precision("2%"), metavar="TX/S|PCT",
                   help="stop when the highest passing and lowest failing rates are closer than this (default: 2%%)")
    p.add_argument("--bound", type=positive_seconds, default=DEFAULT_BOUND_S, metavar="SECONDS",
                   help="the largest p99 inclusion latency that passes (default: %(default)s, one block interval)")
    p.add_argument("--runs", type=whole_number(1, MAX_PLAN_RUNS), default=1,
                   metavar="N", help="runs per rate, their median counts "
                   "(default: %(default)s)")
    p.add_argument("--interval", default=DEFAULT_INTERVAL, metavar="TIME",
                   help="apiary's --interval for the interval log (default: %(default)s)")
    p.add_argument("--apiary", metavar="BIN",
                   help="the apiary binary (default: $APIARY_BIN, else build/release/harness/apiary)")
    p.add_argument("--command", metavar="CMD",
                   help="run this instead of `<apiary> run` (e.g. \"taskset -c 1 build/release/harness/apiary run\")")
    p.add_argument("--out", metavar="DIR", help="output directory (default: results/find-max-rate-<UTC time>); "
                   "it must be new or empty, unless --force")
    p.add_argument("--force", action="store_true",
                   help="write into an --out directory that has files in it (files of the same name are replaced)")
    p.add_argument("--no-plot", action="store_true", help="skip maxrate.png")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    return p


def _check(args, passthrough: list[str]) -> None:
    if args.low >= args.high:
        raise ToolError(f"--low {args.low} is not below --high {args.high}")
    if not args.precision.relative and args.precision.value < 1:
        raise ToolError(f"--precision {args.precision}: rates are whole tx/s, give 1 or more")
    for a in passthrough:
        if a.split("=", 1)[0] in OWN_OPTIONS:
            raise ToolError(f"{a.split('=', 1)[0]}: find-max-rate sets this itself (see --help)")


class Stopped(Exception):
    """A signal stopped the run in hand: the search ends there."""


class Trials:
    """Runs one rate's runs and keeps every rate tried; the tables are rewritten after each."""

    def __init__(self, prefix, base, args, out: Path, meta: dict[str, Any]):
        self.prefix, self.base, self.args, self.out, self.meta = prefix, base, args, out, meta
        self.done: list[Trial] = []
        self.search: Search | None = None
        self.stopped_by: int | None = None

    def plan(self, rate: int) -> list[PlannedRun]:
        runs = []
        for i in range(1, self.args.runs + 1):
            report = self.out / f"rate-{rate}-run-{i:03d}.json"
            log = report.with_suffix(".intervals.jsonl")
            args = self.base + ["--rate", str(rate), "--interval", self.args.interval, "--interval-log", str(log)]
            runs.append(PlannedRun(f"rate {rate}", i, self.prefix + with_progress_off(args), report))
        return runs

    def __call__(self, rate: int) -> bool:
        plan = self.plan(rate)
        outcome = execute(plan, Progress("find-max-rate", plan, quiet=self.args.quiet))
        if outcome.stopped_by is not None:
            self.stopped_by = outcome.stopped_by
            raise Stopped
        if outcome.failures:
            f = outcome.failures[0]
            why = (f.report or {}).get("error") or "see its output"
            raise ToolError(f"rate {rate}: run {f.planned.index} failed with exit status {f.exit_code}: {why} "
                            f"({f.planned.log_path})", 2 if f.exit_code == 2 else EXIT_FAILED)
        trial = Trial(rate, len(self.done) + 1, bound_us=self.args.bound * 1e6)
        trial.runs = [run_figures(r, r.planned.report_path.with_suffix(".intervals.jsonl")) for r in outcome.results]
        self.done.append(trial)
        self.write()
        if not self.args.quiet:
            print(f"find-max-rate: rate {rate:,} tx/s: p99 inclusion {_ms(trial.p99_us)} ms, queue "
                  f"{'growing' if trial.queue_grows else 'steady'}: {'pass' if trial.passed else 'fail'}",
                  file=sys.stderr, flush=True)
        return trial.passed

    def write(self) -> None:
        if self.search is not None:
            write_tables(self.out, self.done, self.search, self.meta)


def _prepare(args, passthrough) -> tuple[list[str], Path]:
    out = Outputs().directory("--out", Path(args.out) if args.out else REPO_ROOT / "results" /
                              f"find-max-rate-{utc_stamp()}", args.force)
    prefix = apiary_command(None if args.command else check_apiary(args.apiary or default_apiary()), args.command)
    effective_config(prefix, passthrough + ["--rate", str(args.low), "--interval", args.interval, "--interval-log",
                                            os.devnull], "the run arguments")
    return prefix, make_directory(out)


def _finish(trials: Trials, search: Search, args, out: Path) -> None:
    if trials.done:
        trials.write()
        if not args.no_plot:
            plot(trials.done, search, args.bound, out / f"{NAME}.png")
    print(to_markdown(trials.done, search, args.bound), end="")
    print(f"find-max-rate: written to {out}", file=sys.stderr)


def _main(argv: Sequence[str]) -> int:
    own, passthrough = split_passthrough(argv)
    args = parser().parse_args(glue_values(own, ("--command",)))
    _check(args, passthrough)
    prefix, out = _prepare(args, passthrough)
    meta = kinds.MAXRATE.stamp({"created": utc_iso(), "low": args.low, "high": args.high,
                                "precision": str(args.precision), "bound_s": args.bound, "runs_per_rate": args.runs,
                                "interval": args.interval, "command": prefix + passthrough})
    trials = Trials(prefix, passthrough, args, out, meta)
    search = Search(trials, args.low, args.high, args.precision)
    trials.search = search
    with STOP.keeping():   # the rates tried are written, whatever signal comes
        try:
            search.run()
        except Stopped:
            search.status = "interrupted"
            _finish(trials, search, args, out)
            return exit_code_for(trials.stopped_by or signal.SIGINT)
        except ToolError:
            search.status = "stopped by a failed run"
            if trials.done:
                trials.write()
            raise
        _finish(trials, search, args, out)
    return EXIT_OK if search.best is not None else EXIT_FAILED


def main(argv: Sequence[str] | None = None) -> int:
    return run_main("find-max-rate", _main, argv)


if __name__ == "__main__":
    raise SystemExit(main())
