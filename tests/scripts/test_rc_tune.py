"""scripts/rc-tune with the fake apiary (fake_apiary.py's replay --rc-scale, whose pools follow
fakes.rc_replay_section): it converges to factors at which the fake's pools settle at the
target level, searches the price factor within the low-RC bound, resumes without running a
finished trial again (also after an interrupted run), gives the same table over a local Dask
cluster, refuses bad input with one line, and writes a page that loads in headless Chromium."""

import json
import os
import signal
import subprocess
import time
import tomllib
from pathlib import Path

import numpy as np
import pytest

import fakes
from apiary_tools import rc_search as search
from apiary_tools.commands import rc_tune
from apiary_tools.rc_trials import MAX_FACTOR
from test_fleet import cluster  # noqa: F401  (the fixture: a scheduler and two workers here)
from test_report_html import check_page

REPO = Path(__file__).resolve().parents[2]
BLOCKS = 300


def tune(binary: Path, out: Path, *more: str, blocks: int = BLOCKS) -> int:
    return rc_tune.main(["--apiary", str(binary), "--scale", "8", "--blocks", str(blocks), "--out", str(out),
                         *more])


def table(out: Path) -> list[dict]:
    return json.loads((out / "trials.json").read_text())["trials"]


def mean_transactions(blocks: int = BLOCKS, per_slot: int = 1300) -> float:
    return float(np.mean([fakes._rc_block_transactions(b, per_slot) for b in range(1, blocks + 1)]))


def chosen_resources(out: Path, scale: int) -> list[dict]:
    """The fake's resources under the chosen rc-params.toml."""
    params = tomllib.loads((out / "rc-params.toml").read_text())
    return fakes.rc_resources(scale, params)


@pytest.mark.parametrize("scale,level,parallel", [(8, 0.5, 2), (16, 0.3, 1)])
def test_converges_to_the_target_level(fake_binary, tmp_path, capsys, scale, level, parallel):
    out = tmp_path / "tune"
    assert rc_tune.main(["--apiary", str(fake_binary), "--scale", str(scale), "--blocks", str(BLOCKS), "--out",
                         str(out), "--target-level", str(level), "--parallel", str(parallel), "--no-plots"]) == 0
    transactions = mean_transactions()
    base = fakes.rc_resources(scale, {})
    assert max(abs(fakes.rc_settled_level(r, transactions) - level) for r in base) > 0.1   # far off at first
    for r in chosen_resources(out, scale):
        assert abs(fakes.rc_settled_level(r, transactions) - level) <= 0.01, r
    rows = table(out)
    assert rows[0]["phase"] == "probe" and rows[0]["verdict"] != "flat"
    chosen = {r["name"]: r["budget_scale_factor"] for r in chosen_resources(out, scale)}
    final = [r for r in rows if all(r[f"{n}.budget_scale_factor"] == f for n, f in chosen.items())]
    assert final and final[0]["verdict"] == "flat", rows   # the chosen trial's pools hold the level
    summary = capsys.readouterr().out
    assert "| history |" in summary and "settled" in summary and "over" in summary   # the low-RC share is reported
    chosen = tomllib.loads((out / "rc-params.toml").read_text())
    assert {t["initial_level"] for t in chosen.values()} == {level}


def test_tune_price_brings_the_low_rc_share_within_the_bound(fake_binary, tmp_path):
    out = tmp_path / "tune"
    assert tune(fake_binary, out, "--tune-price", "--no-plots") == 0
    rows = table(out)
    assert rows[0]["low_rc_share"] > 0.05
    chosen = [r for r in rows if r["phase"] == "price" or r["phase"] == "chosen"]
    assert chosen, rows
    params = tomllib.loads((out / "rc-params.toml").read_text())
    factor = {r["price_scale_factor"] for r in params.values()}
    assert len(factor) == 1 and 0 < factor.pop() < MAX_FACTOR
    final = next(r for r in rows if all(r[f"{n}.price_scale_factor"] == params[n]["price_scale_factor"] and
                                        r[f"{n}.budget_scale_factor"] == params[n]["budget_scale_factor"]
                                        for n in params))
    assert final["low_rc_share"] <= 0.05
    # one resolution step below, the share is over the bound: the smallest such factor was found
    below = [r for r in rows if r["phase"] == "price" and r["low_rc_share"] > 0.05]
    assert below and max(r["history.price_scale_factor"] for r in below) >= \
        final["history.price_scale_factor"] - search.PRICE_RESOLUTION


def test_a_second_run_runs_no_trial_again(fake_binary, tmp_path, capsys):
    out = tmp_path / "tune"
    assert tune(fake_binary, out, "--no-plots") == 0
    first = capsys.readouterr()
    assert "done in" in first.err
    rows = table(out)
    assert tune(fake_binary, out, "--no-plots") == 0
    second = capsys.readouterr()
    assert "done in" not in second.err and "(0 run now)" in second.out
    assert [r["key"] for r in table(out)] == [r["key"] for r in rows]
    assert tune(fake_binary, out, "--no-plots", "--target-level", "0.4") == 2
    assert "a tuning of other settings (target_level)" in capsys.readouterr().err


def test_an_interrupted_run_keeps_its_finished_trials(fake_binary, tmp_path):
    out = tmp_path / "tune"
    env = dict(os.environ, FAKE_APIARY_RC_SLEEP="1.5")
    cmd = [str(REPO / "scripts" / "rc-tune"), "--apiary", str(fake_binary), "--scale", "8", "--blocks", str(BLOCKS),
           "--out", str(out), "--no-plots", "--parallel", "1"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not list((out / "trials").glob("*.toml")) and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "rc-tune: stopped by SIGINT" in err and "Traceback" not in err
    kept = table(out)
    assert len(kept) >= 1 and not (out / "rc-params.toml").exists()
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert all(f"trial {r['key']} " not in again.stderr for r in kept)
    assert [r["key"] for r in table(out)][:len(kept)] == [r["key"] for r in kept]


def test_the_cluster_gives_the_same_table(cluster, fake_binary, tmp_path):  # noqa: F811
    address, _ = cluster
    assert tune(fake_binary, tmp_path / "here", "--no-plots") == 0
    assert tune(fake_binary, tmp_path / "fleet", "--no-plots", "--cluster", address) == 0

    def shape(out):
        return [{k: v for k, v in r.items() if k not in ("host", "elapsed_s")} for r in table(out)]

    assert shape(tmp_path / "fleet") == shape(tmp_path / "here")
    assert {r["host"] for r in table(tmp_path / "fleet")} <= {"host-1", "host-2"}
    assert (tmp_path / "fleet" / "rc-params.toml").read_text() == (tmp_path / "here" / "rc-params.toml").read_text()


def test_the_page_loads_in_chromium(fake_binary, tmp_path):
    out = tmp_path / "tune"
    assert tune(fake_binary, out) == 0
    for name in ("levels.png", "prices.png", "low-rc.png", "rounds.png"):
        assert (out / name).stat().st_size > 10_000
    text = check_page(out / "rc-tune.html", tmp_path, min_images=4)
    assert "RC tuning at scale 8" in text and "probe</td>" in text


@pytest.mark.parametrize("args,message", [
    (["--scale", "33"], "argument --scale: expected a whole number from 1 to 32, not '33'"),
    (["--scale", "0"], "argument --scale: expected a whole number from 1 to 32, not '0'"),
    (["--target-level", "1"], "argument --target-level: expected a level above 0 and below 1, not '1'"),
    (["--target-level", "0"], "argument --target-level: expected a level above 0 and below 1, not '0'"),
    (["--rc-params", "/nonexistent/base.toml"], "--rc-params /nonexistent/base.toml: "),
    (["--", "--blocks", "5"], "--blocks: rc-tune sets this itself"),
])
def test_bad_input_is_one_line(fake_binary, tmp_path, capsys, args, message):
    assert rc_tune.main(["--apiary", str(fake_binary), "--scale", "8", "--blocks", "300", "--out",
                         str(tmp_path / "o"), *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("rc-tune: ") and message in err, err
    assert not (tmp_path / "o").exists()


def test_bad_files_are_one_line(fake_binary, tmp_path, capsys, monkeypatch):
    bad = tmp_path / "base.toml"
    bad.write_text("[history\n")
    assert tune(fake_binary, tmp_path / "o", "--rc-params", str(bad)) == 2
    err = capsys.readouterr().err   # the binary's own line on the file, passed on
    assert err.count("\n") == 1 and err.startswith("rc-tune: --rc-params: ") and "table" in err, err
    monkeypatch.setenv("FAKE_APIARY_RC_TRUNCATE", "1")
    assert tune(fake_binary, tmp_path / "t", "--quiet") == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not valid JSON" in err and "Traceback" not in err, err
    assert not list((tmp_path / "t" / "trials").glob("*.toml"))   # the trial does not count as finished


def test_the_search_closes_in_when_the_guess_is_wrong():
    """A resource that settles only at factor 20,000 (flat within ±3), searched from a guess of
    1,000, two trials a round: the interval closes in on it within 15 rounds."""
    bracket, guess, rounds = search.Bracket(), 1000, 0
    while bracket.chosen is None and rounds < 15:
        rounds += 1
        points = search.first_points(guess, 2) if rounds == 1 else bracket.points(2)
        search.update_budget(bracket, [(f, "flat" if abs(f - 20_000) <= 3 else "falling" if f < 20_000 else "rising",
                                         (f - 20_000) / 1e4) for f in points])
    assert bracket.status == "settled" and abs(bracket.chosen - 20_000) <= 3 and rounds < 15


def test_at_scale_1_the_base_parameters_are_kept(fake_binary, tmp_path, capsys):
    out = tmp_path / "tune"
    assert rc_tune.main(["--apiary", str(fake_binary), "--scale", "1", "--blocks", "100", "--out", str(out),
                         "--tune-price", "--no-plots"]) == 0
    # no search: the chosen parameters are the probe's (the same trial, run once)
    assert [r["phase"] for r in table(out)] in (["probe"], ["probe", "chosen"])
    assert "no effect at scale 1" in capsys.readouterr().out
    params = tomllib.loads((out / "rc-params.toml").read_text())
    assert (params["state"]["budget_scale_factor"], params["state"]["price_scale_factor"]) == (967, 161)
