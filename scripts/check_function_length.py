#!/usr/bin/env python3
"""The function-length rule for the Python tools: no function (a method, a nested function)
longer than --max lines, counted from its `def` line to its last line (decorators not
included). Prints `file:line name length` for every function over the limit, longest first,
and exits 1 when there is one; 2 when a file cannot be read or parsed. scripts/lint --python
runs it over scripts/apiary_tools.

    scripts/check_function_length.py [--max 80] PATH...   (files, or directories of .py files)
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from apiary_tools.common import whole_number

DEFAULT_MAX = 80


class Unreadable(Exception):
    """A file that cannot be read or parsed: one line, exit status 2."""


def python_files(paths: Sequence[Path]) -> Iterator[Path]:
    for path in paths:
        if path.is_dir():
            yield from sorted(path.rglob("*.py"))
        else:
            yield path


def function_lengths(source: str, filename: str) -> Iterator[tuple[int, str, int]]:
    """(line of the def, qualified name, lines) of every function in the source."""
    def walk(node: ast.AST, prefix: str) -> Iterator[tuple[int, str, int]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                end = child.end_lineno if child.end_lineno is not None else child.lineno
                yield child.lineno, name, end - child.lineno + 1
                yield from walk(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, prefix + child.name + ".")
            else:
                yield from walk(child, prefix)

    yield from walk(ast.parse(source, filename), "")


def too_long(paths: Sequence[Path], limit: int) -> list[tuple[int, str, int, str]]:
    """(lines, file, def line, name) of every function over the limit."""
    found = []
    for path in python_files(paths):
        try:
            source = path.read_text(encoding="utf-8")
            lengths = list(function_lengths(source, str(path)))
        except OSError as e:
            raise Unreadable(f"{path}: cannot read ({e.strerror})") from None
        except SyntaxError as e:
            raise Unreadable(f"{path}:{e.lineno}: not valid Python ({e.msg})") from None
        found += [(length, str(path), line, name) for line, name, length in lengths if length > limit]
    return sorted(found, key=lambda f: (-f[0], f[1], f[2]))


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="check_function_length",
                                description="Names every Python function longer than --max lines.")
    p.add_argument("--max", type=whole_number(1, 100_000), default=DEFAULT_MAX,
                   help="the most lines a function may have (default: 80)")
    p.add_argument("paths", nargs="+", type=Path, help="Python files, or directories searched for them")
    args = p.parse_args(argv)
    try:
        over = too_long(args.paths, args.max)
    except Unreadable as e:
        print(f"check_function_length: {e}", file=sys.stderr)
        return 2
    for length, path, line, name in over:
        print(f"{path}:{line} {name} {length}")
    if over:
        print(f"check_function_length: {len(over)} function(s) over {args.max} lines: split them", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
