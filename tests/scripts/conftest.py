"""pytest setup for the tests of scripts/apiary_tools: the package on the import path, and the
apiary binary for the end-to-end tests (`--apiary PATH`, else $APIARY_BIN, else the release
build; the end-to-end tests are skipped, saying why, when there is none)."""

import os
import shlex
import stat
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def pytest_addoption(parser):
    parser.addoption("--apiary", default=None, help="the apiary binary for the end-to-end tests")


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def apiary_bin(pytestconfig) -> Path:
    given = pytestconfig.getoption("--apiary") or os.environ.get("APIARY_BIN")
    path = Path(given) if given else REPO / "build" / "release" / "harness" / "apiary"
    if not (path.is_file() and os.access(path, os.X_OK)):
        if given:
            pytest.fail(f"--apiary {path}: no executable there")
        pytest.skip(f"no apiary binary at {path}: pass --apiary PATH or set APIARY_BIN")
    return path


@pytest.fixture
def fake_command() -> str:
    """A --command for multirun and sweep that runs the fake apiary with this Python."""
    fake = Path(__file__).resolve().parent / "fake_apiary.py"
    return shlex.join([sys.executable, str(fake)])


@pytest.fixture
def char_device(tmp_path) -> Path:
    """A character device to write to: as root a null device made with mknod in the test's own
    directory (a tool that replaced it would not replace the machine's /dev/null), else
    /dev/null itself, which a user cannot replace."""
    if os.geteuid() != 0:
        return Path("/dev/null")
    node = tmp_path / "null-device"
    try:
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except OSError as e:
        pytest.skip(f"cannot make a device node here ({e.strerror})")
    return node


@pytest.fixture
def fake_binary(tmp_path) -> Path:
    """An executable that runs the fake apiary, for the tools that take --apiary."""
    binary = tmp_path / "fake-bin" / "apiary"
    binary.parent.mkdir()
    binary.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} "
                      f"{shlex.quote(str(Path(__file__).resolve().parent / 'fake_apiary.py'))} \"$@\"\n")
    binary.chmod(0o755)
    return binary
