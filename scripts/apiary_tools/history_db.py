"""The results history's database: where it is, its tables, their migrations, and the reads
and writes the history tool makes (SQLAlchemy Core; docs/history.md).

A history is a SQLite file (a path) or a PostgreSQL database (a `postgresql://` URL, reached
through psycopg 3). Its tables:
- `schema_version`: one row, the version of the tables (the number of migrations applied);
- `results`: one row per ingested result (a run, a multirun side, a comparison, a ladder
  step, a soak, a perf gate): its kind, commit, configuration digest, machine, environment
  (JSON), time, source, label, and whether it is valid (and why not);
- `metrics`: the result's scalar metrics as (name, value) rows;
- `histograms` and `histogram_bins`: a result's latency histograms (axis, then nonzero bins).

MIGRATIONS is the ordered list of steps from an empty database; opening a history applies
the ones it lacks in one transaction, so an older history is brought up to date as it is
opened and a failed step leaves it as it was.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from .common import ToolError, shown
from .schemas import MAX_BINS, stage_problem

meta = sa.MetaData()
schema_version = sa.Table("schema_version", meta, sa.Column("version", sa.Integer, nullable=False))
results = sa.Table(
    "results", meta,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("kind", sa.String(32), nullable=False),
    sa.Column("commit", sa.String(80)),
    sa.Column("config_digest", sa.String(64)),
    sa.Column("machine", sa.Text),
    sa.Column("environment", sa.Text),          # JSON
    sa.Column("time", sa.String(40)),           # ISO 8601, UTC
    sa.Column("source", sa.Text, nullable=False),
    sa.Column("label", sa.Text, nullable=False, server_default=""),
    sa.Column("valid", sa.Boolean, nullable=False, server_default=sa.true()),
    sa.Column("validity_reasons", sa.Text),     # JSON list; version 2
    sa.Column("ingested", sa.String(40), nullable=False),
    sa.UniqueConstraint("kind", "source", "label", name="results_source"),
)
metrics = sa.Table(
    "metrics", meta,
    sa.Column("result_id", sa.Integer, sa.ForeignKey("results.id", ondelete="CASCADE"), nullable=False),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("value", sa.Float, nullable=False),
    sa.PrimaryKeyConstraint("result_id", "name"),
)
sa.Index("metrics_name", metrics.c.name)
histograms = sa.Table(
    "histograms", meta,
    sa.Column("result_id", sa.Integer, sa.ForeignKey("results.id", ondelete="CASCADE"), nullable=False),
    sa.Column("stage", sa.String(40), nullable=False),
    sa.Column("lowest_ns", sa.Float, nullable=False),
    sa.Column("highest_ns", sa.Float, nullable=False),
    sa.Column("bins", sa.Integer, nullable=False),
    sa.PrimaryKeyConstraint("result_id", "stage"),
)
histogram_bins = sa.Table(
    "histogram_bins", meta,
    sa.Column("result_id", sa.Integer, nullable=False),
    sa.Column("stage", sa.String(40), nullable=False),
    sa.Column("bin", sa.Integer, nullable=False),      # -1 below the axis, `bins` above it
    sa.Column("count", sa.BigInteger, nullable=False),
    sa.PrimaryKeyConstraint("result_id", "stage", "bin"),
    sa.ForeignKeyConstraint(["result_id", "stage"], ["histograms.result_id", "histograms.stage"],
                            ondelete="CASCADE"),
)

_VERSION_1_RESULTS = [c.name for c in results.columns if c.name != "validity_reasons"]


def _migration_1(conn: Connection) -> None:
    """The results and their metrics."""
    schema_version.create(conn)
    columns = [c._copy() for c in results.columns if c.name in _VERSION_1_RESULTS]
    v1 = sa.Table("results", sa.MetaData(), *columns, sa.UniqueConstraint("kind", "source", "label",
                                                                         name="results_source"))
    v1.create(conn)
    metrics.create(conn)   # with its index on the name


def _migration_2(conn: Connection) -> None:
    """Why a result is invalid, and the latency histograms."""
    conn.execute(sa.text("ALTER TABLE results ADD COLUMN validity_reasons TEXT"))
    histograms.create(conn)
    histogram_bins.create(conn)


MIGRATIONS: tuple[Callable[[Connection], None], ...] = (_migration_1, _migration_2)
VERSION = len(MIGRATIONS)


def engine_url(target: str | Path) -> str:
    """The SQLAlchemy URL of a history: a path is a SQLite file, a postgresql:// URL goes
    through psycopg 3."""
    text = str(target)
    m = re.match(r"^(postgres(?:ql)?)(\+[a-z0-9]+)?://", text)
    if m:
        if m.group(2) not in (None, "+psycopg"):
            raise ToolError(f"--history {shown_target(text)}: only the psycopg driver is supported (postgresql://...)")
        url = "postgresql+psycopg://" + text[m.end():]
        if why := _url_problem(url):
            raise ToolError(f"--history {shown_target(text)}: {why}; expected "
                            "postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE (or ?host=SOCKET_DIRECTORY)")
        return url
    if re.match(r"^[a-z][a-z0-9+.-]*://", text):
        raise ToolError(f"--history {shown_target(text)}: a file path or a postgresql:// URL, not another scheme")
    path = Path(text)
    if path.is_dir():
        raise ToolError(f"--history {shown(text)}: a directory, not a database file")
    return f"sqlite:///{path}"


# A host as libpq takes it: a name, an IPv4 or a bracketed IPv6 address, or (as ?host=) a socket directory.
_HOST = re.compile(r"^([A-Za-z0-9_.-]+|\[[0-9A-Fa-f:.]+\]|[0-9A-Fa-f:]+|/[^\0]*)$")


def _url_problem(url: str) -> str | None:
    """What is wrong with a postgresql:// URL before anything connects: unreadable, no host,
    a host that is no host name, a port that is no port."""
    try:
        parsed = sa.engine.make_url(url)
    except (sa.exc.ArgumentError, ValueError):
        return "not a URL (a port that is no number?)"
    query_host = parsed.query.get("host")
    host = parsed.host or (query_host if isinstance(query_host, str) else None)
    if not host:
        return "no host"
    if not _HOST.match(host):
        return f"the host {shown(host, 40)} is no host name"
    if parsed.port is not None and not 1 <= parsed.port <= 65535:
        return f"the port {parsed.port} is not from 1 to 65535"
    return None


def shown_target(target: str | Path) -> str:
    """The history as messages name it: a URL's password hidden."""
    text = str(target)
    if "://" not in text:
        return shown(text)
    try:
        return shown(sa.engine.make_url(text).render_as_string(hide_password=True))
    except (sa.exc.ArgumentError, ValueError):
        return "the URL given"


def current_version(conn: Connection) -> int:
    if not sa.inspect(conn).has_table("schema_version"):
        if sa.inspect(conn).get_table_names():
            raise ToolError("the database has tables but no schema_version: not an apiary history")
        return 0
    row = conn.execute(sa.select(schema_version.c.version)).first()
    return int(row[0]) if row else 0


def migrate(engine: Engine, upto: int = VERSION) -> int:
    """Applies the migrations the database lacks, up to `upto`, in one transaction; its
    version afterwards. A history already up to date is only read (it may be read-only)."""
    with engine.connect() as conn:
        version = current_version(conn)
    if version < upto:
        with writing(engine) as conn:
            version = current_version(conn)   # again: another process may have migrated it meanwhile
            if version < upto:
                for step in MIGRATIONS[version:upto]:
                    step(conn)
                conn.execute(sa.delete(schema_version))
                conn.execute(sa.insert(schema_version).values(version=upto))
                version = upto
    if version > VERSION:
        raise ToolError(f"the history is of schema version {version}, newer than this tool's {VERSION}: "
                        "update apiary's scripts")
    return version


# How long a SQLite history's writer waits for another process's transaction to end.
SQLITE_WAIT_S = 60.0
_WRITING = "apiary_writing"


def _sqlite_connect(dbapi_connection: Any, _record: Any) -> None:
    dbapi_connection.isolation_level = None   # transactions begin as _sqlite_begin says, not by the driver
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _sqlite_begin(conn: Connection) -> None:
    """A writing transaction takes the database's write lock when it begins (BEGIN IMMEDIATE):
    two processes that ingest at once take turns, each reading what the other wrote before it
    checks what is already there; a reading one takes no lock."""
    conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get(_WRITING) else "BEGIN")


def writing(engine: Engine) -> Any:
    """A transaction that writes: `with writing(engine) as conn:`."""
    return engine.execution_options(**{_WRITING: True}).begin()


def _as_tool_error(target: str | Path) -> Callable[[Any], None]:
    """Every database error but a unique key's (insert's to handle) as one line naming the
    history, exit 1: a full disk, a read-only file or directory, a server that does not answer."""
    def handle(context: Any) -> None:
        e = context.sqlalchemy_exception
        if not isinstance(e, sa.exc.IntegrityError):
            raise ToolError(f"--history {shown_target(target)}: {_why(context.original_exception)}", 1)
    return handle


def open_history(target: str | Path, upto: int = VERSION) -> Engine:
    """The history's engine, its tables brought up to date (created when it is new). Its
    errors are ToolErrors naming the history (_as_tool_error)."""
    url = engine_url(target)
    sqlite = url.startswith("sqlite:")
    if sqlite:
        path = Path(str(target))
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise ToolError(f"--history {shown(str(target))}: cannot make its directory ({e.strerror})") from None
    try:
        engine = sa.create_engine(url, connect_args={"timeout": SQLITE_WAIT_S} if sqlite else {})
    except (sa.exc.ArgumentError, ImportError, ValueError) as e:
        raise ToolError(f"--history {shown_target(target)}: {' '.join(str(e).split())}") from None
    sa.event.listen(engine, "handle_error", _as_tool_error(target))
    if sqlite:
        sa.event.listen(engine, "connect", _sqlite_connect)
        sa.event.listen(engine, "begin", _sqlite_begin)
    try:
        migrate(engine, upto)
    except BaseException:
        engine.dispose()
        raise
    return engine


def _why(e: BaseException) -> str:
    orig = getattr(e, "orig", None)
    return " ".join(str(orig or e).split()) or type(e).__name__


# ---- writing --------------------------------------------------------------------------------

@dataclass
class Entry:
    """One result as it goes into the history."""
    kind: str
    source: str
    label: str = ""
    commit: str | None = None
    config_digest: str | None = None
    machine: str | None = None
    environment: dict[str, Any] = field(default_factory=dict)
    time: str | None = None
    valid: bool = True
    reasons: list[str] = field(default_factory=list)
    metrics: dict[str, float] = field(default_factory=dict)
    # stage: ((lowest_ns, highest_ns, bins), [(bin, count), ...])
    histograms: dict[str, tuple[tuple[float, float, int], list[tuple[int, int]]]] = field(default_factory=dict)


def insert(conn: Connection, entry: Entry, ingested: str) -> int | None:
    """Adds the entry; None when a result of that kind, source and label is already there
    (also when another process added it since this one looked: its row is kept, this one's
    left out, as the two are the same result)."""
    key = (results.c.kind == entry.kind) & (results.c.source == entry.source) & (results.c.label == entry.label)
    if conn.execute(sa.select(results.c.id).where(key)).first():
        return None
    row = {"kind": entry.kind, "commit": entry.commit, "config_digest": entry.config_digest,
           "machine": entry.machine, "environment": json.dumps(entry.environment, sort_keys=True),
           "time": entry.time, "source": entry.source, "label": entry.label, "valid": entry.valid,
           "validity_reasons": json.dumps(entry.reasons), "ingested": ingested}
    try:
        with conn.begin_nested():
            key_row = conn.execute(sa.insert(results).values(**row)).inserted_primary_key
    except sa.exc.IntegrityError:
        return None
    assert key_row is not None
    rid = int(key_row[0])
    if entry.metrics:
        conn.execute(sa.insert(metrics), [{"result_id": rid, "name": k, "value": v} for k, v in entry.metrics.items()])
    for stage, ((lowest, highest, bins), counts) in entry.histograms.items():
        conn.execute(sa.insert(histograms).values(result_id=rid, stage=stage, lowest_ns=lowest, highest_ns=highest,
                                                  bins=bins))
        if counts:
            conn.execute(sa.insert(histogram_bins),
                         [{"result_id": rid, "stage": stage, "bin": b, "count": n} for b, n in counts])
    return rid


# ---- reading --------------------------------------------------------------------------------

@dataclass
class Filters:
    kind: str | None = None
    metric: str | None = None
    commit: str | None = None
    since: str | None = None
    config: str | None = None
    include_invalid: bool = True
    result_id: int | None = None


def select_results(conn: Connection, f: Filters) -> list[dict[str, Any]]:
    """The results the filters keep, oldest ingestion first."""
    q = sa.select(results).order_by(results.c.id)
    if f.result_id is not None:
        q = q.where(results.c.id == f.result_id)
    if f.kind:
        q = q.where(results.c.kind == f.kind)
    if f.commit:
        q = q.where(results.c.commit.startswith(f.commit, autoescape=True))
    if f.since:
        q = q.where(results.c.time >= f.since)
    if f.config:
        q = q.where(results.c.config_digest.startswith(f.config, autoescape=True))
    if not f.include_invalid:
        q = q.where(results.c.valid == sa.true())
    if f.metric:
        q = q.where(results.c.id.in_(sa.select(metrics.c.result_id).where(metrics.c.name == f.metric)))
    return [dict(r._mapping) for r in conn.execute(q)]


def metrics_of(conn: Connection, ids: Sequence[int]) -> dict[int, dict[str, float]]:
    out: dict[int, dict[str, float]] = {i: {} for i in ids}
    for chunk in _chunks(ids, 500):
        for rid, name, value in conn.execute(sa.select(metrics.c.result_id, metrics.c.name, metrics.c.value)
                                             .where(metrics.c.result_id.in_(chunk))):
            out[rid][name] = value
    return out


def histograms_of(conn: Connection, rid: int) -> dict[str, dict[str, Any]]:
    """A result's latency histograms, checked as a report's are (schemas.stage_problem): an
    axis of 1 to MAX_BINS bins, each bin's index from -1 to `bins`; else one line naming it."""
    out: dict[str, dict[str, Any]] = {}
    for h in conn.execute(sa.select(histograms).where(histograms.c.result_id == rid)):
        out[h.stage] = {"lowest_ns": h.lowest_ns, "highest_ns": h.highest_ns, "bins": h.bins, "counts": []}
    for b in conn.execute(sa.select(histogram_bins).where(histogram_bins.c.result_id == rid)
                          .order_by(histogram_bins.c.stage, histogram_bins.c.bin)):
        out[b.stage]["counts"].append([b.bin, b.count])
    for stage, read in out.items():
        bins = read["bins"]
        why = (f"an axis of {bins} bins (1 to {MAX_BINS:,})" if not (type(bins) is int and 1 <= bins <= MAX_BINS)
               else stage_problem({"bins": read["counts"], "count": sum(n for _, n in read["counts"])}, bins))
        if why:
            raise ToolError(f"the history's result {rid}, latency histogram {shown(stage, 40)}: {why}", 1)
    return out


def _chunks(items: Sequence[int], size: int) -> Iterable[Sequence[int]]:
    for i in range(0, len(items), size):
        yield items[i:i + size]
