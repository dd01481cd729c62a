"""A stand-in for `apiary run` that multirun and sweep can drive in tests of their failure and
interrupt paths, which the real binary cannot be made to hit on cue (and for `apiary workload`
and `apiary replay`, which bisect and perf-gate drive: see replay()).

It takes apiary's --report, --print-config, --progress, --rate, --interval, --interval-log,
--counters and --profile options and ignores the rest; it writes a constructed report (fakes.make_report,
schema_version 2) whose cycle time depends on the run's number (taken from the report's
name, run-NNN.json) and whose latency follows fakes.load_model: a node that includes
FAKE_APIARY_CAPACITY tx/s, so that below it the p99 inclusion latency stays well under a
second and the backlog is flat, and at or above it the p99 exceeds a block interval (3 s) and
the backlog grows. With --interval-log it writes FAKE_APIARY_INTERVALS lines of the interval
log at once (no waiting); with --counters on the report's counters (fakes.counters_section,
no hardware counts), with --profile DIR a profile in DIR (fakes.write_profile) and the
report's profile section. `--fake-slow FUNCTION` plants a slowdown: twice that function's
samples in the profile, and 10% more of the writer's task clock a transaction. Environment:
  FAKE_APIARY_FAIL_RUN=N     run N writes a failed report and exits 1
  FAKE_APIARY_HANG_RUN=N     run N says so on stdout (fakes.WAITING_FOR_SIGNAL), waits for SIGINT/SIGTERM,
                             writes an interrupted report, exits 130/143
  FAKE_APIARY_CYCLE_US       the base cycle time (default 20000)
  FAKE_APIARY_CAPACITY       the tx/s the node includes (default 4000)
  FAKE_APIARY_INTERVALS      the interval log's lines (default 8)
  FAKE_APIARY_FAIL_ABOVE=R   a run at a rate above R fails (exit 1)
  FAKE_APIARY_HANG_ABOVE=R   a run at a rate above R hangs as FAKE_APIARY_HANG_RUN does
  FAKE_APIARY_COMMIT         the report's context.commit (default abcdef0)
  FAKE_APIARY_NOISE=SD       every run's cycle times × exp(N(0, SD)), seeded by the report's directory and file
                             name (so the A and B runs of one round differ, and a test gives the same runs
                             wherever its tmp_path is; default 0: none)
  FAKE_APIARY_SLOWER="OPTION VALUE FACTOR"   a run whose arguments set OPTION to VALUE has its
                             cycle times × FACTOR (a planted slowdown, e.g. "--pool-undo on 1.05")
  FAKE_APIARY_CPU_NS         with --counters on, the writer's task clock a transaction (default 4000)
  FAKE_APIARY_CPU_NOISE=SD   with --counters on, the writer's task clock × exp(N(0, SD)), seeded as
                             FAKE_APIARY_NOISE is but apart from it (default 0: none)
  FAKE_APIARY_CPU_SLOWER="OPTION VALUE FACTOR"   the same for the writer's task clock
  FAKE_APIARY_NO_TASK_CLOCK=1   with --counters on, the task clock not counted (as where the kernel
                             refuses the software events): null, and the event unavailable with a reason
On a cluster worker (the tests of fleet.py) the run's own arguments steer it by host, $APIARY_HOST:
  --fake-commit C            the report's context.commit is C
  --fail-on-host H           on host H the run fails (exit 1)
  --sleep-on-host H          on host H the run first writes its pid into --started-dir and sleeps 30 s
"""

import json
import math
import os
import random
import re
import signal
import sys
import time
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fakes  # noqa: E402


def option(argv, name, default=None):
    return argv[argv.index(name) + 1] if name in argv else default


def seconds(text):
    """`1s`, `500ms` or a bare number of seconds."""
    m = re.fullmatch(r"([0-9.]+)(ms|s)?", text)
    if not m:
        raise ValueError(text)
    return float(m.group(1)) / (1000 if m.group(2) == "ms" else 1)


def rate_of(argv):
    """The --rate as a number of tx/s, None for `infinite` (or no --rate); ValueError if neither."""
    text = option(argv, "--rate", "infinite")
    if text == "infinite":
        return None
    rate = float(text)
    if rate <= 0:
        raise ValueError(text)
    return rate


def print_config(argv):
    if "--bad" in argv:
        print("apiary run: --bad: unknown option", file=sys.stderr)
        return 2
    try:
        rate_of(argv)
        seconds(option(argv, "--interval", "1s"))
    except ValueError as e:
        print(f"apiary run: invalid value {e}", file=sys.stderr)
        return 2
    print(f'blocks = 10\nthreads = 2\nblock-size = 65536\nname = "fake"\nrate = "{option(argv, "--rate", "infinite")}"'
          f'\ncounters = "{option(argv, "--counters", "off")}"')
    return 0


def workload(argv):
    """`apiary workload --out F --transactions N`: F holds N."""
    Path(option(argv, "--out")).write_text(option(argv, "--transactions", "1000"), encoding="utf-8")
    return 0


def read_rc_params(argv, command):
    """The --rc-params file's tables ({} without one), or None after its one-line error."""
    if "--rc-params" not in argv:
        return {}
    try:
        return tomllib.loads(Path(option(argv, "--rc-params")).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        print(f"apiary {command}: --rc-params: {e}", file=sys.stderr)
        return None


def rc_replay(argv):
    """`apiary replay --rc-scale S --rc-params F --blocks B --rc-stats-blocks K --report R
    [--slot-transactions N]`: a report whose rc section follows the fake pool model
    (fakes.rc_replay_section), N transactions a block (default 1300). Environment:
      FAKE_APIARY_RC_SLEEP=S      first wait S seconds (a SIGINT ends it: no report, exit 130)
      FAKE_APIARY_RC_TRUNCATE=1   the report is cut in half"""
    params = read_rc_params(argv, "replay")
    if params is None:
        return 2
    if "--rc-params" in argv:
        params["file"] = option(argv, "--rc-params")
    scale = int(option(argv, "--rc-scale"))
    if not 1 <= scale <= 32:
        print(f"apiary replay: --rc-scale {scale}: expected 1 to 32", file=sys.stderr)
        return 2
    rc = fakes.rc_replay_section(scale, params, int(option(argv, "--blocks", "300")),
                                 int(option(argv, "--rc-stats-blocks", "10")),
                                 int(option(argv, "--slot-transactions", "1300")))
    report = {"result": {"blocks": int(option(argv, "--blocks", "300")), "state_digest": "fake"}, "rc": rc}
    stopped = []
    signal.signal(signal.SIGINT, lambda s, f: stopped.append(s))
    deadline = time.monotonic() + float(os.environ.get("FAKE_APIARY_RC_SLEEP", "0"))
    while not stopped and time.monotonic() < deadline:
        time.sleep(0.02)
    if stopped:
        print("apiary replay: stopped by SIGINT", file=sys.stderr)
        return 130
    text = json.dumps(report)
    if os.environ.get("FAKE_APIARY_RC_TRUNCATE"):
        text = text[:len(text) // 2]
    Path(option(argv, "--report")).write_text(text, encoding="utf-8")
    return 0


def rc_params(argv):
    """`apiary rc-params [--rc-params F]`: the fake's base parameters (fakes.rc_params_text)."""
    tables = read_rc_params(argv, "rc-params")
    if tables is None:
        return 2
    sys.stdout.write(fakes.rc_params_text(tables))
    return 0


def replay(argv):
    """`apiary replay --workload F --report R`: a replay report of the workload's transactions
    and, under the fake valgrind (tests/scripts/fake_valgrind/, which sets FAKE_CALLGRIND_OUT),
    a callgrind file of $FAKE_APIARY_INSTRUCTIONS (default 1000) instructions a transaction, with
    the cache simulation's events: a data read per three instructions, one in a hundred accesses
    missing the first level, and $FAKE_APIARY_MEMORY_MISSES (default 0) a transaction missing
    the last level too.
    With --rc-scale, rc_replay's report instead."""
    if "--help" in argv:
        return 0
    if "--rc-scale" in argv:
        return rc_replay(argv)
    transactions = int(Path(option(argv, "--workload")).read_text(encoding="utf-8"))
    result = {"transactions": transactions, "accepted": transactions, "blocks": 10, "state_digest": "fake"}
    Path(option(argv, "--report")).write_text(json.dumps({"result": result}), encoding="utf-8")
    out = os.environ.get("FAKE_CALLGRIND_OUT")
    if out:
        per_transaction = float(os.environ.get("FAKE_APIARY_INSTRUCTIONS", "1000"))
        ir = round(transactions * per_transaction)
        memory = round(transactions * float(os.environ.get("FAKE_APIARY_MEMORY_MISSES", "0")))
        dr = ir // 3
        counts = (ir, dr, 0, ir // 100, dr // 100, 0, 0, memory, 0)
        Path(out).write_text("events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw\nsummary: "
                             + " ".join(map(str, counts)) + "\n", encoding="utf-8")
    return 0


def with_latency(report, argv, run, log_path):
    """The latency section, the throughput and the interval log of a run at the --rate given."""
    rate = rate_of(argv)
    capacity = float(os.environ.get("FAKE_APIARY_CAPACITY", "4000"))
    intervals = int(os.environ.get("FAKE_APIARY_INTERVALS", "8"))
    interval_s = seconds(option(argv, "--interval", "1s"))
    times = fakes.load_model(report["throughput"]["transactions"], rate, capacity, run, intervals * interval_s)
    report["latency"] = fakes.latency_section(times)
    report["config"]["rate"] = option(argv, "--rate", "infinite")
    if rate is not None:
        report["throughput"]["tx_per_s"] = min(rate, capacity) * (1 + 0.001 * run)
    if log_path:
        lines = fakes.interval_lines(times, rate, capacity, interval_s, intervals, len(report["blocks"]))
        Path(log_path).write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return report


def with_counters_and_profile(report, argv, run, report_path):
    """The counters and the profile, when asked for, with the slowdown --fake-slow plants and the
    writer's task clock as FAKE_APIARY_CPU_NOISE, FAKE_APIARY_CPU_SLOWER and
    FAKE_APIARY_NO_TASK_CLOCK make it."""
    slow = option(argv, "--fake-slow")
    if option(argv, "--counters") == "on":
        aggregates = report["aggregates"]
        writer_ns = float(os.environ.get("FAKE_APIARY_CPU_NS", "4000")) * (1.1 if slow else 1.0) \
            * planted(argv, report_path, "FAKE_APIARY_CPU_NOISE", "FAKE_APIARY_CPU_SLOWER", "cpu")
        report["counters"] = fakes.counters_section(int(aggregates["transactions_per_block"]["avg"]),
                                                    aggregates["measured_blocks"], writer_ns, seed=run)
        if os.environ.get("FAKE_APIARY_NO_TASK_CLOCK"):
            report["counters"]["events"]["task_clock_ns"] = {"available": False,
                                                             "reason": "perf_event_open: Permission denied"}
            for thread in report["counters"]["threads"]:
                for part in ("window", "per_block", "per_transaction"):
                    thread[part]["task_clock_ns"] = None
    if "--profile" in argv:
        given = option(argv, "--profile")
        report["profile"] = fakes.write_profile(Path(given), fakes.folded_stacks(slow=slow, seed=run), given)
    return report


def planted(argv, report_path, noise_variable="FAKE_APIARY_NOISE", slower_variable="FAKE_APIARY_SLOWER", salt=""):
    """The factor FAKE_APIARY_NOISE and FAKE_APIARY_SLOWER give this run's cycle times (or the
    variables named give another figure, its noise seeded apart by `salt`)."""
    factor = 1.0
    noise = float(os.environ.get(noise_variable, "0"))
    if noise:
        seed = os.path.join(*os.path.normpath(str(report_path)).split(os.sep)[-2:])   # its directory and name
        factor *= math.exp(random.Random(seed + salt).gauss(0.0, noise))
    slower = os.environ.get(slower_variable, "").split()
    if len(slower) == 3 and option(argv, slower[0]) == slower[1]:
        factor *= float(slower[2])
    return factor


def main(argv):
    if "--print-config" in argv:
        return print_config(argv)
    commit = option(argv, "--fake-commit", os.environ.get("FAKE_APIARY_COMMIT", "abcdef0"))
    make_report = fakes.make_report

    def stamped(*args, **kwargs):
        report = make_report(*args, **kwargs)
        report["context"]["commit"] = commit
        return report

    fakes.make_report = stamped
    report_path = Path(argv[argv.index("--report") + 1])
    m = re.search(r"run-(\d+)", report_path.name)
    run = int(m.group(1)) if m else 1
    base = float(os.environ.get("FAKE_APIARY_CYCLE_US", "20000"))
    cycles = fakes.noisy_cycles(base * (1 + 0.002 * run) * planted(argv, report_path), run)

    def above(variable):
        limit = os.environ.get(variable)
        return bool(limit) and (rate_of(argv) or 0) > float(limit)

    host = os.environ.get("APIARY_HOST")
    if host and option(argv, "--sleep-on-host") == host:
        (Path(option(argv, "--started-dir")) / str(os.getpid())).write_text(host, encoding="utf-8")
        time.sleep(30)
    if host and option(argv, "--fail-on-host") == host:
        fakes.write_report(report_path, fakes.make_report(cycles[:2], status="failed"))
        return 1
    if os.environ.get("FAKE_APIARY_HANG_RUN") == str(run) or above("FAKE_APIARY_HANG_ABOVE"):
        caught = []
        signal.signal(signal.SIGINT, lambda s, f: caught.append(s))
        signal.signal(signal.SIGTERM, lambda s, f: caught.append(s))
        print(fakes.WAITING_FOR_SIGNAL, flush=True)  # the handlers are in place: a test may signal now
        deadline = time.monotonic() + 30
        while not caught and time.monotonic() < deadline:
            time.sleep(0.02)
        fakes.write_report(report_path, fakes.make_report(cycles[:3], status="interrupted"))
        return 130 if not caught or caught[0] == signal.SIGINT else 143
    if os.environ.get("FAKE_APIARY_FAIL_RUN") == str(run) or above("FAKE_APIARY_FAIL_ABOVE"):
        fakes.write_report(report_path, fakes.make_report(cycles[:2], status="failed"))
        print("apiary run: injected failure", file=sys.stderr)
        return 1
    report = with_latency(fakes.make_report(cycles), argv, run, option(argv, "--interval-log"))
    with_counters_and_profile(report, argv, run, report_path)
    fakes.write_report(report_path, report)
    print(json.dumps({"fake": True, "run": run}))
    return 0


if __name__ == "__main__":
    commands = {"workload": workload, "replay": replay, "rc-params": rc_params}
    sys.exit(commands.get(sys.argv[1] if len(sys.argv) > 1 else "", main)(sys.argv[1:]))
