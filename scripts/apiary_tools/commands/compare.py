"""compare: two reports or two multi-run sets, metric by metric, with a verdict a CI job can
act on.

The method (the test and verdict of each metric, runs from several machines compared machine
by machine, latency compared by its tail) is the library's: apiary_tools/comparison.py. A
latency row can gate like the others (`--fail-on latency.inclusion.p99_us`).

The gate is the deciding metric (deciding.py, `--decide-on`) unless `--fail-on` names others.

With `--a-apiary BIN --b-apiary BIN` (each side's build), each build's replay is counted as
the CI gate counts it (gate.count_side: instructions, estimated cycles and estimated memory
time per transaction, deterministic) beside the runs, and under --decide-on auto those counts
decide (deciding.counted), as multirun's do for two builds.

Exit status: 0 no significant regression in the gate metrics, 1 at least one, 2 bad usage or
input.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from .. import deciding, gate, history, profiles, sequential, stats
from ..builds import stderr_line
from ..common import (
    EXIT_FAILED,
    Parser,
    ToolError,
    check_apiary,
    check_name,
    fmt_pct,
    parse_csv,
    percent,
    probability,
    run_main,
)
from ..comparison import (
    DEFAULT_ALPHA,
    DEFAULT_MIN_EFFECT_PCT,
    add_correction_option,
    build,
    counts_section,
    to_markdown,
)
from ..outputs import Outputs, make_directory, write_json, write_text
from ..reports import add_include_invalid, input_files


def parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="compare",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Compare B against A, metric by metric: the change of the mean in percent, its 95% "
                    "confidence interval, the Mann-Whitney U p-value and a verdict. A and B are each a "
                    "report file, a multirun directory or its aggregate.json.",
        epilog="""verdicts:
  faster/slower (times, rates), better/worse, fewer/more, smaller/larger: a significant change
  (p < alpha and at least --min-effect percent) in a metric with a better direction;
  higher/lower: a significant change in a metric without one; no significant change;
  no test (n=1): a side has a single run, so only the change is shown.
latency: inclusion and end-to-end p99 of each side's runs' histograms merged, with a bootstrap
  interval over runs; significant when the interval excludes 0 (reports of schema_version 2).
the deciding metric: the mean cycle or the writer's CPU time per transaction (--decide-on);
  under auto the one whose noise in these runs is lower, each judged at alpha/2; a line says
  which decided, the noise of each, and why one was unavailable (reports without counters).
  It is the gate unless --fail-on names others.
sequential decision: when the sides are an interleaved A/B's (multirun: the same run-NNN on
  both sides, one machine), the deciding metric of the pairs is judged as `multirun --adaptive`
  judges it, with an anytime-valid interval: slower/faster beyond ±--threshold, equivalent
  within, else undecided (docs/tools.md). It does not change the exit status.
the count: with --a-apiary and --b-apiary, each build's seeded replay under callgrind, as the
  CI gate counts it (valgrind, about 6 s a side): instructions, estimated cycles and estimated
  memory time per transaction, deterministic; under --decide-on auto the last two decide
  (slower where either is slower beyond ±--threshold, faster where either is faster and neither
  slower, else equivalent; where they part, the runs do). It does not change the exit status.

exit status: 0 no significant regression in the gate's metrics, 1 at least one, 2 bad usage
(--decide-on cpu for reports without the writer's CPU time among them).

examples:
  scripts/compare results/base.json results/new.json
  scripts/compare results/multirun-A results/multirun-B --fail-on aggregates.cycle_us.avg,us_per_tx
  scripts/compare results/multirun-A results/multirun-B --fail-on latency.inclusion.p99_us
  scripts/compare results/multirun-A results/multirun-B --decide-on cycle
  scripts/compare base/aggregate.json new/aggregate.json --json cmp.json --markdown cmp.md
  scripts/compare results/multirun-A results/multirun-B --profile --out profile-diff
  scripts/compare results/ab/a results/ab/b --a-apiary base/apiary --b-apiary build/release/harness/apiary""")
    p.add_argument("a", metavar="A", help="the baseline: a report, a multirun directory or aggregate.json")
    p.add_argument("b", metavar="B", help="the candidate, compared against A")
    p.add_argument("--alpha", type=probability, default=DEFAULT_ALPHA,
                   help="significance level of the Mann-Whitney U test (default: %(default)s)")
    p.add_argument("--min-effect", type=percent, default=DEFAULT_MIN_EFFECT_PCT, metavar="PCT",
                   help="smallest change in percent that counts as significant (default: %(default)s)")
    add_correction_option(p)
    p.add_argument("--fail-on", default=None, metavar="METRIC,...",
                   help="metrics whose significant regression makes the exit status 1, each tested at --alpha "
                        "(default: the deciding metric, see --decide-on)")
    deciding.add_option(p, "the gate (without --fail-on) and the sequential decision",
                        "with --a-apiary and --b-apiary")
    p.add_argument("--a-apiary", metavar="BIN", help="side A's apiary build: with --b-apiary, each build's replay is "
                   "counted as the CI gate counts it, beside the runs (needs valgrind)")
    p.add_argument("--b-apiary", metavar="BIN", help="side B's apiary build (with --a-apiary)")
    sequential.add_options(p, DEFAULT_MIN_EFFECT_PCT, max_time=False)
    p.add_argument("--ci", choices=stats.CI_METHODS, default="bootstrap",
                   help="how the confidence interval of the change is computed (default: %(default)s)")
    p.add_argument("--labels", metavar="A,B", help="names for the two sides (default: from the paths)")
    add_include_invalid(p)
    p.add_argument("--all", action="store_true", help="list every metric, not only the key ones and "
                   "those with a significant change")
    p.add_argument("--json", metavar="PATH", help="also write the comparison as JSON")
    p.add_argument("--markdown", metavar="PATH", help="also write the Markdown to a file")
    p.add_argument("--profile", action="store_true",
                   help="also compare the runs' profiles (`apiary run --profile`, `multirun --profile`): the "
                        "functions whose self share moved most, each side's summed stacks (a.folded, b.folded), "
                        "their flame graphs (a.svg, b.svg) and the differential one (profile-diff.svg), written "
                        "into --out, else beside --json; needs inferno (scripts/install-deps.sh)")
    p.add_argument("--out", metavar="DIR",
                   help="with --profile: the directory of the profile's files (new or empty, unless --force)")
    p.add_argument("--force", action="store_true",
                   help="with --profile: write into an --out directory that has files in it")
    p.add_argument("--quiet", action="store_true", help="print nothing on stdout (use with --json/--markdown)")
    history.add_history_option(p)
    return p


def _main(argv: Sequence[str]) -> int:
    args = parser().parse_args(argv)
    gate = parse_csv(args.fail_on) if args.fail_on is not None else None
    if gate is not None and not gate:
        raise ToolError("--fail-on: name at least one metric")
    labels = parse_csv(args.labels) if args.labels else None
    if labels is not None and len(labels) != 2:
        raise ToolError(f"--labels {args.labels}: expected two names separated by a comma")
    for label in labels or ():
        check_name("--labels", label)
    if args.history and not args.json:
        raise ToolError("--history ingests the comparison's JSON: give --json PATH too")
    if (args.out is not None or args.force) and not args.profile:
        raise ToolError("--out and --force go with --profile: the profile's files are what --out holds")
    builds = _builds(args)
    programs = profiles.find_programs() if args.profile else {}
    plan = Outputs().read("A", input_files(args.a)).read("B", input_files(args.b))
    json_path, markdown_path = plan.file("--json", args.json), plan.file("--markdown", args.markdown)
    profile_dir = profiles.output_dir(args.out, args.json) if args.profile else None
    if profile_dir is not None:
        profiles.plan(plan, profile_dir, args.out is not None, args.force)
    cmp = build([args.a], [args.b], labels, args.alpha, args.min_effect, args.ci, gate, args.threshold,
                args.include_invalid, args.correction, args.decide_on)
    if profile_dir is not None:
        cmp.profile, files = profiles.compare(cmp.a, cmp.b, plan, programs, profile_dir)
        if json_path is not None:
            cmp.profile.json_dir = profiles.relative_to(profile_dir, json_path.parent)
        profiles.write(files, make_directory(profile_dir))
    text, data = to_markdown(cmp, show_all=args.all), cmp.to_dict()
    if builds is not None:
        text += _counts(builds, cmp, args.threshold, data)
    if json_path:
        write_json(json_path, data)
    if markdown_path:
        write_text(markdown_path, text)
    if not args.quiet:
        print(text, end="")
    history.record(args.history, [json_path] if json_path else [], "compare")
    if cmp.regressions:   # on stderr too, so that --quiet hides no failure
        raise ToolError("the gate failed: " + "; ".join(f"{r.name} {r.verdict} ({fmt_pct(r.change.change_pct)})"
                                                        for r in cmp.regressions), EXIT_FAILED)
    return cmp.exit_code


def _builds(args) -> dict[str, Path] | None:
    """--a-apiary and --b-apiary, checked before anything runs: both or neither, each an
    executable, and valgrind to count them."""
    if (args.a_apiary is None) != (args.b_apiary is None):
        raise ToolError("--a-apiary and --b-apiary go together: the count compares the two builds")
    if args.a_apiary is None:
        return None
    if shutil.which("valgrind") is None:
        raise ToolError("--a-apiary/--b-apiary: valgrind is not installed, so the builds cannot be counted "
                        "(scripts/install-deps.sh installs it)")
    return {"a": check_apiary(args.a_apiary, "--a-apiary"), "b": check_apiary(args.b_apiary, "--b-apiary")}


def _counts(builds: dict[str, Path], cmp, threshold_pct: float, data: dict) -> str:
    """Each build's replay counted as the gate counts it, in a directory of its own that goes
    when done: the section of the comparison (comparison.counts_section)."""
    say = stderr_line("compare")
    with tempfile.TemporaryDirectory(prefix="apiary-compare-") as work:
        counted = {cmp.a.label if label == "a" else cmp.b.label:
                   gate.count_side(label, binary, Path(work), gate.WORKLOAD, say) for label, binary in builds.items()}
    return counts_section(counted, cmp.decision, threshold_pct, data)


def main(argv: Sequence[str] | None = None) -> int:
    return run_main("compare", _main, argv)


if __name__ == "__main__":
    raise SystemExit(main())
