"""Seed 002 campaign and analysis: background draws, run directories, the tables
beside the paper's, on draws and runs whose answer is known."""

from __future__ import annotations

import json
import math
import os
from collections import Counter

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from netnoise.cli import main as cli_main
from netnoise.config import ConfigError, validate
from netnoise.io import read_benchmark
from netnoise.platform.testbed import TestbedPlatform
from netnoise.provenance import read_sidecar
from netnoise.studies.variability import analysis as study
from netnoise.studies.variability import figures
from netnoise.studies.variability import model as v
from netnoise.studies.variability.campaign import (
    BackgroundSettings,
    Draw,
    Measured,
    RunKey,
    batches,
    draw,
    measure_runs,
    racks_spanned,
    run_keys,
    run_seed,
)
from netnoise.studies.variability.cli import metrics_of
from netnoise.testbed.fabric import TestbedSpec
from tests.conftest import REPO

SPEC = TestbedSpec("nv", 8, 2, 50.0, 100.0, 16000, 100000, "default", 2)
RACK = {n.name: n.rack for n in SPEC.node_list()}
REFERENCE = REPO / "resources" / "reference"


# --------------------------------------------------------------------------- draws


def test_a_runs_seed_depends_on_what_identifies_it_only():
    seeds = {
        run_seed(2, c, a, n, i)
        for c in ("production", "maximal")
        for a in ("cg_solver", "halo3d")
        for n in (2, 4)
        for i in range(20)
    }
    assert len(seeds) == 2 * 2 * 2 * 20  # all distinct
    assert run_seed(2, "production", "halo3d", 4, 7) == run_seed(2, "production", "halo3d", 4, 7)
    assert run_seed(3, "production", "halo3d", 4, 7) != run_seed(2, "production", "halo3d", 4, 7)
    assert all(0 <= s < 2**31 for s in seeds)  # what the C programs accept


def test_production_draws_are_valid_reproducible_and_cover_the_conditions():
    settings = BackgroundSettings()
    draws = [draw(SPEC, 4, "production", run_seed(2, "production", "a", 4, i)) for i in range(600)]
    assert draws[17] == draw(SPEC, 4, "production", draws[17].seed)
    for d in draws:
        assert len(d.job_nodes) == 4 == len(set(d.job_nodes))
        assert not set(d.job_nodes) & set(d.loaded_nodes)
        assert len(d.loaded_nodes) % 2 == 0
        assert (d.generator == "none") == (not d.loaded_nodes)
        if d.generator == "loadgen":
            assert 0.1 <= d.parameters["load"] <= 1.0
        elif d.generator == "compressionb":
            assert 1 <= d.parameters["messages"] <= 4
            assert 2.5e6 <= d.parameters["sleep_cycles"] <= 2.5e8
    # 0, 2 or 4 of the 4 free nodes loaded, each about a third of the time.
    loaded = Counter(len(d.loaded_nodes) for d in draws)
    assert set(loaded) == {0, 2, 4} and min(loaded.values()) > 150
    generators = Counter(d.generator for d in draws if d.loaded_nodes)
    assert abs(generators["loadgen"] - generators["compressionb"]) < 0.2 * sum(generators.values())
    # Placement: jobs in one rack and across both, loadgen pairs within and across.
    assert {racks_spanned(SPEC, d.job_nodes) for d in draws} == {1, 2}
    crossing = [RACK[d.loaded_nodes[0]] != RACK[d.loaded_nodes[1]] for d in draws if d.loaded_nodes]
    assert 0.2 < np.mean(crossing) < 0.8
    # The loads spread over the range: the mean of a uniform draw.
    loads = [d.parameters["load"] for d in draws if d.generator == "loadgen"]
    assert np.mean(loads) == pytest.approx(0.55, abs=0.05)
    sleeps = np.log10(
        [d.parameters["sleep_cycles"] for d in draws if "sleep_cycles" in d.parameters]
    )
    assert np.mean(sleeps) == pytest.approx(7.4, abs=0.15)  # log-uniform in 10^6.4-10^8.4
    assert settings.generators == ("loadgen", "compressionb")


def test_the_controlled_extremes():
    dedicated = draw(SPEC, 4, "dedicated", 5)
    assert dedicated.job_nodes == ("nv-n01", "nv-n02", "nv-n03", "nv-n04")  # one rack
    assert dedicated.generator == "none" and dedicated.loaded_nodes == ()
    maximal = draw(SPEC, 4, "maximal", 5)
    assert Counter(RACK[n] for n in maximal.job_nodes) == {1: 2, 2: 2}
    assert set(maximal.loaded_nodes) == set(RACK) - set(maximal.job_nodes)
    assert maximal.generator == "loadgen" and maximal.parameters == {"load": 1.0}
    pairs = zip(maximal.loaded_nodes[::2], maximal.loaded_nodes[1::2], strict=True)
    assert all(RACK[a] != RACK[b] for a, b in pairs)  # every pair crosses the backbone
    assert draw(SPEC, 2, "maximal", 1).job_nodes == ("nv-n01", "nv-n05")
    with pytest.raises(ValueError, match="unknown campaign 'busy'"):
        draw(SPEC, 2, "busy", 1)
    with pytest.raises(ValueError, match="does not fit the 8 testbed nodes"):
        draw(SPEC, 9, "production", 1)


def test_background_arguments_and_settings():
    settings = BackgroundSettings()
    loadgen = draw(SPEC, 2, "maximal", 3).background_args(settings, 50.0)
    assert loadgen == ["--load", "1.0000", "--link-mbit", "50", "--size", "65536", "--seed", "3"]
    burst = Draw(
        "production",
        9,
        ("a", "b"),
        "compressionb",
        ("c", "d"),
        {"messages": 2, "sleep_cycles": 5e6},
    )
    args = burst.background_args(settings, 50.0)
    assert args[:6] == ["--partners", "1", "--messages", "2", "--sleep-cycles", "5000000"]
    assert args[-4:] == ["--iterations", "0", "--seed", "9"]
    with pytest.raises(ValueError, match="generators must be some of"):
        BackgroundSettings(generators=("iperf",))
    with pytest.raises(ValueError, match="at most 1"):
        BackgroundSettings(load=(0.5, 1.5))
    only = BackgroundSettings.from_config({"generators": ["loadgen"], "load": [0.2, 0.4]})
    assert only.generators == ("loadgen",) and only.load == (0.2, 0.4)


def test_runs_are_planned_index_by_index_and_batched():
    keys = run_keys(["a", "b"], [2, 4], 3)
    assert keys[:4] == [RunKey("a", 2, 0), RunKey("a", 4, 0), RunKey("b", 2, 0), RunKey("b", 4, 0)]
    assert len(keys) == 12 and keys[0].name == "a_n2_run0000"
    jobs = batches(keys, 5)
    assert [len(b) for b in jobs] == [5, 5, 2] and [k for b in jobs for k in b] == keys
    with pytest.raises(ValueError, match="at least 1"):
        batches(keys, 0)


def test_config_cross_checks_name_the_key():
    def fails(overlay, message):
        with pytest.raises(ConfigError, match=message):
            validate(overlay)

    fails({"variability": {"applications": ["cg_solver", "bogus"]}}, "'bogus' is not defined")
    fails({"variability": {"model": {"added": [0, 40]}}}, r"added: 40 runs .* of its 32 runs")
    fails({"variability": {"node_counts": [2, 12]}}, r"node_counts: 12 exceeds .* \(8\)")
    fails({"variability": {"model": {"use_case": {"nodes": 3}}}}, "use_case.nodes: 3 is not")
    fails({"variability": {"testbed": {"nodes": 3, "racks": 4}}}, "4 racks need at least 4")
    fails({"variability": {"background": {"load": [0.9, 0.2]}}}, "load: low 0.9 is above high 0.2")
    ok = validate({"variability": {"testbed": {"nodes": 12}, "node_counts": [4, 12]}})
    assert ok["variability"]["testbed"] == {"nodes": 12, "racks": 2, "backbone_mbit": 100}
    # Other platforms leave the study out: no testbed size to check.
    assert validate(
        {
            "platform": {"kind": "slurm"},
            "latency_variation": {"enabled": False},
            "variability": {"node_counts": [4, 512]},
        }
    )


# --------------------------------------------------------------------------- run directories


def write_run_dir(root, name, *, app, nodes, runtime, campaign="production", load=0.5, c=0.1):
    """A run directory as measure_runs writes it, with counters of a known congestion c."""
    path = root / name
    path.mkdir(parents=True)
    job = [f"nv-n0{i}" for i in range(1, nodes + 1)]
    rows = []
    for t, scale in ((0.0, 0.0), (runtime, 1.0)):
        for node in job:
            rows.append((t, node, "eth0", "node_nic", "tx_bytes", 1e6 * scale))
            port = f"nvp0{node[-1]}"
            for counter, value in (
                ("tx_bytes", 2e6),
                ("tx_packets", 2e3),
                ("qdisc_overlimits", 2e3 * c),
            ):
                rows.append((t, "nv-fabric", port, "switch_port", counter, value * scale))
    pd.DataFrame(rows, columns=["time_s", "device", "port", "role", "counter", "value"]).to_csv(
        path / "counters.csv", index=False
    )
    info = {
        "application": app,
        "program": app,
        "nodes": job,
        "node_count": nodes,
        "runtime_s": runtime,
        "campaign": campaign,
        "index": int(name.rsplit("run", 1)[1]),
        "racks_spanned": 1,
        "draw": {
            "campaign": campaign,
            "seed": 11,
            "job_nodes": job,
            "generator": "loadgen",
            "loaded_nodes": ["nv-n07", "nv-n08"],
            "parameters": {"load": load},
        },
    }
    (path / "run.json").write_text(json.dumps(info))
    return path


def test_tidy_table_holds_the_draw_and_the_cli_metrics(tmp_path):
    dirs = [
        write_run_dir(
            tmp_path / "b0",
            f"cg_solver_n2_run000{i}",
            app="cg_solver",
            nodes=2,
            runtime=1.0 + i,
            c=0.1 * i,
        )
        for i in range(3)
    ]
    write_run_dir(
        tmp_path / "b1",
        "cg_solver_n2_run0000",
        app="cg_solver",
        nodes=2,
        runtime=9.0,
        campaign="maximal",
        load=1.0,
    )
    found = study.run_dirs(tmp_path)
    assert len(found) == 4
    table = study.tidy_runs(found)
    assert list(table.columns[:4]) == ["application", "program", "nodes", "runtime_s"]
    assert table["campaign"].tolist() == ["maximal", "production", "production", "production"]
    assert table["load"].tolist() == [1.0, 0.5, 0.5, 0.5]
    assert (table["loaded_nodes"] == 2).all() and (table["generator"] == "loadgen").all()
    prod = table[table["campaign"] == "production"].reset_index(drop=True)
    for i, path in enumerate(dirs):
        expected = metrics_of(path)
        assert prod.loc[i, "stall_ratio_p75"] == pytest.approx(expected["stall_ratio_p75"])
        assert prod.loc[i, "stall_ratio_p75"] == pytest.approx(0.1 * i)
        assert prod.loc[i, "net_to_nic_ratio"] == pytest.approx(2.0)
        assert prod.loc[i, "injection_rate_mean"] == pytest.approx(1e6 / (1.0 + i))
    with pytest.raises(ValueError, match="no run directories"):
        study.tidy_runs([])


# --------------------------------------------------------------------------- analysis


def synthetic_runs(seed: int = 1, runs: int = 30) -> pd.DataFrame:
    """A tidy table whose z truth is known (v.synthetic_table), with the campaign columns,
    plus controlled runs: dedicated at the fastest and maximal beyond the slowest."""
    apps = {
        "cg_solver": {"base": 560.0, "sens": 0.15, "rate": 2.0e8, "stall_scale": 1.0},
        "halo3d": {"base": 1500.0, "sens": 0.08, "rate": 6.0e7, "stall_scale": 1.0},
        "fft_transpose": {"base": 680.0, "sens": 0.10, "rate": 3.0e8, "stall_scale": 1.0},
    }
    table = v.synthetic_table(runs_per_group=runs, applications=apps, node_counts=(2, 4), seed=seed)
    table["program"] = table["application"]
    table["campaign"] = "production"
    table["index"] = table.groupby(["application", "nodes"]).cumcount()
    table["stall_ratio_mean"] = table["stall_ratio_p75"]
    controlled = []
    for campaign, pick in (("dedicated", "idxmin"), ("maximal", "idxmax")):
        idx = table.groupby(["application", "nodes"])["g"].agg(pick)
        rows = table.loc[idx].copy()
        rows["campaign"] = campaign
        rows["runtime_s"] *= 0.97 if campaign == "dedicated" else 1.1
        controlled.append(rows)
    return pd.concat([table, *controlled], ignore_index=True)


SETTINGS = study.ModelSettings(
    cv=5,
    grid={"C": [10.0, 100.0], "gamma": [0.03, 0.3]},
    trees=50,
    seed=0,
    added=(0, 10, 20),
    unseen_application="cg_solver",
    sparse_application="halo3d",
    use_case_applications=("cg_solver", "fft_transpose"),
    use_case_nodes=4,
)


@pytest.fixture(scope="module")
def table():
    return synthetic_runs()


@pytest.fixture(scope="module")
def model(table):
    return study.train(table, SETTINGS)


@pytest.fixture(scope="module")
def evaluated(table, model):
    return study.evaluate(
        table,
        model,
        SETTINGS,
        claims=pd.read_csv(REFERENCE / "variability" / "claims.csv"),
        features=pd.read_csv(REFERENCE / "variability" / "features.csv"),
        unseen=pd.read_csv(REFERENCE / "variability" / "table5.csv"),
        use_cases=pd.read_csv(REFERENCE / "variability" / "table6.csv"),
    )


def test_the_model_trains_on_production_runs_only(table, model):
    assert model.applications == {"cg_solver": 60, "fft_transpose": 60, "halo3d": 60}
    assert model.cv_r2 > 0.8  # the synthetic truth is learnable


def test_evaluation_puts_the_papers_numbers_beside_ours(evaluated, model):
    summary = evaluated["model_summary"].set_index("quantity")
    assert summary.loc["cv_r2", "netnoise"] == pytest.approx(model.cv_r2)
    assert summary.loc["cv_r2", "paper"] == 0.91
    assert summary.loc["coverage", "paper"] == 0.902
    assert summary.loc["containment", "paper"] == 0.961
    assert summary.loc["runs", "netnoise"] == 180
    ranking = evaluated["feature_importance"]
    assert ranking["rank"].tolist() == list(range(1, 8))
    assert set(ranking["feature"][:3]) == {
        "stall_ratio_p75",
        "net_to_nic_ratio",
        "network_stalls_p95",
    }
    assert ranking.set_index("feature").loc["net_to_nic_ratio", "paper_rank"] == 1
    fractions = evaluated["train_fraction"]
    assert fractions["paper_r2"].tolist() == [0.91, 0.83, 0.79, 0.62]
    assert fractions["r2"].iloc[0] > 0.7
    loao = evaluated["table5_unseen_application"].set_index(["application", "added"])
    assert loao.loc[("cg_solver", 20), "paper_application"] == "MILC"
    assert loao.loc[("cg_solver", 0), ["paper_r2_added_20", "paper_r2_added_40"]].tolist() == [
        0.94,
        0.97,
    ]
    assert loao.loc[("halo3d", 10), "paper_r2_added_40"] == 0.52  # Nekbone
    assert math.isnan(loao.loc[("halo3d", 0), "paper_r2_added_0"])  # only MILC Reorder has one
    assert loao.loc[("cg_solver", 0), "n_test"] == 60
    points = evaluated["predicted_vs_true"]
    assert set(points["figure"]) == {"fig7", "fig9", "fig10"}
    fig10 = points[points["figure"] == "fig10"]
    assert set(fig10["application"]) == {"halo3d"} and len(fig10) == 60 - 20
    assert fig10["r2"].iloc[0] == pytest.approx(loao.loc[("halo3d", 20), "r2"])
    assert len(evaluated["tsne"]) == 180 and set(evaluated["tsne"]["nodes"]) == {2, 4}
    bound = evaluated["rf_bound"]
    assert len(bound) == 180 and bound["accepted"].mean() == pytest.approx(model.coverage)


def test_use_cases_are_judged_out_of_fold_beside_table_vi(evaluated, model, table):
    cases = evaluated["table6_use_cases"]
    assert cases["run"].tolist() == ["A", "B", "C"] * 2
    assert cases["paper_application"].tolist() == ["MILC"] * 3 + ["MILC Reorder"] * 3
    assert cases["paper_z"].tolist() == [-0.05, -1.56, 2.54, -0.07, 1.26, -1.50]
    runs = study.production(table)
    for row in cases.itertuples():
        oof = model.evaluation
        match = runs.index[(runs["runtime_s"] == row.runtime_s)][0]
        assert oof.at[match, "z"] == pytest.approx(row.z)  # the out-of-fold estimate


def test_controlled_runs_are_estimated_against_the_production_runs(evaluated, table):
    ctrl = evaluated["controlled_estimates"]
    assert Counter(ctrl["campaign"]) == {"dedicated": 6, "maximal": 6}
    prod = study.production(table)
    first = ctrl.iloc[0]
    same = prod[(prod["application"] == first["application"]) & (prod["nodes"] == first["nodes"])]
    expected = (first["runtime_s"] - same["runtime_s"].mean()) / same["runtime_s"].std(ddof=0)
    assert first["z_true"] == pytest.approx(expected)
    by = ctrl.groupby("campaign")
    assert by["z_true"].mean()["maximal"] > 1 > -1 > by["z_true"].mean()["dedicated"]
    assert by["svr"].mean()["maximal"] > by["svr"].mean()["dedicated"]
    assert set(ctrl["verdict"]) <= {"congested", "favourable", "typical", "no estimate"}


def test_evaluation_refuses_a_model_of_other_runs(table, model):
    other = synthetic_runs(seed=2)
    with pytest.raises(ValueError, match="trained on other runs"):
        study.evaluate(
            other,
            model,
            SETTINGS,
            claims=pd.DataFrame(columns=["quantity", "value"]),
            features=pd.DataFrame(),
            unseen=pd.DataFrame(),
            use_cases=pd.DataFrame(),
        )


def test_runtime_statistics_and_correlations_beside_tables_ii_and_iv():
    rows = []
    for i, t in enumerate([1.0, 2.0, 3.0, 6.0]):
        rows.append(
            {
                "application": "x",
                "program": "cg_solver",
                "nodes": 2,
                "campaign": "production",
                "runtime_s": t,
                "net_to_nic_ratio": t,
                "stall_ratio_mean": -t,
                "network_stalls_p95": i % 2,
            }
        )
    rows.append(
        {
            "application": "x",
            "program": "cg_solver",
            "nodes": 2,
            "campaign": "maximal",
            "runtime_s": 100.0,
            "net_to_nic_ratio": 0,
            "stall_ratio_mean": 0,
            "network_stalls_p95": 0,
        }
    )
    table = pd.DataFrame(rows)
    for column in ("injection_rate_mean", "network_stalls_mean", "network_bytes_mean"):
        table[column] = table["runtime_s"] * 10
    stats = study.runtime_statistics(
        table, pd.read_csv(REFERENCE / "variability" / "table2.csv")
    ).iloc[0]
    assert stats["runs"] == 4 and stats["mean_s"] == 3.0 and stats["max_s"] == 6.0
    assert stats["std_s"] == pytest.approx(np.std([1, 2, 3, 6], ddof=1))
    assert stats["max_over_min"] == 6.0
    assert (stats["paper_application"], stats["paper_mean_s"], stats["paper_cv"]) == (
        "MILC",
        566.2,
        0.11,
    )
    r = study.correlations(table, pd.read_csv(REFERENCE / "variability" / "table4.csv")).iloc[0]
    assert r["r_net_to_nic_ratio"] == pytest.approx(1.0) and r["r_stall_ratio"] == pytest.approx(
        -1.0
    )
    assert r["paper_r_network_stalls_p95"] == 0.79
    metrics = study.metrics_table(table).set_index("metric")
    assert metrics.loc["processor tile flits per second", "statistics"].startswith(
        "injection_rate_mean"
    )
    assert math.isnan(metrics.loc["nodes", "median_dedicated"])  # no dedicated runs here
    assert metrics.loc["network flits", "median_production"] == 25.0  # of 10, 20, 30, 60
    assert metrics.loc["network stalls", "median_maximal"] == 1000.0


def test_reference_tables_name_their_source():
    for name in ("table2", "table4", "table5", "table6", "claims", "features"):
        ref = pd.read_csv(REFERENCE / "variability" / f"{name}.csv")
        assert ref["source"].str.startswith("002_9ff0e74a68d20027.txt, Sec.").all(), name
    assert pd.read_csv(REFERENCE / "variability" / "features.csv")["feature"].tolist() == list(
        v.FEATURES
    )
    assert set(study.PAPER_APPLICATIONS.values()) <= set(
        pd.read_csv(REFERENCE / "variability" / "table2.csv")["application"]
    )


def test_figures_draw_ours_with_the_papers_values(table, evaluated):
    summary = evaluated["model_summary"]
    fig = figures.rf_bound(evaluated["rf_bound"], summary)
    title = fig.axes[0].get_title()
    assert "90.2%" in title and "96.1%" in title
    points = evaluated["predicted_vs_true"]
    fig7 = figures.predicted_vs_true(points[points["figure"] == "fig7"], "R² 0.91")
    assert f"R² {points[points['figure'] == 'fig7']['r2'].iloc[0]:.2f}" in fig7.axes[0].get_title()
    assert len(figures.runtimes(table).axes) == 4  # 3 applications on a 2 x 2 grid
    assert len(figures.controlled_extremes(table).axes) == 2  # one per node count
    assert len(figures.feature_distributions(table).axes) == 4
    assert len(figures.tsne(evaluated["tsne"]).axes[0].collections) == 6
    assert "2000" in figures.learning_curve(evaluated["learning_curve"], 2000).axes[0].get_title()
    plt.close("all")


# --------------------------------------------------------------------------- real runs


@pytest.mark.root
@pytest.mark.mpi
@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root")
def test_campaign_runs_feed_the_variability_cli(built_programs, tmp_path, capsys):
    """Runs measured on a two-rack testbed as the workflow measures them; the CLI
    trains on their directories and estimates one of them."""
    config = validate(
        {
            "platform": {"testbed": {"prefix": "nvt", "racks": 2, "backbone_mbit": 100}},
            "impact_compression": {"enabled": False},
            "network_noise": {"benchmark": {"enabled": False}},
        }
    )
    platform = TestbedPlatform(config["platform"])
    spec = platform.testbed.spec
    apps = {"halo3d": Measured(str(built_programs / "halo3d"), ("--steps", "8"), warmup=1)}
    common = {
        "seed": 2,
        "programs": {name: str(built_programs / name) for name in ("loadgen", "compressionb")},
        "log": tmp_path / "campaign.log",
        "timeout_s": 120,
        "counter_interval_s": 0.05,
    }
    try:
        platform.check()
        runs = measure_runs(
            platform,
            spec,
            run_keys(["halo3d"], [2], 8),
            apps,
            campaign="production",
            out_dir=tmp_path / "production",
            **common,
        )
        (busy,) = measure_runs(
            platform,
            spec,
            [RunKey("halo3d", 4, 0)],
            apps,
            campaign="maximal",
            out_dir=tmp_path / "maximal",
            **common,
        )
    finally:
        platform.testbed.down()
    assert [r.name for r in runs] == [f"halo3d_n2_run{i:04d}" for i in range(8)]
    for run in [*runs, busy]:
        info = json.loads((run / "run.json").read_text())
        assert info["runtime_s"] > 0 and len(info["nodes"]) == info["node_count"]
        counters = pd.read_csv(run / "counters.csv")
        assert set(counters["device"]) == {*info["nodes"], "nvt-fabric"}  # the job's view
        assert counters["time_s"].nunique() >= 2
        record = read_sidecar(run / "application.csv")
        assert record["config"]["draw"]["seed"] == info["draw"]["seed"]
        assert (run / "background.csv").exists() == (info["draw"]["generator"] != "none")
    busy_info = json.loads((busy / "run.json").read_text())
    assert busy_info["racks_spanned"] == 2 and busy_info["draw"]["parameters"] == {"load": 1.0}
    assert len(read_benchmark(busy / "background.csv").data) == 4  # loadgen on the 4 others
    table = study.tidy_runs([*runs, busy])
    quiet = table[table["campaign"] == "production"]["network_bytes_mean"].median()
    assert table.loc[table["campaign"] == "maximal", "network_bytes_mean"].iloc[0] > quiet

    model = tmp_path / "model.joblib"
    assert (
        cli_main(["variability", "train", *map(str, runs), "--model", str(model), "--cv", "3"]) == 0
    )
    capsys.readouterr()
    assert cli_main(["variability", "estimate", str(busy), "--model", str(model)]) == 0
    text = capsys.readouterr().out
    assert str(busy) in text and "halo3d, 4 nodes" in text
    assert "variability estimate" in text or "no prediction can be given" in text
    assert cli_main(["variability", "estimate", str(runs[0]), "--model", str(model), "--json"]) == 0
    estimate = json.loads(capsys.readouterr().out)
    assert (estimate["z"] is None) == (estimate["reason"] is not None)
