"""The results history as the other tools see it: the --history option (defined here once;
multirun, compare, ladder, soak, perf-gate and scripts/history bind it) and the ingestion of
what a tool wrote. The history's own command is commands/history (scripts/history); its tables
history_db.py and the ingestion history_ingest.py, imported only when a history is given, so
the tools start without SQLAlchemy. docs/history.md explains.

Floor: results. Thread safety: called by a command's main thread."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .common import REPO_ROOT, Parser, utc_iso
from .outputs import read_always

if TYPE_CHECKING:
    from .history_db import Entry

ENVIRONMENT_VARIABLE = "APIARY_HISTORY"
DEFAULT_HISTORY = REPO_ROOT / "results" / "history.sqlite"


def default_history() -> str:
    return os.environ.get(ENVIRONMENT_VARIABLE) or str(DEFAULT_HISTORY)


def add_history_option(p: Parser, always: bool = False, from_environment: bool = False) -> None:
    """--history PATH|URL: where results go. For the history tool itself it is always set;
    for the other tools it is optional, and given without a value it means the default (with
    `from_environment`, $APIARY_HISTORY stands for it when it is not given: the perf gate's).
    As the options are parsed, a malformed URL is refused and a history file becomes an input
    of every output check (outputs.read_always): no output replaces the history."""
    where = f"a SQLite file, or a postgresql:// URL (default ${ENVIRONMENT_VARIABLE}, else results/history.sqlite)"
    if always:
        p.add_argument("--history", default=default_history(), metavar="PATH|URL", help=f"the history: {where}")
    else:
        unset = (os.environ.get(ENVIRONMENT_VARIABLE) or None) if from_environment else None
        p.add_argument("--history", nargs="?", const=default_history(), default=unset, metavar="PATH|URL",
                       help=f"also ingest the result into the results history (scripts/history): {where}"
                            + (f"; ${ENVIRONMENT_VARIABLE} stands for it when it is not given" if from_environment
                               else ""))
    p.after_parsing(_note_history)


def _note_history(args: argparse.Namespace) -> None:
    """The history given checked (a malformed URL, a directory: one line naming --history) and,
    when it is a file, counted among the inputs of every output check."""
    target = args.history
    files: list[str] = []
    if target is not None:
        from . import history_db as db  # lazy for start-up time: SQLAlchemy only with a history
        if db.engine_url(target).startswith("sqlite:"):
            files.append(target)
    read_always("--history", files)


def record_entries(target: str, entries: Sequence[Entry], tool: str) -> None:
    """Results a tool made in memory (the perf gate's) into the history, in one transaction."""
    from . import history_db as db  # lazy for start-up time: SQLAlchemy only with a history
    engine = db.open_history(target)
    try:
        with db.writing(engine) as conn:
            added = [i for i in (db.insert(conn, e, utc_iso()) for e in entries) if i is not None]
    finally:
        engine.dispose()
    print(f"{tool}: {len(added)} result(s) ingested into the history {db.shown_target(target)}", file=sys.stderr)


def record(target: str | None, paths: Sequence[str | Path], tool: str) -> None:
    """What a tool calls after writing its result: ingests it when --history was given."""
    if target is None:
        return
    from . import history_db as db  # lazy for start-up time: SQLAlchemy only with a history
    from .history_ingest import ingest_paths  # lazy for start-up time, as history_db
    engine = db.open_history(target)
    try:
        added, skipped = ingest_paths(engine, [Path(p) for p in paths], lambda _: None)
    finally:
        engine.dispose()
    print(f"{tool}: {len(added)} result(s) ingested into the history {db.shown_target(target)}", file=sys.stderr)
    for line in skipped:
        print(f"{tool}: not ingested: {line}", file=sys.stderr)
