"""What the perf gate (this package's command) adds for CI (docs/ci.md): its result in the results history and the
check of the history's newest segment, and the reports a CI system shows: JUnit XML (one test
case per gated check) and a short Markdown summary for a merge request's comment.

The history check: the gate's count of this commit goes into the history ($APIARY_HISTORY or
--history), then change points are sought in the gate's series (instructions per transaction
of this workload, one value per commit; history_detect). The gate fails when the newest
commit's segment starts at a change point no more than --recent commits back and needs more
than the threshold more instructions per transaction than the segment before it: a
regression that crept in over several commits, each within the threshold against its parent,
is caught once the history shows the step. An older step has become the baseline.
"""

from __future__ import annotations

import os
import platform
import socket
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from ... import gate, history, kinds
from ...common import Parser, fmt_number, markdown_table, short_symbol, utc_iso, whole_number
from ...outputs import write_text

METRIC = "ir_per_tx"
DEFAULT_RECENT = 10


def describe(result: dict[str, Any], args, commit: str | None) -> None:
    """What the history keeps of a gate besides its counts: which commit, workload and machine."""
    result.update(kinds.PERF_GATE.stamp({
        "commit": commit, "time": utc_iso(), "machine": os.environ.get("APIARY_HOST") or socket.gethostname(),
        "environment": {"kernel": platform.release(), "arch": platform.machine()},
        "config": {"transactions": args.transactions, "accounts": args.accounts, "seed": args.seed,
                   "block_size": args.block_size}}))


def add_options(p: Parser) -> None:
    p.add_argument("--junit", metavar="PATH", help="also write a JUnit XML report here: one test case per check")
    p.add_argument("--markdown", metavar="PATH", help="also write a short Markdown summary here (for a merge "
                   "request's comment)")
    history.add_history_option(p, from_environment=True)
    p.add_argument("--recent", type=whole_number(1, 100_000), default=DEFAULT_RECENT, metavar="N",
                   help="with a history: fail on a change point at most N commits back whose newest segment needs "
                        f"more than the threshold more instructions (default {DEFAULT_RECENT})")


def history_target(args) -> str | None:
    """--history, or $APIARY_HISTORY when it is not given (history.add_history_option)."""
    return args.history


def check_history(target: str, result: dict[str, Any], source: str, threshold_pct: float,
                  recent: int) -> dict[str, Any]:
    """Ingests the measured result (from `source`: its --json, or a name) and checks the newest
    segment of its series: the check's record (`passed`, `message`, the change's figures), kept
    in the result as `history`."""
    from ... import history_db as db  # lazy for start-up time: the tables and the detection only with a history
    from ... import history_detect as detect_mod  # lazy for start-up time, as history_db
    from ...history_ingest import perf_gate_entries  # lazy for start-up time, as history_db
    entries = perf_gate_entries(Path(source), result)
    history.record_entries(target, entries, "perf-gate")
    engine = db.open_history(target)
    try:
        with engine.connect() as conn:
            found = detect_mod.build_series(conn, db.Filters(kind="perf-gate", metric=METRIC, include_invalid=False,
                                                             config=entries[0].config_digest))
    finally:
        engine.dispose()
    check: dict[str, Any] = {"history": db.shown_target(target), "recent": recent, "passed": True}
    series = found[0] if found else None
    if series is None or series.commits[-1] != result["commit"]:
        check["message"] = "this commit is not the newest of the gate's series in the history: not checked"
        return check
    points = detect_mod.detect(series, min_magnitude_pct=threshold_pct)
    check["commits"] = len(series.commits)
    last = points[-1] if points else None
    if last is None or len(series.commits) - last.index > recent:
        check["message"] = (f"no change point in the last {recent} of {len(series.commits)} commits "
                            "of the history")
        return check
    check["change"] = last.to_dict()
    pct = last.change.change_pct or 0.0
    check["passed"] = pct <= threshold_pct
    verb = "FAIL" if not check["passed"] else "pass"
    age = len(series.commits) - last.index
    check["message"] = (f"{verb}: the history's newest segment, from {last.commit[:10]} ({age} commits), needs "
                        f"{pct:+.2f}% instructions per transaction against the segment before it "
                        f"(threshold +{threshold_pct:g}%)")
    return check


# ---- JUnit XML and Markdown ----------------------------------------------------------------------

Case = tuple[str, str | None, str | None, str]


def _cases(result: dict[str, Any]) -> list[Case]:
    """(name, outcome: None passed / "failure" / "error" / "skipped", message, details) per check."""
    threshold = result.get("threshold_pct", 0)
    verdict = result.get("verdict")
    name = f"instructions per transaction against {result.get('base', 'the parent')} (threshold +{threshold:g}%)"
    cases: list[Case]
    if result.get("status") == "skipped":
        cases = [(name, "skipped", result.get("reason"), "")]
    elif verdict is None:
        cases = [(name, "error", result.get("reason", "nothing was measured"), "")]
    else:
        cases = [(name, None if verdict["passed"] else "failure", verdict["message"], verdict["message"])]
        for cost in gate.GATE_COSTS[1:]:
            v = result.get(cost.verdict_key)
            if v is not None:
                cases.append((f"{cost.words} per transaction against {result.get('base', 'the parent')} "
                              f"(threshold +{threshold:g}%)", None if v["passed"] else "failure", v["message"],
                              v["message"]))
    check = result.get("history")
    if check is not None:
        cases.append((f"change point at the head in the history (last {check['recent']} commits)",
                      None if check["passed"] else "failure", check["message"], check["message"]))
    return cases


def junit_xml(result: dict[str, Any]) -> str:
    cases = _cases(result)
    suite = ET.Element("testsuite", name="perf-gate", tests=str(len(cases)),
                       failures=str(sum(c[1] == "failure" for c in cases)),
                       errors=str(sum(c[1] == "error" for c in cases)),
                       skipped=str(sum(c[1] == "skipped" for c in cases)), timestamp=result.get("time", utc_iso()))
    for name, outcome, message, details in cases:
        case = ET.SubElement(suite, "testcase", classname="perf-gate", name=name)
        if outcome is not None:
            ET.SubElement(case, outcome, message=message or "").text = details or None
    root = ET.Element("testsuites")
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _moved_lines(result: dict[str, Any], top: int = 3) -> list[str]:
    lines = []
    for cost in gate.GATE_COSTS:
        rows = (result.get(cost.functions_key) or {}).get("self") or []
        lines += [f"- `{short_symbol(r['function'], 80)}`: {r['change_per_tx']:+,.1f} own {cost.words} per transaction"
                  for r in rows[:top]]
    return lines


def markdown(result: dict[str, Any]) -> str:
    status = result.get("status", "failed")
    failed = status == "failed" or not (result.get("history") or {}).get("passed", True)
    lines = [f"### perf-gate: {'FAILED' if failed else status}", ""]
    rows = []
    for cost in gate.GATE_COSTS:
        verdict, key = result.get(cost.verdict_key), cost.per_tx_key
        if verdict is not None:
            rows.append([f"{cost.words}, against the parent", fmt_number(verdict[f"parent_{key}"]),
                         fmt_number(verdict[f"current_{key}"]), f"{verdict['change_pct']:+.2f}%",
                         "passed" if verdict["passed"] else "**failed**"])
    change = (result.get("history") or {}).get("change")
    if change is not None:
        ci = "" if change["ci_low_pct"] is None else f" [{change['ci_low_pct']:+.1f}%, {change['ci_high_pct']:+.1f}%]"
        rows.append([f"history: segment from `{change['commit'][:10]}`", fmt_number(change["mean_before"]),
                     fmt_number(change["mean_after"]), f"{change['change_pct']:+.2f}%{ci}",
                     "passed" if result["history"]["passed"] else "**failed**"])
    if rows:
        lines.append(markdown_table(["per transaction", "before", "this commit", "change",
                                     f"threshold +{result.get('threshold_pct', 0):g}%"], rows))
    for note in (result.get("reason"), (result.get("history") or {}).get("message")):
        if note:
            lines.append(f"{note}\n")
    moved = _moved_lines(result)
    if moved:
        lines += ["Moved most per transaction:", "", *moved, ""]
    return "\n".join(lines).rstrip() + "\n"


def write_reports(result: dict[str, Any], junit: str | None, markdown_path: str | None) -> None:
    if junit:
        write_text(junit, junit_xml(result))
    if markdown_path:
        write_text(markdown_path, markdown(result))
