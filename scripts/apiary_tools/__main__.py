"""`python -m apiary_tools TOOL COMMAND ARGS...`: what the entry scripts in scripts/ run
(launch.sh); COMMAND names a module (or package) of apiary_tools/commands/. A SIGINT or
SIGTERM that comes while the tool's module and its libraries are still being imported (numpy,
scipy, matplotlib: about a second) ends it as one afterwards would, with `TOOL: stopped by
SIGINT` and 130 (143), instead of a KeyboardInterrupt traceback; from then on run_main's
handler (common.STOP) has them."""

import importlib
import signal
import sys


def _stopped_early(tool: str):
    def handle(signum, _frame):
        print(f"{tool}: stopped by {signal.Signals(signum).name}", file=sys.stderr)
        sys.exit(130 if signum == signal.SIGINT else 143)
    return handle


def main() -> int:
    tool, command = sys.argv[1], sys.argv[2]
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _stopped_early(tool))
    return importlib.import_module(f"apiary_tools.commands.{command}").main(sys.argv[3:])


if __name__ == "__main__":
    sys.exit(main())
