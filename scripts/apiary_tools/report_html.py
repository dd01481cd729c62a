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
import base64
import datetime
import html
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import markdown as markdown_lib

from . import compare, ladder, latency, multirun, plot, profiles, soak, sweep
from .common import EXIT_OK, Parser, ToolError, is_name, run_main
from .inputs import read_bytes
from .outputs import Outputs, write_text
from .reports import AGGREGATE_NAME, RunSet, is_aggregate, is_report, load_set, read_report_json

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 1400px;
       padding: 0 1rem; color: #1d1d1f; background: #fff; line-height: 1.45; }
h1 { font-size: 1.6rem; margin-bottom: 0.2rem; } h2 { margin-top: 2.2rem; border-bottom: 1px solid #ddd; }
.meta { color: #666; font-size: 0.9rem; }
table { border-collapse: collapse; margin: 0.8rem 0 1.2rem; font-size: 0.85rem; }
th, td { border: 1px solid #d0d0d0; padding: 0.25rem 0.55rem; }
th { background: #f3f4f6; } tr:nth-child(even) td { background: #fafafa; }
td:not(:first-child) { font-variant-numeric: tabular-nums; }
code { font-size: 0.85em; color: #555; } blockquote { color: #555; margin-left: 0; padding-left: 1rem;
                                                   border-left: 3px solid #ccc; }
figure { margin: 1rem 0; } figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { color: #666; font-size: 0.85rem; }
"""


# The largest flame graph a page embeds (inferno's of a long profile is a few MB).
MAX_SVG_BYTES = 64 << 20


@dataclass
class Page:
    """The page's sections in order: headings, rendered Markdown and embedded figures."""
    title: str
    subtitle: str
    parts: list[str] = field(default_factory=list)
    tool: str = "report-html"   # the tool that writes the page, named at its top

    def heading(self, text: str) -> None:
        self.parts.append(f"<h2>{html.escape(text)}</h2>")

    def markdown(self, text: str) -> None:
        self.parts.append(markdown_lib.markdown(text, extensions=["tables"]))

    def figure(self, draw: Callable[[Path], Any], caption: str) -> None:
        """Draws with one of the tools' own figure functions into a file, and embeds it."""
        with tempfile.TemporaryDirectory(prefix="apiary-html-") as tmp:
            path = Path(tmp) / "figure.png"
            drawn = draw(path)
            images = [base64.b64encode(Path(p).read_bytes()).decode("ascii")
                      for p in (drawn if isinstance(drawn, list) else [path])]
        for data in images:
            self.parts.append(f'<figure><img alt="{html.escape(caption)}" src="data:image/png;base64,{data}">'
                              f"<figcaption>{html.escape(caption)}</figcaption></figure>")

    def svg(self, path: Path, caption: str) -> None:
        """Embeds an SVG file (a flame graph) as an image, or says why it cannot."""
        try:
            data = read_bytes(path, "an SVG image", MAX_SVG_BYTES)
        except ToolError as e:
            self.parts.append(f"<p>{html.escape(caption)}: not shown ({html.escape(str(e))})</p>")
            return
        if b"<svg" not in data[:4096]:
            self.parts.append(f"<p>{html.escape(caption)}: not shown ({html.escape(path.name)} is not SVG)</p>")
            return
        encoded = base64.b64encode(data).decode("ascii")
        self.parts.append(f'<figure><img alt="{html.escape(caption)}" src="data:image/svg+xml;base64,{encoded}">'
                          f"<figcaption>{html.escape(caption)}</figcaption></figure>")

    def render(self) -> str:
        created = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
        return "\n".join([
            "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{html.escape(self.title)}</title><style>{STYLE}</style></head><body>",
            f"<h1>{html.escape(self.title)}</h1>",
            f'<p class="meta">{html.escape(self.subtitle)}; written {created} by scripts/{self.tool}</p>',
            *self.parts, "</body></html>", ""])


# ---- the pieces every kind shares ------------------------------------------------------------

def timeline(page: Page, series: Sequence[tuple[str, dict[str, Any]]]) -> None:
    series = [(label, report) for label, report in series if report][:plot.MAX_PANELS]
    if series:
        page.heading("Full block cycle per block")
        page.figure(lambda p: plot.cycle_over_run(series, p), "each measured block's full cycle, per run")


def latency_part(page: Page, sets: Sequence[tuple[str, RunSet]]) -> None:
    """The latency distribution of every set whose reports have histograms, merged per set."""
    pooled = [(label, latency.pooled(rs.latency_runs(), label)) for label, rs in sets if rs.latency_runs()]
    if pooled:
        page.heading("Transaction latency")
        page.figure(lambda p: plot.latency_figure(pooled, p),
                    "percentile distribution of each stage, the runs' histograms merged")


def run_flame_graph(page: Page, rs: RunSet) -> None:
    """The flame graph `apiary run --profile` drew of one run (the set's representative one)."""
    profiled = [run for run in rs.runs if run.report and run.report.get("profile")]
    if not profiled:
        return
    run = plot.representative(rs) if len(profiled) == len(rs.runs) else profiled[0]
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


def run_series(rs: RunSet, limit: int = plot.MAX_PANELS) -> list[tuple[str, dict[str, Any]]]:
    return [(Path(r.path or "?").stem, r.report) for r in rs.runs if r.report][:limit]


# ---- one builder per kind --------------------------------------------------------------------

def build_run(path: Path) -> Page:
    rs = load_set([path], path.stem)
    ctx = rs.context
    page = Page(f"apiary run: {rs.runs[0].full_report().get('name', path.stem)}",
                f"{path}; commit {ctx.get('commit', '?')}, host {ctx.get('hostname', '?')}")
    page.heading("Summary")
    page.markdown(multirun.summary_markdown(multirun.aggregate(rs), show_all=False, heading="###"))
    timeline(page, run_series(rs))
    page.figure(lambda p: plot.cycle_histogram(run_series(rs), p), "distribution of the full block cycle")
    latency_part(page, [(rs.label, rs)])
    run_flame_graph(page, rs)
    return page


def build_multirun(directory: Path) -> Page:
    rs = load_set([directory], directory.name)
    page = Page(f"apiary multirun: {directory.name}", f"{directory}; {rs.n} runs")
    page.heading("Summary")
    page.markdown(multirun.summary_markdown(multirun.aggregate(rs), show_all=False, heading="###"))
    timeline(page, run_series(rs))
    latency_part(page, [(rs.label, rs)])
    run_flame_graph(page, rs)
    return page


def build_ab(directory: Path) -> Page:
    saved = compare.load(directory / "comparison.json")
    labels = [saved["a"]["label"], saved["b"]["label"]]
    cmp = compare.build([str(directory / labels[0])], [str(directory / labels[1])], labels, saved["alpha"],
                        saved["min_effect_pct"], saved["ci_method"], saved["gate"]["metrics"])
    if saved.get("profile"):
        cmp.profile = profiles.ProfileComparison.from_dict(saved["profile"], labels[0], labels[1])
    page = Page(f"apiary A/B: {labels[1]} against {labels[0]}", f"{directory}; {cmp.a.n} and {cmp.b.n} runs")
    page.heading("Verdicts")
    page.markdown(compare.to_markdown(cmp, heading="###"))
    for rs in (cmp.a, cmp.b):
        page.heading(f"{rs.label}")
        page.markdown(multirun.summary_markdown(multirun.aggregate(rs), show_all=False, heading="###"))
    shown = [(rs.label, plot.representative(rs)) for rs in (cmp.a, cmp.b)]
    timeline(page, [(f"{label}: {Path(run.path or '?').stem}", run.full_report()) for label, run in shown])
    latency_part(page, [(cmp.a.label, cmp.a), (cmp.b.label, cmp.b)])
    ab_flame_graphs(page, directory, saved)
    return page


def build_sweep(directory: Path) -> Page:
    data = plot.load_sweep(directory / sweep.SWEEP_NAME)
    page = Page(f"apiary sweep of --{data['param']}", f"{directory}; values {', '.join(data['values'])}")
    page.markdown(sweep.table_markdown(data, heading="##"))
    page.heading("Figures")
    page.figure(lambda p: plot.plot_sweep_dir(directory / sweep.SWEEP_NAME, p.parent / p.stem),
                "the cycle and the cost per transaction against the value; one run per value, block by block")
    sets = []
    for point in data["points"]:
        if point.get("n"):
            sets.append((point["value"], load_set([directory / point["dir"]], point["value"])))
    latency_part(page, sets)
    return page


def build_ladder(directory: Path) -> Page:
    data = ladder.load(directory / "ladder.json")
    meta, steps = data["meta"], data["steps"]
    page = Page(f"apiary ladder ({meta['mode']} mode)", f"{directory}; {meta['machine']}")
    page.markdown(ladder.to_markdown(steps, meta))
    page.figure(lambda p: ladder.plot(steps, p, f"apiary ladder ({meta['mode']})"),
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
    analysis = soak.load_analysis(directory / "soak.json")
    report_path = directory / "report.json"
    page = Page("apiary soak", f"{directory}; {analysis.get('blocks', '?')} blocks")
    page.markdown(soak.to_markdown(analysis))
    page.figure(lambda p: soak.plot(analysis, p),
                "memory, state, cycle and resource credits over the run, from its interval log")
    if report_path.is_file():  # a run that crashed left only its interval log
        latency_part(page, [("soak", load_set([report_path], "soak"))])
    return page


BUILDERS: dict[str, Callable[[Path], Page]] = {
    "run": build_run, "multirun": build_multirun, "a/b": build_ab, "sweep": build_sweep, "ladder": build_ladder,
    "soak": build_soak}


def detect(path: Path) -> tuple[str, Path]:
    """Which kind of output `path` is, and the file or directory its builder takes."""
    if not path.exists():
        raise ToolError(f"{path}: no such file or directory")
    if not path.is_file() and not path.is_dir():
        raise ToolError(f"{path}: not a regular file or a directory")
    if path.is_file():
        data = read_report_json(path)
        if is_report(data):
            return "run", path
        if is_aggregate(data):
            return "multirun", path.parent
        names = {sweep.SWEEP_NAME: "sweep", "ladder.json": "ladder", "soak.json": "soak", "comparison.json": "a/b"}
        if path.name in names:
            return names[path.name], path.parent
        raise ToolError(f"{path}: not a run report, an {AGGREGATE_NAME}, a sweep.json, a ladder.json, a soak.json "
                        "or a comparison.json")
    for name, kind in ((sweep.SWEEP_NAME, "sweep"), ("ladder.json", "ladder"), ("soak.json", "soak"),
                       ("comparison.json", "a/b")):
        if (path / name).is_file():
            return kind, path
    if (path / AGGREGATE_NAME).is_file() or any(is_report(read_report_json(p)) for p in path.glob("*.json")):
        return "multirun", path
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
    page = BUILDERS[kind](source)
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
                   "(or its aggregate.json, sweep.json, ladder.json, soak.json or comparison.json)")
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
