"""scripts/history: the results history, a database of every result the tools wrote, and the
change points of each metric over commits (docs/history.md).

    scripts/history ingest PATH...            results (files or directories, walked) into the history
    scripts/history list [--kind K] [--metric M] [--commit C] [--since TIME]
    scripts/history show ID
    scripts/history export --format csv|json [--out FILE]
    scripts/history detect [--metric M] [--config DIGEST] [--max-pvalue P] [--min-magnitude PCT]
    scripts/history trend --out FILE.html [--metric M] ...

Every subcommand takes --history PATH|URL (default $APIARY_HISTORY, else
results/history.sqlite), the option multirun, compare, ladder, soak and perf-gate take too
(history.py, which they import: the option and their ingestion, without this module's
libraries).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Engine

from ... import history_db as db
from ... import history_detect as detect_mod
from ... import metrics as metrics_mod
from ...common import EXIT_OK, Parser, ToolError, fmt_number, percent, probability, run_main, shown, utc_time
from ...history import add_history_option
from ...history_ingest import KINDS, ingest_paths
from ...outputs import Outputs, write_text

# ---- subcommands ------------------------------------------------------------------------------

def _ingest(engine: Engine, args) -> int:
    added, skipped = ingest_paths(engine, [Path(p) for p in args.paths],
                                  lambda m: print(f"history: {m}", file=sys.stderr))
    for line in skipped:
        print(f"history: skipped {line}", file=sys.stderr)
    print(f"history: {len(added)} result(s) added to {db.shown_target(args.history)}; {len(skipped)} file(s) skipped",
          file=sys.stderr)
    return EXIT_OK


def _filters(args) -> db.Filters:
    return db.Filters(kind=getattr(args, "kind", None), metric=getattr(args, "metric", None),
                      commit=getattr(args, "commit", None), since=getattr(args, "since", None),
                      config=getattr(args, "config", None),
                      include_invalid=getattr(args, "include_invalid", True))


def _list(engine: Engine, args) -> int:
    with engine.connect() as conn:
        rows = db.select_results(conn, _filters(args))
        values = db.metrics_of(conn, [r["id"] for r in rows]) if args.metric else {}
    header = ["id", "kind", "commit", "config", "machine", "time", "label", "valid"]
    table = [header + ([args.metric] if args.metric else [])]
    for r in rows:
        line = [str(r["id"]), r["kind"], r["commit"] or "-", (r["config_digest"] or "-")[:10], r["machine"] or "-",
                r["time"] or "-", r["label"] or "-", "yes" if r["valid"] else "no"]
        if args.metric:
            line.append(fmt_number(values[r["id"]].get(args.metric)))
        table.append(line)
    widths = [max(len(row[i]) for row in table) for i in range(len(header) + bool(args.metric))]
    for row in table:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    return EXIT_OK


def _result(conn, rid: int) -> dict[str, Any]:
    rows = db.select_results(conn, db.Filters(result_id=rid))
    if not rows:
        raise ToolError(f"no result {rid} in the history")
    r = rows[0]
    r["environment"] = json.loads(r["environment"] or "{}")
    r["validity_reasons"] = json.loads(r["validity_reasons"] or "[]")
    r["metrics"] = db.metrics_of(conn, [rid])[rid]
    return r


def _show(engine: Engine, args) -> int:
    with engine.connect() as conn:
        r = _result(conn, args.id)
        hists = db.histograms_of(conn, args.id)
    for key in ("id", "kind", "commit", "config_digest", "machine", "time", "source", "label", "valid",
                "validity_reasons", "ingested", "environment"):
        print(f"{key}: {r[key] if not isinstance(r[key], (dict, list)) else json.dumps(r[key], sort_keys=True)}")
    print(f"metrics ({len(r['metrics'])}):")
    for name in metrics_mod.ordered(r["metrics"]):
        print(f"  {name} = {fmt_number(r['metrics'][name])}")
    for stage, h in hists.items():
        total = sum(n for _, n in h["counts"])
        print(f"histogram {stage}: {total:,} transactions in {len(h['counts'])} bins "
              f"(axis {h['lowest_ns']:g}..{h['highest_ns']:g} ns, {h['bins']} bins)")
    return EXIT_OK


EXPORT_COLUMNS = ("id", "kind", "commit", "config_digest", "machine", "time", "source", "label", "valid")


def export_text(engine: Engine, fmt: str, f: db.Filters) -> str:
    with engine.connect() as conn:
        rows = db.select_results(conn, f)
        values = db.metrics_of(conn, [r["id"] for r in rows])
    if fmt == "json":
        out = [dict({k: r[k] for k in EXPORT_COLUMNS}, valid=bool(r["valid"]),
                    environment=json.loads(r["environment"] or "{}"),
                    validity_reasons=json.loads(r["validity_reasons"] or "[]"), metrics=values[r["id"]])
               for r in rows]
        return json.dumps(out, indent=1, sort_keys=True) + "\n"
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([*EXPORT_COLUMNS, "metric", "value"])
    for r in rows:
        for name in metrics_mod.ordered(values[r["id"]]):
            w.writerow([*(r[k] if k != "valid" else int(bool(r[k])) for k in EXPORT_COLUMNS), name,
                        repr(values[r["id"]][name])])
    return buf.getvalue()


def _export(engine: Engine, args) -> int:
    text = export_text(engine, args.format, _filters(args))
    if args.out:
        write_text(args.out, text)
        print(f"history: written to {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return EXIT_OK


def change_line(cp: detect_mod.ChangePoint) -> str:
    d = cp.to_dict()
    ci = "" if d["ci_low_pct"] is None else f" [{d['ci_low_pct']:+.1f}%, {d['ci_high_pct']:+.1f}%]"
    return (f"{d['metric']} ({d['kind']}, config {(d['config'] or '-')[:10]}): change at {d['commit']} "
            f"(after {d['previous_commit']}): {fmt_number(d['mean_before'])} -> {fmt_number(d['mean_after'])}, "
            f"{d['change_pct']:+.1f}%{ci} (95% Welch interval), p = {d['p_value']:.2g}; "
            f"{d['commits_before']} commits before, {d['commits_after']} after")


def _detect(engine: Engine, args) -> int:
    with engine.connect() as conn:
        series = detect_mod.build_series(conn, _filters(args))
    if not series:
        raise ToolError("no series in the history with these filters (results with a commit and the metric)")
    found = 0
    for s in series:
        for cp in detect_mod.detect(s, args.max_pvalue, args.min_magnitude):
            print(change_line(cp))
            found += 1
    print(f"history: {found} change point(s) in {len(series)} series", file=sys.stderr)
    return EXIT_OK


def _trend(engine: Engine, args) -> int:
    from . import trend as history_trend  # lazy for start-up time: matplotlib only for the page
    with engine.connect() as conn:
        series = detect_mod.build_series(conn, _filters(args))
    if not args.metric:
        series = [s for s in series if s.metric in history_trend.TREND_METRICS]
    if not series:
        raise ToolError("no series to draw with these filters (results with a commit and the metric)")
    points = {id(s): detect_mod.detect(s, args.max_pvalue, args.min_magnitude) for s in series}
    write_text(args.out, history_trend.page(series, points, db.shown_target(args.history)))
    print(f"history: {len(series)} series written to {args.out}", file=sys.stderr)
    return EXIT_OK


# ---- the command line -------------------------------------------------------------------------

def _positive_id(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{shown(text)}: expected a result id (a whole number from 1)")
    return int(text)


def _filter_options(p: argparse.ArgumentParser, detecting: bool) -> None:
    p.add_argument("--kind", choices=KINDS, help="only results of this kind")
    p.add_argument("--metric", metavar="NAME", help="only this metric (e.g. aggregates.cycle_us.avg, ir_per_tx)")
    p.add_argument("--config", metavar="DIGEST", help="only this configuration digest (a prefix will do)")
    if detecting:
        p.add_argument("--max-pvalue", type=probability, default=detect_mod.DEFAULT_MAX_PVALUE, metavar="P",
                       help=f"a change point's largest p-value (default {detect_mod.DEFAULT_MAX_PVALUE})")
        p.add_argument("--min-magnitude", type=percent, default=detect_mod.DEFAULT_MIN_MAGNITUDE_PCT, metavar="PCT",
                       help="a change point's smallest change of the mean, in percent (default 0)")
        p.add_argument("--include-invalid", action="store_true",
                       help="count results whose validity says invalid (default: left out)")
    else:
        p.add_argument("--commit", metavar="HASH", help="only results of this commit (a prefix will do)")
        p.add_argument("--since", type=utc_time, metavar="TIME",
                       help="only results from this UTC time on: YYYY-MM-DD[THH:MM[:SS]][Z] (e.g. 2026-11-01)")


def parser() -> Parser:
    p = Parser(prog="history", description=(
        "The results history: a SQLite file or a PostgreSQL database of every result the tools write\n"
        "(runs, multirun sets, comparisons, ladders, soaks, perf gates), their metrics and latency\n"
        "histograms, by commit, configuration and machine; and the change points of each metric over\n"
        "commits. docs/history.md explains."),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="""examples:
  scripts/history ingest results/                         every result under results/ (walked)
  scripts/history list --kind multirun --metric aggregates.cycle_us.avg
  scripts/history detect --metric ir_per_tx --min-magnitude 2
  scripts/history trend --out trend.html
  scripts/multirun --runs 5 --config configs/smoke.toml --history   ingests the set it wrote
  APIARY_HISTORY=postgresql://ci@db.example/apiary scripts/history list

every subcommand takes --history PATH|URL (default $APIARY_HISTORY, else results/history.sqlite);
`scripts/history COMMAND --help` lists its options.
exit status: 0 done, 1 the history cannot be opened, 2 bad usage.""")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=Parser)
    commands = {
        "ingest": "add results: report files, multirun/compare/ladder/soak directories, perf-gate results "
                  "(directories are walked; what is not a result, or did not complete, is named and skipped)",
        "list": "list the results", "show": "one result: its fields, metrics and histograms",
        "export": "every result's metrics as CSV or JSON",
        "detect": "change points of each metric over commits (apache-otava's E-Divisive)",
        "trend": "an HTML page of each metric over commits, its change points marked"}
    subs = {name: sub.add_parser(name, help=text, description=text) for name, text in commands.items()}
    for s in subs.values():
        add_history_option(s, always=True)
    subs["ingest"].add_argument("paths", nargs="+", metavar="PATH", help="result files or directories")
    _filter_options(subs["list"], False)
    subs["show"].add_argument("id", type=_positive_id, metavar="ID", help="the result's id (see list)")
    subs["export"].add_argument("--format", choices=("csv", "json"), required=True, help="csv: one row per metric")
    subs["export"].add_argument("--out", metavar="FILE", help="write here (default: standard output)")
    _filter_options(subs["export"], False)
    _filter_options(subs["detect"], True)
    _filter_options(subs["trend"], True)
    subs["trend"].add_argument("--out", metavar="FILE.html", required=True, help="the page to write")
    return p


COMMANDS = {"ingest": _ingest, "list": _list, "show": _show, "export": _export, "detect": _detect, "trend": _trend}


def _main(argv: Sequence[str]) -> int:
    args = parser().parse_args(argv)
    Outputs().file("--out", getattr(args, "out", None))   # before the history is opened: never onto it
    engine = db.open_history(args.history)
    try:
        return COMMANDS[args.command](engine, args)
    finally:
        engine.dispose()


def main(argv: Sequence[str] | None = None) -> int:
    return run_main("history", _main, argv)


if __name__ == "__main__":
    sys.exit(main())
