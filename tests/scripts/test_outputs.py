"""The files the tools write, by the binary's rules (docs/reliability.md, docs/tools.md): an output
never replaces an input or another output, devices and FIFOs are written through, a regular
file is replaced through an exclusive temporary file beside it, a directory is never taken
for a file (nor the reverse), an --out directory with something in it needs --force, and a
label is a name, never a path. Through the tools' main(), on constructed reports."""

import hashlib
import json
import os
import select
import stat
import threading
import time
from pathlib import Path

import pytest

import fakes
from apiary_tools.commands import compare, gbexport, ladder, maxrate, multirun, plot, report_html, soak, sweep

BASE = [20000, 20100, 19900, 20050, 19950]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def one_error(capsys, tool: str) -> str:
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"{tool}: ") and "\n" not in err and "Traceback" not in err, err
    return err


@pytest.fixture
def sets(tmp_path):
    return fakes.write_set(tmp_path / "a", BASE), fakes.write_set(tmp_path / "b", [x * 1.05 for x in BASE])


class FifoReader:
    """The reading end of a FIFO, opened without blocking and drained in a thread, so that a
    tool writing to it neither blocks on a full pipe nor finds no reader."""

    def __init__(self, path: Path):
        self.fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        self.data = bytearray()
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._drain, daemon=True)
        self.thread.start()

    def _drain(self):
        while True:
            ready, _, _ = select.select([self.fd], [], [], 0.05)
            chunk = b""
            if ready:
                try:
                    chunk = os.read(self.fd, 65536)
                except BlockingIOError:
                    pass
            if chunk:
                self.data += chunk
            elif self.done.is_set():
                return
            else:
                time.sleep(0.01)   # no writer yet, or none any more

    def close(self) -> bytes:
        self.done.set()
        self.thread.join(10)
        os.close(self.fd)
        return bytes(self.data)


# ---- an output is never an input, nor another output ------------------------------------------

def test_compare_json_onto_its_input_is_refused_before_any_work(sets, capsys):
    a, b = sets
    report = a / "run-001.json"
    before = digest(report)
    for target in (report, a / "." / "run-001.json", report.resolve()):
        assert compare.main([str(report), str(b), "--json", str(target), "--quiet"]) == 2
        assert "an input" in one_error(capsys, "compare")
    assert compare.main([str(a), str(b), "--markdown", str(a / "run-002.json"), "--quiet"]) == 2
    assert "an input" in one_error(capsys, "compare")
    assert digest(report) == before


def test_an_input_reached_through_a_link_is_the_same_file(sets, tmp_path, capsys):
    a, b = sets
    link = tmp_path / "link.json"
    link.symlink_to(a / "run-001.json")
    hard = tmp_path / "hard.json"
    os.link(a / "run-002.json", hard)
    for target, source in ((link, a / "run-001.json"), (hard, a / "run-002.json")):
        before = digest(source)
        assert compare.main([str(a), str(b), "--json", str(target), "--quiet"]) == 2
        assert "an input" in one_error(capsys, "compare")
        assert digest(source) == before


def test_two_outputs_on_one_file_are_refused(sets, tmp_path, capsys):
    a, b = sets
    out = tmp_path / "cmp.out"
    assert compare.main([str(a), str(b), "--json", str(out), "--markdown", str(tmp_path / "." / "cmp.out"),
                         "--quiet"]) == 2
    assert "--markdown" in one_error(capsys, "compare") and not out.exists()


def test_gb_export_onto_its_input_is_refused(sets, capsys):
    a, _ = sets
    report = a / "run-001.json"
    before = digest(report)
    assert gbexport.main([str(report), "-o", str(report)]) == 2
    assert "an input" in one_error(capsys, "gb-export")
    assert digest(report) == before


def test_report_html_never_replaces_its_input(tmp_path, capsys):
    page_named = fakes.write_report(tmp_path / "run.html", fakes.make_report([20000] * 5))
    before = digest(page_named)
    assert report_html.main([str(page_named)]) == 2      # the default name is the input itself
    assert "an input" in one_error(capsys, "report-html")
    assert report_html.main([str(page_named), "--out", str(tmp_path / "." / "run.html")]) == 2
    assert "an input" in one_error(capsys, "report-html")
    assert digest(page_named) == before


# ---- devices, FIFOs, links and temporary files ------------------------------------------------

@pytest.mark.parametrize("tool", ["compare", "gb-export", "report-html"])
def test_a_character_device_is_written_through(tool, sets, char_device, capsys):
    a, b = sets
    args = {"compare": lambda: compare.main([str(a), str(b), "--json", str(char_device), "--quiet"]),
            "gb-export": lambda: gbexport.main([str(a), "-o", str(char_device)]),
            "report-html": lambda: report_html.main([str(a / "run-001.json"), "--out", str(char_device)])}
    assert args[tool]() in (0, 1)
    assert stat.S_ISCHR(os.stat(char_device).st_mode)
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert not list(char_device.parent.glob(char_device.name + ".tmp*"))


def test_a_full_device_is_one_line_and_exit_1(sets, char_device, capsys):
    full = Path("/dev/full")
    if char_device != Path("/dev/null"):   # as root: a full device of the test's own
        full = char_device.with_name("full-device")
        os.mknod(full, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
    elif not full.exists():
        pytest.skip("no /dev/full")
    a, b = sets
    assert compare.main([str(a), str(b), "--json", str(full), "--quiet"]) == 1
    assert "No space left on device" in one_error(capsys, "compare")
    assert stat.S_ISCHR(os.stat(full).st_mode)


def test_a_fifo_with_a_reader_is_written_through(sets, tmp_path):
    a, b = sets
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    reader = FifoReader(fifo)
    try:
        assert compare.main([str(a), str(b), "--json", str(fifo), "--quiet"]) in (0, 1)
    finally:
        data = reader.close()
    assert json.loads(data)["kind"] == "apiary-compare"
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_a_fifo_without_a_reader_is_refused_at_once(sets, tmp_path, capsys):
    a, b = sets
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    t0 = time.monotonic()
    assert gbexport.main([str(a), "-o", str(fifo)]) == 2
    assert "a FIFO with no reader" in one_error(capsys, "gb-export")
    assert time.monotonic() - t0 < 30 and stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_a_users_tmp_file_and_a_link_named_like_one_are_untouched(sets, tmp_path):
    a, b = sets
    out = tmp_path / "cmp.json"
    users = tmp_path / "cmp.json.tmp"
    users.write_text("mine")
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    (tmp_path / "cmp.md.tmp").symlink_to(victim)
    assert compare.main([str(a), str(b), "--json", str(out), "--markdown", str(tmp_path / "cmp.md"),
                         "--quiet"]) in (0, 1)
    assert json.loads(out.read_text())["kind"] == "apiary-compare"
    assert users.read_text() == "mine" and victim.read_text() == "keep me"
    assert (tmp_path / "cmp.md.tmp").is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b", "cmp.json", "cmp.json.tmp", "cmp.md",
                                                          "cmp.md.tmp", "victim.txt"]


def test_a_link_stays_a_link_and_a_replaced_file_keeps_its_mode(sets, tmp_path):
    a, b = sets
    target = tmp_path / "target.json"
    target.write_text("old")
    target.chmod(0o640)
    link = tmp_path / "link.json"
    link.symlink_to(target.name)
    assert gbexport.main([str(a), "-o", str(link)]) == 0
    assert link.is_symlink() and json.loads(target.read_text())["benchmarks"]
    assert stat.S_IMODE(target.stat().st_mode) == 0o640


# ---- files and directories -----------------------------------------------------------------

@pytest.mark.parametrize("tool", ["compare", "gb-export", "report-html"])
def test_a_directory_where_a_file_is_expected_is_one_line(tool, sets, tmp_path, capsys):
    a, b = sets
    directory = tmp_path / "somewhere"
    directory.mkdir()
    for target in (str(directory), str(tmp_path / "new") + "/"):
        run = {"compare": lambda t: compare.main([str(a), str(b), "--json", t, "--quiet"]),
               "gb-export": lambda t: gbexport.main([str(a), "-o", t]),
               "report-html": lambda t: report_html.main([str(a), "--out", t])}[tool]
        assert run(target) == 2
        assert "directory" in one_error(capsys, tool)
    assert not (tmp_path / "new").exists() and not any(directory.iterdir())


@pytest.fixture
def a_file(tmp_path):
    f = tmp_path / "a-file"
    f.write_text("mine")
    return f


def test_a_file_where_a_directory_is_expected_is_one_line(a_file, sets, fake_command, fake_binary, capsys,
                                                          tmp_path):
    a, _ = sets
    soak_dir = tmp_path / "soak-from"
    soak_dir.mkdir()
    calls = {
        "multirun": lambda: multirun.main(["--command", fake_command, "--runs", "1", "--out", str(a_file)]),
        "sweep": lambda: sweep.main(["--command", fake_command, "--param", "threads", "--values", "1",
                                     "--out", str(a_file)]),
        "find-max-rate": lambda: maxrate.main(["--command", fake_command, "--low", "10", "--high", "20",
                                               "--out", str(a_file)]),
        "ladder": lambda: ladder.main(["--apiary", str(fake_binary), "--runs", "1", "--instructions", "off",
                                       "--out", str(a_file)]),
        "soak": lambda: soak.main(["--apiary", str(fake_binary), "--out", str(a_file)]),
        "plot": lambda: plot.main([str(a), "--out", str(a_file)]),
    }
    for tool, call in calls.items():
        assert call() == 2, tool
        assert "not a directory" in one_error(capsys, tool)
        assert a_file.read_text() == "mine"


def test_an_out_directory_with_something_in_it_needs_force(tmp_path, fake_command, fake_binary, capsys):
    out = tmp_path / "o"
    out.mkdir()
    (out / "earlier.json").write_text("{}")
    calls = {
        "multirun": ["--command", fake_command, "--runs", "1"],
        "sweep": ["--command", fake_command, "--param", "threads", "--values", "1"],
        "find-max-rate": ["--command", fake_command, "--low", "10", "--high", "20"],
        "ladder": ["--apiary", str(fake_binary), "--runs", "1", "--instructions", "off"],
        "soak": ["--apiary", str(fake_binary)],
        "plot": [str(fakes.write_report(tmp_path / "r.json", fakes.make_report([20000] * 5)))],
    }
    mains = {"multirun": multirun.main, "sweep": sweep.main, "find-max-rate": maxrate.main, "ladder": ladder.main,
             "soak": soak.main, "plot": plot.main}
    for tool, args in calls.items():
        assert mains[tool](args + ["--out", str(out)]) == 2, tool
        err = one_error(capsys, tool)
        assert "not empty" in err and "--force" in err
        assert sorted(p.name for p in out.iterdir()) == ["earlier.json"]
    assert multirun.main(calls["multirun"] + ["--out", str(out), "--force", "--quiet"]) == 0
    assert (out / "aggregate.json").is_file() and (out / "earlier.json").read_text() == "{}"
    assert plot.main(calls["plot"] + ["--out", str(out), "--force"]) == 0


def test_a_finished_soak_is_not_run_over(tmp_path, fake_binary, capsys):
    out = tmp_path / "soak"
    out.mkdir()
    for name in ("report.json", "intervals.jsonl", "soak.json"):
        (out / name).write_text("from the finished soak\n")
    assert soak.main(["--apiary", str(fake_binary), "--out", str(out)]) == 2
    assert "not empty" in one_error(capsys, "soak")
    assert all((out / n).read_text() == "from the finished soak\n" for n in ("report.json", "intervals.jsonl"))


# ---- labels are names ----------------------------------------------------------------------

@pytest.mark.parametrize("label", ["../escaped", "x/y", "", ".hidden", "..", "a\nb"])
def test_a_label_is_a_name_never_a_path(label, tmp_path, fake_command, capsys):
    out = tmp_path / "deep" / "o"
    for option in ("--a-label", "--b-label"):
        assert multirun.main(["--command", fake_command, "--runs", "1", "--a", "--dedup split", "--b",
                              "--dedup unified", option, label, "--out", str(out)]) == 2
        assert "name" in one_error(capsys, "multirun")
    assert multirun.main(["--command", fake_command, "--runs", "1", "--label", label, "--out", str(out)]) == 2
    one_error(capsys, "multirun")
    assert not (tmp_path / "deep").exists() and not (tmp_path / "escaped").exists()
