"""Reading what the tools take in: JSON files and interval logs, strictly.

A file is read only when it is a regular file within MAX_INPUT_BYTES (a FIFO or a device is
refused at once, before a byte is read, as `apiary replay` refuses them), as UTF-8, and as
JSON with every number finite and within NUMBER_BOUND (Python's json takes NaN, Infinity
and numbers of any size; a number that overflows a float becomes infinity) and no key given
twice in an object. An interval log is read line by line, each line at most MAX_LINE_BYTES,
and each record checked by the caller's schema: a damaged line is refused with its number
(a last line without its newline, a run killed while writing it, can be left out). A large
top-level array (a million-block report's blocks) can be read item by item into the caller's
Columns, CHUNK_ITEMS at a time, rather than as a list of dicts (read_json's `arrays`). A folded
stack file (a profile's) is read the same way, each line a stack and a bounded count. Every
error is a ToolError of one line naming the file (and the line).

What a file must hold is schemas.py's business.
"""

from __future__ import annotations

import io
import json
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from .common import EXIT_FAILED, EXIT_USAGE, ToolError, shown, shown_path

# The largest file the tools read: a million-block soak's report is about 250 MB.
MAX_INPUT_BYTES = 1 << 30
# The largest magnitude of a number in any file the tools read: the largest count apiary's
# reports hold (an unsigned 64-bit integer). Sums and products of two stay finite.
NUMBER_BOUND = 2 ** 64
# The longest line of an interval log (a record is about 2 KB).
MAX_LINE_BYTES = 1 << 20
# The items of a large array (read_json's `arrays`) handed on at a time.
CHUNK_ITEMS = 10_000


class InputError(ValueError):
    """Why a JSON text is refused (the reader adds the file's name)."""


class _Refused:
    """A value refused while parsing, kept in its place until the walk that names the field."""

    def __init__(self, why: str):
        self.why = why


class _Parser:
    """json.loads' hooks by the module's rules: what they refuse becomes a _Refused in its place."""

    def __init__(self) -> None:
        self.refused: _Refused | None = None

    def refuse(self, why: str) -> _Refused:
        refused = _Refused(why)
        self.refused = self.refused or refused
        return refused

    def constant(self, text: str) -> Any:
        return self.refuse(f"{text} is not a number JSON allows")

    def integer(self, text: str) -> Any:
        # The length first: int() of thousands of digits is slow, and refused beyond 4,300.
        if len(text.lstrip("-")) > len(str(NUMBER_BOUND)) or abs(value := int(text)) > NUMBER_BOUND:
            return self.refuse(f"the integer {shown(text, 30)} is beyond ±2^64")
        return value

    def float(self, text: str) -> Any:
        value = float(text)
        if not abs(value) <= NUMBER_BOUND:   # also infinity, from an exponent too large
            return self.refuse(f"the number {shown(text, 30)} is beyond ±2^64")
        return value

    def object(self, pairs: list[tuple[str, Any]]) -> Any:
        out = dict(pairs)
        if len(out) != len(pairs):
            seen: set[str] = set()
            for key, _ in pairs:
                if key in seen:
                    return self.refuse(f"the key '{shown(key)}' is given twice in one object")
                seen.add(key)
        return out


def _where(data: Any, target: _Refused) -> str:
    """The dotted path of `target` in `data` (blocks[3].cycle_us), found by a walk."""
    stack: list[tuple[Any, str]] = [(data, "")]
    while stack:
        node, path = stack.pop()
        if node is target:
            return path
        if isinstance(node, dict):
            stack.extend((v, f"{path}.{k}" if path else str(k)) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, f"{path}[{i}]") for i, v in enumerate(node))
    return ""


def parse_json(text: str) -> Any:
    """JSON text by the rules above; InputError (naming the field) or json.JSONDecodeError."""
    hooks = _Parser()
    data = json.loads(text, parse_constant=hooks.constant, parse_int=hooks.integer, parse_float=hooks.float,
                      object_pairs_hook=hooks.object)
    if hooks.refused is not None:
        field = _where(data, hooks.refused)
        raise InputError(f"{field}: {hooks.refused.why}" if field else hooks.refused.why)
    return data


def _open_regular(path: Path, what: str) -> io.BufferedReader:
    """A regular file within the bound, opened for reading without blocking on a FIFO."""
    where = shown_path(str(path))
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise ToolError(f"{where}: no such file") from None
    except OSError as e:
        raise ToolError(f"{where}: cannot read {what} ({e.strerror})") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        kind = "a directory" if stat.S_ISDIR(st.st_mode) else "a FIFO" if stat.S_ISFIFO(st.st_mode) else \
            "a character device" if stat.S_ISCHR(st.st_mode) else "not a regular file"
        raise ToolError(f"{where}: {kind}, expected {what}")
    if st.st_size > MAX_INPUT_BYTES:
        os.close(fd)
        raise ToolError(f"{where}: {st.st_size:,} bytes, more than the {MAX_INPUT_BYTES:,} the tools read")
    os.set_blocking(fd, True)
    return open(fd, "rb")


def check_file(option: str, path: str | os.PathLike, what: str) -> Path:
    """That an input a child reads (a run's --config) is a regular file within the bound, before
    anything runs: a FIFO or a device is refused at once, as apiary itself refuses them."""
    try:
        _open_regular(Path(path), what).close()
    except ToolError as e:
        raise ToolError(f"{option} {e}") from None
    return Path(path)


class Columns(Protocol):
    """What a large top-level array becomes (read_json's `arrays`): it takes the array's items a
    chunk at a time, as parsed, and is the value in their place. A problem it finds in them is
    its own to keep (a report's blocks: schemas.py checks them), not the parser's."""

    def add(self, items: list[Any], offset: int) -> None: ...


_SPACE = re.compile(r"[ \t\n\r]*")


def _decoder(hooks: _Parser) -> json.JSONDecoder:
    return json.JSONDecoder(parse_constant=hooks.constant, parse_int=hooks.integer, parse_float=hooks.float,
                            object_pairs_hook=hooks.object)


def _items(text: str, start: int, hooks: _Parser, columns: Columns) -> int:
    """Reads the array that starts at text[start] ('[') into `columns`, CHUNK_ITEMS items at a
    time; the index after it. Its numbers are parsed by Python's own scanner, not the hooks (ten
    times faster): the Columns check that they are finite and within NUMBER_BOUND."""
    scan = json.JSONDecoder(parse_constant=hooks.constant, object_pairs_hook=hooks.object).scan_once  # type: ignore[attr-defined]
    chunk: list[Any] = []
    offset, end = 0, _SPACE.match(text, start + 1).end()  # type: ignore[union-attr]
    if text.startswith("]", end):
        return end + 1
    while True:
        try:
            item, end = scan(text, end)
        except StopIteration as e:
            raise json.JSONDecodeError("Expecting value", text, e.value) from None
        chunk.append(item)
        end = _SPACE.match(text, end).end()  # type: ignore[union-attr]
        if len(chunk) == CHUNK_ITEMS or text.startswith("]", end):
            columns.add(chunk, offset)
            offset, chunk = offset + len(chunk), []
        if text.startswith("]", end):
            return end + 1
        if not text.startswith(",", end):
            raise json.JSONDecodeError("Expecting ',' delimiter", text, end)
        end = _SPACE.match(text, end + 1).end()  # type: ignore[union-attr]


def _object_with_arrays(text: str, arrays: dict[str, Callable[[], Columns]], hooks: _Parser) -> Any:
    """A top-level object whose arrays named in `arrays` are read item by item into Columns,
    the rest as parse_json reads it: a million-block report's blocks never become a million dicts."""
    decoder = _decoder(hooks)
    end = _SPACE.match(text).end()  # type: ignore[union-attr]
    if not text.startswith("{", end):
        return None
    pairs: list[tuple[str, Any]] = []
    end = _SPACE.match(text, end + 1).end()  # type: ignore[union-attr]
    while not text.startswith("}", end) or pairs:
        key, end = decoder.raw_decode(text, end)
        end = _SPACE.match(text, end).end()  # type: ignore[union-attr]
        if not isinstance(key, str) or not text.startswith(":", end):
            raise json.JSONDecodeError("Expecting a key and ':'", text, end)
        end = _SPACE.match(text, end + 1).end()  # type: ignore[union-attr]
        if key in arrays and text.startswith("[", end):
            value: Any = arrays[key]()
            end = _items(text, end, hooks, value)
        else:
            value, end = decoder.raw_decode(text, end)
        pairs.append((key, value))
        end = _SPACE.match(text, end).end()  # type: ignore[union-attr]
        if text.startswith("}", end):
            break
        if not text.startswith(",", end):
            raise json.JSONDecodeError("Expecting ',' delimiter", text, end)
        end = _SPACE.match(text, end + 1).end()  # type: ignore[union-attr]
    if _SPACE.match(text, end + 1).end() != len(text):  # type: ignore[union-attr]
        raise json.JSONDecodeError("Extra data", text, end + 1)
    return hooks.object(pairs)


def parse_json_with(text: str, arrays: dict[str, Callable[[], Columns]]) -> Any:
    """parse_json, with the top-level arrays named in `arrays` read into Columns."""
    hooks = _Parser()
    data = _object_with_arrays(text, arrays, hooks)
    if data is None:
        return parse_json(text)
    if hooks.refused is not None:
        field = _where(data, hooks.refused)
        raise InputError(f"{field}: {hooks.refused.why}" if field else hooks.refused.why)
    return data


def read_json(path: str | os.PathLike, what: str = "a JSON file",
              arrays: dict[str, Callable[[], Columns]] | None = None) -> Any:
    """The JSON document in `path`, read by the module's rules; with `arrays`, the top-level
    arrays it names are read item by item into Columns (parse_json_with)."""
    path = Path(path)
    where = shown_path(str(path))
    with _open_regular(path, what) as f:
        data = f.read(MAX_INPUT_BYTES + 1)
    try:
        text = data.decode("utf-8")
        del data   # the bytes and the text of a 250 MB report are not held together for long
        return parse_json_with(text, arrays) if arrays else parse_json(text)
    except UnicodeDecodeError as e:
        raise ToolError(f"{where}: not UTF-8 text (byte {e.start:,})") from None
    except json.JSONDecodeError as e:
        raise ToolError(f"{where}: not valid JSON ({e.msg} at line {e.lineno})") from None
    except (InputError, RecursionError, ValueError) as e:
        raise ToolError(f"{where}: {e if isinstance(e, InputError) else 'not valid JSON (' + str(e) + ')'}") \
            from None


def read_interval_log(path: str | os.PathLike, check: Callable[[Any], str | None] | None = None,
                      partial_tail: bool = False) -> list[dict[str, Any]]:
    """The records of an `apiary run --interval-log`, one JSON object a line, each passed to
    `check` (which returns why a record is damaged, or None). A damaged line is refused with
    its number (exit 1). With partial_tail, a last line without its newline (a run killed while
    writing it) is left out instead of refused. The lines of the RC statistics' archives
    (`{"rc_archive": {...}}`, docs/rc.md) are not records: they are left out."""
    path = Path(path)
    where = shown_path(str(path))
    records: list[dict[str, Any]] = []
    with _open_regular(path, "an interval log") as f:
        for number, raw in enumerate(iter(lambda: f.readline(MAX_LINE_BYTES + 1), b""), 1):
            if not raw.endswith(b"\n"):
                if len(raw) > MAX_LINE_BYTES:
                    raise ToolError(f"{where}:{number}: longer than {MAX_LINE_BYTES:,} bytes", EXIT_FAILED)
                if partial_tail:
                    break
            try:
                record = parse_json(raw.decode("utf-8"))
            except (ValueError, RecursionError) as e:   # JSONDecodeError, InputError, UnicodeDecodeError
                raise ToolError(f"{where}:{number}: {e if isinstance(e, InputError) else 'not a JSON line'}",
                                EXIT_FAILED) from None
            if isinstance(record, dict) and record.keys() == {"rc_archive"}:
                continue
            damage = "not a JSON object" if not isinstance(record, dict) else check(record) if check else None
            if damage:
                raise ToolError(f"{where}:{number}: {damage}", EXIT_FAILED)
            records.append(record)
    return records


# The most samples one line of a folded stack file may count: a day sampled at 10 kHz on 1,000
# threads is under 10^12. Sums over a side's runs stay exact integers.
MAX_FOLDED_COUNT = 10 ** 12


def read_folded(path: str | os.PathLike) -> dict[str, int]:
    """The stacks of a folded stack file (`frame;frame;...;leaf COUNT` a line, as `apiary run
    --profile` and inferno write them), each stack's counts summed. A line that is not one is
    refused with its number (exit 2); a frame may hold spaces (a C++ signature), the count is
    what follows the last one. Empty lines are skipped."""
    path = Path(path)
    where = shown_path(str(path))
    stacks: dict[str, int] = {}
    with _open_regular(path, "a folded stack file") as f:
        for number, raw in enumerate(iter(lambda: f.readline(MAX_LINE_BYTES + 1), b""), 1):
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                raise ToolError(f"{where}:{number}: longer than {MAX_LINE_BYTES:,} bytes")
            try:
                line = raw.decode("utf-8").rstrip()
            except UnicodeDecodeError:
                raise ToolError(f"{where}:{number}: not UTF-8 text") from None
            if not line:
                continue
            stack, _, count = line.rpartition(" ")
            if not stack.strip() or not (count.isascii() and count.isdigit()) or \
                    len(count) > len(str(MAX_FOLDED_COUNT)) or int(count) > MAX_FOLDED_COUNT:
                end = line if len(line) <= 60 else "…" + line[-59:]   # the count is at the end
                raise ToolError(f"{where}:{number}: not a folded stack (frames separated by ';', a space, then a "
                                f"count from 0 to {MAX_FOLDED_COUNT:,}): '{shown(end)}'")
            stacks[stack] = stacks.get(stack, 0) + int(count)
    return stacks


def read_bytes(path: str | os.PathLike, what: str, limit: int = MAX_INPUT_BYTES) -> bytes:
    """A regular file's bytes, at most `limit` of them (a FIFO or a device refused at once)."""
    path = Path(path)
    with _open_regular(path, what) as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise ToolError(f"{shown_path(str(path))}: more than the {limit:,} bytes the tools read of {what}")
    return data


def checked(data: Any, where: str, check: Callable[[Any], str | None], code: int = EXIT_USAGE) -> Any:
    """`data` when `check` finds nothing wrong with it, else a ToolError naming `where`."""
    why = check(data)
    if why:
        raise ToolError(f"{where}: {why}", code)
    return data
