"""The deciding metric (deciding.py): the rule takes the quieter of the cycle and the writer's
CPU time, forcing one works, a metric the runs lack is unavailable with its reason (auto then
decides on the cycle, forced it is an error), and by simulation the rule's false calls stay
under α, looking after every pair, while a planted 2 % slowdown of the writer's CPU time is
found."""

import json
import math

import numpy as np
import pytest

import fakes
from apiary_tools import deciding, metrics, sequential
from apiary_tools.commands import compare, multirun
from apiary_tools.common import ToolError
from apiary_tools.deciding import AUTO, CPU, CYCLE, Judge
from apiary_tools.reports import load_set

TRIALS = 500


def no_reason(metric):
    raise AssertionError(f"no run should lack {metric}")


def counted(report, writer_ns_per_tx):
    """The report with counters whose writer spends writer_ns_per_tx of CPU a transaction."""
    aggregates = report["aggregates"]
    report["counters"] = fakes.counters_section(int(aggregates["transactions_per_block"]["avg"]),
                                                aggregates["measured_blocks"])
    writer = report["counters"]["threads"][0]
    writer["per_transaction"]["task_clock_ns"] = writer_ns_per_tx
    writer["per_block"]["task_clock_ns"] = writer_ns_per_tx * aggregates["transactions_per_block"]["avg"]
    return report


def write_runs(directory, cycles_us, cpu_ns):
    """A set of runs, run i's mean cycle cycles_us[i] and its writer's CPU cpu_ns[i] a transaction
    (None: a report without counters)."""
    for i, (cycle, cpu) in enumerate(zip(cycles_us, cpu_ns, strict=True), 1):
        report = fakes.make_report(fakes.noisy_cycles(cycle, i, spread=0.0))
        fakes.write_report(directory / f"run-{i:03d}.json", report if cpu is None else counted(report, cpu))
    return directory


# ---- the rule -----------------------------------------------------------------------------------

def test_the_rule_takes_the_quieter_metric():
    choice = deciding.choose(AUTO, {"cycle": 0.039, "cpu": 0.021}, {})
    assert choice.chosen == CPU and choice.judged == (CYCLE, CPU) and choice.alpha_share == 0.5
    assert choice.text().startswith("decided on the writer's CPU time per transaction (noise ±2.1%; the mean cycle "
                                    "±3.9%): --decide-on auto, the quieter of 2, each judged at α/2 (Bonferroni)")
    assert deciding.choose(AUTO, {"cycle": 0.021, "cpu": 0.039}, {}).chosen == CYCLE
    # Equal noise, or noise that cannot be told: the cycle, as before there was a choice.
    assert deciding.choose(AUTO, {"cycle": 0.03, "cpu": 0.03}, {}).chosen == CYCLE
    unknown = deciding.choose(AUTO, {"cycle": None, "cpu": 0.01}, {})
    assert unknown.chosen == CYCLE and "noise unknown" in unknown.text()


def test_the_rule_on_sets_of_runs(tmp_path):
    # Runs whose cycle scatters by 4 % and whose writer's CPU by 1 %: the CPU decides; and the
    # other way round, the cycle.
    cycles = [80_000 * (1 + 0.04 * x) for x in (-1, 1, 0, 0.5, -0.5)]
    cpus = [3500 * (1 + 0.01 * x) for x in (1, -1, 0.5, 0, -0.5)]
    a = load_set([write_runs(tmp_path / "a", cycles, cpus)], "a")
    b = load_set([write_runs(tmp_path / "b", cycles[::-1], cpus[::-1])], "b")
    choice = deciding.choose_for_sets(AUTO, a, b)
    assert choice.chosen == CPU
    assert choice.noise["cycle"] == pytest.approx(deciding.set_noise(a.values(metrics.CYCLE), b.values(metrics.CYCLE)))
    assert choice.noise["cpu"] < choice.noise["cycle"] / 3
    c = load_set([write_runs(tmp_path / "c", cpus[::-1], cycles)], "c")
    d = load_set([write_runs(tmp_path / "d", cpus, cycles[::-1])], "d")
    assert deciding.choose_for_sets(AUTO, c, d).chosen == CYCLE


def test_the_noise_of_pairs_and_of_sets_by_hand():
    # Log-ratios 0 and log 1.1: their sample standard deviation is log 1.1 / √2.
    judge = Judge(AUTO, 0.01)
    judge.add(*pair(100.0, 10.0, 100.0, 10.0), no_reason, no_reason)
    assert judge.choice().noise == {"cycle": None, "cpu": None}
    judge.add(*pair(100.0, 10.0, 110.0, 10.0), no_reason, no_reason)
    assert judge.choice().noise == pytest.approx({"cycle": math.log(1.1) / math.sqrt(2), "cpu": 0.0})
    a, b = [100.0, 110.0], [100.0, 100.0, 100.0]
    assert deciding.set_noise(a, b) == pytest.approx(math.log(1.1) / math.sqrt(2))
    assert deciding.set_noise([100.0], b) is None


def test_forcing_a_metric():
    forced = deciding.choose("cycle", {"cycle": 0.05, "cpu": 0.01}, {})
    assert forced.chosen == CYCLE and forced.judged == (CYCLE,) and forced.alpha_share == 1.0
    assert forced.text() == ("decided on the mean cycle (noise ±5.0%; the writer's CPU time per transaction ±1.0%), "
                             "as --decide-on cycle asks")
    assert deciding.choose("cpu", {"cycle": 0.01, "cpu": 0.05}, {}).chosen == CPU
    assert forced.to_dict()["metric"] == metrics.CYCLE and forced.to_dict()["setting"] == "cycle"
    with pytest.raises(ValueError):
        deciding.choose("wall", {"cycle": 0.01}, {})


# ---- a metric the runs lack -----------------------------------------------------------------------

def report_with(counters):
    report = fakes.make_report(fakes.noisy_cycles(20000, 1))
    if counters is not None:
        report["counters"] = counters
    return report


@pytest.mark.parametrize("counters, reason", [
    (None, "its report has no counters (an apiary older than --counters)"),
    ({"enabled": False, "unavailable": None, "events": {}, "threads": []}, "its counters were off (--counters off)"),
    ({"enabled": True, "unavailable": "perf_event_open: Permission denied (perf_event_paranoid is 4)", "events": {},
      "threads": []}, "its counters were unavailable: perf_event_open: Permission denied (perf_event_paranoid is 4)"),
    ({"enabled": True, "unavailable": None, "threads": [],
      "events": {"task_clock_ns": {"available": False, "reason": "not supported by this machine"}}},
     "task_clock_ns was not counted: not supported by this machine"),
])
def test_why_a_report_lacks_the_writer_s_cpu_time(counters, reason):
    report = report_with(counters)
    assert metrics.WRITER_CPU not in metrics.flatten(report)
    assert deciding.missing_reason(report, metrics.WRITER_CPU) == reason


def test_without_the_cpu_time_auto_decides_on_the_cycle_and_forcing_it_is_an_error(tmp_path):
    a = load_set([write_runs(tmp_path / "a", [80_000] * 3, [3500, 3510, 3490])], "a")
    b = load_set([write_runs(tmp_path / "b", [80_000] * 3, [3500, None, 3490])], "b")
    choice = deciding.choose_for_sets(AUTO, a, b)
    assert choice.chosen == CYCLE and choice.judged == (CYCLE,) and choice.alpha_share == 1.0
    assert choice.unavailable == {"cpu": "b run-002.json: its report has no counters (an apiary older than "
                                         "--counters)"}
    assert "the writer's CPU time per transaction unavailable: b run-002.json" in choice.text()
    assert choice.text().endswith("--decide-on auto falls back to the mean cycle")
    with pytest.raises(ToolError) as e:
        deciding.choose_for_sets("cpu", a, b)
    assert str(e.value) == ("--decide-on cpu: the writer's CPU time per transaction is unavailable: b run-002.json: "
                            "its report has no counters (an apiary older than --counters)")
    assert e.value.code == 2


def test_counters_turned_off_are_refused_before_anything_runs():
    with pytest.raises(ToolError, match="--decide-on cpu: the arguments of b turn the counters off"):
        deciding.check_counted("cpu", {"counters": "off"}, "the arguments of b")
    deciding.check_counted("cpu", {"counters": "on"}, "the arguments of b")
    deciding.check_counted(AUTO, {"counters": "off"}, "the arguments of b")


# ---- the sequential judge ---------------------------------------------------------------------------

def pair(cycle_a, cpu_a, cycle_b, cpu_b):
    a = {metrics.CYCLE: cycle_a} | ({metrics.WRITER_CPU: cpu_a} if cpu_a else {})
    b = {metrics.CYCLE: cycle_b} | ({metrics.WRITER_CPU: cpu_b} if cpu_b else {})
    return a, b


def test_the_judge_splits_alpha_under_auto_only():
    auto, forced = Judge(AUTO, 0.01), Judge("cpu", 0.01)
    for judge in (auto, forced):
        judge.add(*pair(100, 10, 101, 10.1), no_reason, no_reason)
    assert {name: j.alpha for name, j in auto.judges.items()} == {"cycle": 0.025, "cpu": 0.025}
    assert {name: j.alpha for name, j in forced.judges.items()} == {"cpu": 0.05}
    forced.add(*pair(100, 10, 99, 10.2), no_reason, no_reason)
    assert set(forced.choice().noise) == {"cycle", "cpu"} and forced.to_dict()["candidates"].keys() == {"cpu"}
    assert "the mean cycle ±1.4%" in forced.choice().text()
    alone = Judge(AUTO, 0.01)
    alone.add(*pair(100, None, 101, 10.1), lambda m: "its counters were off (--counters off)", no_reason)
    assert {name: j.alpha for name, j in alone.judges.items()} == {"cycle": 0.05}
    assert alone.choice().unavailable == {"cpu": "its counters were off (--counters off)"}


def test_the_judge_decides_on_the_quieter_metric_and_says_so():
    judge = Judge(AUTO, 0.01, max_pairs=30)
    rng = np.random.default_rng(5)
    for _ in range(12):
        noisy = 100 * math.exp(rng.normal(0, 0.04))
        judge.add(*pair(100, 10, noisy, 10 * 1.05 * math.exp(rng.normal(0, 0.002))), no_reason, no_reason)
    d = judge.to_dict()
    assert d["metric"] == metrics.WRITER_CPU and d["decided_on"]["candidate"] == "cpu"
    assert d["verdict"] == "slower" and d["alpha"] == 0.025 and judge.decided
    assert set(d["candidates"]) == {"cycle", "cpu"} and d["candidates"]["cycle"]["verdict"] == "undecided"
    assert judge.describe().startswith("slower +4.9 % [+4.7 %, +5.2 %], 12 pairs") and judge.describe().endswith(
        "on the writer's CPU time per transaction")
    json.dumps(d)


def test_a_metric_a_later_pair_lacks_is_dropped_and_a_forced_one_refused():
    judge = Judge(AUTO, 0.01)
    judge.add(*pair(100, 10, 100, 10), no_reason, no_reason)
    judge.add(*pair(100, 10, 100, None), no_reason, lambda m: "b run-002.json: its counters were off")
    assert list(judge.judges) == ["cycle"] and judge.judges["cycle"].alpha == 0.025 and judge.pairs == 2
    assert judge.choice().unavailable == {"cpu": "b run-002.json: its counters were off"}
    assert "judged at α/2, the share it had before the others were dropped" in judge.choice().text()
    forced = Judge("cpu", 0.01)
    forced.add(*pair(100, 10, 100, 10), no_reason, no_reason)
    with pytest.raises(ToolError, match="^--decide-on cpu: the writer's CPU time per transaction is unavailable: "
                                        "b run-002.json: its counters were off$"):
        forced.add(*pair(100, 10, 100, None), no_reason, lambda m: "b run-002.json: its counters were off")


# ---- in the tools: compare, multirun --------------------------------------------------------------

NOISY_CYCLES = [80_000 * (1 + 0.04 * x) for x in (-1, 1, 0, 0.5, -0.5, 0.2)]
QUIET_CPU = [3500 * (1 + 0.002 * x) for x in (1, -1, 0.5, 0, -0.5, 0.2)]


def test_compare_decides_on_the_quieter_metric_and_records_it(tmp_path, capsys):
    # B's writer spends 3 % more CPU a transaction; the cycle scatters by 4 % and moved not.
    a = write_runs(tmp_path / "a", NOISY_CYCLES, QUIET_CPU)
    b = write_runs(tmp_path / "b", NOISY_CYCLES[::-1], [c * 1.03 for c in QUIET_CPU[::-1]])
    out = tmp_path / "cmp.json"
    assert compare.main([str(a), str(b), "--json", str(out)]) == 1
    text = capsys.readouterr().out
    assert "- Decided on the writer's CPU time per transaction (noise ±0.1%; the mean cycle ±5.0%): --decide-on " \
           "auto, the quieter of 2, each judged at α/2 (Bonferroni)" in text
    assert "It is the gate, tested at α 0.025." in text
    assert "Gate: **FAIL**: `counters.writer.per_transaction.task_clock_ns` slower (+3.00%)" in text
    data = json.loads(out.read_text())
    assert data["decision"]["candidate"] == "cpu" and data["decision"]["setting"] == "auto"
    assert data["gate"] == {"metrics": [metrics.WRITER_CPU], "failed": True, "regressions": [metrics.WRITER_CPU],
                            "alpha": 0.025, "decided": True}
    assert data["sequential"]["metric"] == metrics.WRITER_CPU and data["sequential"]["verdict"] == "slower"
    # Forced, the cycle decides, at α: it did not move.
    assert compare.main([str(a), str(b), "--decide-on", "cycle", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["gate"]["metrics"] == [metrics.CYCLE] and data["gate"]["alpha"] == 0.05
    assert data["sequential"]["metric"] == metrics.CYCLE and data["decision"]["noise"]["cpu"] < 0.01
    # --fail-on names the gate; the deciding metric still decides the sequential verdict.
    assert compare.main([str(a), str(b), "--fail-on", "us_per_tx", "--json", str(out), "--quiet"]) == 0
    data = json.loads(out.read_text())
    assert data["gate"]["decided"] is False and data["gate"]["alpha"] == 0.05
    assert data["sequential"]["metric"] == metrics.WRITER_CPU


def test_compare_without_the_cpu_time_falls_back_and_refuses_it_forced(tmp_path, capsys):
    a = write_runs(tmp_path / "a", NOISY_CYCLES, QUIET_CPU)
    old = write_runs(tmp_path / "old", NOISY_CYCLES[::-1], [None] * 6)
    out = tmp_path / "cmp.json"
    assert compare.main([str(a), str(old), "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert ("- Decided on the mean cycle (noise ±5.0%; the writer's CPU time per transaction unavailable: old "
            "run-001.json: its report has no counters (an apiary older than --counters)): --decide-on auto falls "
            "back to the mean cycle. It is the gate, tested at α 0.05.") in text
    assert json.loads(out.read_text())["decision"]["unavailable"]["cpu"].startswith("old run-001.json: ")
    assert compare.main([str(a), str(old), "--decide-on", "cpu"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == (
        "compare: --decide-on cpu: the writer's CPU time per transaction is unavailable: old run-001.json: its "
        "report has no counters (an apiary older than --counters)\n")


def adaptive(tmp_path, fake_command, *extra):
    out = tmp_path / "ab"
    code = multirun.main(["--command", fake_command, "--adaptive", "--a", "--side a", "--b", "--side b",
                          "--out", str(out), "--quiet", *extra])
    return code, out


def test_multirun_decides_on_the_cpu_time_a_noisy_cycle_hides(tmp_path, fake_command, monkeypatch):
    monkeypatch.setenv("FAKE_APIARY_NOISE", "0.03")
    monkeypatch.setenv("FAKE_APIARY_CPU_NOISE", "0.003")
    monkeypatch.setenv("FAKE_APIARY_CPU_SLOWER", "--side b 1.03")
    code, out = adaptive(tmp_path, fake_command, "--threshold", "1", "--max-runs", "10", "--", "--counters", "on")
    assert code == 0
    data = json.loads((out / "comparison.json").read_text())
    d = data["sequential"]
    assert d["metric"] == metrics.WRITER_CPU and d["verdict"] == "slower" and d["pairs"] < 10
    assert d["decided_on"]["candidate"] == "cpu" and d["alpha"] == 0.025
    assert d["candidates"]["cycle"]["verdict"] == "undecided"
    assert data["decision"]["candidate"] == "cpu"
    text = (out / "comparison.md").read_text()
    assert "Decided on the writer's CPU time per transaction (noise ±0." in text
    assert "Sequential decision on writer CPU per transaction (ns)" in text
    # The cycle forced cannot tell within the budget.
    code, out = adaptive(tmp_path / "cycle", fake_command, "--threshold", "1", "--max-runs", "10", "--decide-on",
                         "cycle", "--", "--counters", "on")
    assert code == 0
    d = json.loads((out / "comparison.json").read_text())["sequential"]
    assert d["metric"] == metrics.CYCLE and d["verdict"] == "undecided" and d["pairs"] == 10


def test_multirun_without_the_task_clock(tmp_path, fake_command, monkeypatch, capsys):
    # The counters on, the task clock refused by the kernel: auto decides on the cycle and says
    # why; forced, the CPU time is one line, exit 2, once the first pair shows it missing.
    monkeypatch.setenv("FAKE_APIARY_NO_TASK_CLOCK", "1")
    code, out = adaptive(tmp_path, fake_command, "--runs", "5", "--max-runs", "5", "--", "--counters", "on")
    assert code == 0
    text = (out / "comparison.md").read_text()
    assert ("the writer's CPU time per transaction unavailable: a run-001.json: task_clock_ns was not counted: "
            "perf_event_open: Permission denied") in text and "falls back to the mean cycle" in text
    capsys.readouterr()
    code, _ = adaptive(tmp_path / "forced", fake_command, "--decide-on", "cpu", "--", "--counters", "on")
    err = capsys.readouterr().err
    assert code == 2 and err == ("multirun: --decide-on cpu: the writer's CPU time per transaction is unavailable: "
                                 "a run-001.json: task_clock_ns was not counted: perf_event_open: Permission denied\n")


@pytest.mark.parametrize("extra, message", [
    (["--adaptive", "--a", "x", "--b", "y", "--decide-on", "cpu"],
     "--decide-on cpu: the arguments of a turn the counters off (--counters off), so the runs would not count "
     "the writer's CPU time per transaction"),
    (["--decide-on", "cpu"], "--decide-on decides an A/B: give --a and --b"),
    (["--a", "x", "--b", "y", "--decide-on", "wall"], "argument --decide-on: invalid choice: 'wall'"),
])
def test_multirun_refuses_before_any_run(tmp_path, fake_command, capsys, extra, message):
    out = tmp_path / "o"
    assert multirun.main(["--command", fake_command, "--out", str(out), *extra]) == 2
    assert message in capsys.readouterr().err
    assert not list(out.rglob("run-*.json"))


# ---- by simulation --------------------------------------------------------------------------------

def machine_noise(rng, trials, pairs, cycle_sd, cpu_sd, shared):
    """Each run's mean cycle and the writer's CPU time per transaction, (cycle, cpu) for A's runs
    and for B's: drift that wanders from pair to pair, shared by both runs of a pair and both
    metrics; a component of each run that both its metrics share (`shared`, the run's own
    work: its caches, its memory's layout); the cycle's long right tail (one run in ten
    preempted, by an exponential 3 % on average), which the CPU time does not see; and each
    metric's own Gaussian noise, making one pair's log-ratio spread by cycle_sd and cpu_sd."""
    tail_p, tail_mean = 0.1, 0.03
    tail_var = tail_p * 2 * tail_mean ** 2 - (tail_p * tail_mean) ** 2
    cycle_own = math.sqrt(cycle_sd ** 2 / 2 - shared ** 2 - tail_var)
    cpu_own = math.sqrt(cpu_sd ** 2 / 2 - shared ** 2)
    drift = np.cumsum(rng.normal(0.0, 0.01, (trials, pairs)), axis=1)

    def runs():
        common = drift + rng.normal(0.0, shared, (trials, pairs))
        tail = rng.exponential(tail_mean, (trials, pairs)) * (rng.random((trials, pairs)) < tail_p)
        cycle = 80_000.0 * np.exp(common + rng.normal(0.0, cycle_own, (trials, pairs))) * (1.0 + tail)
        cpu = 3_500.0 * np.exp(common + rng.normal(0.0, cpu_own, (trials, pairs)))
        return cycle, cpu

    return runs(), runs()


def judged(setting, a, b, threshold, cpu_factor=1.0, cycle_factor=1.0):
    """Every trial looked at after every pair, stopped once decided: the verdicts, and the
    metric that decided each trial."""
    (cycle_a, cpu_a), (cycle_b, cpu_b) = a, b
    verdicts = dict.fromkeys(sequential.VERDICTS, 0)
    chosen = {"cycle": 0, "cpu": 0}
    pairs = []
    for t in range(cycle_a.shape[0]):
        judge = Judge(setting, threshold, max_pairs=cycle_a.shape[1])
        for i in range(cycle_a.shape[1]):
            judge.add(*pair(cycle_a[t, i], cpu_a[t, i], cycle_b[t, i] * cycle_factor, cpu_b[t, i] * cpu_factor),
                      no_reason, no_reason)
            if judge.decided:
                break
        verdicts[judge.decision().verdict] += 1
        chosen[judge.choice().chosen.name] += 1
        pairs.append(judge.pairs)
    return verdicts, chosen, int(np.median(pairs))


@pytest.mark.parametrize("threshold", [0.0, 0.01])
def test_a_against_a_the_rule_keeps_alpha(threshold):
    # A quiet A/A's noise, 60 pairs: the writer's CPU ±3.7 % a pair, the cycle ±3.9 %, correlated
    # (0.56) through the run's shared component. Choosing the quieter at every look, each judged
    # at α/2, the false calls stay under α. (Judged at α each, the same choosing calls 4.0 % at
    # threshold 0 on this noise: the split is what makes it a guarantee whatever the noise.)
    a, b = machine_noise(np.random.default_rng(1), TRIALS, 60, 0.039, 0.037, shared=0.02)
    verdicts, chosen, _ = judged(AUTO, a, b, threshold)
    rate = (verdicts["slower"] + verdicts["faster"]) / TRIALS
    print(f"A/A, threshold {threshold:.0%}, auto: false calls {rate:.1%} ({verdicts}; decided on {chosen})")
    assert rate <= sequential.ALPHA
    assert min(chosen.values()) > TRIALS / 10   # both metrics decide some trials: the choice is made


def test_a_planted_two_percent_cpu_slowdown_is_found():
    # The writer's CPU ±2.1 % a pair, the cycle ±3.9 %: B's writer spends 2 % more CPU a
    # transaction, which the cycle's noise hides. auto decides on the CPU time and finds it; the
    # cycle forced does not.
    a, b = machine_noise(np.random.default_rng(3), 300, 100, 0.039, 0.021, shared=0.01)
    verdicts, chosen, median = judged(AUTO, a, b, 0.01, cpu_factor=1.02)
    found = verdicts["slower"] / 300
    print(f"2 % more CPU, threshold 1 %, up to 100 pairs: found {found:.1%}, median {median} pairs ({verdicts}; "
          f"decided on {chosen})")
    assert found >= 0.90 and verdicts["faster"] == 0 and chosen["cpu"] >= 0.95 * 300
    by_cycle, _, _ = judged("cycle", a, b, 0.01, cpu_factor=1.02)
    assert by_cycle["slower"] <= 0.05 * 300


def test_a_slowdown_of_both_metrics_in_a_quiet_a_against_a_noise():
    # The noise of the A/A above, B 2 % slower in both (a core-only run's cycle is the writer's
    # work): found at threshold 0.5 % by whichever decides.
    a, b = machine_noise(np.random.default_rng(4), 300, 100, 0.039, 0.037, shared=0.02)
    verdicts, chosen, median = judged(AUTO, a, b, 0.005, cpu_factor=1.02, cycle_factor=1.02)
    found = verdicts["slower"] / 300
    print(f"2 % slower in both, threshold 0.5 %: found {found:.1%}, median {median} pairs ({verdicts}; {chosen})")
    assert found >= 0.80 and verdicts["faster"] == 0


@pytest.mark.parametrize("est, mem, verdict, decided", [
    (1.005, 0.995, "equivalent", "estimated-cycles"),   # both within ±1%
    (1.005, 1.04, "slower", "memory-time"),            # the memory time alone beyond: slower
    (0.97, 1.0, "faster", "estimated-cycles"),          # one faster, the other within
    (0.97, 1.04, "undecided", "memory-time"),           # the two part: neither verdict
])
def test_the_count_decides_on_the_estimated_cycles_and_the_memory_time(est, mem, verdict, decided):
    choice = deciding.choose(AUTO, {"cycle": 0.05, "cpu": 0.04}, {})
    a = {"est_per_tx": 1000.0, "mem_ns_per_tx": 2000.0}
    b = {"est_per_tx": 1000.0 * est, "mem_ns_per_tx": 2000.0 * mem}
    d = deciding.counted(choice, a, b, 0.01)
    assert d["verdict"] == verdict and d["candidate"] == decided
    assert d["changes"] == {"est_per_tx": pytest.approx(est - 1), "mem_ns_per_tx": pytest.approx(mem - 1)}
    assert d["change"] == pytest.approx((est if decided == "estimated-cycles" else mem) - 1)
    figures = f"estimated cycles {(est - 1) * 100:+.2f}%, estimated memory ns {(mem - 1) * 100:+.2f}%"
    assert f"{verdict}, {figures}" in d["text"]
    # A count from before the memory time: the estimated cycles alone.
    alone = deciding.counted(choice, {"est_per_tx": 1000.0}, {"est_per_tx": 1000.0 * mem}, 0.01)
    assert alone["changes"].keys() == {"est_per_tx"} and alone["candidate"] == "estimated-cycles"
    # A metric forced: the count does not decide.
    assert deciding.counted(deciding.choose("cycle", {"cycle": 0.05, "cpu": 0.04}, {}), a, b, 0.01) is None
