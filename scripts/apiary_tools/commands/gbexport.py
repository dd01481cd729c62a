"""gb-export: an apiary report, or a multi-run set, as Google Benchmark JSON.

Dashboards and comparison tools that read Google Benchmark's JSON reporter output (its own
tools/compare.py among them) can then show apiary's full block cycle beside the
microbenchmarks. The mapping:

- one benchmark family per measured quantity: `<prefix>/cycle` (the full block cycle),
  `<prefix>/produced`, `<prefix>/applied`, `<prefix>/processing` (the writer's block phases)
  and `<prefix>/per_tx` (the cycle per transaction);
- from a single report, each measured block is one repetition (run_type "iteration",
  iterations 1; for per_tx the block's transactions are the iterations, real_time the cycle
  divided by them), at most --max-repetitions (MAX_REPETITIONS) of them: beyond, an evenly
  spaced sample (`sample`; a million-block soak's every block would be 2 GB of JSON that
  Google Benchmark's compare.py cannot open), which the context's apiary_repetitions states;
  from a set, each run is one repetition, its real_time the run's average and its iterations
  the run's measured cycles (transactions for per_tx);
- then Google Benchmark's aggregates: mean, median, stddev (sample) and cv (stddev / mean, a
  fraction, aggregate_unit "percentage"), named `<family>_<aggregate>`, over the repetitions,
  or over every measured block when the repetitions are a sample of them; iterations says
  over how many (the number of repetitions, as Google Benchmark does, when they are all);
- cpu_time: apiary measures the cycle in wall time and the process's CPU over the measured
  window, so the cycle's cpu_time is its real_time times the average number of busy cores
  (process CPU seconds / window seconds): the CPU the process spent per cycle, summed over
  threads as Google Benchmark sums a multithreaded benchmark's CPU. The writer phases run on
  the writer thread alone and are measured in wall time; their cpu_time repeats real_time;
- counters on the cycle entries: items_per_second (transactions per second) and
  bytes_per_second;
- context: the report's start time, host, executable, cores and build type; the MHz when the
  CPU model names it; caches and CPU scaling, which apiary does not record, as [] and false;
  load_avg as multirun recorded it before the first run, else [].
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .. import stats
from ..common import EXIT_FAILED, Parser, ToolError, run_main, whole_number
from ..metrics import flatten
from ..outputs import Outputs, write_json
from ..reports import RunSet, input_files, is_report, load_report, load_set, measured_blocks, read_report_json
from ..schemas import problem

SCHEMA_PATH = Path(__file__).with_name("gbench.schema.json")
TIME_UNITS = {"us": 1.0, "ms": 1e-3}
# The most repetitions of a family from one report's blocks: a million-block soak's would be a
# document of 2 GB that Google Benchmark's tools/compare.py cannot open (docs/tools.md).
MAX_REPETITIONS = 1000

# family suffix -> (per-block field, per-run metric, per-run iteration-count metric)
FAMILIES = (
    ("cycle", "cycle_us", "aggregates.cycle_us.avg", "aggregates.cycle_us.count"),
    ("produced", "produced_us", "aggregates.produced_us.avg", "aggregates.produced_us.count"),
    ("applied", "applied_us", "aggregates.applied_us.avg", "aggregates.applied_us.count"),
    ("processing", "processing_us", "aggregates.processing_us.avg", "aggregates.processing_us.count"),
    ("per_tx", None, "us_per_tx", "throughput.transactions"),
)


def load_schema() -> dict[str, Any]:
    with open(SCHEMA_PATH, encoding="utf-8") as f:
        return json.load(f)


# ---- context ---------------------------------------------------------------------------------

def _gb_date(start_time: str | None) -> str:
    """apiary's `2026-01-02T03:04:05Z` in Google Benchmark's form, `2026-01-02T03:04:05+00:00`."""
    if not start_time:
        return "unknown"
    return start_time[:-1] + "+00:00" if start_time.endswith("Z") else start_time


def _mhz(cpu_model: str) -> int:
    m = re.search(r"@\s*([0-9.]+)\s*GHz", cpu_model or "")
    return int(round(float(m.group(1)) * 1000)) if m else 0


def gb_context(ctx: dict[str, Any], config: dict[str, Any], load: Sequence[float] | None,
               runs: int) -> dict[str, Any]:
    command = ctx.get("command_line") or ""
    try:
        executable = shlex.split(command)[0] if command else "apiary"
    except ValueError:
        executable = command.split(" ", 1)[0]
    build = (ctx.get("build_type") or "").lower()
    return {
        "date": _gb_date(ctx.get("start_time")),
        "host_name": ctx.get("hostname", ""),
        "executable": executable,
        "num_cpus": int(ctx.get("cores") or 1),
        "mhz_per_cpu": _mhz(ctx.get("cpu_model", "")),
        "cpu_scaling_enabled": False,
        "caches": [],
        "load_avg": [float(x) for x in (load or [])],
        "library_build_type": "debug" if build == "debug" else "release",
        "json_schema_version": 1,
        # Google Benchmark's custom context: string values only.
        "apiary_commit": str(ctx.get("commit", "")),
        "apiary_config": str(config.get("name", "")),
        "apiary_cpu_model": str(ctx.get("cpu_model", "")),
        "apiary_runs": str(runs),
    }


# ---- entries ---------------------------------------------------------------------------------

def _aggregates(real: np.ndarray, cpu: np.ndarray, repetitions: int, base: dict[str, Any]) -> list[dict[str, Any]]:
    """mean, median, stddev (the sample's, n − 1, as Google Benchmark's) and cv of real_time and
    cpu_time over `real` and `cpu`: the repetitions, or every measured block when the
    repetitions are a sample of them; iterations says over how many."""
    def sample_sd(x):
        sd = stats.sample_stddev(x)
        return 0.0 if sd is None else sd   # one repetition: no spread, as Google Benchmark says

    def cv(x):
        m = float(np.mean(x))
        return sample_sd(x) / m if m else 0.0

    out = []
    for name, unit, fn in (("mean", "time", lambda x: float(np.mean(x))),
                           ("median", "time", lambda x: float(np.median(x))),
                           ("stddev", "time", sample_sd),
                           ("cv", "percentage", cv)):
        out.append(dict(base, name=f"{base['run_name']}_{name}", run_type="aggregate", repetitions=repetitions,
                        aggregate_name=name, aggregate_unit=unit, iterations=len(real),
                        real_time=fn(real), cpu_time=fn(cpu), time_unit=base["time_unit"]))
    return out


def _family(prefix: str, index: int, suffix: str, threads: int, unit: str,
            reps: list[tuple[float, float, int, dict[str, float]]],
            over: tuple[np.ndarray, np.ndarray] | None = None) -> list[dict[str, Any]]:
    """The repetitions of one family, then its aggregates. `reps` holds (real, cpu, iterations,
    counters) in microseconds; `over`, the (real, cpu) in microseconds the aggregates are of when
    not the repetitions' (every measured block, of which the repetitions are a sample)."""
    scale = TIME_UNITS[unit]
    run_name = f"{prefix}/{suffix}"
    base = {"family_index": index, "per_family_instance_index": 0, "run_name": run_name,
            "threads": threads, "time_unit": unit}
    entries = []
    for i, (real, cpu, iterations, counters) in enumerate(reps):
        e = {"name": run_name, "family_index": index, "per_family_instance_index": 0,
             "run_name": run_name, "run_type": "iteration", "repetitions": len(reps),
             "repetition_index": i, "threads": threads, "iterations": max(1, int(iterations)),
             "real_time": real * scale, "cpu_time": cpu * scale, "time_unit": unit}
        e.update(counters)
        entries.append(e)
    if not entries:
        return []
    if over is None:
        over = (np.array([r[0] for r in reps], dtype=float), np.array([r[1] for r in reps], dtype=float))
    return entries + _aggregates(over[0] * scale, over[1] * scale, len(reps), base)


def _cpu_rate(m: dict[str, float]) -> float | None:
    """Average busy cores of the process over the measured window."""
    cpu_s, window = m.get("cpu.process_cpu_s"), m.get("cpu.window_s")
    if cpu_s is None or not window:
        return None
    return cpu_s / window


def sample(n: int, limit: int) -> np.ndarray:
    """The indexes of the blocks that are repetitions: all n when n <= limit, else `limit` of them
    evenly spaced, repetition i being block floor(i * n / limit) (the first block, then every
    (n / limit)th): deterministic, and spread over the whole run."""
    k = min(n, limit)
    return (np.arange(k, dtype=np.int64) * n) // k


def _block_family(cols: dict[str, np.ndarray], suffix: str, field: str | None,
                  rate: float | None) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """(real, cpu, iterations, counters) of every measured block, in microseconds, for a family;
    per_tx leaves out the blocks without transactions."""
    cycle, txs = cols["cycle_us"], np.nan_to_num(cols["transactions"])
    if suffix == "per_tx":
        has = txs > 0
        real, iterations = cycle[has] / txs[has], txs[has]
        return real, real * rate if rate is not None else real, iterations, {}
    if suffix == "cycle":
        seconds = cycle / 1e6
        per_s = np.divide(1.0, seconds, out=np.zeros_like(seconds), where=seconds > 0)
        counters = {"items_per_second": txs * per_s, "bytes_per_second": np.nan_to_num(cols["size_bytes"]) * per_s,
                    "transactions": txs}
        return cycle, cycle * rate if rate is not None else cycle, np.ones_like(cycle), counters
    assert field is not None  # only per_tx has none
    real = cols[field]
    return real, real, np.ones_like(real), {}


def from_report(report: dict[str, Any], prefix: str, unit: str = "us",
                limit: int = MAX_REPETITIONS) -> list[dict[str, Any]]:
    """Each measured block a repetition, or `limit` of them (sample) when there are more; the
    aggregates over every measured block."""
    cols = measured_blocks(report)
    if not len(cols["cycle_us"]):
        raise ToolError("the report has no measured block with a cycle time")
    rate = _cpu_rate(flatten(report))
    threads = int(report.get("config", {}).get("threads") or 1)
    out = []
    for index, (suffix, field, _, _) in enumerate(FAMILIES):
        real, cpu, iterations, counters = _block_family(cols, suffix, field, rate)
        reps = [(float(real[i]), float(cpu[i]), int(iterations[i]), {k: float(v[i]) for k, v in counters.items()})
                for i in sample(len(real), limit)]
        out += _family(prefix, index, suffix, threads, unit, reps, over=(real, cpu))
    return out


def sampling(report: dict[str, Any], limit: int) -> str:
    """What the context says of the repetitions of a report's export (apiary_repetitions)."""
    n = len(measured_blocks(report)["cycle_us"])
    if n <= limit:
        return f"every measured block ({n})"
    return f"{limit} of {n} measured blocks, evenly spaced (repetition i is block floor(i*{n}/{limit}) of " \
           f"them); the aggregates are over all {n}"


def from_set(rs: RunSet, prefix: str, unit: str = "us") -> list[dict[str, Any]]:
    """Each run a repetition, its real_time the run's average."""
    threads = int(rs.config.get("threads") or 1)
    out = []
    for index, (suffix, _, metric, count_metric) in enumerate(FAMILIES):
        reps = []
        for run in rs.runs:
            m = run.metrics
            if metric not in m:
                continue
            real = m[metric]
            rate = _cpu_rate(m)
            cpu = real * rate if (rate is not None and suffix in ("cycle", "per_tx")) else real
            counters = {}
            if suffix == "cycle":
                window = m.get("throughput.window_s")
                counters = {"items_per_second": m.get("throughput.tx_per_s", 0.0),
                            "bytes_per_second": m.get("throughput.bytes", 0.0) / window if window else 0.0,
                            "transactions": m.get("aggregates.transactions_per_block.avg", 0.0)}
            reps.append((real, cpu, int(m.get(count_metric, 1)), counters))
        out += _family(prefix, index, suffix, threads, unit, reps)
    return out


def export(paths: Sequence[str], prefix: str = "apiary", unit: str = "us",
           per_block: bool | None = None, limit: int = MAX_REPETITIONS) -> dict[str, Any]:
    """The Google Benchmark document for the inputs. One report file (and per_block not False):
    blocks are the repetitions, at most `limit` of them (sample); anything else: runs are."""
    if unit not in TIME_UNITS:
        raise ToolError(f"--time-unit {unit}: expected one of {', '.join(TIME_UNITS)}")
    data = read_report_json(paths[0]) if len(paths) == 1 and Path(paths[0]).is_file() else None
    single = is_report(data)
    if per_block and not single:
        raise ToolError("--per-block needs exactly one report file")
    if single and per_block is not False:
        report = load_report(paths[0], data)
        if report.get("status") != "completed":
            raise ToolError(f"{paths[0]}: the run did not complete ({report.get('status')}); nothing to export")
        ctx = gb_context(report.get("context", {}), report.get("config", {}), None, 1)
        ctx["apiary_repetitions"] = sampling(report, limit)
        return {"context": ctx, "benchmarks": from_report(report, prefix, unit, limit)}
    del data
    rs = load_set(paths, "export")
    first_load = next((r.info.get("load_avg_before") for r in rs.runs if r.info.get("load_avg_before")), None)
    ctx = gb_context(rs.context, rs.config, first_load, rs.n)
    ctx["apiary_repetitions"] = f"every run ({rs.n})"
    return {"context": ctx, "benchmarks": from_set(rs, prefix, unit)}


@functools.cache
def _schema() -> dict[str, Any]:
    return load_schema()


def validate(doc: dict[str, Any]) -> None:
    """Checks the document against gbench.schema.json before it is written: a document it does
    not match is this tool's fault, one line and exit 1."""
    why = problem(_schema(), doc)
    if why:
        raise ToolError(f"the Google Benchmark document does not match gbench.schema.json ({why}); nothing written",
                        EXIT_FAILED)


def parser() -> Parser:
    p = Parser(
        prog="gb-export",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Write an apiary report, or a multirun set, as Google Benchmark JSON "
                    "(the --benchmark_format=json shape), so that tools made for Google Benchmark "
                    "output can read it.",
        epilog="""input: one report file (each measured block becomes a repetition, at most
--max-repetitions of them evenly spaced over the run; the aggregates are over every block), or a
multirun directory / aggregate.json / several reports (each run becomes a repetition).
families: PREFIX/cycle, PREFIX/produced, PREFIX/applied, PREFIX/processing, PREFIX/per_tx, each
with its _mean, _median, _stddev and _cv aggregates.

examples:
  scripts/gb-export results/20260101T000000Z-smoke.json -o smoke.gb.json
  scripts/gb-export results/multirun-A -o a.json && scripts/gb-export results/multirun-B -o b.json
  (then: google/benchmark's tools/compare.py benchmarks a.json b.json)""")
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="a report, a multirun directory or aggregate.json")
    p.add_argument("-o", "--output", metavar="PATH", help="where to write (default: stdout)")
    p.add_argument("--prefix", default="apiary", help="benchmark name prefix (default: %(default)s)")
    p.add_argument("--time-unit", choices=sorted(TIME_UNITS), default="us",
                   help="unit of real_time and cpu_time (default: %(default)s)")
    p.add_argument("--max-repetitions", type=whole_number(1, 100_000), default=MAX_REPETITIONS, metavar="N",
                   help="with one report: at most N blocks become repetitions, evenly spaced over the run (the "
                        "aggregates stay over every measured block; the context's apiary_repetitions says which); "
                        "default %(default)s")
    p.add_argument("--per-run", action="store_true",
                   help="with one report: one repetition for the run instead of one per block")
    return p


def _main(argv: Sequence[str]) -> int:
    args = parser().parse_args(argv)
    if not args.prefix or any(c.isspace() for c in args.prefix):
        raise ToolError(f"--prefix {args.prefix!r}: expected a name without spaces")
    plan = Outputs().read("INPUT", [f for p in args.inputs for f in input_files(p)])
    output = plan.file("--output", args.output)
    doc = export(args.inputs, args.prefix, args.time_unit, per_block=False if args.per_run else None,
                 limit=args.max_repetitions)
    validate(doc)
    if output:
        write_json(output, doc)
    else:
        json.dump(doc, sys.stdout, indent=2)
        sys.stdout.write("\n")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return run_main("gb-export", _main, argv)


if __name__ == "__main__":
    raise SystemExit(main())
