"""bisect: the commit between a good and a bad one that made apiary slower.

Steps, each said on stderr as it goes:

1. The range: the commits of `git rev-list --first-parent GOOD..BAD` (a merge counts as one
   commit, as the history's first-parent line shows it); GOOD must be on BAD's first-parent line.
2. Each commit the search needs is built (builds.py: its own worktree, the release preset,
   ccache; kept by commit id) and measured. The default metric, `instructions`, is the
   deterministic one the CI gate uses (gate.py): the replay of a seeded workload under
   callgrind, instructions per transaction, one replay a commit; `estimated-cycles`, the gate's
   other count, prices that replay's simulated cache hits and misses (a change of memory
   behaviour that keeps the instructions), and `memory-time`, the third, the same replay's
   last-level misses, TLB misses and page walks at this machine's fitted prices (the
   translation of addresses, which the estimated cycles do not see). `cycle` (the full cycle's mean,
   aggregates.cycle_us.avg), `cpu` (the writer's CPU time per transaction, its task clock) or any
   metric of a run report (`scripts/compare`'s names) is the mean of --runs `apiary run`s
   instead, noisier.
3. GOOD and BAD are measured first: when BAD is not worse than GOOD by more than --threshold,
   there is nothing to find, and bisect says so in one line and exits 1. Otherwise a binary
   search: a commit is bad when its value is worse than GOOD's by more than the threshold. A
   commit that does not build (or cannot be measured) is skipped, as `git bisect skip` does,
   and the search takes its neighbour.
4. The culprit is confirmed by wall time against its parent: interleaved `apiary run`s (parent,
   culprit, parent, ...) of --config, with sequential repetition (sequential.py) until the
   difference is decided, or --max-pairs or --max-time is reached. It is decided on the deciding
   metric (deciding.py, --decide-on: the full cycle or the writer's CPU time per transaction,
   under auto the quieter in the pairs), or on --metric when that is another wall-time metric.

Resumable: the state is in DIR/bisect.json, written after every measurement; bisect with the
same --out reuses every commit measured there (by any earlier range) and goes on where it
stopped. DIR/bisect.md is the evidence table: each commit tested, its value, its change
against GOOD and its verdict, then the confirmation.

Exit status: 0 the culprit was found (the confirmation's verdict is in the table and on
stdout); 1 nothing to bisect (BAD is not worse than GOOD beyond the threshold), GOOD or BAD
could not be built or measured, or a run failed; 2 bad usage; 130/143 interrupted (what was
measured is kept in DIR for the next run).
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import deciding, gate, kinds, metrics
from ..builds import Builds, git, resolve, stderr_line
from ..common import (
    EXIT_FAILED,
    EXIT_OK,
    REPO_ROOT,
    Parser,
    ToolError,
    duration,
    finite_number,
    fmt_number,
    fmt_pct,
    markdown_table,
    probability,
    run_main,
    shown,
    shown_path,
    utc_iso,
    utc_stamp,
    whole_number,
)
from ..comparison import DEFAULT_ALPHA
from ..inputs import check_file, read_json
from ..outputs import check_directory, make_directory, write_json, write_text
from ..runner import split_passthrough, with_progress_off
from ..sequential import Sequential, describe

STATE_NAME = kinds.BISECT.file
TABLE_NAME = "bisect.md"
INSTRUCTIONS = "instructions"
# The deterministic metrics: counted in the gate's replay under callgrind (gate.GATE_COSTS).
COUNTED = {INSTRUCTIONS: gate.INSTRUCTIONS, "estimated-cycles": gate.ESTIMATED_CYCLES, "memory-time": gate.MEMORY}
DEFAULT_CONFIG = REPO_ROOT / "configs" / "smoke.toml"

say = stderr_line("bisect")


# ---- measuring a commit ----------------------------------------------------------------------

@dataclass
class Measure:
    """How a commit's binary is measured: the metric and what its value depends on."""
    metric: str                 # a name of COUNTED, or a run report's metric name
    runs: int
    run_args: list[str]         # the arguments of every `apiary run`

    @property
    def direction(self) -> metrics.Direction:
        if self.metric in COUNTED:
            return metrics.COST
        d = metrics.direction(self.metric)
        if d is None:
            raise ToolError(f"--metric {self.metric}: a metric with no better direction (a total, a share); "
                            "bisect needs one where more (or less) is worse, e.g. cycle or us_per_tx")
        return d

    @property
    def unit(self) -> str:
        if self.metric in COUNTED:
            return f"{COUNTED[self.metric].words} per transaction"
        return metrics.label(self.metric)

    def settings(self) -> dict[str, Any]:
        """What a measurement depends on: a state measured otherwise is not reused."""
        if self.metric in COUNTED:
            d = gate.WORKLOAD
            return {"metric": self.metric, "transactions": d.transactions, "accounts": d.accounts,
                    "seed": d.seed, "block_size": d.block_size}
        return {"metric": self.metric, "runs": self.runs, "run_args": self.run_args}

    def value(self, binary: Path, work: Path) -> float:
        make_directory(work)
        if self.metric in COUNTED:
            side = gate.count_side(work.name, binary, work, gate.WORKLOAD, say)
            return float(side[COUNTED[self.metric].per_tx_key])
        values = run_values(binary, self.run_args, self.metric, [work / f"run-{i:03d}.json"
                                                                 for i in range(1, self.runs + 1)])
        return sum(values) / len(values)


def run_report(binary: Path, run_args: list[str], report: Path, label: str = "run") -> dict[str, Any]:
    """`apiary run` once, what it printed beside the report (.out); the report, read without
    the current schema's checks (reports.py): an older commit's apiary writes an older report,
    and only its metrics are wanted of it."""
    make_directory(report.parent)
    log = report.with_suffix(".out")
    cmd = [str(binary), "run", *with_progress_off(run_args), "--report", str(report)]
    with open(log, "w", encoding="utf-8") as out:
        out.write("$ " + shlex.join(cmd) + "\n")
        out.flush()
        code = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL).returncode
    if code != 0:
        raise ToolError(f"{label}: `apiary run` failed with exit status {code} (log: {log})", EXIT_FAILED)
    data = read_json(report)
    if not isinstance(data, dict):
        raise ToolError(f"{report}: not a run report", EXIT_FAILED)
    return data


def run_values(binary: Path, run_args: list[str], metric: str, reports: list[Path],
               label: str = "run") -> list[float]:
    """run_report once per report path, in order; the metric of each."""
    values = []
    for report in reports:
        value = metrics.flatten(run_report(binary, run_args, report, label)).get(metric)
        if value is None or value <= 0:
            raise ToolError(f"{report}: the report has no positive {metric}", EXIT_FAILED)
        say(f"{label} {report.stem}: {metric} {fmt_number(value)}")
        values.append(float(value))
    return values


# ---- the state ---------------------------------------------------------------------------------

class State:
    """DIR/bisect.json: every commit measured, the search's range and its outcome."""

    def __init__(self, out: Path, measure: Measure):
        self.path = out / STATE_NAME
        self.data: dict[str, Any] = kinds.BISECT.stamp({"measure": measure.settings(), "measured": {}})
        if self.path.exists():
            old = read_json(self.path)
            if not kinds.BISECT.is_one(old) or not isinstance(old.get("measured"), dict):
                raise ToolError(f"--out {shown_path(str(self.path))}: not a bisect state; choose another --out")
            if old.get("measure") != self.data["measure"]:
                raise ToolError(f"--out {shown_path(str(out))}: holds a bisection measured otherwise "
                                f"({old.get('measure')}); choose another --out")
            self.data["measured"] = old["measured"]
            self.data["confirmations"] = old.get("confirmations", {})
        self.data.setdefault("confirmations", {})

    @property
    def measured(self) -> dict[str, dict[str, Any]]:
        return self.data["measured"]

    def save(self) -> None:
        self.data["updated"] = utc_iso()
        write_json(self.path, self.data)


# ---- the search ----------------------------------------------------------------------------------

@dataclass
class Bisection:
    repo: Path
    builds: Builds
    measure: Measure
    state: State
    out: Path
    threshold: float           # percent
    commits: list[str]         # good first, bad last, the first-parent line between in order
    subjects: dict[str, str]

    def entry(self, sha: str) -> dict[str, Any]:
        """The commit's measurement: from the state when measured before, else built and measured now."""
        known = self.state.measured.get(sha)
        if known is not None and "value" in known:   # one that failed is tried again
            say(f"{sha[:10]}: measured before, {fmt_number(known['value'])} {self.measure.unit}")
            return known
        t0 = time.monotonic()
        entry: dict[str, Any] = {"subject": self.subjects[sha]}
        try:
            binary = self.builds.build(sha)
            entry["value"] = self.measure.value(binary, self.out / "commits" / sha[:12])
        except ToolError as e:
            entry["error"] = str(e)
            say(f"{sha[:10]}: skipped: {e}")
        entry["seconds"] = round(time.monotonic() - t0, 1)
        self.state.measured[sha] = entry
        self.state.save()
        return entry

    def change(self, sha: str) -> float | None:
        """Percent change of the commit's value against GOOD's."""
        value, base = self.state.measured.get(sha, {}).get("value"), self.state.measured[self.commits[0]]["value"]
        return None if value is None else (value / base - 1) * 100

    def is_bad(self, sha: str) -> bool | None:
        """Measures the commit if need be: worse than GOOD beyond the threshold; None when the
        commit could not be measured."""
        return self.worse(self.change(sha)) if "value" in self.entry(sha) else None

    def worse(self, change: float | None) -> bool:
        """A change against GOOD (percent) beyond the threshold, in the metric's worse direction."""
        return change is not None and -self.measure.direction.better * change > self.threshold

    def search(self) -> tuple[int, int]:
        """(last good, first bad) indices into `commits`: adjacent unless the commits between
        could not be measured."""
        lo, hi = 0, len(self.commits) - 1
        skipped: set[int] = set()
        while hi - lo > 1:
            middle = (lo + hi) // 2
            candidates = sorted((i for i in range(lo + 1, hi) if i not in skipped), key=lambda i: abs(i - middle))
            if not candidates:
                break
            i = candidates[0]
            say(f"{hi - lo - 1} commits left between {self.commits[lo][:10]} and {self.commits[hi][:10]}; "
                f"testing {self.commits[i][:10]} {self.subjects[self.commits[i]][:60]}")
            bad = self.is_bad(self.commits[i])
            if bad is None:
                skipped.add(i)
            elif bad:
                hi = i
            else:
                lo = i
        return lo, hi


def first_parent_range(repo: Path, good: str, bad: str) -> list[str]:
    """GOOD, then the first-parent line from GOOD (exclusive) to BAD, oldest first."""
    p = git(repo, "rev-list", "--first-parent", "--reverse", f"{good}..{bad}")
    commits = p.stdout.split()
    if p.returncode != 0 or not commits:
        raise ToolError(f"--bad {bad[:10]} has no commits after --good {good[:10]}: give the older commit as --good")
    parent = git(repo, "rev-parse", f"{commits[0]}^").stdout.strip()
    if parent != good:
        raise ToolError(f"--good {good[:10]} is not on the first-parent line of --bad {bad[:10]} (git log "
                        "--first-parent shows that line); give one of its commits")
    return [good] + commits


def subjects_of(repo: Path, commits: Sequence[str]) -> dict[str, str]:
    p = git(repo, "log", "--no-walk=unsorted", "--format=%H %s", *commits)
    return dict(line.split(" ", 1) if " " in line else (line, "") for line in p.stdout.splitlines())


# ---- the confirmation by wall time -------------------------------------------------------------

class OneMetric:
    """The confirmation's sequential decision on a wall-time --metric other than the deciding
    metrics (deciding.MEASURED): on that metric alone, as deciding.Judge is asked."""

    def __init__(self, metric: str, seq: Sequential):
        self.metric, self.seq = metric, seq

    def add(self, a: dict[str, float], b: dict[str, float], why_a: deciding.Why, why_b: deciding.Why) -> None:
        for values, why in ((a, why_a), (b, why_b)):
            if not values.get(self.metric, 0.0) > 0.0:
                raise ToolError(why(self.metric), EXIT_FAILED)
        self.seq.add(a[self.metric], b[self.metric])

    @property
    def decided(self) -> bool:
        return self.seq.decided

    def describe(self) -> str:
        return describe(self.seq.decision(), self.metric)

    def to_dict(self) -> dict[str, Any]:
        return {**self.seq.to_dict(), "metric": self.metric}


def _reason(path: Path, metric: str) -> str:
    """Why the run whose report is at `path` lacks `metric`, read again from its report."""
    try:
        report = read_json(path)
    except ToolError:
        return f"{path.name}: its report cannot be read"
    return f"{path.name}: {deciding.missing_reason(report if isinstance(report, dict) else {}, metric)}"


def _pair_text(a: dict[str, float], b: dict[str, float]) -> str:
    return "; ".join(f"{metrics.SHORT_NAMES.get(m, m)}: parent {fmt_number(a[m])}, culprit {fmt_number(b[m])} "
                     f"({(b[m] / a[m] - 1) * 100:+.1f}%)" for m in a if m in b)


@dataclass
class Confirmation:
    """Interleaved runs of the culprit's parent (A) and the culprit (B), pair by pair, until the
    sequential decision on the deciding metric (deciding.Judge, `decide_on`), or on `metric`
    when --metric is a wall-time metric of its own, is settled; each pair's metrics are kept in
    the state, so a rerun goes on."""
    metric: str | None          # None: the deciding metric
    decide_on: str
    run_args: list[str]
    threshold: float           # a fraction
    alpha: float
    max_pairs: int
    max_seconds: float

    def judge(self) -> deciding.Judge | OneMetric:
        if self.metric is None:
            return deciding.Judge(self.decide_on, self.threshold, self.alpha, self.max_pairs, self.max_seconds)
        return OneMetric(self.metric, Sequential(self.threshold, self.alpha, self.max_pairs, self.max_seconds))

    def kept(self, report: dict[str, Any]) -> dict[str, float]:
        """What the state keeps of a run: the metrics a decision may read."""
        values = metrics.flatten(report)
        names = [c.metric for c in deciding.MEASURED] if self.metric is None else [self.metric]
        return {name: values[name] for name in names if name in values}

    def run(self, bisection: Bisection, parent: str, culprit: str) -> dict[str, Any]:
        settings = {"metric": self.metric, "decide_on": self.decide_on, "run_args": self.run_args}
        record = bisection.state.data["confirmations"].setdefault(f"{parent}..{culprit}", {**settings, "pairs": []})
        if any(record.get(key) != value for key, value in settings.items()):
            record.clear()
            record.update(settings, pairs=[])
        work = bisection.out / "confirm" / f"{parent[:12]}-{culprit[:12]}"

        def why(name: str, i: int) -> deciding.Why:
            return lambda metric: f"{name} {_reason(work / name / f'run-{i:03d}.json', metric)}"

        judge = self.judge()
        for i, (a, b) in enumerate(record["pairs"], 1):
            judge.add(a, b, why("parent", i), why("culprit", i))
        binaries = {name: bisection.builds.build(sha) for name, sha in (("parent", parent), ("culprit", culprit))}
        while not judge.decided:
            i = len(record["pairs"]) + 1
            a, b = (self.kept(run_report(binaries[name], self.run_args, work / name / f"run-{i:03d}.json", name))
                    for name in ("parent", "culprit"))
            judge.add(a, b, why("parent", i), why("culprit", i))
            record["pairs"].append([a, b])
            bisection.state.save()
            say(f"confirmation pair {i}: {_pair_text(a, b)}; so far {judge.describe()}")
        record["decision"] = judge.to_dict()
        bisection.state.save()
        return record


# ---- the evidence ----------------------------------------------------------------------------------

def evidence_rows(b: Bisection, lo: int | None, hi: int | None) -> list[dict[str, Any]]:
    rows = []
    for i, sha in enumerate(b.commits):
        entry = b.state.measured.get(sha)
        if entry is None:
            continue
        change = b.change(sha) if b.commits[0] in b.state.measured and "value" in b.state.measured[b.commits[0]] \
            else None
        if "value" not in entry:
            verdict = "skipped"
        elif i == 0:
            verdict = "good (given)"
        else:
            verdict = "bad" if b.worse(change) else "good"
            if i == hi and lo is not None and hi - lo == 1:
                verdict = "bad: the culprit"
        rows.append({"commit": sha, "subject": entry.get("subject", ""), "value": entry.get("value"),
                     "change_pct": change, "verdict": verdict, "error": entry.get("error"),
                     "seconds": entry.get("seconds")})
    return rows


def evidence_markdown(b: Bisection, rows: list[dict[str, Any]], result: dict[str, Any]) -> str:
    lines = [f"# bisect {b.commits[0][:10]}..{b.commits[-1][:10]}: {b.measure.unit}", "",
             f"- {len(b.commits) - 1} commits on the first-parent line after the good one; a commit is bad when "
             f"it is worse than the good one by more than {b.threshold:g}%",
             f"- {result['summary']}", ""]
    table = [[r["commit"][:10], r["subject"][:70], fmt_number(r["value"]), fmt_pct(r["change_pct"]),
              r["verdict"] + (f" ({r['error']})" if r["error"] else "")] for r in rows]
    lines.append(markdown_table(["commit", "subject", b.measure.unit, "change vs good", "verdict"], table, "llrrl"))
    confirmation = result.get("confirmation")
    if confirmation and confirmation.get("decision"):
        d = confirmation["decision"]
        lines += [f"Confirmation by wall time ({metrics.label(d['metric'])}, the culprit against its "
                  f"parent, interleaved pairs): **{d['verdict']}**, change {d['change'] * 100:+.2f}% "
                  f"(anytime-valid interval {d['low'] * 100:+.2f}% … {d['high'] * 100:+.2f}%) after {d['pairs']} "
                  f"pairs; {d['reason']}.", ""]
        if d.get("decided_on"):
            lines += [f"The confirmation {d['decided_on']['text']}.", ""]
    return "\n".join(lines)


def write_evidence(b: Bisection, lo: int | None, hi: int | None, result: dict[str, Any]) -> None:
    rows = evidence_rows(b, lo, hi)
    b.state.data["result"] = dict(result, good=b.commits[0], bad=b.commits[-1], threshold_pct=b.threshold,
                                  evidence=rows)
    b.state.save()
    write_text(b.out / TABLE_NAME, evidence_markdown(b, rows, result))


# ---- the command ---------------------------------------------------------------------------------

def parser() -> Parser:
    p = Parser(
        prog="bisect",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Find the commit between --good and --bad that made apiary slower: build each commit the "
                    "search needs (its own worktree, release, ccache; kept in build/commits/), measure it (by "
                    "default the replay's instructions per transaction under callgrind, deterministic), binary "
                    "search on the first-parent line, then confirm the culprit against its parent by wall time "
                    "with interleaved runs repeated until decided. Arguments after `--` go to every `apiary run`.",
        epilog="""examples:
  scripts/bisect --good v1 --bad main
  scripts/bisect --good HEAD~8 --bad HEAD --metric cycle --runs 5 --out results/bisect-cycle
  scripts/bisect --good HEAD~8 --bad HEAD --out results/bisect-1   # again: goes on, reusing what it measured

output: DIR/bisect.md (the evidence: each commit tested, its value, its change against --good, its
verdict; the confirmation), DIR/bisect.json (the same and the state a rerun with this --out goes
on from), DIR/commits/<sha>/ (each measurement's files), DIR/confirm/ (the confirmation's runs).
exit status: 0 the culprit was found; 1 nothing to bisect (--bad is not worse than --good beyond
--threshold: one line says by how much), --good or --bad could not be built or measured, or a
run failed; 2 bad usage; 130/143 interrupted (the state is kept: rerun with the same --out).""")
    p.add_argument("--good", required=True, metavar="REF", help="a commit without the slowdown")
    p.add_argument("--bad", required=True, metavar="REF", help="a later commit with it (on the first-parent "
                   "line after --good)")
    p.add_argument("--metric", default=INSTRUCTIONS,
                   help="what judges a commit: instructions (the replay's instructions per transaction under "
                        "callgrind, as the CI gate counts them), estimated-cycles (the same replay's cache "
                        "simulation priced by where each access was served, as the gate also counts it), "
                        "memory-time (its last-level misses, simulated TLB misses and page walks at this machine's "
                        "fitted nanoseconds, the gate's third count), cycle "
                        f"(the full cycle's mean, {metrics.CYCLE}, over --runs runs), cpu (the writer's CPU time per "
                        f"transaction, {metrics.WRITER_CPU}, likewise) or any run report metric "
                        "(default: %(default)s)")
    p.add_argument("--threshold", type=finite_number(0, 1000, "a percentage", above=True), default=3.0,
                   metavar="PCT", help="a commit is bad when its metric is worse than --good's by more than this "
                                       "(default: %(default)s)")
    p.add_argument("--runs", type=whole_number(1, 1000), default=3,
                   help="runs per commit for a wall-time --metric (default: %(default)s)")
    p.add_argument("--config", default=str(DEFAULT_CONFIG), metavar="FILE",
                   help="the config of every `apiary run` (a wall-time metric, the confirmation) "
                        "(default: configs/smoke.toml)")
    p.add_argument("--wall-threshold", type=finite_number(0, 1000, "a percentage"), default=1.0, metavar="PCT",
                   help="the confirmation's threshold: the culprit is confirmed when its deciding metric (see "
                        "--decide-on) is slower than its parent's by more than this, at --alpha (default: %(default)s)")
    p.add_argument("--alpha", type=probability, default=DEFAULT_ALPHA,
                   help="significance level of the confirmation (default: %(default)s)")
    p.add_argument("--max-pairs", type=whole_number(0, 1000), default=30,
                   help="at most this many interleaved pairs in the confirmation; 0: no confirmation "
                        "(default: %(default)s)")
    p.add_argument("--max-time", type=duration, default=duration("15m"), metavar="DURATION",
                   help="the confirmation's time budget, such as 20m or 1h30m (default: 15m)")
    deciding.add_option(p, "the confirmation by wall time (unless --metric is another wall-time metric, which "
                           "confirms itself)")
    p.add_argument("--out", metavar="DIR", help="output and state directory (default: results/bisect-<UTC time>); "
                   "an existing one is gone on from")
    p.add_argument("--repo", default=str(REPO_ROOT), metavar="DIR",
                   help="the git repository (default: this one)")
    p.add_argument("--build-command", metavar="CMD",
                   help="build each commit with this shell command instead of the release preset (run in the "
                        "commit's worktree, with APIARY_SOURCE_DIR and APIARY_BUILD_DIR set; it must leave "
                        "$APIARY_BUILD_DIR/harness/apiary)")
    return p


def _measure(args, passthrough: list[str]) -> Measure:
    check_file("--config", args.config, "a config file")
    for a in passthrough:
        if a.split("=", 1)[0] in ("--report", "--config"):
            raise ToolError(f"{a.split('=', 1)[0]}: bisect gives it itself (see --config)")
    metric = deciding.BY_NAME[args.metric].metric if args.metric in deciding.BY_NAME else args.metric
    measure = Measure(metric, args.runs, ["--config", str(Path(args.config).resolve())] + passthrough)
    measure.direction   # noqa: B018 -- refuses a metric without one before anything is built
    if metric in COUNTED and shutil.which("valgrind") is None:
        raise ToolError("valgrind is not installed (scripts/install-deps.sh installs it); or give a wall-time --metric")
    return measure


def _main(argv: Sequence[str]) -> int:
    own, passthrough = split_passthrough(argv)
    args = parser().parse_args(own)
    repo = Path(args.repo)
    if git(repo, "rev-parse", "--git-dir").returncode != 0:
        raise ToolError(f"--repo {shown_path(str(repo))}: not a git repository")
    good, bad = resolve(repo, args.good, "--good"), resolve(repo, args.bad, "--bad")
    measure = _measure(args, passthrough)
    confirmation = _confirmation(args, measure) if args.max_pairs else None
    out = Path(args.out) if args.out else REPO_ROOT / "results" / f"bisect-{utc_stamp()}"
    check_directory("--out", out, force=True)
    commits = first_parent_range(repo, good, bad)
    make_directory(out)
    b = Bisection(repo, Builds(repo, command=args.build_command, say=say), measure, State(out, measure), out,
                  args.threshold, commits, subjects_of(repo, commits))
    say(f"{len(commits) - 1} commits after {good[:10]} up to {bad[:10]}; judged by {measure.unit}, "
        f"threshold {args.threshold:g}%; state in {out / STATE_NAME}")
    return _bisect(b, confirmation)


def _confirmation(args, measure: Measure) -> Confirmation:
    """How the culprit is confirmed: by the deciding metric, unless --metric is a wall-time
    metric of its own (not the cycle, not the writer's CPU time), which confirms itself."""
    deciders = {c.metric for c in deciding.MEASURED}
    own = None if measure.metric in COUNTED or measure.metric in deciders else measure.metric
    if own is not None and args.decide_on != deciding.AUTO:
        raise ToolError(f"--decide-on {args.decide_on}: with --metric {args.metric} the confirmation is by that "
                        "metric; --decide-on chooses between the cycle and the writer's CPU time")
    return Confirmation(own, args.decide_on, measure.run_args, args.wall_threshold / 100, args.alpha,
                        args.max_pairs, args.max_time)


def _ends(b: Bisection) -> None:
    """GOOD and BAD measured; ToolError (exit 1) when either cannot be, or BAD is not worse."""
    for option, sha in (("--good", b.commits[0]), ("--bad", b.commits[-1])):
        entry = b.entry(sha)
        if "value" not in entry:
            raise ToolError(f"{option} {sha[:10]} could not be measured: {entry['error']}", EXIT_FAILED)
    if not b.worse(b.change(b.commits[-1])):
        good, bad = (b.state.measured[sha]["value"] for sha in (b.commits[0], b.commits[-1]))
        summary = (f"nothing to bisect: --bad {b.commits[-1][:10]} is {fmt_pct(b.change(b.commits[-1]))} against "
                   f"--good {b.commits[0][:10]} ({fmt_number(bad)} against {fmt_number(good)} {b.measure.unit}), "
                   f"not worse by more than the threshold of {b.threshold:g}%")
        write_evidence(b, None, None, {"status": "nothing to bisect", "summary": summary})
        raise ToolError(summary, EXIT_FAILED)


def _bisect(b: Bisection, confirmation: Confirmation | None) -> int:
    t0 = time.monotonic()
    _ends(b)
    lo, hi = b.search()
    culprit, parent = b.commits[hi], b.commits[hi - 1]
    result: dict[str, Any] = {"status": "found", "culprit": culprit}
    if hi - lo > 1:
        result.update(status="ambiguous", candidates=b.commits[lo + 1:hi + 1],
                      summary=f"the culprit is one of the {hi - lo} commits after {b.commits[lo][:10]} up to "
                              f"{culprit[:10]}: those between could not be measured")
    else:
        result["summary"] = (f"the culprit: {culprit[:10]} {shown(b.subjects[culprit], 70)} "
                             f"({fmt_pct(b.change(culprit))} {b.measure.unit} against --good; its parent "
                             f"{fmt_pct(b.change(parent))})")
        say(result["summary"])
        if confirmation is not None:
            write_evidence(b, lo, hi, result)   # the search's evidence first: the confirmation takes long
            say(f"confirming by wall time: {parent[:10]} (parent) against {culprit[:10]}, interleaved pairs")
            result["confirmation"] = confirmation.run(b, parent, culprit)
    result["seconds"] = round(time.monotonic() - t0, 1)
    write_evidence(b, lo, hi, result)
    print((b.out / TABLE_NAME).read_text(encoding="utf-8"), end="")
    say(f"done in {result['seconds']:.0f} s; evidence in {b.out / TABLE_NAME} and {b.out / STATE_NAME}")
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    return run_main("bisect", _main, argv)


if __name__ == "__main__":
    raise SystemExit(main())
