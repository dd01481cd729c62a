"""Pieces every command shares: run_main, which turns an error into one line and a signal
into its exit status; the one handler of SIGINT and SIGTERM (STOP); the error type and how a
message echoes what the user gave; the argparse parser and every type of an option's value
(counts, numbers, probabilities, percentages, levels, durations, seconds, names), defined here
once; the project paths; Markdown and number formatting. Reading files is inputs.py's,
writing them outputs.py's."""

from __future__ import annotations

import argparse
import contextlib
import datetime
import difflib
import math
import os
import re
import shlex
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

# Exit codes of every command (they match `apiary run`'s where they overlap).
EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_SIGINT = 130
EXIT_SIGTERM = 143

REPO_ROOT = Path(__file__).resolve().parents[2]
# Set, a bug in a tool ends in its traceback instead of one line.
TRACEBACK_VARIABLE = "APIARY_TOOLS_TRACEBACK"


class ToolError(Exception):
    """Bad input or a failed step that the user can fix: printed as one line, exit `code`."""

    def __init__(self, message: str, code: int = EXIT_USAGE):
        super().__init__(message)
        self.code = code


class Parser(argparse.ArgumentParser):
    """argparse that reports bad usage as a ToolError: one line, exit status 2, no usage dump.
    An option is taken only as spelled in full (no abbreviations: `--run` is not `--runs`), and
    an unknown one is the first thing reported, with the nearest valid option. Python 3.11's
    argparse takes unique abbreviations and names no option in its `unrecognized arguments`."""

    def __init__(self, *args: Any, **kwargs: Any):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)
        self._given: list[str] = []
        self._after: list[Callable[[argparse.Namespace], None]] = []

    def after_parsing(self, hook: Callable[[argparse.Namespace], None]) -> None:
        """Calls `hook` with the parsed options each time this parser has parsed them: where an
        option checks what only all of them together tell, or notes what it names (history.py's)."""
        self._after.append(hook)

    def parse_known_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> Any:  # type: ignore[override]
        self._given = list(sys.argv[1:] if args is None else args)
        parsed, rest = super().parse_known_args(args, namespace)
        for hook in self._after:
            hook(parsed)
        return parsed, rest

    def unknown_option(self) -> str | None:
        """The first option given (before `--`) that this parser does not have, with a suggestion."""
        for token in self._given:
            if token == "--":
                break
            name = token.split("=", 1)[0]
            if token.startswith("--") and name not in self._option_string_actions:
                known = [o for o in self._option_string_actions if o.startswith("--")]
                longer = [o for o in known if o.startswith(name)]
                near = longer if len(longer) == 1 else difflib.get_close_matches(name, known, n=1, cutoff=0.6)
                return f"unrecognized option {shown(name)}" + (f" (did you mean {near[0]}?)" if near else "")
        return None

    def error(self, message):
        raise ToolError(f"{self.unknown_option() or message} (see --help)")


def split_args(option: str, text: str) -> list[str]:
    """A string of arguments (--a, --b, --command) split as a shell would, or one line saying why not."""
    try:
        return shlex.split(text)
    except ValueError as e:
        raise ToolError(f"{option} '{shown(text)}': {str(e).lower()} (quote as a shell would)") from None


def exit_code_for(signum: int) -> int:
    """The tools' exit status after a signal stopped them: 130 for SIGINT, else 143."""
    return EXIT_SIGINT if signum == signal.SIGINT else EXIT_SIGTERM


class Interrupted(BaseException):
    """A signal that ends the tool at once; run_main turns it into one line and 130 or 143.
    A BaseException, as KeyboardInterrupt is, so that no `except Exception` swallows it."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


class Signals:
    """The tools' one handler of SIGINT and SIGTERM, which are handled alike. run_main installs
    it for the whole of a tool's run (in the main thread; signal handlers live there). What a
    signal does depends on what the tool is doing:

    - with a child in hand (`forwarding`, which proc.Forwarding uses): it is passed on to the
      child and noted; the tool's plan stops after the child;
    - while keeping completed work (`keeping`: the runs that finished are aggregated, a run's
      interval log analysed): the first is noted and the work goes on to its end;
    - otherwise, and a second one while keeping: Interrupted is raised where the tool is.

    `received` is the first signal (None when none came), `count` how many came. A tool that
    ends after a noted signal exits 130 (SIGINT) or 143 (SIGTERM)."""

    HANDLED = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.received: int | None = None
        self.count = 0
        self._forward: Callable[[int], None] | None = None
        self._keeping = 0
        self._depth = 0

    @contextlib.contextmanager
    def handling(self) -> Iterator[Signals]:
        """Installs the handler (the outermost call starts afresh and restores the old ones)."""
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        old = {}
        if self._depth == 0:
            self.received, self.count = None, 0
            old = {sig: signal.signal(sig, self._handle) for sig in self.HANDLED}
        self._depth += 1
        try:
            yield self
        finally:
            self._depth -= 1
            for sig, handler in old.items():
                signal.signal(sig, handler)

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        self.count += 1
        if self.received is None:
            self.received = signum
        if self._forward is not None:
            self._forward(signum)
        elif not (self._keeping and self.count == 1):
            raise Interrupted(signum)

    @contextlib.contextmanager
    def keeping(self) -> Iterator[None]:
        """Inside: the first signal is noted, and the work in hand finishes."""
        self._keeping += 1
        try:
            yield
        finally:
            self._keeping -= 1

    @contextlib.contextmanager
    def forwarding(self, forward: Callable[[int], None]) -> Iterator[None]:
        """Inside: every signal is noted and given to `forward` (which passes it on to a child)."""
        previous, self._forward = self._forward, forward
        try:
            with self.handling():
                yield
        finally:
            self._forward = previous


STOP = Signals()


def run_main(tool: str, body: Callable[[Sequence[str]], int], argv: Sequence[str] | None) -> int:
    """Runs a command's body with the signal handler installed, and turns a ToolError into
    `tool: message` on stderr and a signal into `tool: stopped by SIGINT` (exit 130 or 143).

    Commands raise ToolError instead of printing and exiting themselves, so that the tests can
    call `main()` and see the exit code without a subprocess."""
    try:
        with STOP.handling():
            code = body(list(sys.argv[1:] if argv is None else argv))
            if STOP.received is None:
                return code
            raise Interrupted(STOP.received)   # after the work a signal let finish
    except Interrupted as e:
        print(f"{tool}: stopped by {signal.Signals(e.signum).name}", file=sys.stderr)
        return exit_code_for(e.signum)
    except SystemExit as e:  # --help
        return e.code if isinstance(e.code, int) else EXIT_OK
    except ToolError as e:
        print(one_line(f"{tool}: {e}"), file=sys.stderr)
        return e.code
    except BrokenPipeError:
        # `scripts/compare ... | head` closes stdout early; that is not an error.
        return EXIT_OK
    except Exception as e:   # a bug: one line all the same, where it happened; the traceback on request
        if os.environ.get(TRACEBACK_VARIABLE):
            raise
        frame = traceback.extract_tb(e.__traceback__)[-1]
        print(one_line(f"{tool}: internal error: {type(e).__name__}: {e} (at {Path(frame.filename).name}:"
                       f"{frame.lineno}); a bug: please report it with the command line, or set "
                       f"{TRACEBACK_VARIABLE}=1 for the traceback"), file=sys.stderr)
        return EXIT_FAILED


def default_apiary() -> Path:
    """The binary the run commands use unless told otherwise: $APIARY_BIN, else the release build."""
    env = os.environ.get("APIARY_BIN")
    if env:
        return Path(env)
    return REPO_ROOT / "build" / "release" / "harness" / "apiary"


def check_apiary(path: str | os.PathLike, option: str = "--apiary") -> Path:
    p = Path(path)
    if not p.is_file() or not os.access(p, os.X_OK):
        raise ToolError(f"{option} {p}: no executable there; build it with "
                        "`cmake --preset release && cmake --build --preset release --target apiary`")
    return p


def utc_stamp() -> str:
    """A UTC timestamp for directory names, in the style of `apiary run`'s report names."""
    return datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%SZ")


def utc_iso() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def load_avg() -> list[float]:
    """The 1, 5 and 15 minute load averages, recorded beside measurements taken on shared machines."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def whole_number(minimum: int, maximum: int) -> Callable[[str], int]:
    """The argparse type of every option that takes a count (--runs, --blocks, ...): ASCII
    digits only (no sign, point, exponent or separator), from `minimum` to `maximum` (every
    count has a bound). argparse reports a wrong value as
    `argument --runs: expected a whole number from 1 to 10,000, not '0'`."""
    def parse(text: str) -> int:
        # The length first: int() of thousands of digits is slow, and refused beyond 4,300.
        if not (text.isascii() and text.isdigit()) or len(text.lstrip("0")) > len(str(maximum)) or \
                not minimum <= int(text) <= maximum:
            raise argparse.ArgumentTypeError(f"expected a whole number from {minimum:,} to {maximum:,}, "
                                             f"not '{shown(text)}'")
        return int(text)

    parse.__name__ = "whole number"
    return parse


def finite_number(minimum: float, maximum: float, what: str = "a number",
                  above: bool = False) -> Callable[[str], float]:
    """The argparse type of an option that takes a number (seconds, a percentage): a finite
    number from `minimum` (or above it, with `above`) to `maximum`; NaN and infinity are refused."""
    wanted = f"{what} {'above' if above else 'from'} {minimum:g}{'' if above else f' to {maximum:g}'}" + \
        (f", at most {maximum:g}" if above else "")

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and (value > minimum if above else value >= minimum) and value <= maximum):
            raise argparse.ArgumentTypeError(f"expected {wanted}, not '{shown(text)}'")
        return value

    parse.__name__ = what
    return parse


_NUMBER = r"([0-9]+(?:\.[0-9]+)?)"
_DURATION = re.compile(rf"(?:{_NUMBER}h)?(?:{_NUMBER}m)?(?:{_NUMBER}s?)?")


def duration(text: str) -> float:
    """The argparse type of a time budget (--max-time): seconds, or hours, minutes and seconds
    in that order, such as 90, 90s, 20m or 1h30m; above 0."""
    m = _DURATION.fullmatch(text) if text.isascii() else None
    seconds = sum(float(v) * unit for v, unit in zip(m.groups(), (3600, 60, 1), strict=True) if v) if m else 0.0
    if not 0 < seconds < 1e9:
        raise argparse.ArgumentTypeError(f"expected a duration above 0 such as 90s, 20m or 1h30m, not '{shown(text)}'")
    return seconds


duration.__name__ = "duration"


def probability(text: str) -> float:
    """The argparse type of a significance level (--alpha, --max-pvalue): above 0 and below 1."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a number between 0 and 1") from None
    if not 0 < v < 1:
        raise argparse.ArgumentTypeError(f"{text}: expected a number between 0 and 1")
    return v


def percent(text: str) -> float:
    """The argparse type of a change in percent (--min-effect, --min-magnitude): 0 or more, `%` allowed."""
    try:
        v = float(text.rstrip("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a percentage such as 2 or 0.5") from None
    if v < 0 or not math.isfinite(v):
        raise argparse.ArgumentTypeError(f"{text}: expected a percentage, 0 or more")
    return v


def open_unit(text: str) -> float:
    """The argparse type of --target-level: a number above 0 and below 1."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value < 1:   # NaN too
        raise argparse.ArgumentTypeError(f"expected a level above 0 and below 1, not '{shown(text)}'")
    return value


open_unit.__name__ = "level"


def positive_seconds(text: str) -> float:
    """The argparse type of a bound in seconds (maxrate's --bound): above 0, an `s` allowed."""
    try:
        value = float(text.removesuffix("s"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected seconds, such as 3 or 0.5") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"{text}: expected seconds above 0")
    return value


_UTC_TIME = re.compile(r"([0-9]{4}-[0-9]{2}-[0-9]{2})(?:[T ]([0-9]{2}:[0-9]{2}(?::[0-9]{2})?))?(Z|\+00:00)?")


def utc_time(text: str) -> str:
    """The argparse type of a time filter (the history's --since): a UTC date, or a date and a
    time, YYYY-MM-DD[THH:MM[:SS]][Z]; as the history's times are written (2026-11-01T10:00:00Z),
    without the Z, so that it compares as text with them (a date is the day's start)."""
    m = _UTC_TIME.fullmatch(text) if text.isascii() else None
    try:
        if m is None:
            raise ValueError
        value = m.group(1) + (f"T{m.group(2)}" if m.group(2) else "")
        datetime.datetime.fromisoformat(value)   # a real day and time of day
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a UTC time, YYYY-MM-DD[THH:MM[:SS]][Z] such as 2026-11-01 or "
                                         f"2026-11-01T14:30Z, not '{shown(text)}'") from None
    return value


utc_time.__name__ = "UTC time"


def parse_csv(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


# ---- names ------------------------------------------------------------------------------------

NAME_RULE = "expected a name: not empty, without '/' or control characters, not starting with '.'"


def is_name(text: str) -> bool:
    return bool(text.strip()) and "/" not in text and not text.startswith(".") and \
        not any(ord(c) < 0x20 or ord(c) == 0x7f for c in text)


def check_name(what: str, text: str) -> str:
    """A label (a side of an A/B, a set's name) is a name, never a path: not empty, no `/`, no
    leading `.` (so neither `.` nor `..`), no control character. Labels name directories and
    files inside --out, so a label that were a path would write outside it."""
    if not is_name(text):
        raise ToolError(f"{what} '{shown(text)}': {NAME_RULE}")
    return text


def name_type(text: str) -> str:
    """The argparse type of a label: check_name's rule, reported as argparse reports a bad value."""
    if not is_name(text):
        raise argparse.ArgumentTypeError(f"'{shown(text)}': {NAME_RULE}")
    return text


# ---- echoing what the user gave ---------------------------------------------------------------

# The longest value an error line echoes, and a path (its start and end) and a whole line:
# as apiary's own (harness/io/error_text.hpp).
SHOWN_LIMIT = 80
PATH_LIMIT = 2 * SHOWN_LIMIT
LINE_LIMIT = 1000
_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _escaped(text: str) -> str:
    return "".join(_ESCAPES.get(c) or (f"\\x{ord(c):02x}" if ord(c) < 0x20 or ord(c) == 0x7f else c) for c in text)


def shown(value: str, limit: int = SHOWN_LIMIT) -> str:
    """A value as an error line echoes it: control characters escaped, cut after `limit`
    characters with "…" in place of the rest."""
    value = str(value)
    return _escaped(value[:limit]) + ("…" if len(value) > limit else "")


def shown_path(path: str, limit: int = PATH_LIMIT) -> str:
    """A path as an error line echoes it: whole up to `limit` characters, else its start and its
    end around "…" (the end names the file)."""
    whole = _escaped(str(path))
    if len(whole) <= limit:
        return whole
    head = limit // 3
    return whole[:head] + "…" + whole[len(whole) - (limit - head - 1):]


def one_line(message: str) -> str:
    """A message as one line: control characters escaped, each word cut as `shown` cuts a
    value, the whole cut after LINE_LIMIT characters."""
    words = [shown(w, 2 * PATH_LIMIT) for w in str(message).split(" ")]
    return shown(" ".join(words), LINE_LIMIT)


# ---- symbols for people ---------------------------------------------------------------------

_ANONYMOUS = "(anonymous namespace)"
_OPERATOR_CHARACTERS = frozenset("<>=!+-*/%^&|~[],")


def _operator_end(text: str, i: int) -> int:
    """Where the name of the operator at `i` (`operator()`, `operator<<=`, ...) ends."""
    j = i + len("operator")
    if text.startswith("()", j):
        return j + 2
    while j < len(text) and text[j] in _OPERATOR_CHARACTERS:
        j += 1
    return j


def short_symbol(name: str, limit: int = 100, first_argument: bool = False) -> str:
    """A C++ function's name as a table shows it: template arguments and parameter lists
    folded to `<…>` and `(…)` (`undo_index<…>::emplace(…)`; an operator's brackets are its
    name), then cut after `limit` characters. With first_argument, the first argument of each
    outer template is kept, folded the same way (`undo_index<apiary::core::account_object, …>`)."""
    text, out, depth, i = name.replace(_ANONYMOUS, "\0"), [], 0, 0
    kept = False      # the outer bracket open is a template whose first argument is shown
    keeping = False   # ... and that argument has not ended yet
    while i < len(text):
        c = text[i]
        visible = depth == 0 or (depth == 1 and keeping)
        if text.startswith("operator", i):
            end = _operator_end(text, i)
            if visible:
                out.append(text[i:end])
            i = end
            continue
        if c in "<(":
            if depth == 0 and c == "<" and first_argument:
                out.append(c)
                kept = keeping = True
            elif visible:   # folded whole, its closing bracket written now
                out.append(c + "…" + (">" if c == "<" else ")"))
            depth += 1
        elif c in ">)" and depth > 0:
            depth -= 1
            if depth == 0 and kept:
                out.append(c)
                kept = keeping = False
        elif visible:
            if depth == 1 and c == ",":
                out.append(", …")
                keeping = False
            else:
                out.append(c)
        i += 1
    if depth == 0:   # brackets that do not balance: the name as it is
        name = "".join(out).replace("\0", _ANONYMOUS)
    return name if len(name) <= limit else name[:limit - 1] + "…"


def short_symbols(names: Sequence[str], limit: int = 100) -> list[str]:
    """short_symbol of each name; names that would look alike keep their first template
    arguments (two `undo_index<…>::undo(…)` of different objects)."""
    short = [short_symbol(n, limit) for n in names]
    return [short_symbol(n, limit, first_argument=True) if short.count(s) > 1 else s for n, s in zip(names, short,
                                                                                                     strict=True)]


# ---- numbers for people ---------------------------------------------------------------------

def is_share(name: str) -> bool:
    """Fractions in [0, 1] that read better as percentages."""
    leaf = name.rsplit(".", 1)[-1]
    return leaf.endswith("_share") or leaf in ("utilization", "share") or name.endswith(".share")


def fmt_number(value: float | None) -> str:
    """Thousands separators for big numbers, a few significant digits for small ones."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    a = abs(value)
    if a >= 100 or (a == int(a) and a < 1e15):
        return f"{value:,.0f}"
    if a >= 1:
        return f"{value:,.2f}"
    return f"{value:.4g}"


def fmt_metric(name: str, value: float | None) -> str:
    if value is not None and math.isfinite(value) and is_share(name):
        return f"{value * 100:.2f}%"
    return fmt_number(value)


def fmt_pct(value: float | None, signed: bool = True) -> str:
    if value is None or not math.isfinite(value):
        return "–"
    return f"{value:+.2f}%" if signed else f"{value:.2f}%"


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]], align: str = "") -> str:
    """A GitHub Markdown table; `align` holds one of l/r per column (default: first left, rest right)."""
    if not align:
        align = "l" + "r" * (len(header) - 1)
    marks = ["---:" if a == "r" else "---" for a in align]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(marks) + " |"]
    for row in rows:
        lines.append("| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |")
    return "\n".join(lines) + "\n"
