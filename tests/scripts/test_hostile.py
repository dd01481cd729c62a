"""Every tool against hostile input: numbers JSON should not hold, wrong types and shapes,
truncated and empty files, FIFOs and devices, outputs onto inputs and onto devices, a link
named like the temporary file, labels that are paths, plans too large, numbers that are not
finite, quotes that do not close. Whatever the case, the tool ends with exit status 1 or 2 and
exactly one line on stderr starting with its name (never a traceback), every input file is
byte for byte what it was, and a device is still a device (the machine's /dev/null too).

Each case runs the tool's main() in this process on constructed files; a few run the entry
scripts, as a user does."""

import hashlib
import json
import os
import shutil
import stat
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import fakes
import histories
from apiary_tools import history_db
from apiary_tools.commands import (
    compare,
    gbexport,
    ladder,
    maxrate,
    multirun,
    perf_gate,
    plot,
    report_html,
    soak,
    sweep,
)
from apiary_tools.commands import history as history_cli

MAINS = {"compare": compare.main, "gb-export": gbexport.main, "report-html": report_html.main, "plot": plot.main,
         "multirun": multirun.main, "sweep": sweep.main, "find-max-rate": maxrate.main, "ladder": ladder.main,
         "soak": soak.main, "perf-gate": perf_gate.main, "history": history_cli.main}


@dataclass
class Scene:
    """What a case builds on: a directory of three good reports (`a`, and `b` to compare
    against), a device node to write to, a fake apiary, and the files the case adds."""
    root: Path
    device: Path
    fake_command: str
    fake_binary: Path
    a: Path = field(init=False)
    b: Path = field(init=False)

    def __post_init__(self):
        self.a = self.root / "a"
        self.b = self.root / "b"

    def report(self, name: str = "run-002.json") -> Path:
        return self.a / name

    def spoil(self, text: str | bytes, name: str = "run-002.json") -> Path:
        path = self.a / name
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
        return path

    def fifo(self, name: str = "fifo") -> Path:
        path = self.root / name
        os.mkfifo(path)
        return path

    def a_file(self, name: str = "a-file") -> Path:
        path = self.root / name
        path.write_text("mine\n")
        return path

    def busy_dir(self, name: str = "busy") -> Path:
        path = self.root / name
        path.mkdir()
        (path / "earlier.json").write_text("{}\n")
        return path

    def history(self, name: str = "history.sqlite") -> Path:
        """A results history (SQLite) of six commits' cycle times, enough for a trend, to write onto."""
        path = self.root / name
        histories.plant(str(path), [20_000.0 + 10 * i for i in range(6)])
        return path

    def link(self, target: Path, name: str = "link") -> Path:
        path = self.root / name
        path.symlink_to(target)
        return path

    def tmp_link(self, output: Path) -> Path:
        """A link named like output's temporary file, to a file that must not change."""
        victim = self.root / f"victim-of-{output.name}"
        victim.write_text("keep me\n")
        output.with_name(output.name + ".tmp").symlink_to(victim)
        return output

    def profiled(self, folded: str | bytes | None = None, spoil_report: Callable[[dict], None] | None = None,
                 fifo: bool = False) -> list[str]:
        """Two sets of counted and profiled runs (pa, pb), pb's run-002 spoiled: its window.folded
        replaced by `folded` (or a FIFO), its report changed by `spoil_report`."""
        a = fakes.write_profiled_set(self.root / "pa", [20000, 20100])
        b = fakes.write_profiled_set(self.root / "pb", [21000, 21100], slow="apiary::core::chain::find_comment")
        folded_path = b / "run-002.profile" / "window.folded"
        if folded is not None:
            folded_path.write_bytes(folded if isinstance(folded, bytes) else folded.encode())
        if fifo:
            folded_path.unlink()
            os.mkfifo(folded_path)
        if spoil_report is not None:
            report = json.loads((b / "run-002.json").read_text())
            spoil_report(report)
            (b / "run-002.json").write_text(json.dumps(report))
        return [str(a), str(b)]

    def soak_dir(self, lines: list[str] | None = None, report: str | None = None) -> Path:
        path = self.root / "soak"
        path.mkdir()
        lines = lines if lines is not None else [json.dumps(r) for r in fakes.soak_log(blocks=4_000, window=1_000)]
        (path / "intervals.jsonl").write_text("\n".join(lines) + "\n")
        if report is not None:
            (path / "report.json").write_text(report)
        return path


def good_report_text(**change) -> str:
    report = fakes.make_report(fakes.noisy_cycles(20000, 2))
    for dotted, value in change.items():
        node = report
        keys = dotted.split("__")
        for k in keys[:-1]:
            node = node[int(k)] if isinstance(node, list) else node[k]
        node[int(keys[-1]) if isinstance(node, list) else keys[-1]] = value
    return json.dumps(report)


def raw(text: str, field_name: str, replacement: str) -> str:
    """A report's text with the value of its first `"field_name": value` replaced verbatim."""
    key = f'"{field_name}": '
    start = text.index(key) + len(key)
    end = min(i for i in (text.find(",", start), text.find("}", start)) if i >= 0)
    return text[:start] + replacement + text[end:]


# ---- bad reports, for every tool that reads reports -------------------------------------------

BAD_REPORTS: dict[str, Callable[[], str | bytes]] = {
    "nan": lambda: raw(good_report_text(), "avg", "NaN"),
    "infinity": lambda: raw(good_report_text(), "tx_per_s", "Infinity"),
    "exponent past a float": lambda: raw(good_report_text(), "window_s", "1e400"),
    "integer past 2^64": lambda: raw(good_report_text(), "measured_blocks", "1" + "0" * 25),
    "integer of 6,000 digits": lambda: raw(good_report_text(), "peak_rss_bytes", "7" * 6000),
    "string for a number": lambda: good_report_text(aggregates__cycle_us__avg="fast"),
    "bool for a number": lambda: good_report_text(throughput__transactions=True),
    "blocks an object": lambda: good_report_text(blocks={"1": {}}),
    "a block a number": lambda: good_report_text(blocks__2=7),
    "negative bin count": lambda: good_report_text(latency__inclusion__bins__0__1=-4),
    "negative bin index": lambda: good_report_text(latency__inclusion__bins__0__0=-7),
    "bin index past the axis": lambda: good_report_text(latency__end_to_end__bins__0__0=10 ** 6),
    "a histogram of 10^12 bins": lambda: good_report_text(latency__histogram__bins=10 ** 12),
    "a key twice": lambda: good_report_text().replace('"status": "completed"', '"status": "completed", "status": 1'),
    "truncated": lambda: good_report_text()[:3000],
    "empty": lambda: "",
    "not text": lambda: bytes(range(256)) * 4,
    "a list": lambda: "[1, 2, 3]",
    "nested 100,000 deep": lambda: "[" * 100_000 + "]" * 100_000,
}

# Each reads the spoiled report itself (in a directory, a file that is no report is passed over).
READERS: dict[str, Callable[[Scene], list[str]]] = {
    "compare": lambda s: [str(s.report()), str(s.b), "--json", str(s.device), "--markdown",
                          str(s.tmp_link(s.root / "c.md"))],
    "gb-export": lambda s: [str(s.report()), "-o", str(s.device)],
    "report-html": lambda s: [str(s.report()), "--out", str(s.device)],
    "plot": lambda s: [str(s.report()), "--out", str(s.root / "figures")],
    "multirun": lambda s: ["--aggregate", str(s.report()), "--out", str(s.root / "agg"), "--quiet"],
}

CASES: list[tuple[str, str, Callable[[Scene], list[str]]]] = []
for _tool, _args in READERS.items():
    for _name, _text in BAD_REPORTS.items():
        CASES.append((_tool, f"report: {_name}", lambda s, t=_text, a=_args: (s.spoil(t()), a(s))[1]))
    CASES += [
        (_tool, "input: a FIFO", lambda s, a=_args: (s.report().unlink(), os.mkfifo(s.report()), a(s))[2]),
    ]

# ---- outputs ----------------------------------------------------------------------------------------

CASES += [
    ("compare", "--json onto an input", lambda s: [str(s.a), str(s.b), "--json", str(s.report())]),
    ("compare", "--json onto an input by a link", lambda s: [
        str(s.a), str(s.b), "--json", str((s.root / "l.json", (s.root / "l.json").symlink_to(s.report()))[0])]),
    ("compare", "--json and --markdown one file", lambda s: [str(s.a), str(s.b), "--json", str(s.root / "x"),
                                                             "--markdown", str(s.root / "." / "x")]),
    ("compare", "--json a FIFO without a reader", lambda s: [str(s.a), str(s.b), "--json", str(s.fifo())]),
    ("compare", "--json a directory", lambda s: [str(s.a), str(s.b), "--json", str(s.busy_dir())]),
    ("compare", "--json a directory name", lambda s: [str(s.a), str(s.b), "--json", str(s.root / "new") + "/"]),
    ("compare", "--json under a file", lambda s: [str(s.a), str(s.b), "--json", str(s.a_file() / "x.json")]),
    ("compare", "--labels a path", lambda s: [str(s.a), str(s.b), "--labels", "../x,y"]),
    ("compare", "--min-effect nan", lambda s: [str(s.a), str(s.b), "--min-effect", "nan"]),
    ("gb-export", "-o onto its input", lambda s: [str(s.report()), "-o", str(s.report())]),
    ("gb-export", "-o a FIFO without a reader", lambda s: [str(s.a), "-o", str(s.fifo())]),
    ("gb-export", "-o a directory", lambda s: [str(s.a), "-o", str(s.busy_dir())]),
    ("report-html", "--out onto its input", lambda s: [str(s.report()), "--out", str(s.report())]),
    ("report-html", "its default name its input", lambda s: [str(s.spoil(good_report_text(), "run.html"))]),
    ("report-html", "--out a FIFO without a reader", lambda s: [str(s.a), "--out", str(s.fifo())]),
    ("report-html", "--out a directory", lambda s: [str(s.a), "--out", str(s.busy_dir())]),
    ("plot", "--out a file", lambda s: [str(s.a), "--out", str(s.a_file())]),
    ("plot", "--out a directory with files", lambda s: [str(s.a), "--out", str(s.busy_dir())]),
    ("plot", "--labels a path", lambda s: [str(s.a), "--labels", "a/b", "--out", str(s.root / "f")]),
    ("multirun", "--aggregate --out a file", lambda s: ["--aggregate", str(s.a), "--out", str(s.a_file())]),
]

# ---- outputs onto the history: the history is an input of every tool that takes --history -------------

def _onto_history(tool: str, output: list[str], through: Callable[[Scene, Path], Path] = lambda s, h: h) -> Callable:
    def build(s: Scene) -> list[str]:
        h = s.history()
        before = {"history trend": ["trend", "--history", str(h)],
                  "history export": ["export", "--format", "csv", "--history", str(h)],
                  "compare": [str(s.a), str(s.b), "--history", str(h)],
                  "perf-gate": ["--apiary", str(s.fake_binary), "--history", str(h)]}[tool]
        return before + [output[0], str(through(s, h))] + output[1:]
    return build


CASES += [
    ("history", "trend --out onto --history", _onto_history("history trend", ["--out"])),
    ("history", "trend --out onto --history by a link", _onto_history("history trend", ["--out"], Scene.link)),
    ("history", "export --out onto --history", _onto_history("history export", ["--out"])),
    ("history", "export --out onto --history by a hard link", _onto_history(
        "history export", ["--out"], lambda s, h: (s.root / "hard", os.link(h, s.root / "hard"))[0])),
    ("compare", "--json onto --history", _onto_history("compare", ["--json"])),
    ("perf-gate", "--junit onto --history", _onto_history("perf-gate", ["--junit"])),
    ("perf-gate", "--markdown onto --history", _onto_history("perf-gate", ["--markdown"])),
    ("perf-gate", "--json onto --history by a link", _onto_history("perf-gate", ["--json"], Scene.link)),
]

CASES += [
    ("history", "--history a URL with no host", lambda s: ["list", "--history", "postgresql:///apiary"]),
    ("history", "--history a URL of garbage", lambda s: ["list", "--history", "postgresql://u:pw@%%%:x/db"]),
    ("compare", "--history a URL with a bad port", lambda s: [str(s.a), str(s.b), "--json", str(s.root / "c.json"),
                                                             "--history", "postgresql://u@h:99999/db"]),
    ("history", "ingest into a history that cannot be opened", lambda s: [
        "ingest", "--history", str(s.link(s.root / "gone" / "h.sqlite")), str(s.a)]),
    ("history", "list --since yesterday", lambda s: ["list", "--history", str(s.history()), "--since", "yesterday"]),
    ("history", "export --since a day that is not", lambda s: ["export", "--format", "json", "--history",
                                                               str(s.history()), "--since", "2026-02-30"]),
]

# ---- counters and profiles -------------------------------------------------------------------------

def _out(s: Scene) -> list[str]:
    return ["--profile", "--out", str(s.root / "profile")]


CASES += [
    ("compare", "profile: a folded line without a count", lambda s: s.profiled("writer;main;f\n") + _out(s)),
    ("compare", "profile: a folded count past 10^12", lambda s: s.profiled("writer;f 1" + "0" * 13 + "\n") + _out(s)),
    ("compare", "profile: a folded line of 2 MB", lambda s: s.profiled("w;" + "f" * 2_000_000 + " 1\n") + _out(s)),
    ("compare", "profile: a folded file not text", lambda s: s.profiled(bytes(range(256))) + _out(s)),
    ("compare", "profile: a folded FIFO", lambda s: s.profiled(fifo=True) + _out(s)),
    ("compare", "profile: no samples", lambda s: (args := s.profiled("writer;f 0\n"), Path(
        args[1], "run-001.profile", "window.folded").write_text(""), args)[2] + _out(s)),
    ("compare", "profile: dir missing", lambda s: s.profiled(
        spoil_report=lambda r: r["profile"].update(dir="gone")) + _out(s)),
    ("compare", "profile: dir with a control character", lambda s: s.profiled(
        spoil_report=lambda r: r["profile"].update(dir="run-002\n.profile")) + _out(s)),
    ("compare", "profile: dir a number", lambda s: s.profiled(
        spoil_report=lambda r: r["profile"].update(dir=7)) + _out(s)),
    ("compare", "profile: --out an input directory", lambda s: s.profiled() + ["--profile", "--out",
                                                                                str(s.root / "pa")]),
    ("compare", "profile: nowhere to write", lambda s: s.profiled() + ["--profile"]),
    ("compare", "counters: a thread named as a path", lambda s: s.profiled(
        spoil_report=lambda r: r["counters"]["threads"][0].update(name="../x"))),
    ("compare", "counters: per_transaction a list", lambda s: s.profiled(
        spoil_report=lambda r: r["counters"]["threads"][0].update(per_transaction=[1, 2]))),
    ("compare", "counters: ipc NaN", lambda s: (args := s.profiled(), Path(args[1], "run-002.json").write_text(
        Path(args[1], "run-002.json").read_text().replace('"ipc": null', '"ipc": NaN', 1)), args)[2]),
    ("multirun", "--profile given to the runs", lambda s: ["--command", s.fake_command, "--profile", "--out",
                                                           str(s.root / "o"), "--", "--profile", "x"]),
]

# ---- runs ----------------------------------------------------------------------------------------------

RUNNERS: dict[str, Callable[[Scene], list[str]]] = {
    "multirun": lambda s: ["--command", s.fake_command],
    "sweep": lambda s: ["--command", s.fake_command, "--param", "threads", "--values", "1,2"],
    "find-max-rate": lambda s: ["--command", s.fake_command, "--low", "10", "--high", "20"],
    "ladder": lambda s: ["--apiary", str(s.fake_binary), "--instructions", "off"],
    "soak": lambda s: ["--apiary", str(s.fake_binary)],
}
for _tool, _base in RUNNERS.items():
    CASES += [
        (_tool, "--out a file", lambda s, b=_base: b(s) + ["--out", str(s.a_file())]),
        (_tool, "--out a directory with files", lambda s, b=_base: b(s) + ["--out", str(s.busy_dir())]),
        (_tool, "--out a FIFO", lambda s, b=_base: b(s) + ["--out", str(s.fifo())]),
        (_tool, "--out under a file", lambda s, b=_base: b(s) + ["--out", str(s.a_file() / "o")]),
    ]
    if _tool != "soak":
        CASES.append((_tool, "--runs 10^20", lambda s, b=_base: b(s) + ["--runs", "1" + "0" * 20,
                                                                        "--out", str(s.root / "o")]))
    if _tool in ("multirun", "sweep", "ladder", "soak"):
        CASES.append((_tool, "--cluster-timeout nan", lambda s, b=_base: b(s) + [
            "--cluster", "tcp://127.0.0.1:1", "--cluster-timeout", "nan", "--out", str(s.root / "o")]))
    if _tool in ("multirun", "sweep", "find-max-rate"):
        CASES.append((_tool, "--command with an open quote", lambda s, b=_base: b(s)[2:] + [
            "--command", "python3 'fake", "--out", str(s.root / "o")]))
    if _tool in ("multirun", "sweep", "soak"):
        CASES += [
            (_tool, "--config a FIFO", lambda s, b=_base: b(s) + ["--config", str(s.fifo()), "--out",
                                                                  str(s.root / "o")]),
            (_tool, "--config a device", lambda s, b=_base: b(s) + ["--config", "/dev/zero", "--out",
                                                                    str(s.root / "o")]),
        ]

CASES += [
    ("multirun", "--a-label with a slash", lambda s: ["--command", s.fake_command, "--a", "x", "--b", "y",
                                                      "--a-label", "a/b", "--out", str(s.root / "o")]),
    ("multirun", "--b-label ..", lambda s: ["--command", s.fake_command, "--a", "x", "--b", "y",
                                            "--b-label", "..", "--out", str(s.root / "o")]),
    ("multirun", "--label empty", lambda s: ["--command", s.fake_command, "--label", "", "--out", str(s.root / "o")]),
    ("multirun", "--a with an open quote", lambda s: ["--command", s.fake_command, "--a", "--name 'x", "--b", "y",
                                                      "--out", str(s.root / "o")]),
    ("multirun", "a plan of 12,000 runs", lambda s: ["--command", s.fake_command, "--runs", "6000", "--a", "x",
                                                     "--b", "y", "--out", str(s.root / "o")]),
    ("sweep", "two values one directory", lambda s: ["--command", s.fake_command, "--param", "name",
                                                     "--values", "a/b,a_b", "--out", str(s.root / "o")]),
    ("find-max-rate", "--bound nan", lambda s: RUNNERS["find-max-rate"](s) + ["--bound", "nan"]),
    ("find-max-rate", "--low 1e300", lambda s: ["--command", s.fake_command, "--low", "1e300", "--high", "2e300"]),
    ("ladder", "--alpha nan", lambda s: RUNNERS["ladder"](s) + ["--alpha", "nan"]),
    ("ladder", "a plan of 40,000 runs", lambda s: RUNNERS["ladder"](s) + ["--runs", "5000"]),
    ("soak", "--interval nan", lambda s: RUNNERS["soak"](s) + ["--interval", "nan"]),
    ("soak", "--blocks 10^20", lambda s: RUNNERS["soak"](s) + ["--blocks", "1" + "0" * 20]),
    ("soak", "--from: a damaged record", lambda s: ["--from", str(s.soak_dir(
        [json.dumps(r) for r in fakes.soak_log(4_000, 1_000)][:5] + ['{"blocks": "many"}']))]),
    ("soak", "--from: a NaN record", lambda s: ["--from", str(s.soak_dir(
        [json.dumps(r) for r in fakes.soak_log(4_000, 1_000)][:5] + ['{"t_s": NaN}']))]),
    ("soak", "--from: a line of 2 MB", lambda s: ["--from", str(s.soak_dir(["x" * 2_000_000]))]),
    ("soak", "--from: a NaN report", lambda s: ["--from", str(s.soak_dir(
        report=raw(good_report_text(), "avg", "NaN")))]),
    ("soak", "--from: one record", lambda s: ["--from", str(s.soak_dir(
        [json.dumps(r) for r in fakes.soak_log(4_000, 1_000)][:1]))]),
    ("perf-gate", "--threshold nan", lambda s: ["--apiary", str(s.fake_binary), "--threshold", "nan"]),
    ("perf-gate", "--json onto --apiary", lambda s: ["--apiary", str(s.fake_binary), "--json", str(s.fake_binary)]),
    ("perf-gate", "--json a directory", lambda s: ["--apiary", str(s.fake_binary), "--json", str(s.busy_dir())]),
    ("perf-gate", "--transactions 10^20", lambda s: ["--apiary", str(s.fake_binary), "--transactions",
                                                     "1" + "0" * 20]),
    ("perf-gate", "--work a file", lambda s: ["--apiary", str(s.fake_binary), "--work", str(s.a_file())]),
]


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("hostile")
    fakes.write_set(root / "a", [20000, 20100, 19900])
    fakes.write_set(root / "b", [21000, 21100, 20900])
    return root


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def files_of(root: Path) -> dict[Path, str]:
    """Every regular file under `root` (devices and FIFOs left out) with its hash; links as such."""
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_symlink():
            out[p] = "link to " + os.readlink(p)
        elif p.is_file():
            out[p] = digest(p)
    return out


def assert_held(tool: str, code: int, err: str, before: dict[Path, str], device: Path):
    assert "Traceback" not in err, err
    assert code in (1, 2), (code, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{tool}: "), err
    for path, was in before.items():
        now = ("link to " + os.readlink(path)) if path.is_symlink() else digest(path)
        assert now == was, f"{path} changed"
    assert stat.S_ISCHR(os.stat(device).st_mode) and stat.S_ISCHR(os.stat("/dev/null").st_mode)


def _never_measured(args, result):
    """Every perf-gate case is refused before the gate builds and measures: a case that got this
    far fails here instead of building the parent commit."""
    pytest.fail("perf-gate went on to measure")


@pytest.mark.parametrize("tool, case, build", CASES, ids=[f"{t}: {c}" for t, c, _ in CASES])
def test_a_hostile_case_ends_in_one_line_and_touches_nothing(tool, case, build, template, tmp_path, char_device,
                                                             fake_command, fake_binary, capsys, monkeypatch):
    monkeypatch.setattr(perf_gate.shutil, "which", lambda name: "/usr/bin/" + name)
    monkeypatch.setattr(perf_gate, "_gate", _never_measured)
    root = Path(shutil.copytree(template, tmp_path / "scene"))
    scene = Scene(root, char_device, fake_command, fake_binary)
    args = build(scene)
    before = files_of(root)
    code = MAINS[tool](args)
    assert_held(tool, code, capsys.readouterr().err, before, char_device)


def test_perf_gate_s_outputs_never_onto_the_history_of_its_environment(tmp_path, fake_binary, capsys, monkeypatch):
    """$APIARY_HISTORY stands for --history: an output onto it is refused before anything is measured."""
    monkeypatch.setattr(perf_gate.shutil, "which", lambda name: "/usr/bin/" + name)
    monkeypatch.setattr(perf_gate, "_gate", _never_measured)
    h = tmp_path / "history.sqlite"
    history_db.open_history(str(h)).dispose()
    before = digest(h)
    monkeypatch.setenv("APIARY_HISTORY", str(h))
    assert perf_gate.main(["--apiary", str(fake_binary), "--junit", str(h), "--work", str(tmp_path / "w")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("perf-gate: --junit ") and "the same file as --history" in err
    assert digest(h) == before and not (tmp_path / "w").exists()


# A few cases as a user meets them: the entry script in a process of its own.
ENTRY_CASES = [("compare", "report: nan"), ("gb-export", "report: integer of 6,000 digits"),
               ("report-html", "report: a key twice"), ("plot", "report: blocks an object"),
               ("multirun", "report: truncated"), ("sweep", "--out a directory with files"),
               ("find-max-rate", "--bound nan"), ("ladder", "--runs 10^20"), ("soak", "--from: a damaged record"),
               ("perf-gate", "--threshold nan")]


@pytest.mark.parametrize("tool, case", ENTRY_CASES, ids=[f"{t}: {c}" for t, c in ENTRY_CASES])
def test_a_hostile_case_through_the_entry_script(tool, case, template, tmp_path, char_device, fake_command,
                                                 fake_binary, repo):
    build = next(b for t, c, b in CASES if (t, c) == (tool, case))
    root = Path(shutil.copytree(template, tmp_path / "scene"))
    args = build(Scene(root, char_device, fake_command, fake_binary))
    before = files_of(root)
    proc = subprocess.run([str(repo / "scripts" / tool), *args], capture_output=True, text=True, timeout=120)
    assert_held(tool, proc.returncode, proc.stderr, before, char_device)
