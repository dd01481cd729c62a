"""bench/tools/cost_weights.py: the fit finds the weights that made the times, the rounds' pace
cancels, a model's error and a ladder step's change are as computed by hand, and a real series
of replays (snapshots, callgrind's counts, interleaved rounds) writes its tables and resumes."""

import importlib.util
import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench" / "tools"))
spec = importlib.util.spec_from_file_location("cost_weights", REPO / "bench" / "tools" / "cost_weights.py")
cw = importlib.util.module_from_spec(spec)
sys.modules["cost_weights"] = cw   # its dataclasses look their module up
spec.loader.exec_module(cw)


def points_with(features, steps=None, pages=None):
    points = []
    for i, (acc, l1, ll) in enumerate(features):
        step = None if steps is None else steps[i]
        versus = points[-1].name if step is not None and step > 0 else None
        p = cw.Point(f"p{i}", 1000, Path("s"), [], ladder_step=step, versus=versus)
        tlb, walks = (l1 / 4, ll / 8) if pages is None else pages[i]
        p.counts = {"instructions": acc * 0.7, "accesses": acc, "l1_misses": l1, "ll_misses": ll,
                    "tlb_misses": tlb, "page_walks": walks}
        points.append(p)
    return points


def test_the_fit_finds_the_weights_that_made_the_times():
    rng = np.random.default_rng(5)
    features = np.column_stack([rng.uniform(10_000, 20_000, 12), rng.uniform(100, 400, 12), rng.uniform(5, 80, 12)])
    times = cw.estimate(features, (1.0, 9.0, 120.0)) * 0.25e-3   # µs, at 4 cycles a nanosecond
    fit = cw.fit_weights(features, times)
    assert fit["ll_hit"] == pytest.approx(9.0, rel=1e-6)
    assert fit["memory"] == pytest.approx(120.0, rel=1e-6)
    assert fit["ns_per_cycle"] == pytest.approx(0.25, rel=1e-6)


def test_a_pace_that_moves_whole_rounds_cancels():
    base = np.array([1.0, 2.0, 4.0])
    pace = np.array([1.0, 1.3, 0.8, 1.1])
    times = pace[:, None] * base[None, :]
    np.testing.assert_allclose(cw.point_times(times), base * np.exp(np.log(pace).mean()))


def test_the_analysis_reports_the_fit_the_models_and_the_steps():
    rng = np.random.default_rng(2)
    features = np.column_stack([rng.uniform(10_000, 20_000, 8), rng.uniform(100, 400, 8), rng.uniform(5, 80, 8)])
    truth = cw.estimate(features, (1.0, 6.0, 50.0)) * 0.3e-3
    times = truth[None, :] * np.exp(rng.normal(0, 0.002, (6, 8))) * rng.uniform(0.8, 1.2, (6, 1))
    points = points_with(features, steps=[None] * 5 + [0, 1, 2])
    result = cw.analyse(points, times, resamples=200)
    assert result["fit"]["ll_hit"] == pytest.approx(6.0, rel=0.2)
    assert result["fit"]["memory"] == pytest.approx(50.0, rel=0.2)
    low, high = result["intervals"]["memory"]
    assert low <= result["fit"]["memory"] <= high
    assert result["models"]["fitted"]["rms"] < result["models"]["instructions"]["rms"]
    assert [s["step"] for s in result["steps"]] == ["p6", "p7"]
    step = result["steps"][0]
    assert step["measured"] == pytest.approx(result["us_per_tx"][6] / result["us_per_tx"][5] - 1)
    assert step["instructions"] == pytest.approx(features[6, 0] / features[5, 0] - 1)
    iai = cw.estimate(features[5:7], cw.IAI)
    assert step["iai-callgrind"] == pytest.approx(iai[1] / iai[0] - 1)
    assert "Fitted weights" in cw.tables(points, result, 6)


def test_page_walks_explain_what_the_three_counts_cannot_and_held_out_says_so():
    # The times follow the accesses and the page walks; the walks vary apart from the misses (a
    # larger state: as many misses, more of them on pages the TLB does not hold).
    rng = np.random.default_rng(9)
    n = 12
    features = np.column_stack([rng.uniform(10_000, 20_000, n), rng.uniform(100, 400, n), rng.uniform(30, 60, n)])
    pages = np.column_stack([rng.uniform(20, 160, n), rng.uniform(1, 8, n)])
    ns = np.array([0.2, 0.0, 50.0, 10.0, 400.0])
    times = np.column_stack([features, pages]) @ ns / 1000.0
    pace = np.exp(np.array([-0.1, 0.1, -0.05, 0.05]))[:, None]   # moves whole rounds; geometric mean 1
    rounds = times[None, :] * pace
    result = cw.analyse(points_with(features, steps=[None] * (n - 2) + [0, 1], pages=pages), rounds, resamples=50)
    fit = result["page_fit"]
    assert list(fit) == list(cw.PAGE_EVENTS)
    for event, want in zip(cw.PAGE_EVENTS, ns, strict=True):
        assert fit[event]["ns"] == pytest.approx(want, rel=1e-6, abs=1e-9)
        low, high = fit[event]["interval"]
        assert low <= fit[event]["ns"] + 1e-9 and fit[event]["ns"] <= high + 1e-9
    models = result["models"]
    assert models["with pages"]["held_out_rms"] < 1e-6
    assert models["iai-callgrind"]["held_out_rms"] > 0.05
    # Held out is never kinder than the fit: each point is left out of its own fit.
    for m in models.values():
        assert m["held_out_rms"] >= m["rms"] - 1e-9
    step = result["steps"][0]
    assert step["with pages"] == pytest.approx(step["measured"], abs=1e-9)
    text = cw.tables(points_with(features, steps=[None] * (n - 2) + [0, 1], pages=pages), result, 4)
    assert "Fitted with pages, nanoseconds an event" in text and "held out: rms" in text


def test_held_out_error_predicts_each_point_from_the_others():
    # Two points on one line and a third off it: left out, the third is predicted from the line.
    columns = np.array([[1.0], [2.0], [3.0]])
    times = np.array([1.0, 2.0, 6.0])
    err = cw.held_out_error(columns, times)
    assert err["held_out_max"] == pytest.approx(0.5)   # 3 predicted for 6


def test_points_that_give_the_accesses_no_weight_are_said_so():
    # The time follows the misses exactly and falls as the accesses rise: accesses weigh nothing.
    features = np.array([[30_000.0, 100.0, 0.0], [20_000.0, 200.0, 0.0], [10_000.0, 300.0, 0.0]])
    times = np.array([1.0, 2.0, 3.0])
    assert cw.fit_weights(features, times) is None


def test_the_plant_is_a_step_from_its_states_point_by_its_own_build(monkeypatch, tmp_path):
    monkeypatch.setattr(cw.state_size, "make_state", lambda args, a, b: (tmp_path / f"{a}-{b}.state", None))
    monkeypatch.setattr(cw.ladder, "replay_options", lambda apiary: {"--keep-alive"})
    args = cw.parse(["--accounts", "1000", "--blocks", "0", "--ladder-at", "1000-5", "--ladder-steps", "0,1",
                     "--plant", "/builds/planted/apiary", "--apiary", "/builds/release/apiary", "--out", str(tmp_path)])
    points = cw.plan(args)
    assert [(p.name, p.versus) for p in points] == [("1000-0", None), ("1000-5", None), ("ladder start", None),
                                                   ("ladder 1 keep-alive", "ladder start"), ("plant", "1000-5")]
    plant = points[-1]
    assert plant.state == points[1].state and plant.switches == []
    assert cw.replay_cmd(args, plant, tmp_path / "r.json")[0] == "/builds/planted/apiary"
    assert cw.replay_cmd(args, points[1], tmp_path / "r.json")[0] == "/builds/release/apiary"
    times = np.ones((2, len(points)))
    times[:, -1] = 1.02
    for p in points:
        p.counts = {"instructions": 1.0, "accesses": 1.0, "l1_misses": 0.0, "ll_misses": 0.0, "tlb_misses": 0.0,
                    "page_walks": 0.0}
    steps = {s["step"]: s for s in cw.analyse(points, times, resamples=0)["steps"]}
    assert steps["plant"]["measured"] == pytest.approx(0.02)


def test_bad_arguments_are_one_line(capsys):
    for argv, words in ((["--rounds", "1"], "at least 2"), (["--ladder-at", "many"], "expected ACCOUNTS-BLOCKS"),
                        (["--ladder-steps", "9"], "steps are 0 to 7"),
                        (["--plant", "x", "--ladder-at", "none"], "--ladder-at is none")):
        with pytest.raises(SystemExit):
            cw.parse(argv)
        assert words in capsys.readouterr().err


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_a_real_series_counts_times_fits_and_resumes(tmp_path, apiary_bin, capsys):
    planted = tmp_path / "planted" / "apiary"   # a copy: the plant's point by a build of its own
    planted.parent.mkdir()
    shutil.copy2(apiary_bin, planted)
    argv = ["--apiary", str(apiary_bin), "--accounts", "2000", "--blocks", "0,2", "--ladder-at", "2000-0",
            "--ladder-steps", "0,1", "--rounds", "2", "--transactions", "1500", "--plant", str(planted),
            "--out", str(tmp_path), "--", "--block-size", "64KiB"]
    assert cw.main(argv) == 0
    data = json.loads((tmp_path / "cost-weights.json").read_text())
    assert [p["name"] for p in data["points"]] == ["2000-0", "2000-2", "ladder start", "ladder 1 keep-alive", "plant"]
    assert data["points"][-1]["apiary"] == str(planted) and data["points"][-1]["versus"] == "2000-0"
    assert [s["step"] for s in data["steps"]] == ["ladder 1 keep-alive", "plant"]
    start = data["points"][2]
    assert start["switches"][start["switches"].index("--keep-alive") + 1] == "off"
    for p in data["points"]:
        assert p["per_tx"]["accesses"] > p["per_tx"]["instructions"] > 0
        assert p["per_tx"]["tlb_misses"] > 0 and p["per_tx"]["page_walks"] >= 0
        assert len(p["us_per_tx_rounds"]) == 2 and min(p["us_per_tx_rounds"]) > 0
    # The pages' count ran with the caches of PAGE_GEOMETRY: lines of a page, the TLBs' ways.
    with open(tmp_path / "callgrind" / "2000-0-pages.callgrind", encoding="utf-8") as f:
        desc = f.read(4000)   # the header
    assert "D1 cache: 294912 B, 4096 B, 72-way" in desc and "LL cache: 12582912 B, 4096 B, 24-way" in desc
    assert len(list((tmp_path / "runs").glob("*.json"))) == 10
    # The estimate at iai-callgrind's weights is the gate's estimated cycles, counted its own way.
    first = data["points"][0]["per_tx"]
    features = np.array([first["accesses"], first["l1_misses"], first["ll_misses"]])
    gate_est = cw.gate.total_events(tmp_path / "callgrind" / "2000-0.callgrind", "EstCycles") / 1500
    assert float(cw.estimate(features, cw.IAI)) == pytest.approx(gate_est, rel=1e-9)
    assert "Each ladder step against the step before it" in (tmp_path / "cost-weights.md").read_text()
    # Run again: every report is there, so nothing is replayed and the same times come out.
    before = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "runs").iterdir()}
    assert cw.main([*argv[:-3], "--reuse", *argv[-3:]]) == 0
    assert {p.name: p.stat().st_mtime_ns for p in (tmp_path / "runs").iterdir()} == before
    again = json.loads((tmp_path / "cost-weights.json").read_text())
    assert again["us_per_tx"] == data["us_per_tx"]
    assert "cost-weights: round 2 of 2" in capsys.readouterr().err
    # A replay cut short (fewer transactions than the series') is refused, not averaged in.
    cut = tmp_path / "runs" / "2000-0-02.json"
    report = json.loads(cut.read_text())
    report["result"]["transactions"] = 700
    cut.write_text(json.dumps(report))
    with pytest.raises(SystemExit, match="replayed 700 transactions, not --transactions 1,500"):
        cw.main([*argv[:-3], "--reuse", *argv[-3:]])


def test_a_missing_binary_is_one_line(tmp_path):
    with pytest.raises(SystemExit, match="no apiary binary at"):
        cw.main(["--apiary", str(tmp_path / "nothing"), "--out", str(tmp_path / "out")])
