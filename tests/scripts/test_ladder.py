"""The optimization ladder script: the options of each step, the analysis of constructed
runs (changes, significance, breakdown), and one quick ladder with the real binary."""

import json
from pathlib import Path

import pytest

import fakes
from apiary_tools import common, ladders, metrics
from apiary_tools.commands import ladder
from apiary_tools.runner import PlannedRun, RunResult


def test_steps_turn_the_switches_on_in_hives_order():
    start = dict(zip(ladder.step_args(0)[::2], ladder.step_args(0)[1::2], strict=True))
    assert start == {"--keep-alive": "off", "--dedup": "unified", "--submit": "async", "--queue": "bounded",
                     "--custom-ops": "state", "--pool-objects": "off", "--pool-undo": "off", "--rc": "state",
                     "--reuse-pending": "off"}
    last = dict(zip(ladder.step_args(7)[::2], ladder.step_args(7)[1::2], strict=True))
    assert last == {"--keep-alive": "on", "--dedup": "split", "--submit": "fire-and-forget", "--queue": "unbounded",
                    "--custom-ops": "local", "--pool-objects": "on", "--pool-undo": "on", "--rc": "volatile",
                    "--reuse-pending": "off"}
    # Each step changes exactly what it names, and keeps what came before.
    for i in range(1, 8):
        before = dict(zip(ladder.step_args(i - 1)[::2], ladder.step_args(i - 1)[1::2], strict=True))
        after = dict(zip(ladder.step_args(i)[::2], ladder.step_args(i)[1::2], strict=True))
        changed = {k for k in after if after[k] != before[k]}
        assert changed == set(ladders.STEPS[i - 1].args[::2])


def test_merge_lets_a_later_value_win_and_rejects_loose_words():
    assert ladder.merge(["--sign", "off", "--blocks", "5"], ["--sign", "on"]) == ["--blocks", "5", "--sign", "on"]
    with pytest.raises(common.ToolError):
        ladder.merge(["--sign"])


def _results(means_ms, cpu_ns=None):
    """Five runs of each step, its cycle means_ms[step] (spread 0.2 %) and, with cpu_ns, its
    writer's CPU time cpu_ns[step] a transaction (within ±0.5 %). A step whose cycle is the
    step before's has that step's runs, so that it changes nothing by the rank test either."""
    out = []
    for step, mean in enumerate(means_ms):
        first = means_ms.index(mean)
        for run in range(1, 6):
            cycles = fakes.noisy_cycles(mean * 1000, run + 10 * first, blocks=10, spread=0.002)
            report = fakes.make_report(cycles, unknown_share=0.3 if step == 0 else 0.01)
            if cpu_ns is not None:
                report["counters"] = fakes.counters_section(240, 10, cpu_ns[step] * (1 + 0.005 * (run - 3)))
            planned = PlannedRun(f"step{step}", run, [], Path(f"step{step}-run-{run:03d}.json"))
            out.append(RunResult(planned, 0, 1.0, [0.0], report))
    return out


def test_analysis_finds_the_steps_that_helped():
    # Steps 1, 3 and 6 cut the cycle clearly; the others change nothing.
    means = [100, 80, 80, 50, 50, 50, 40, 40]
    rows = ladder.analyse(_results(means), runs=5, alpha=0.05)
    assert [r["runs"] for r in rows] == [5] * 8
    for r, m in zip(rows, means, strict=True):
        assert r["cycle_ms"]["mean"] == pytest.approx(m, rel=0.01)
    sig = [r["vs_previous"]["significant"] for r in rows[1:]]
    assert sig == [True, False, True, False, False, True, False]
    # The runs' spread is 0.2%: a step that changes nothing is shown to be below 2%.
    assert [ladders.verdict(r["vs_previous"]) for r in rows[1:]] == [
        "significant", "below 2%", "significant", "below 2%", "below 2%", "significant", "below 2%"]
    assert rows[6]["vs_start"]["change_pct"] == pytest.approx(-60, abs=1)
    assert rows[0]["writer_share"]["unknown"] == pytest.approx(0.3)
    md = ladders.to_markdown(rows, {"mode": "quick", "runs": 5, "alpha": 0.05, "machine": "test", "load_before": "0"})
    assert "3 fire-and-forget" in md and "7 volatile RC" in md and "unknown" in md


def test_analysis_gives_the_writer_s_cpu_time_beside_the_cycle():
    # Step 1 cuts both; step 3 cuts the cycle by less waiting and leaves the writer's CPU time.
    means = [100, 80, 80, 50, 50, 50, 40, 40]
    cpu = [5000, 4000, 4000, 4000, 4000, 4000, 3200, 3200]
    rows = ladder.analyse(_results(means, cpu), runs=5, alpha=0.05)
    assert [r[ladders.CPU_KEY]["mean"] for r in rows] == pytest.approx(cpu, rel=0.01)
    assert rows[1][ladders.CPU_VS_PREVIOUS]["change_pct"] == pytest.approx(-20, abs=1)
    assert rows[1][ladders.CPU_VS_PREVIOUS]["significant"] and not rows[3][ladders.CPU_VS_PREVIOUS]["significant"]
    assert ladders.CPU_VS_PREVIOUS not in rows[0]
    judges = ladder.judges_for(range(8), 2.0, 0.05, 30, None)
    ladder.feed(judges, _results(means, cpu))
    rows = ladder.analyse(_results(means, cpu), runs=5, alpha=0.05, judges=judges)
    md = ladders.to_markdown(rows, {"mode": "quick", "runs": 5, "alpha": 0.05, "machine": "test", "load_before": "0"})
    assert "writer CPU µs per tx (mean ± 95% CI)" in md and "| 4.0 ± " in md
    three = next(line for line in md.splitlines() if line.startswith("- 3 fire-and-forget: "))
    assert "decided on the writer's CPU time per transaction" in three
    assert "the cycle (-37." in three and "and the writer's CPU time (+0.0%) moved apart" in three
    assert not any(line.startswith("- 1 keep-alive: ") and "moved apart" in line for line in md.splitlines())


def test_a_step_the_replay_runs_is_decided_on_its_count():
    # Step 1's options the replay runs: its estimated cycles (5 % more) decide under auto; step
    # 2's it does not: the runs decide it, and ladder.md says why.
    judges = ladder.judges_for(range(3), 2.0, 0.05, 30, None)
    ladder.feed(judges, _results([100, 100, 100]))
    rows = ladder.analyse(_results([100, 100, 100]), runs=5, alpha=0.05, steps=range(3), judges=judges)
    for row, est, unreplayed in zip(rows, (1000.0, 1050.0, 1050.0), ([], [], ["--dedup"]), strict=True):
        row["instructions"] = {"ir_per_tx": est, "est_per_tx": est, "mem_ns_per_tx": 100.0, "state_digest": "d",
                               "unreplayed": unreplayed}
    ladder.decide_by_counts(rows, judges, 2.0)
    counted = rows[1][ladders.COUNTED]
    assert counted["verdict"] == "slower" and counted["change"] == pytest.approx(0.05)
    assert counted["candidate"] == "estimated-cycles" and counted["changes"]["mem_ns_per_tx"] == 0
    assert ladders.COUNTED not in rows[2] and ladders.COUNTED not in rows[0]
    md = ladders.to_markdown(rows, {"mode": "quick", "runs": 5, "alpha": 0.05, "machine": "test", "load_before": "0"})
    assert "**slower** +5.0% estimated cycles, +0.0% estimated memory ns (the replay's count, deterministic)" in md
    assert "- 1 keep-alive: decided on the replay's counts (deterministic, noise 0; in the runs the mean cycle " in md
    assert "estimated cycles +5.00%, estimated memory ns +0.00%; beyond ±2%" in md
    assert "(the replay does not run --dedup: the runs decide)" in md
    # Counts that part (fewer estimated cycles, more memory time): the runs decide, and say why.
    rows[2].pop(ladders.COUNTED, None)
    rows[2]["instructions"] = {"ir_per_tx": 1000.0, "est_per_tx": 1000.0, "mem_ns_per_tx": 110.0, "state_digest": "d",
                               "unreplayed": []}
    ladder.decide_by_counts(rows, judges, 2.0)
    assert rows[2][ladders.COUNTED]["verdict"] == "undecided"
    md = ladders.to_markdown(rows, {"mode": "quick", "runs": 5, "alpha": 0.05, "machine": "test", "load_before": "0"})
    two = next(line for line in md.splitlines() if line.startswith("- 2 split dedup: "))
    assert "undecided, estimated cycles -4.76%, estimated memory ns +10.00%; the two part beyond ±2%: the runs decide" \
        in two
    assert "(the replay's count, deterministic)" not in next(line for line in md.splitlines()
                                                               if line.startswith("| 2 split dedup"))
    # A metric forced: the count does not decide.
    forced = ladder.judges_for(range(3), 2.0, 0.05, 30, None, "cycle")
    for row in rows:
        row.pop(ladders.COUNTED, None)
    ladder.decide_by_counts(rows, forced, 2.0)
    assert not any(ladders.COUNTED in row for row in rows)


def test_a_wide_interval_is_undecided():
    wide = {"p_value": 0.4, "significant": False, "ci_low_pct": -5.0, "ci_high_pct": 1.0}
    assert ladders.verdict(wide) == "undecided"
    assert ladders.verdict({"p_value": 0.4, "significant": False, "ci_low_pct": -1.5, "ci_high_pct": 1.9}) == "below 2%"


def test_a_quick_ladder_with_the_real_binary(tmp_path, apiary_bin):
    out = tmp_path / "ladder"
    code = ladder.main(["--mode", "quick", "--runs", "2", "--apiary", str(apiary_bin), "--out", str(out),
                        "--", "--blocks", "6", "--accounts", "300"])
    assert code == 0
    data = json.loads((out / "ladder.json").read_text())
    assert [s["runs"] for s in data["steps"]] == [2] * 8
    assert all(s["cycle_ms"]["mean"] > 0 for s in data["steps"])
    # The reports carry each step's switches.
    first = json.loads((out / "step0-run-001.json").read_text())["config"]
    last = json.loads((out / "step7-run-001.json").read_text())["config"]
    assert (first["keep-alive"], first["dedup"], first["submit"], first["rc"]) == (False, "unified", "async", "state")
    assert (last["keep-alive"], last["dedup"], last["submit"], last["rc"]) == (True, "split", "fire-and-forget",
                                                                              "volatile")
    # Each step's core counted in a replay; every switch keeps the state the same.
    counts = [s["instructions"] for s in data["steps"]]
    assert all(c["ir_per_tx"] > 0 for c in counts)
    assert "--submit" not in counts[0]["options"] and "--keep-alive" in counts[0]["options"]
    assert len({c["state_digest"] for c in counts}) == 1
    # The steps whose options the replay runs are decided on its count; step 3's submission is not.
    assert counts[3]["unreplayed"] == ["--submit", "--queue"] and ladders.COUNTED not in data["steps"][3]
    # Split dedup takes lookups out of the push: both counts fall.
    assert data["steps"][2][ladders.COUNTED]["verdict"] == "faster"
    assert (out / "ladder.png").stat().st_size > 1000


def test_bad_usage(capsys):
    assert ladder.main(["--runs", "0"]) == 2
    assert ladder.main(["--mode", "slow"]) == 2


def fake_ladder(tmp_path, fake_binary, monkeypatch, *extra, slower="--pool-undo on 1.10"):
    """The ladder's steps 6 and 7 (and 5 before them) with the fake apiary: runs with 1% noise,
    and a slowdown planted in the runs with `slower` (OPTION VALUE FACTOR)."""
    monkeypatch.setenv("FAKE_APIARY_NOISE", "0.01")
    monkeypatch.setenv("FAKE_APIARY_SLOWER", slower)
    out = tmp_path / "ladder"
    code = ladder.main(["--apiary", str(fake_binary), "--instructions", "off", "--steps", "6,7", "--out", str(out),
                        *extra])
    return code, json.loads((out / "ladder.json").read_text()), out


def test_rounds_are_added_until_every_step_is_decided(tmp_path, fake_binary, monkeypatch):
    # Step 6 (--pool-undo on) is 10% slower than step 5; step 7 is step 6 again.
    code, data, out = fake_ladder(tmp_path, fake_binary, monkeypatch, "--runs", "5", "--max-runs", "30",
                                  "--threshold", "2")
    assert code == 0
    assert [s["step"] for s in data["steps"]] == [5, 6, 7]
    six, seven = data["steps"][1]["sequential"], data["steps"][2]["sequential"]
    assert six["verdict"] == "slower" and six["low"] > 0.02
    assert seven["verdict"] == "equivalent" and -0.02 <= seven["low"] and seven["high"] <= 0.02
    assert "sequential" not in data["steps"][0]
    # The rounds stopped when both were decided, before the budget.
    assert data["meta"]["runs"] == max(six["pairs"], seven["pairs"]) < 30
    assert len(list(out.glob("step6-run-*.json"))) == data["meta"]["runs"]
    assert not list(out.glob("step4-*"))
    md = (out / "ladder.md").read_text()
    assert "**slower** [+" in md and "**equivalent** [" in md


def test_the_ladder_s_budget_of_rounds_and_of_time(tmp_path, fake_binary, monkeypatch):
    # Threshold 0 never settles on noisy runs: the budget ends the rounds.
    code, data, _ = fake_ladder(tmp_path / "runs", fake_binary, monkeypatch, "--runs", "3", "--max-runs", "7",
                                "--threshold", "0", slower="")
    assert code == 0 and data["meta"]["runs"] == 7
    assert {s["sequential"]["reason"] for s in data["steps"][1:]} == {"budget spent: 7 pairs"}
    code, data, _ = fake_ladder(tmp_path / "time", fake_binary, monkeypatch, "--runs", "5", "--max-runs", "500",
                                "--threshold", "0", "--max-time", "6s", slower="")
    assert code == 0 and 5 <= data["meta"]["runs"] < 500
    for step in data["steps"][1:]:
        assert step["sequential"]["verdict"] == "undecided" and " s of 6 s" in step["sequential"]["reason"]


def test_the_ladder_decides_on_the_cpu_time_a_noisy_cycle_hides(tmp_path, fake_binary, monkeypatch):
    # The cycle scatters by 3 % a run; the writer's CPU by 0.3 %, and step 6 costs it 5 % more.
    monkeypatch.setenv("FAKE_APIARY_CPU_NOISE", "0.003")
    monkeypatch.setenv("FAKE_APIARY_CPU_SLOWER", "--pool-undo on 1.05")
    code, data, out = fake_ladder(tmp_path, fake_binary, monkeypatch, "--runs", "5", "--max-runs", "12",
                                  "--", "--counters", "on", slower="")
    assert code == 0
    six, seven = data["steps"][1], data["steps"][2]
    assert six["sequential"]["metric"] == seven["sequential"]["metric"] == metrics.WRITER_CPU
    assert six["sequential"]["verdict"] == "slower" and seven["sequential"]["verdict"] == "equivalent"
    assert six[ladders.CPU_VS_PREVIOUS]["change_pct"] == pytest.approx(5, abs=1)
    assert data["meta"]["runs"] < 12 and data["meta"]["decide_on"] == "auto"
    md = (out / "ladder.md").read_text()
    assert "**slower** [+" in md and "(writer CPU)" in md and "- 6 undo pool: decided on the writer's CPU time" in md


def test_the_ladder_refuses_the_cpu_time_forced_without_counters(tmp_path, fake_binary, capsys):
    out = tmp_path / "ladder"
    assert ladder.main(["--apiary", str(fake_binary), "--steps", "7", "--decide-on", "cpu", "--out", str(out)]) == 2
    assert "ladder: --decide-on cpu: the options of step 6 turn the counters off" in capsys.readouterr().err
    assert not list(out.glob("*.json"))


@pytest.mark.parametrize("steps", ["0", "8", "7-6", "x", ","])
def test_bad_steps(steps, capsys):
    assert ladder.main(["--steps", steps]) == 2
    assert "--steps" in capsys.readouterr().err
