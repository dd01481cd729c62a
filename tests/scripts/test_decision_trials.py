"""bench/tools/decision_trials.py: the trials' verdicts and noise read from multirun's outputs, the
tallies, the simulation on the trials' own pairs (an A/A keeps its false calls under alpha, a
2% slowdown at a quiet pair's noise is found), a cut-short trial left out, and the refusal of
builds that plant the wrong way round."""

import importlib.util
import json
import math
from pathlib import Path

import numpy as np
import pytest

from apiary_tools import deciding, metrics

REPO = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("decision_trials", REPO / "bench" / "tools" / "decision_trials.py")
trials = importlib.util.module_from_spec(spec)
spec.loader.exec_module(trials)


def report(cycle_us, cpu_ns, producer_ns):
    threads = [{"name": "writer", "per_transaction": {"task_clock_ns": cpu_ns}}]
    threads += [{"name": f"producer-{i}", "per_transaction": {"task_clock_ns": producer_ns}} for i in (0, 1)]
    return {"aggregates": {"cycle_us": {"avg": cycle_us}}, "counters": {"threads": threads}}


def write_trial(directory, kind, b_over_a, rng, noise, verdict, count_verdict, count_change, minutes=4.0, pairs=30,
                speed=0.0):
    """A finished trial: `pairs` interleaved runs a side whose writer (and cycle) is `b_over_a`
    times A's, with log-normal noise of `noise` a run of its own, and `speed` a run that every
    thread of the run shares (the machine's pace), the producers untouched by B; and multirun's
    comparison.json as it words its verdicts."""
    for side in ("a", "b"):
        (directory / side).mkdir(parents=True)
    for i in range(pairs):
        shared = rng.normal(0.0, 0.05)   # drift both runs of a pair share: it cancels in the ratio
        for side, factor in (("a", 1.0), ("b", b_over_a)):
            own, pace = rng.normal(0.0, noise, 3), shared + rng.normal(0.0, speed) if speed else shared
            run = report(40_000 * factor * math.exp(pace + own[0]), 3_000 * factor * math.exp(pace + own[1]),
                         5_000 * math.exp(pace + own[2]))
            (directory / side / f"run-{i + 1:03d}.json").write_text(json.dumps(run))
    comparison = {"sequential": {"verdict": verdict, "change": math.log(b_over_a), "low": -0.05, "high": 0.05,
                                 "pairs": pairs, "metric": metrics.WRITER_CPU},
                  "decision": {"count": {"verdict": count_verdict, "change": count_change}}}
    (directory / "comparison.json").write_text(json.dumps(comparison))
    (directory / "trial.json").write_text(json.dumps({"kind": kind, "command": [], "minutes": minutes}))


def args_for(out, **extra):
    return trials.parse(["--summarize", "--out", str(out), "--sim-trials", "200", *extra])


def test_the_trials_are_read_tallied_and_simulated(tmp_path, capsys):
    rng = np.random.default_rng(7)
    for n in (1, 2, 3):
        write_trial(tmp_path / f"0{n}-planted", "planted", 1.02, rng, 0.005, "slower", "slower", 0.0136)
        write_trial(tmp_path / f"0{n}-aa", "aa", 1.0, rng, 0.005, "undecided", "equivalent", 0.0)
    (tmp_path / "04-planted" / "a").mkdir(parents=True)   # cut short: no trial.json
    assert trials.summarize(args_for(tmp_path)) == 0
    data = json.loads((tmp_path / "trials.json").read_text())
    assert [t["trial"] for t in data["trials"]] == ["01-aa", "01-planted", "02-aa", "02-planted", "03-aa", "03-planted"]
    all_slower = {"slower": 3, "faster": 0, "equivalent": 0, "undecided": 0}
    planted_tally = {k: v for k, v in data["tally"]["planted"].items() if k != "pooled"}
    assert planted_tally == {"trials": 3, "runs": all_slower, "count": all_slower}
    assert data["tally"]["aa"]["count"]["equivalent"] == 3
    planted = data["trials"][1]
    assert planted["mean_change"]["cpu"] == pytest.approx(math.log(1.02), abs=0.004)
    assert planted["noise"]["cpu"] == pytest.approx(0.005 * math.sqrt(2), rel=0.35)   # a pair's: two runs' noise
    # 30 pairs in 4 minutes: a 20-minute budget holds 150; each horizon at threshold 1% and 0, A/A and 2%.
    assert [(s["max_pairs"], s["threshold"], s["effect"]) for s in data["simulation"]] == [
        (30, 0.01, 0.0), (30, 0.01, 0.02), (30, 0.0, 0.0), (30, 0.0, 0.02),
        (150, 0.01, 0.0), (150, 0.01, 0.02), (150, 0.0, 0.0), (150, 0.0, 0.02)]
    for s in data["simulation"]:
        false_calls = s["shares"]["slower"] + s["shares"]["faster"]
        if s["effect"] == 0.0:
            assert false_calls <= 0.05
        else:   # ±0.7% a pair: 2% is found, beyond 1% too
            assert s["shares"]["slower"] >= 0.9
    assert data["tally"]["planted"]["pooled"]["cpu"]["mean"] == pytest.approx(math.log(1.02), abs=0.003)
    assert data["speed"]["runs"] == 360   # both runs of every pair
    out = capsys.readouterr().out
    assert "| 01-planted | planted |" in out and "slower +1.98%" in out and "slower +1.36%" in out


def test_the_writer_over_the_producers_cancels_a_pace_every_thread_shares(tmp_path):
    # Each run's threads all 8% faster or slower together (the machine's pace), 0.5% of their own:
    # the writer's CPU time spreads by about 11% a pair, its ratio to the producers' by about 1%,
    # and the planted 2% stands out in the ratio alone.
    rng = np.random.default_rng(11)
    write_trial(tmp_path / "01-planted", "planted", 1.02, rng, 0.005, "undecided", "slower", 0.0136, speed=0.08)
    assert trials.summarize(args_for(tmp_path)) == 0
    data = json.loads((tmp_path / "trials.json").read_text())
    row = data["trials"][0]
    assert row["noise"]["cpu"] > 0.08 and row["noise"]["writer/producers"] < 0.015
    assert row["mean_change"]["writer/producers"] == pytest.approx(math.log(1.02), abs=0.005)
    assert data["speed"]["correlation"] > 0.95


def test_the_simulation_draws_the_trials_own_noise():
    # Pairs of ±6% a pair: a 2% slowdown within 30 pairs is mostly undecided, never "faster".
    rng = np.random.default_rng(3)
    rows = [{"ratios": {"cycle": list(rng.normal(0, 0.06, 30)), "cpu": list(rng.normal(0, 0.06, 30))},
             "mean_change": {"cycle": 0.0, "cpu": 0.0}} for _ in range(4)]
    noisy = trials.simulate(rows, 0.01, 200, 30, 0.02, seed=1)
    assert noisy["pool_pairs"] == 120 and noisy["shares"]["slower"] < 0.5 and noisy["shares"]["faster"] == 0
    assert "unavailable" in trials.simulate(rows[:1][:0], 0.01, 10, 30, 0.0, seed=1)


def test_nothing_to_summarize_is_one_line(tmp_path):
    with pytest.raises(SystemExit, match="no finished trial in"):
        trials.summarize(args_for(tmp_path))


def test_running_needs_a_planted_build(tmp_path, capsys):
    with pytest.raises(SystemExit):
        trials.parse(["--out", str(tmp_path)])
    assert "--planted BIN is needed" in capsys.readouterr().err


def test_a_build_that_plants_nothing_is_refused_as_the_planted_one(tmp_path, apiary_bin):
    # The real build reads its rounds from a run of one block: 0, so it cannot be the planted side.
    assert trials.planted_rounds(apiary_bin, tmp_path) == 0
    with pytest.raises(SystemExit, match="plants 0 rounds: --base must plant none, --planted some"):
        trials.main(["--base", str(apiary_bin), "--planted", str(apiary_bin), "--out", str(tmp_path / "out")])
    assert not list((tmp_path / "out").glob("[0-9][0-9]-*"))


def test_the_metrics_are_the_deciding_ones():
    assert set(trials.MEASURED.values()) == {c.metric for c in deciding.MEASURED}
