"""A stand-in for `apiary run` that multirun and sweep can drive in tests of their failure and
interrupt paths, which the real binary cannot be made to hit on cue.

It takes apiary's --report, --print-config and --progress options and ignores the rest; it
writes a constructed report (fakes.make_report) whose cycle time depends on the run's number
(taken from the report's name, run-NNN.json). Environment:
  FAKE_APIARY_FAIL_RUN=N  run N writes a failed report and exits 1
  FAKE_APIARY_HANG_RUN=N  run N waits for SIGINT/SIGTERM, writes an interrupted report, exits 130/143
  FAKE_APIARY_CYCLE_US    the base cycle time (default 20000)
"""

import json
import os
import re
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fakes  # noqa: E402


def main(argv):
    if "--print-config" in argv:
        if "--bad" in argv:
            print("apiary run: --bad: unknown option", file=sys.stderr)
            return 2
        print('blocks = 10\nthreads = 2\nblock-size = 65536\nname = "fake"')
        return 0
    report_path = Path(argv[argv.index("--report") + 1])
    m = re.search(r"run-(\d+)", report_path.name)
    run = int(m.group(1)) if m else 1
    base = float(os.environ.get("FAKE_APIARY_CYCLE_US", "20000"))
    cycles = fakes.noisy_cycles(base * (1 + 0.002 * run), run)

    if os.environ.get("FAKE_APIARY_HANG_RUN") == str(run):
        caught = []
        signal.signal(signal.SIGINT, lambda s, f: caught.append(s))
        signal.signal(signal.SIGTERM, lambda s, f: caught.append(s))
        deadline = time.monotonic() + 30
        while not caught and time.monotonic() < deadline:
            time.sleep(0.02)
        fakes.write_report(report_path, fakes.make_report(cycles[:3], status="interrupted"))
        return 130 if not caught or caught[0] == signal.SIGINT else 143
    if os.environ.get("FAKE_APIARY_FAIL_RUN") == str(run):
        fakes.write_report(report_path, fakes.make_report(cycles[:2], status="failed"))
        print("apiary run: injected failure", file=sys.stderr)
        return 1
    fakes.write_report(report_path, fakes.make_report(cycles))
    print(json.dumps({"fake": True, "run": run}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
