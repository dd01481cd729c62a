"""Profiles in comparisons (profiles.py): each side's runs' folded stacks summed and compared by
shares, the function with a planted slowdown named first, inferno's flame graphs written (real
inferno: they are SVG), multirun --profile giving every run its own profile directory; and bad
input: a malformed folded line, a missing profile, inferno missing, nowhere to write: one
line, exit 2, no traceback."""

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

import fakes
from apiary_tools import kinds, profiles
from apiary_tools.commands import compare, multirun
from apiary_tools.common import ToolError
from apiary_tools.reports import load_set

BASE = [20000, 20100, 19900, 20050, 19950]
SLOW = "apiary::core::chain::find_comment"


def needs_inferno():
    """inferno, which scripts/install-deps.sh installs: a test that needs it fails without it."""
    try:
        profiles.find_programs()
    except ToolError as e:
        pytest.fail(str(e))


@pytest.fixture
def no_inferno(monkeypatch, tmp_path):
    """No inferno anywhere: an empty PATH, an empty venv bin and home."""
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setattr(profiles, "search_path", lambda: [empty / "bin", empty / ".cargo" / "bin"])


def sides(tmp_path, runs=3, **b):
    a = fakes.write_profiled_set(tmp_path / "a", BASE[:runs])
    slow = fakes.write_profiled_set(tmp_path / "b", BASE[:runs], seed=1, **({"slow": SLOW} | b))
    return a, slow


# ---- shares ----------------------------------------------------------------------------------------

def test_self_and_total_shares():
    side = profiles.SideProfile("x", 1, {"writer;loop;push;find": 6, "writer;loop;push": 2, "writer;loop;f;f;f": 1,
                                         "main": 1})
    assert side.samples == 10
    assert side.functions() == {"find": (6, 6), "push": (2, 8), "loop": (0, 9), "f": (1, 1)}


def test_sides_are_compared_by_shares_not_counts():
    a = profiles.SideProfile("a", 1, {"t;x": 30, "t;y": 70})
    b = profiles.SideProfile("b", 1, {"t;x": 60, "t;y": 140})   # twice the samples, the same shape
    assert profiles.moved_functions(a, b) == []
    c = profiles.SideProfile("c", 1, {"t;x": 80, "t;y": 80, "t;z": 40})
    rows = profiles.moved_functions(a, c)
    assert [r["function"] for r in rows] == ["y", "z", "x"]
    assert rows[0]["change_pp"] == pytest.approx(-30.0) and rows[1]["a_self_share"] == 0


def test_a_planted_slowdown_is_named_first(tmp_path):
    a, b = sides(tmp_path)
    rs_a, rs_b = load_set([a], "a"), load_set([b], "b")
    side_a = profiles.read_side(rs_a, profiles.folded_files(rs_a))
    side_b = profiles.read_side(rs_b, profiles.folded_files(rs_b))
    assert side_a.runs == 3 and side_b.samples > side_a.samples   # the slow side has more samples
    rows = profiles.moved_functions(side_a, side_b)
    assert rows[0]["function"] == SLOW and rows[0]["change_pp"] > 5
    assert all(abs(r["change_pp"]) < rows[0]["change_pp"] / 3 for r in rows[1:])
    assert len(rows) == profiles.TOP


# ---- compare --profile, with real inferno ----------------------------------------------------

def test_compare_profile_writes_the_table_and_the_flame_graphs(tmp_path, capsys):
    needs_inferno()
    a, b = sides(tmp_path)
    out = tmp_path / "diff"
    assert compare.main([str(a), str(b), "--profile", "--out", str(out), "--json", str(tmp_path / "cmp.json")]) == 0
    text = capsys.readouterr().out
    block = text[text.index("Profile: the functions whose self share moved most"):]
    first = block.splitlines()[4]
    assert first.startswith(f"| `{SLOW}` |") and "+" in first and " pp |" in first
    for name in ("a.svg", "b.svg", "profile-diff.svg"):
        svg = (out / name).read_text()
        assert svg.startswith("<?xml") and "<svg" in svg and svg.rstrip().endswith("</svg>")
    assert "find_comment" in (out / "profile-diff.svg").read_text()
    summed = dict(line.rsplit(" ", 1) for line in (out / "b.folded").read_text().splitlines())
    assert sum(map(int, summed.values())) == sum(
        sum(fakes.folded_stacks(slow=SLOW, seed=100 + i).values()) for i in (1, 2, 3))
    saved = kinds.COMPARISON.read(tmp_path / "cmp.json")["profile"]
    assert saved["dir"] == "diff" and saved["functions"][0]["function"] == SLOW
    assert saved["a"]["runs"] == saved["b"]["runs"] == 3 and saved["files"]["diff_svg"] == "profile-diff.svg"


def test_compare_profile_beside_the_json(tmp_path, capsys):
    needs_inferno()
    a, b = sides(tmp_path, runs=2)
    where = tmp_path / "cmp"
    assert compare.main([str(a), str(b), "--profile", "--json", str(where / "cmp.json"), "--quiet"]) == 0
    assert sorted(p.name for p in where.iterdir()) == ["a.folded", "a.svg", "b.folded", "b.svg", "cmp.json",
                                                        "profile-diff.svg"]
    assert json.loads((where / "cmp.json").read_text())["profile"]["dir"] == "."


def test_a_moved_profile_directory_is_found_beside_its_report(tmp_path, monkeypatch):
    a, b = sides(tmp_path, runs=2)
    run = load_set([a], "a").runs[0]
    assert profiles.profile_dir(run) == a / "run-001.profile"             # relative to the report
    report = json.loads((a / "run-001.json").read_text())
    report["profile"]["dir"] = "/nowhere/moved/run-001.profile"           # absolute, from another machine
    (a / "run-001.json").write_text(json.dumps(report))
    assert profiles.profile_dir(load_set([a], "a").runs[0]) == a / "run-001.profile"
    report["profile"]["dir"] = "profiles/p1"                               # relative to the current directory
    (a / "run-001.json").write_text(json.dumps(report))
    shutil.copytree(a / "run-001.profile", tmp_path / "profiles" / "p1")
    monkeypatch.chdir(tmp_path)
    assert profiles.profile_dir(load_set([a], "a").runs[0]) == tmp_path / "profiles" / "p1"


# ---- multirun --profile ------------------------------------------------------------------------

def test_multirun_profiles_every_run_and_compares_an_ab(tmp_path, capsys, fake_command):
    needs_inferno()
    out = tmp_path / "o"
    assert multirun.main(["--command", fake_command, "--runs", "2", "--profile", "--a", "--counters on",
                          "--b", f"--counters on --fake-slow {SLOW}", "--out", str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    for side in ("a", "b"):
        for i in (1, 2):
            report = json.loads((out / side / f"run-00{i}.json").read_text())
            assert report["profile"]["dir"] == str((out / side / f"run-00{i}.profile").resolve())
            assert Path(report["profile"]["dir"]).is_absolute() and (out / side / f"run-00{i}.profile" /
                                                                      "window.folded").is_file()
    saved = json.loads((out / "comparison.json").read_text())
    assert saved["profile"]["functions"][0]["function"] == SLOW and saved["profile"]["dir"] == "."
    assert (out / "profile-diff.svg").read_text().startswith("<?xml")
    assert "Profile: the functions whose self share moved most" in text and "Counters per transaction" in text
    assert "Profile: the functions" in (out / "comparison.md").read_text()
    # compare reads the same profiles from the directories
    assert compare.main([str(out / "a"), str(out / "b"), "--profile", "--out", str(tmp_path / "again"),
                         "--quiet"]) == 0


@pytest.mark.parametrize("args, message", [
    (["--profile", "--", "--profile", "x"], "--profile: give it to multirun"),
    (["--profile", "--cluster", "tcp://127.0.0.1:1"], "--profile runs on this machine only"),
])
def test_multirun_profile_bad_usage(args, message, tmp_path, capsys, fake_command):
    assert multirun.main(["--command", fake_command, "--out", str(tmp_path / "o"), *args]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("multirun: ") and message in err and "\n" not in err
    assert not (tmp_path / "o").exists()


def test_multirun_ab_profile_without_inferno_runs_nothing(tmp_path, capsys, fake_command, no_inferno):
    assert multirun.main(["--command", fake_command, "--profile", "--a", "", "--b", "", "--out",
                          str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "multirun: inferno-flamegraph is missing (the flame graphs are inferno's, 0.12 or later): " \
                  "scripts/install-deps.sh installs it; looked on PATH, in the venv's bin and in ~/.cargo/bin"
    assert not (tmp_path / "o").exists()


# ---- bad input ---------------------------------------------------------------------------------

def run_compare(capsys, *args) -> str:
    code = compare.main([str(a) for a in args])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.startswith("compare: ") and "\n" not in err and "Traceback" not in err, (code, err)
    return err


def test_a_malformed_folded_line_is_named_with_its_number(tmp_path, capsys):
    needs_inferno()
    a, b = sides(tmp_path, runs=2)
    folded = b / "run-002.profile" / "window.folded"
    lines = folded.read_text().splitlines()
    lines[2] = lines[2].rsplit(" ", 1)[0] + " 12x"
    folded.write_text("\n".join(lines) + "\n")
    err = run_compare(capsys, a, b, "--profile", "--out", tmp_path / "o")
    assert "run-002.profile/window.folded:3: not a folded stack" in err and "12x" in err
    for bad in ("no count at all", "writer;f -3", " 5", "writer;f 99999999999999"):
        folded.write_text(bad + "\n")
        assert "window.folded:1: not a folded stack" in run_compare(capsys, a, b, "--profile", "--out",
                                                                     tmp_path / "o")
    folded.write_bytes(b"writer;\xff 3\n")
    assert "window.folded:1: not UTF-8 text" in run_compare(capsys, a, b, "--profile", "--out", tmp_path / "o")
    assert not (tmp_path / "o").exists()


def test_a_missing_profile_is_one_line(tmp_path, capsys):
    needs_inferno()
    a, b = sides(tmp_path, runs=2)
    shutil.rmtree(b / "run-002.profile")
    err = run_compare(capsys, a, b, "--profile", "--out", tmp_path / "o")
    assert "run-002.json: its profile (profile.dir run-002.profile) is not there; looked in" in err
    os.mkdir(b / "run-002.profile")
    assert "has no window.folded" in run_compare(capsys, a, b, "--profile", "--out", tmp_path / "o")
    report = json.loads((b / "run-001.json").read_text())
    report["profile"] = None
    (b / "run-001.json").write_text(json.dumps(report))
    assert "run-001.json: the run has no profile" in run_compare(capsys, a, b, "--profile", "--out", tmp_path / "o")
    assert not (tmp_path / "o").exists()


def test_an_aggregate_has_no_profile(tmp_path, capsys):
    needs_inferno()
    a, b = sides(tmp_path, runs=2)
    assert multirun.main(["--aggregate", str(a), "--out", str(tmp_path / "agg"), "--quiet"]) == 0
    capsys.readouterr()
    err = run_compare(capsys, tmp_path / "agg" / "aggregate.json", b, "--profile", "--out", tmp_path / "o")
    assert "read from an aggregate file, which keeps no profile" in err


def test_inferno_missing_is_one_line_before_any_work(tmp_path, capsys, no_inferno):
    a, b = sides(tmp_path, runs=2)
    err = run_compare(capsys, a, b, "--profile", "--out", tmp_path / "o")
    assert "inferno-flamegraph is missing" in err and "scripts/install-deps.sh" in err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("extra, message", [
    (["--profile"], "give --out DIR, or --json FILE"),
    (["--profile", "--json", "/dev/stdout"], "give --out DIR, or --json FILE"),
    (["--out", "o"], "--out and --force go with --profile"),
    (["--profile", "--out", "busy"], "exists and is not empty"),
    (["--profile", "--out", "a-file"], "not a directory"),
])
def test_profile_usage(tmp_path, capsys, monkeypatch, extra, message):
    needs_inferno()
    a, b = sides(tmp_path, runs=2)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "x").write_text("x")
    (tmp_path / "a-file").write_text("x")
    assert message in run_compare(capsys, a, b, *extra)


def test_the_programs_are_found_in_the_venv_or_cargo(tmp_path, monkeypatch):
    venv_bin, cargo = tmp_path / "venv" / "bin", tmp_path / "cargo"
    for d in (venv_bin, cargo):
        d.mkdir(parents=True)
    for name, d in ((profiles.FLAMEGRAPH, venv_bin), (profiles.DIFF_FOLDED, cargo)):
        (d / name).write_text("#!/bin/sh\n")
        (d / name).chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    monkeypatch.setattr(profiles, "search_path", lambda: [venv_bin, cargo])
    assert profiles.find_programs() == {profiles.FLAMEGRAPH: str(venv_bin / profiles.FLAMEGRAPH),
                                        profiles.DIFF_FOLDED: str(cargo / profiles.DIFF_FOLDED)}
    # the real lookup starts from this Python's venv
    monkeypatch.undo()
    assert profiles.search_path()[0] == Path(sys.executable).parent
