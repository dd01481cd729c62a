"""Every error in the tool's own words, one line with its name first: an unknown option names
the nearest valid one (and an abbreviation is not taken for it), a value that does not split
as a shell would is one line, --quiet never hides an error, and even a bug is one line."""

import pytest

import fakes
from apiary_tools.commands import (
    bisect,
    compare,
    gbexport,
    ladder,
    maxrate,
    multirun,
    perf_gate,
    plot,
    rc_tune,
    report_html,
    soak,
    sweep,
)

MAINS = {"multirun": multirun.main, "compare": compare.main, "gb-export": gbexport.main, "sweep": sweep.main,
         "plot": plot.main, "find-max-rate": maxrate.main, "report-html": report_html.main, "ladder": ladder.main,
         "soak": soak.main, "perf-gate": perf_gate.main, "bisect": bisect.main, "rc-tune": rc_tune.main}


def one_error(capsys, tool: str) -> str:
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"{tool}: ") and "\n" not in err and "Traceback" not in err, err
    return err


@pytest.mark.parametrize("tool, typo, meant", [
    ("multirun", "--rusn", "--runs"), ("compare", "--jsn", "--json"), ("gb-export", "--outptu", "--output"),
    ("sweep", "--valeus", "--values"), ("plot", "--lables", "--labels"), ("find-max-rate", "--bund", "--bound"),
    ("report-html", "--otu", "--out"), ("ladder", "--mdoe", "--mode"), ("soak", "--blokcs", "--blocks"),
    ("perf-gate", "--treshold", "--threshold"), ("bisect", "--metirc", "--metric"),
    ("rc-tune", "--tolerence", "--tolerance"),
])
def test_an_unknown_option_names_the_nearest_one(tool, typo, meant, capsys):
    assert MAINS[tool]([typo, "1"]) == 2
    err = one_error(capsys, tool)
    assert typo in err and f"did you mean {meant}?" in err


@pytest.mark.parametrize("tool, abbreviation, meant", [
    ("compare", "--jso", "--json"), ("multirun", "--run", "--runs"), ("gb-export", "--out", "--output"),
])
def test_an_abbreviation_is_not_taken_for_an_option(tool, abbreviation, meant, tmp_path, capsys):
    assert MAINS[tool]([abbreviation, str(tmp_path / "x"), str(tmp_path), str(tmp_path)]) == 2
    assert f"did you mean {meant}?" in one_error(capsys, tool)


@pytest.mark.parametrize("args", [["--a", "--dedup 'split", "--b", "--dedup unified"],
                                  ["--a", "--dedup split", "--b", '--name "x']])
def test_a_side_that_does_not_split_is_one_line(args, fake_command, tmp_path, capsys):
    assert multirun.main(["--command", fake_command, "--out", str(tmp_path / "o"), *args]) == 2
    assert "quotation" in one_error(capsys, "multirun")


@pytest.mark.parametrize("tool", ["multirun", "sweep", "find-max-rate"])
def test_a_command_that_does_not_split_is_one_line(tool, tmp_path, capsys):
    extra = {"multirun": [], "sweep": ["--param", "threads", "--values", "1"], "find-max-rate": ["--low", "1",
                                                                                                  "--high", "2"]}
    assert MAINS[tool](["--command", "python3 'fake", "--out", str(tmp_path / "o"), *extra[tool]]) == 2
    assert "--command" in one_error(capsys, tool)


def test_quiet_never_hides_a_failed_run(tmp_path, capsys, fake_command, monkeypatch):
    monkeypatch.setenv("FAKE_APIARY_FAIL_RUN", "1")
    assert multirun.main(["--command", fake_command, "--runs", "2", "--out", str(tmp_path / "o"), "--quiet"]) == 1
    err = one_error(capsys, "multirun")
    assert "run #1 failed with exit status 1: injected failure" in err and "run-001.out" in err
    assert sweep.main(["--command", fake_command, "--param", "threads", "--values", "1", "--runs", "1",
                       "--out", str(tmp_path / "s"), "--quiet", "--no-plots"]) == 1
    assert "threads=1 #1 failed with exit status 1: injected failure" in one_error(capsys, "sweep")


def test_quiet_never_hides_a_regression(tmp_path, capsys):
    a = fakes.write_set(tmp_path / "a", [20000, 20100, 19900, 20050, 19950])
    b = fakes.write_set(tmp_path / "b", [21000, 21100, 20900, 21050, 20950])
    assert compare.main([str(a), str(b), "--quiet"]) == 1
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert captured.out == "" and err.startswith("compare: ") and "\n" not in err
    assert "aggregates.cycle_us.avg" in err and "slower" in err


def test_a_bug_is_one_line_too(tmp_path, capsys, monkeypatch):
    a = fakes.write_set(tmp_path / "a", [20000, 20100, 19900])

    def broken(*args, **kwargs):
        return {}["missing"]

    monkeypatch.setattr(compare, "to_markdown", broken)
    assert compare.main([str(a), str(a)]) == 1
    err = one_error(capsys, "compare")
    assert "internal error" in err and "KeyError" in err and "test_messages.py" in err
