"""report-html: one self-contained HTML page for what a tool wrote, to open in any browser.

It takes a run report (`apiary run --report`), a multirun directory (one set, or an A/B with
its comparison), a sweep, a ladder or a soak directory, and writes one HTML file with
everything inside it: the tool's own tables (the Markdown it writes, rendered), the per-block
cycle timeline, the latency distribution when the reports have latency histograms (schema 2),
the A/B verdicts, the counters per transaction (`apiary run --counters on`) and the flame
graphs of profiled runs: a run's own, and for an A/B compared with --profile each side's and
the differential one. The figures are the ones `scripts/plot`, the ladder and the soak draw,
embedded as PNG, and inferno's flame graphs, embedded as SVG images (an image runs none of
their script: the interactive files are beside the comparison); the page loads nothing from
anywhere and runs no script.

Exit status: 0 written, 2 bad input.
"""

from __future__ import annotations

import argparse
import html
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .. import comparison, deciding, figures, kinds, ladders, latency, profiles, soaks, sweeps
from ..aggregates import aggregate, summary_markdown
from ..common import EXIT_OK, Parser, ToolError, is_name, run_main
from ..outputs import Outputs, write_text
from ..pages import Page
from ..reports import AGGREGATE_NAME, RunSet, is_report, load_set, read_report_json

# ---- the pieces every kind shares ------------------------------------------------------------

def timeline(page: Page, series: Sequence[tuple[str, dict[str, Any]]]) -> None:
    series = [(label, report) for label, report in series if report][:figures.MAX_PANELS]
    if series:
        page.heading("Full block cycle per block")
        page.figure(lambda p: figures.cycle_over_run(series, p), "each measured block's full cycle, per run")


def latency_part(page: Page, sets: Sequence[tuple[str, RunSet]]) -> None:
    """The latency distribution of every set whose reports have histograms, merged per set."""
    pooled = [(label, latency.pooled(rs.latency_runs(), label)) for label, rs in sets if rs.latency_runs()]
    if pooled:
        page.heading("Transaction latency")
        page.figure(lambda p: figures.latency_figure(pooled, p),
                    "percentile distribution of each stage, the runs' histograms merged")


def run_flame_graph(page: Page, rs: RunSet) -> None:
    """The flame graph `apiary run --profile` drew of one run (the set's representative one)."""
    profiled = [run for run in rs.runs if run.report and run.report.get("profile")]
    if not profiled:
        return
    run = figures.representative(rs) if len(profiled) == len(rs.runs) else profiled[0]
    page.heading("Profile")
    try:
        directory = profiles.profile_dir(run)
    except ToolError as e:
        page.parts.append(f"<p>not shown: {html.escape(str(e))}</p>")
        return
    page.svg(directory / "flamegraph.svg", f"{Path(run.path or '?').stem}: where the measured window's samples "
             "went, all threads (apiary run --profile)")


def ab_flame_graphs(page: Page, directory: Path, saved: dict[str, Any]) -> None:
    """The flame graphs `compare --profile` (or `multirun --profile`) wrote beside the comparison."""
    profile = saved.get("profile")
    if not profile:
        return
    page.heading("Profiles: B against A")
    given = profile.get("dir", ".")
    if given != "." and not all(is_name(part) for part in given.split("/")):   # as every path a tool file names
        page.parts.append(f"<p>The flame graphs are in {html.escape(given)}, outside the comparison's directory: "
                          "not embedded.</p>")
        return
    where, files = directory / given, profile["files"]
    page.svg(where / files["diff_svg"], f"{saved['b']['label']} against {saved['a']['label']}: widths from B's "
             "samples; red where B has more of them than A, blue where fewer")
    for side in ("a", "b"):
        page.svg(where / files[f"{side}_svg"], f"{side.upper()}: {saved[side]['label']}, its runs' samples summed")


def run_series(rs: RunSet, limit: int = figures.MAX_PANELS) -> list[tuple[str, dict[str, Any]]]:
    return [(Path(r.path or "?").stem, r.report) for r in rs.runs if r.report][:limit]


# ---- one builder per kind --------------------------------------------------------------------

def build_run(path: Path) -> Page:
    rs = load_set([path], path.stem)
    ctx = rs.context
    page = Page(f"apiary run: {rs.runs[0].full_report().get('name', path.stem)}",
                f"{path}; commit {ctx.get('commit', '?')}, host {ctx.get('hostname', '?')}")
    page.heading("Summary")
    page.markdown(summary_markdown(aggregate(rs), show_all=False, heading="###"))
    timeline(page, run_series(rs))
    page.figure(lambda p: figures.cycle_histogram(run_series(rs), p), "distribution of the full block cycle")
    latency_part(page, [(rs.label, rs)])
    run_flame_graph(page, rs)
    return page


def build_multirun(directory: Path) -> Page:
    rs = load_set([directory], directory.name)
    page = Page(f"apiary multirun: {directory.name}", f"{directory}; {rs.n} runs")
    page.heading("Summary")
    page.markdown(summary_markdown(aggregate(rs), show_all=False, heading="###"))
    timeline(page, run_series(rs))
    latency_part(page, [(rs.label, rs)])
    run_flame_graph(page, rs)
    return page


def build_ab(directory: Path) -> Page:
    saved = kinds.COMPARISON.read(directory / kinds.COMPARISON.file)
    labels = [saved["a"]["label"], saved["b"]["label"]]
    # A gate that was the deciding metric is decided again (the same runs decide the same way);
    # one from before there was a deciding metric, or --fail-on's, is the gate as saved.
    decided = saved["gate"].get("decided", False) and saved.get("decision")
    cmp = comparison.build([str(directory / labels[0])], [str(directory / labels[1])], labels, saved["alpha"],
                           saved["min_effect_pct"], saved["ci_method"], None if decided else saved["gate"]["metrics"],
                           correction=saved.get("multiplicity", {}).get("method", "none"),
                           decide_on=saved["decision"]["setting"] if decided else deciding.AUTO)
    if saved.get("profile"):
        cmp.profile = profiles.ProfileComparison.from_dict(saved["profile"], labels[0], labels[1])
    page = Page(f"apiary A/B: {labels[1]} against {labels[0]}", f"{directory}; {cmp.a.n} and {cmp.b.n} runs")
    page.heading("Verdicts")
    page.markdown(comparison.to_markdown(cmp, heading="###"))
    for rs in (cmp.a, cmp.b):
        page.heading(f"{rs.label}")
        page.markdown(summary_markdown(aggregate(rs), show_all=False, heading="###"))
    shown = [(rs.label, figures.representative(rs)) for rs in (cmp.a, cmp.b)]
    timeline(page, [(f"{label}: {Path(run.path or '?').stem}", run.full_report()) for label, run in shown])
    latency_part(page, [(cmp.a.label, cmp.a), (cmp.b.label, cmp.b)])
    ab_flame_graphs(page, directory, saved)
    return page


def build_sweep(directory: Path) -> Page:
    data = kinds.SWEEP.read(directory / kinds.SWEEP.file)
    page = Page(f"apiary sweep of --{data['param']}", f"{directory}; values {', '.join(data['values'])}")
    page.markdown(sweeps.table_markdown(data, heading="##"))
    page.heading("Figures")
    page.figure(lambda p: sweeps.plot_sweep_dir(directory / kinds.SWEEP.file, p.parent / p.stem),
                "the cycle and the cost per transaction against the value; one run per value, block by block")
    sets = []
    for point in data["points"]:
        if point.get("n"):
            sets.append((point["value"], load_set([directory / point["dir"]], point["value"])))
    latency_part(page, sets)
    return page


def build_ladder(directory: Path) -> Page:
    data = kinds.LADDER.read(directory / kinds.LADDER.file)
    meta, steps = data["meta"], data["steps"]
    page = Page(f"apiary ladder ({meta['mode']} mode)", f"{directory}; {meta['machine']}")
    page.markdown(ladders.to_markdown(steps, meta))
    page.figure(lambda p: ladders.plot(steps, p, f"apiary ladder ({meta['mode']})"),
                "each step's full cycle with its 95% CI, and the writer-loop breakdown")
    sets = []
    for step in steps:
        paths = [directory / r["path"] for r in data.get("runs", [])
                 if r.get("label") == f"step{step['step']}" and r.get("status") == "completed"
                 and (directory / r["path"]).is_file()]
        if paths:
            sets.append((step["name"], load_set(paths, step["name"])))
    timeline(page, [(label, rs.runs[0].full_report()) for label, rs in sets])
    latency_part(page, sets)
    return page


def build_soak(directory: Path) -> Page:
    analysis = kinds.SOAK.read(directory / kinds.SOAK.file)
    report_path = directory / soaks.RUN_REPORT
    page = Page("apiary soak", f"{directory}; {analysis.get('blocks', '?')} blocks")
    page.markdown(soaks.to_markdown(analysis))
    page.figure(lambda p: soaks.plot(analysis, p),
                "memory, state, cycle and resource credits over the run, from its interval log")
    if report_path.is_file():  # a run that crashed left only its interval log
        latency_part(page, [("soak", load_set([report_path], "soak"))])
    return page


# The page of each kind of result; a directory is recognised by the first of these files it holds.
BUILDERS: dict[kinds.Kind, Callable[[Path], Page]] = {
    kinds.RUN: build_run, kinds.MULTIRUN: build_multirun, kinds.SWEEP: build_sweep, kinds.LADDER: build_ladder,
    kinds.SOAK: build_soak, kinds.COMPARISON: build_ab}
# The result files that name their directory's kind (an aggregate.json is read as any multirun is).
DIRECTORY_KINDS = tuple(kind for kind in BUILDERS if kind.file and kind is not kinds.MULTIRUN)
RESULT_FILES = [kind.file for kind in DIRECTORY_KINDS]


def detect(path: Path) -> tuple[str, Path]:
    """Which kind of output `path` is (its kinds.Kind name), and the file or directory its
    builder takes."""
    if not path.exists():
        raise ToolError(f"{path}: no such file or directory")
    if not path.is_file() and not path.is_dir():
        raise ToolError(f"{path}: not a regular file or a directory")
    if path.is_file():
        data = read_report_json(path)
        if kinds.RUN.is_one(data):
            return kinds.RUN.name, path
        if kinds.MULTIRUN.is_one(data):
            return kinds.MULTIRUN.name, path.parent
        for kind in DIRECTORY_KINDS:
            if path.name == kind.file:
                return kind.name, path.parent
        raise ToolError(f"{path}: not a run report, an {AGGREGATE_NAME}, a {', a '.join(RESULT_FILES[:-1])} "
                        f"or a {RESULT_FILES[-1]}")
    for kind in DIRECTORY_KINDS:
        if (path / kind.file).is_file():
            return kind.name, path
    if (path / AGGREGATE_NAME).is_file() or any(is_report(read_report_json(p)) for p in path.glob("*.json")):
        return kinds.MULTIRUN.name, path
    raise ToolError(f"{path}: no report, multirun, sweep, ladder or soak output in this directory")


def files_read(source: Path) -> list[Path]:
    """What a builder may read of `source`: the file, or every file in the directory and in its
    directories (an A/B's sides, a sweep's values)."""
    if not source.is_dir():
        return [source]
    return [p for p in (*source.iterdir(), *source.glob("*/*")) if p.is_file()]


def write_page(path: Path, out: str | os.PathLike | None = None) -> Path:
    kind, source = detect(path)
    default = source / "report.html" if source.is_dir() else source.with_suffix(".html")
    target = os.fspath(out) if out is not None else str(default)   # as given: `DIR/` names a directory
    Outputs().read("PATH", files_read(source)).file("--out", target)
    page = {k.name: build for k, build in BUILDERS.items()}[kind](source)
    write_text(target, page.render())
    return Path(target)


def parser() -> Parser:
    p = Parser(
        prog="report-html",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Write one self-contained HTML page (figures embedded, nothing loaded from the network) for "
                    "a run report, a multirun directory (one set or an A/B), a sweep, a ladder or a soak: the "
                    "tools' tables, the per-block cycle timeline, the latency distribution (reports of "
                    "schema_version 2) and the A/B verdicts.",
        epilog="""examples:
  scripts/report-html results/run.json                 writes results/run.html
  scripts/report-html results/multirun-20260101T000000Z  writes .../report.html
  scripts/report-html results/ladder-quick-20260101T000000Z --out ladder.html

exit status: 0 written, 2 bad input.""")
    p.add_argument("path", metavar="PATH", help="a report, or a multirun, sweep, ladder or soak directory "
                   f"(or its {AGGREGATE_NAME}, {', '.join(RESULT_FILES[:-1])} or {RESULT_FILES[-1]})")
    p.add_argument("--out", metavar="FILE",
                   help="where to write the page (default: report.html in the directory, or the report's "
                        "name with .html)")
    return p


def _main(argv: Sequence[str]) -> int:
    args = parser().parse_args(argv)
    target = write_page(Path(args.path), args.out)
    print(f"report-html: {target}")
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    return run_main("report-html", _main, argv)


if __name__ == "__main__":
    raise SystemExit(main())
