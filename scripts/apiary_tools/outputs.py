"""Every file and directory a tool writes, by the rules `apiary run` keeps for its own outputs
(docs/reliability.md, "Outputs"; harness/src/io/output_file.cpp):

- checked before any work (`Outputs`): an output that is one of the tool's inputs, or another
  of its outputs, is refused, whatever the spelling (the inputs being the files the command
  reads, and those an option names for every check of the process, `read_always`: the
  history database of --history) (a file is its device and inode; a file
  not there yet its directory's and its name); a directory where a file is expected, and a
  file where a directory is, is refused; an --out directory with something in it is refused
  unless --force; a FIFO with no reader is refused (and one with a reader is opened and held,
  so the reader sees no end of file before the output);
- written (`write_bytes`, `write_text`, `write_json`, `open_stream`): a character device or
  a FIFO is written through, never replaced; /dev/stdout, /dev/stderr, /dev/fd/N and
  /proc/self/fd/N through the descriptor this process has open; a regular file (or none yet)
  through a temporary file created exclusively beside it (`NAME.tmp-PID-N`: O_CREAT|O_EXCL,
  so neither a user's `NAME.tmp` nor a link of that name is touched), fsync'ed and renamed
  over it, keeping a replaced file's permissions; a symbolic link stays a link and the file
  it names gets the content. Block devices, sockets and directories are refused.

Errors are ToolErrors: 2 (bad usage) when found by the checks, 1 when a write fails.
"""

from __future__ import annotations

import errno
import fcntl
import io
import json
import math
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from .common import EXIT_FAILED, EXIT_USAGE, ToolError, shown_path

DESCRIPTOR_PREFIXES = ("/dev/fd/", "/proc/self/fd/")
# How many links a path may pass through before it counts as a loop, as the kernel allows.
MAX_LINK_HOPS = 40


def descriptor_of(path: str | os.PathLike) -> int | None:
    """The descriptor a path names (/dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N), else None."""
    text = os.fspath(path)
    if text == "/dev/stdout":
        return 1
    if text == "/dev/stderr":
        return 2
    for prefix in DESCRIPTOR_PREFIXES:
        number = text.removeprefix(prefix)
        if number != text and number.isascii() and number.isdigit() and len(number) <= 6:
            return int(number)
    return None


def regular_target(path: Path) -> Path:
    """The file a chain of links ends in (a dangling link's target included), else the path."""
    for _ in range(MAX_LINK_HOPS):
        try:
            if not stat.S_ISLNK(os.lstat(path).st_mode):
                break
            target = Path(os.readlink(path))
        except OSError:
            break
        path = target if target.is_absolute() else path.parent / target
    return path


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory, not a file"
    if stat.S_ISBLK(mode):
        return "a block device, not a regular file (the tools write regular files, or through a character " \
               "device or a FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket, not a regular file"
    return "not a regular file"


def _failure(path: str | os.PathLike, why: str, code: int = EXIT_FAILED) -> ToolError:
    return ToolError(f"cannot write {shown_path(os.fspath(path))}: {why}", code)


def _why(e: OSError) -> str:
    return "a FIFO with no reader" if e.errno == errno.ENXIO else (e.strerror or str(e))


def _is_directory_name(path: str) -> bool:
    return path.endswith("/") or Path(path).name in (".", "..", "")


# ---- identity: a file by what it is, not how it is spelled -----------------------------------

@dataclass(frozen=True)
class Identity:
    exists: bool
    device: bool        # a character device or a FIFO: several outputs may share one
    dev: int = 0        # the file's, or, when it is not there yet, its directory's
    ino: int = 0
    name: str = ""      # the last component of a file not there yet ("" when it exists)

    def same(self, other: Identity) -> bool:
        return (self.exists, self.dev, self.ino, self.name) == (other.exists, other.dev, other.ino, other.name)


def identify(path: str | os.PathLike) -> Identity:
    fd = descriptor_of(path)
    try:
        st = os.fstat(fd) if fd is not None else os.stat(path)
        return Identity(True, stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode), st.st_dev, st.st_ino)
    except OSError:
        pass
    target = regular_target(Path(path))
    try:
        st = os.stat(target.parent)
        return Identity(False, False, st.st_dev, st.st_ino, target.name)
    except OSError:   # its directory is not there yet either: compared by its absolute, normal spelling
        return Identity(False, False, name=os.path.normpath(os.path.abspath(target)))


# ---- the checks before any work ---------------------------------------------------------------

# FIFOs opened by a check, held until their output is written (by the path as given).
_held_fifos: dict[str, int] = {}


def _open_through(path: str, fifo: bool) -> int:
    """A device or FIFO opened to write through; a FIFO without blocking (no reader: ENXIO)."""
    held = _held_fifos.pop(path, None) if fifo else None
    if held is not None:
        return held
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC | os.O_NOCTTY | (os.O_NONBLOCK if fifo else 0))
    if fifo:
        os.set_blocking(fd, True)
    return fd


def check_file(option: str, path: str | os.PathLike) -> None:
    """That `path` can take a file: one line and exit 2 when it cannot."""
    text = os.fspath(path)
    where = f"{option} {shown_path(text)}"
    if (fd := descriptor_of(text)) is not None:
        try:
            flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        except OSError:
            raise ToolError(f"{where}: not an open descriptor") from None
        if flags & os.O_ACCMODE == os.O_RDONLY:
            raise ToolError(f"{where}: open for reading only")
        return
    if _is_directory_name(text):
        raise ToolError(f"{where}: a directory name, not a file")
    try:
        st = os.stat(text)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise ToolError(f"{where}: {e.strerror}") from None
    if st is not None and stat.S_ISFIFO(st.st_mode):
        try:
            _held_fifos.setdefault(text, _open_through(text, fifo=True))
        except OSError as e:
            raise ToolError(f"{where}: {_why(e)}") from None
        return
    if st is not None and not stat.S_ISREG(st.st_mode) and not stat.S_ISCHR(st.st_mode):
        raise ToolError(f"{where}: {_kind(st.st_mode)}")
    if st is not None and not os.access(text, os.W_OK):
        raise ToolError(f"{where}: permission denied")
    parent = regular_target(Path(text)).parent
    for up in (parent, *parent.parents):
        if up.exists():
            if not up.is_dir():
                raise ToolError(f"{where}: {shown_path(str(up))} is not a directory")
            break


def check_directory(option: str, path: Path, force: bool) -> None:
    """That `path` can be an output directory: not a file, and empty (or absent) unless `force`."""
    where = f"{option} {shown_path(str(path))}"
    if path.exists() or path.is_symlink():
        if not path.is_dir():
            raise ToolError(f"{where}: not a directory")
        if not force and any(path.iterdir()):
            raise ToolError(f"{where}: exists and is not empty; choose a new directory, or give --force to "
                            "write into it (files of the same name are replaced)")
        return
    for up in path.parents:
        if up.exists():
            if not up.is_dir():
                raise ToolError(f"{where}: {shown_path(str(up))} is not a directory")
            break


def make_directory(path: Path) -> Path:
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ToolError(f"cannot create the directory {shown_path(str(path))}: {e.strerror}", EXIT_FAILED) from None
    return path


# Inputs of every check of this process, by option: files an option names that a command reads
# besides those it gives its own Outputs (the history database, registered as --history is
# parsed: history.py). An option registered again replaces what it named.
_read_always: dict[str, list[str]] = {}


def read_always(option: str, paths: Iterable[str | os.PathLike]) -> None:
    """Makes `paths` (none: forgets the option's) inputs of every Outputs made from now on."""
    _read_always[option] = [os.fspath(p) for p in paths]


@dataclass
class Named:
    option: str
    path: str
    identity: Identity


class Outputs:
    """What one run of a tool reads and writes, checked before any work: `read` the inputs,
    then `file` and `directory` each output. An output that is the same file as an input, or
    as another output (several may share a character device or FIFO), is refused. The files
    of `read_always` are inputs from the start."""

    def __init__(self) -> None:
        self.inputs: list[Named] = []
        self.outputs: list[Named] = []
        for option, paths in _read_always.items():
            self.read(option, paths)

    def read(self, option: str, paths: Iterable[str | os.PathLike]) -> Outputs:
        """Adds inputs; one found only after some outputs were checked (a profile a report
        names) is checked against them."""
        for p in paths:
            me = Named(option, os.fspath(p), identify(p))
            for out in self.outputs:
                if me.identity.same(out.identity) and not me.identity.device:
                    raise ToolError(f"{out.option} {shown_path(out.path)}: the same file as {option}, an input "
                                    f"({shown_path(me.path)}); an output never replaces what the tool reads")
            self.inputs.append(me)
        return self

    def _distinct(self, option: str, path: str) -> None:
        me = identify(path)
        for other in self.inputs:
            if me.same(other.identity):
                raise ToolError(f"{option} {shown_path(path)}: the same file as {other.option}, an input "
                                f"({shown_path(other.path)}); an output never replaces what the tool reads")
        for other in self.outputs:
            if me.same(other.identity) and not me.device:
                raise ToolError(f"{option} {shown_path(path)}: the same file as {other.option} (each output needs "
                                "a file of its own)")
        self.outputs.append(Named(option, path, me))

    def file(self, option: str, path: str | os.PathLike | None) -> Path | None:
        """Checks an output file (None: not asked for) and returns it as a Path."""
        if path is None:
            return None
        check_file(option, path)
        self._distinct(option, os.fspath(path))
        return Path(path)

    def directory(self, option: str, path: Path, force: bool, contents: Iterable[str] = ()) -> Path:
        """Checks an output directory and the files of `contents` it will hold."""
        check_directory(option, path, force)
        if path.resolve() in {Path(i.path).resolve() for i in self.inputs}:
            raise ToolError(f"{option} {shown_path(str(path))}: an input directory; write the output elsewhere")
        for name in contents:
            self._distinct(option, str(path / name))
        return path


# ---- writing -----------------------------------------------------------------------------------

def _create_beside(target: Path, mode: int) -> tuple[int, Path]:
    """A temporary file of our own beside `target`, created exclusively: (descriptor, path)."""
    for n in range(1000):
        temp = target.with_name(f"{target.name}.tmp-{os.getpid()}-{n}")
        try:
            return os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW, mode), temp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _sync_directory(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass   # some file systems refuse to sync a directory
    finally:
        os.close(fd)


def _replace(path: str, data: bytes) -> None:
    target = regular_target(Path(path))
    make_directory(target.parent)
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = None
    fd, temp = _create_beside(target, 0o666)
    try:
        if mode is not None:
            os.fchmod(fd, mode)
        _write_all(fd, data)
        os.fsync(fd)
        os.close(fd)
        fd = -1
        os.replace(temp, target)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        temp.unlink(missing_ok=True)
        raise
    _sync_directory(target.parent)


def write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Writes `data` to `path` by the rules of this module's docstring."""
    text = os.fspath(path)
    try:
        if (fd := descriptor_of(text)) is not None:
            _write_all(fd, data)
            return
        try:
            st = os.stat(text)
        except FileNotFoundError:
            st = None
        if st is not None and (stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode)):
            fd = _open_through(text, stat.S_ISFIFO(st.st_mode))
            try:
                _write_all(fd, data)
            finally:
                os.close(fd)
            return
        if st is not None and not stat.S_ISREG(st.st_mode):
            raise _failure(text, _kind(st.st_mode), EXIT_USAGE)
        if _is_directory_name(text):
            raise _failure(text, "a directory name, not a file", EXIT_USAGE)
        _replace(text, data)
    except OSError as e:
        raise _failure(text, _why(e)) from None


def write_text(path: str | os.PathLike, text: str) -> None:
    write_bytes(path, text.encode("utf-8"))


def json_safe(value: Any) -> Any:
    """NaN and infinity are not JSON: they become null (numpy scalars become Python numbers)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        return json_safe(value.item())
    return value


def json_text(data: Any) -> str:
    return json.dumps(json_safe(data), indent=2, allow_nan=False) + "\n"


def write_json(path: str | os.PathLike, data: Any) -> None:
    write_text(path, json_text(data))


def open_stream(path: str | os.PathLike) -> IO[str]:
    """A file written while a child runs (its log), opened for writing in place: a regular file
    created or emptied (the file a link names, a link stays a link), a character device written
    through; anything else refused."""
    text = os.fspath(path)
    target = regular_target(Path(text))
    try:
        st = os.stat(target) if target.exists() else None
        if st is not None and not (stat.S_ISREG(st.st_mode) or stat.S_ISCHR(st.st_mode)):
            raise _failure(text, _kind(st.st_mode) + "; a log is written while the run goes", EXIT_USAGE)
        make_directory(target.parent)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC | os.O_NOFOLLOW, 0o666)
    except OSError as e:
        raise _failure(text, _why(e)) from None
    return open(fd, "w", encoding="utf-8")


def write_figure(fig: Any, path: str | os.PathLike, dpi: int) -> Path:
    """A matplotlib figure as PNG, written as every other file is."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    write_bytes(path, buffer.getvalue())
    return Path(path)
