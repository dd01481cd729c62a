"""End to end with the real apiary binary: a small A/B multirun of smoke runs, compare on its
two sets, gb-export of a set and of one report, plot, and a two-value sweep. The runs are
smoke-sized (a fraction of a second each), so this checks the plumbing, not performance."""

import json
import subprocess

import jsonschema
import pytest

import fakes
from apiary_tools import figures
from apiary_tools.commands import compare, gbexport, multirun, plot, sweep

RC_RESOURCES = ("history_bytes", "market_bytes", "state_bytes", "execution_time")
SMOKE = ["--", "--config", "configs/smoke.toml", "--blocks", "8"]


@pytest.fixture(scope="module")
def ab_dir(apiary_bin, repo, tmp_path_factory):
    out = tmp_path_factory.mktemp("e2e") / "ab"
    code = multirun.main(["--apiary", str(apiary_bin), "--runs", "2", "--a", "--dedup split", "--b",
                          "--dedup unified", "--a-label", "split", "--b-label", "unified", "--out", str(out),
                          "--quiet", "--", "--config", str(repo / "configs" / "smoke.toml"), "--blocks", "8"])
    assert code == 0
    return out


def test_multirun_wrote_everything(ab_dir):
    for side in ("split", "unified"):
        agg = json.loads((ab_dir / side / "aggregate.json").read_text())
        assert agg["n_runs"] == 2 and agg["config"]["dedup"] == side
        assert agg["metrics"]["aggregates.cycle_us.count"]["values"] == [8.0, 8.0]
        assert agg["metrics"]["us_per_tx"]["mean"] > 0
        assert (ab_dir / side / "run-002.out").read_text().startswith("$ ")
    text = (ab_dir / "comparison.md").read_text()
    assert "`dedup` split → unified" in text


def test_compare_the_two_sets(ab_dir, capsys):
    # 2 runs a side cannot reach p < 0.05 (the smallest p is 1/3): the gate passes whatever the numbers
    code = compare.main([str(ab_dir / "split"), str(ab_dir / "unified"), "--json", str(ab_dir / "c.json")])
    assert code == 0
    out = capsys.readouterr().out
    assert "smallest possible Mann" in out and "Gate: **pass**" in out
    data = json.loads((ab_dir / "c.json").read_text())
    assert data["a"]["n"] == 2 and data["config_differences"] == {"dedup": ["split", "unified"]}


def test_compare_single_reports(ab_dir, capsys):
    code = compare.main([str(ab_dir / "split" / "run-001.json"), str(ab_dir / "unified" / "run-001.json")])
    assert code == 0
    assert "no test (n=1)" in capsys.readouterr().out


def test_gb_export_of_a_set_and_a_report(ab_dir):
    validator = jsonschema.Draft202012Validator(gbexport.load_schema())
    doc = gbexport.export([str(ab_dir / "split")])
    validator.validate(doc)
    assert len([b for b in doc["benchmarks"] if b["name"] == "apiary/cycle"]) == 2
    assert doc["context"]["load_avg"]  # recorded by multirun
    one = gbexport.export([str(ab_dir / "split" / "run-001.json")])
    validator.validate(one)
    assert len([b for b in one["benchmarks"] if b["name"] == "apiary/cycle"]) == 8


def test_plot_from_sets(ab_dir, tmp_path):
    assert plot.main([str(ab_dir / "split"), str(ab_dir / "unified"), "--out", str(tmp_path)]) == 0
    for name in ("cycle-over-run.png", "cycle-histogram.png", "latency.png"):
        assert (tmp_path / name).read_bytes()[:4] == b"\x89PNG"


def test_plot_draws_no_latency_without_records(tmp_path):
    report = tmp_path / "old.json"
    report.write_text(json.dumps(fakes.make_report([1000.0, 1100.0, 1050.0], schema_version=1)))
    assert plot.main([str(report), "--out", str(tmp_path / "plots")]) == 0
    assert (tmp_path / "plots" / "cycle-over-run.png").exists()
    assert not (tmp_path / "plots" / "latency.png").exists()
    assert not (tmp_path / "plots" / "rc-pools.png").exists()


def test_sweep_two_block_sizes(apiary_bin, repo, tmp_path, capsys):
    out = tmp_path / "sweep"
    code = sweep.main(["--apiary", str(apiary_bin), "--param", "block-size", "--values", "32KiB,64KiB",
                       "--runs", "1", "--out", str(out), "--quiet", "--",
                       "--config", str(repo / "configs" / "smoke.toml"), "--blocks", "5"])
    assert code == 0
    data = json.loads((out / "sweep.json").read_text())
    assert [p["x"] for p in data["points"]] == [32768.0, 65536.0]
    assert all(p["n"] == 1 for p in data["points"])
    assert "| 32KiB | 1 |" in (out / "sweep.md").read_text()
    for name in ("sweep-block-size.png", "sweep-block-size-cycle-over-run.png",
                 "sweep-block-size-cycle-histogram.png"):
        assert (out / name).read_bytes()[:4] == b"\x89PNG"


def test_sweep_raises_the_maximum_for_big_blocks(apiary_bin):
    from apiary_tools.runner import apiary_command
    args, config = sweep.value_args("block-size", "3MiB", [], apiary_command(apiary_bin, None))
    assert args[-2:] == ["--max-block-size", str(3 * 1024 * 1024)]
    assert config["block-size"] == 3 * 1024 * 1024


def test_sweep_reports_apiarys_error(apiary_bin, capsys):
    assert sweep.main(["--apiary", str(apiary_bin), "--param", "block-size", "--values", "1.5MiB"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("sweep: --values 1.5MiB: apiary run: --block-size") and "\n" not in err


def test_pooled_percentiles_of_one_report_are_its_own(ab_dir):
    """apiary's percentile rule and latency.py's agree: one report's histogram, read and
    summarized here, gives the percentiles apiary wrote."""
    from apiary_tools import latency
    report = json.loads((ab_dir / "split" / "run-001.json").read_text())
    if "latency" not in report:
        pytest.skip("this apiary writes no latency section (report schema_version 1)")
    run = latency.from_report(report, "run-001.json")
    for name, stage in run.stages.items():
        written = {k: v for k, v in report["latency"][name].items() if k != "bins"}
        ours = stage.summary()
        assert {k for k, v in ours.items() if v is None} == {k for k, v in written.items() if v is None}, name
        assert {k: v for k, v in ours.items() if v is not None} == pytest.approx(
            {k: v for k, v in written.items() if v is not None}, rel=1e-6, abs=1e-3), name
    agg = json.loads((ab_dir / "split" / "aggregate.json").read_text())
    assert agg["latency"]["pooled"]["inclusion"]["count"] == sum(
        json.loads(p.read_text())["latency"]["inclusion"]["count"] for p in (ab_dir / "split").glob("run-*.json"))


def test_plot_draws_the_rc_pools_of_a_real_run(apiary_bin, repo, tmp_path):
    report = tmp_path / "rc.json"
    code = subprocess.run([str(apiary_bin), "run", "--config", str(repo / "configs" / "smoke.toml"), "--blocks", "30",
                           "--rc-stats-blocks", "10", "--report", str(report)], capture_output=True).returncode
    assert code == 0
    pools = figures.rc_pools(json.loads(report.read_text()))
    assert pools is not None and pools.names and pools.levels.shape == (len(pools.blocks), len(pools.names))
    assert all(0 < s <= 1 for s in pools.settles)
    assert plot.main([str(report), "--out", str(tmp_path / "plots")]) == 0
    assert (tmp_path / "plots" / "rc-pools.png").read_bytes()[:4] == b"\x89PNG"


def test_rc_pools_settle_where_the_pools_go(tmp_path):
    # The fake pools follow pool' = (pool - u)(1 - 1/tau) + b from their equilibrium; after many
    # of the shortest tau (500 blocks) that pool sits at the level the figure draws dashed.
    report = fakes.make_report([1000.0] * 5)
    report["rc"] = fakes.rc_replay_section(1, {}, 6000, 100, 100)
    pools = figures.rc_pools(report)
    assert pools is not None
    for i, resource in enumerate(report["rc"]["params"]["resources"]):
        assert pools.settles[i] == pytest.approx(fakes.rc_settled_level(resource, 100), abs=0.002)
    execution = pools.names.index("execution")
    assert pools.levels[-1, execution] == pytest.approx(pools.settles[execution], abs=0.002)
    for resource, name in zip(report["rc"]["params"]["resources"], RC_RESOURCES, strict=True):
        resource["name"] = name     # the report schema's names
    path = tmp_path / "fake.json"
    path.write_text(json.dumps(report))
    assert plot.main([str(path), str(path), "--labels", "a,b", "--out", str(tmp_path / "plots")]) == 0
    assert (tmp_path / "plots" / "rc-pools.png").exists()


def test_rc_pools_need_two_archives():
    report = fakes.make_report([1000.0] * 5)
    assert figures.rc_pools(report) is None
    report["rc"] = fakes.rc_replay_section(1, {}, 100, 100, 100)
    assert figures.rc_pools(report) is None
