"""Seed 002 analysis: the tidy table of run directories and the tables beside the paper's."""

from __future__ import annotations

import json
import math
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from netnoise.studies.variability import analysis as study
from netnoise.studies.variability import ceilings, evaluation, nested_cv
from netnoise.studies.variability import model as v
from netnoise.studies.variability.features import FEATURES
from netnoise.studies.variability.metrics import metrics_of
from tests.variability.conftest import REFERENCE, SETTINGS, synthetic_runs


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


def test_the_model_trains_on_production_runs_only(campaign_model):
    assert campaign_model.applications == {"cg_solver": 60, "fft_transpose": 60, "halo3d": 60}
    assert campaign_model.cv_r2 > 0.8  # the synthetic truth is learnable


def test_evaluation_puts_the_papers_numbers_beside_ours(evaluated, campaign_model, campaign_table):
    summary = evaluated["model_summary"].set_index("quantity")
    assert summary.loc["cv_r2", "netnoise"] == pytest.approx(campaign_model.cv_r2)
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
    # Fig. 10: Table V's first draw, with the grid chosen without halo3d.
    chosen = {k: loao.loc[("halo3d", 20), k] for k in SETTINGS.grid}
    first = evaluation.predicted_vs_true(
        study.production(campaign_table), chosen, test_application="halo3d", added=20
    )
    assert fig10["r2"].iloc[0] == pytest.approx(first.attrs["r2"])
    assert loao.loc[("halo3d", 20), "draws"] == SETTINGS.repeats
    assert len(evaluated["tsne"]) == 180 and set(evaluated["tsne"]["nodes"]) == {2, 4}
    bound = evaluated["rf_bound"]
    assert len(bound) == 180 and bound["accepted"].mean() == pytest.approx(campaign_model.coverage)


def test_use_cases_are_judged_out_of_fold_beside_table_vi(
    evaluated, campaign_model, campaign_table
):
    cases = evaluated["table6_use_cases"]
    assert cases["run"].tolist() == ["A", "B", "C"] * 2
    assert cases["paper_application"].tolist() == ["MILC"] * 3 + ["MILC Reorder"] * 3
    assert cases["paper_z"].tolist() == [-0.05, -1.56, 2.54, -0.07, 1.26, -1.50]
    runs = study.production(campaign_table)
    oof = campaign_model.evaluation
    for row in cases.itertuples():
        match = runs.index[(runs["runtime_s"] == row.runtime_s)][0]
        assert oof.at[match, "z"] == pytest.approx(row.z)  # the out-of-fold estimate


def test_controlled_runs_are_estimated_against_the_production_runs(evaluated, campaign_table):
    ctrl = evaluated["controlled_estimates"]
    assert Counter(ctrl["campaign"]) == {"dedicated": 12, "maximal": 12}
    prod = study.production(campaign_table)
    first = ctrl.iloc[0]
    same = prod[(prod["application"] == first["application"]) & (prod["nodes"] == first["nodes"])]
    expected = (first["runtime_s"] - same["runtime_s"].mean()) / same["runtime_s"].std(ddof=0)
    assert first["z_true"] == pytest.approx(expected)
    by = ctrl.groupby("campaign")
    assert by["z_true"].mean()["maximal"] > 1 > -1 > by["z_true"].mean()["dedicated"]
    assert by["svr"].mean()["maximal"] > by["svr"].mean()["dedicated"]
    assert set(ctrl["verdict"]) <= {"congested", "favourable", "typical", "no estimate"}


def test_model_evaluation_sets_nested_cv_beside_the_papers_protocol(evaluated, campaign_model):
    everything = evaluated["model_evaluation"]
    table = everything[everything["campaign"] == "production"].set_index("model")
    assert list(table.index) == [
        "svr_grid_best",
        "svr_single_split",
        *nested_cv.CV_MODELS,
        "noise_ceiling",
        "noise_ceiling",
    ]
    # The paper's protocol on our runs: the trained model's grid score, Fig. 7's split.
    assert table.at["svr_grid_best", "r2_mean"] == pytest.approx(campaign_model.cv_r2)
    fig7 = evaluated["predicted_vs_true"].query("figure == 'fig7'")
    assert table.at["svr_single_split", "r2_mean"] == pytest.approx(fig7["r2"].iloc[0])
    assert table.at["svr_grid_best", "paper_r2"] == table.at["counters_svr", "paper_r2"] == 0.91
    assert table.at["svr_single_split", "paper_r2"] == 0.91
    assert table.at["combined", "paper_given"] == 0.902
    assert table.at["combined", "paper_containment"] == 0.961
    nested = table.loc[list(nested_cv.CV_MODELS)]
    assert (nested["repeats"] == SETTINGS.repeats).all() and (nested["folds"] == SETTINGS.cv).all()
    assert (nested["runs"] == 180).all()
    assert "grid by 3-fold CV inside each training fold" in nested.at["counters_svr", "protocol"]
    folds = evaluated["cv_folds"]
    assert len(folds) == SETTINGS.repeats * SETTINGS.cv * len(nested_cv.CV_MODELS)
    svr = folds[folds["model"] == "counters_svr"]["r2"]
    assert table.at["counters_svr", "r2_mean"] == pytest.approx(svr.mean())
    # What the counters add: the synthetic z follows them more than the conditions.
    assert table.at["counters_svr", "r2_pooled"] > table.at["conditions_forest", "r2_pooled"] + 0.3
    assert table.at["combined", "interval_coverage"] > 0.75
    # The controlled runs repeat one condition with 1 % noise: a ceiling near 1.
    noise = evaluated["noise_floor"]
    pooled = noise[noise["application"] == "all"].set_index("campaign")
    assert set(pooled.index) == {"dedicated", "maximal"}
    assert (pooled["identical_runs"] == 12).all() and (pooled["production_runs"] == 180).all()
    assert (pooled["ceiling_r2"] > 0.95).all() and (
        pooled["ceiling_low"] < pooled["ceiling_r2"]
    ).all()
    ceilings = table.loc[["noise_ceiling"], "r2_mean"].sort_values()
    assert ceilings.tolist() == pytest.approx(sorted(pooled["ceiling_r2"]))
    groups = noise[noise["application"] != "all"]
    assert len(groups) == 12 and (groups["identical_runs"] == 2).all()


def test_evaluation_refuses_a_model_of_other_runs(campaign_model):
    other = synthetic_runs(seed=2)
    with pytest.raises(ValueError, match="trained on other runs"):
        study.evaluate(
            other,
            campaign_model,
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
    stats = study.runtime_statistics(table, pd.read_csv(REFERENCE / "table2.csv")).iloc[0]
    assert stats["runs"] == 4 and stats["mean_s"] == 3.0 and stats["max_s"] == 6.0
    assert stats["std_s"] == pytest.approx(np.std([1, 2, 3, 6], ddof=1))
    assert stats["max_over_min"] == 6.0
    assert (stats["paper_application"], stats["paper_mean_s"], stats["paper_cv"]) == (
        "MILC",
        566.2,
        0.11,
    )
    r = study.correlations(table, pd.read_csv(REFERENCE / "table4.csv")).iloc[0]
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
        ref = pd.read_csv(REFERENCE / f"{name}.csv")
        assert ref["source"].str.startswith("002_9ff0e74a68d20027.txt, Sec.").all(), name
    assert pd.read_csv(REFERENCE / "features.csv")["feature"].tolist() == list(FEATURES)
    assert set(study.PAPER_APPLICATIONS.values()) <= set(
        pd.read_csv(REFERENCE / "table2.csv")["application"]
    )


def test_the_bursty_campaign_is_cross_validated_on_its_own_runs(evaluated):
    everything = evaluated["model_evaluation"]
    bursty = everything[everything["campaign"] == "bursty"].set_index("model")
    assert list(bursty.index) == [*nested_cv.CV_MODELS, "noise_ceiling", "noise_ceiling"]
    nested = bursty.loc[list(nested_cv.CV_MODELS)]
    assert (nested["runs"] == 72).all() and (nested["repeats"] == SETTINGS.repeats).all()
    # Its z follows its counters as the steady campaign's does (same synthetic truth).
    assert nested.at["counters_forest", "r2_pooled"] > nested.at["conditions_forest", "r2_pooled"]
    # The ceilings are against the bursty runs' own spread, not the steady runs'.
    steady = everything[everything["campaign"] == "production"].set_index("model")
    assert (bursty.loc[["noise_ceiling"], "runs"] == 72).all()
    assert not np.allclose(
        bursty.loc[["noise_ceiling"], "r2_mean"], steady.loc[["noise_ceiling"], "r2_mean"]
    )
    assert bursty["paper_r2"].isna().all()


def test_congestion_counters_score_each_set_on_the_same_runs(evaluated):
    table = evaluated["congestion_counters"].set_index(["campaign", "feature_set"])
    assert set(table.index.get_level_values(0)) == {"production", "bursty"}
    assert set(table.index.get_level_values(1)) == set(study.CONGESTION_FEATURE_SETS)
    steady = table.loc["production"]
    assert (steady["runs"] == 180).all() and (steady["repeats"] == SETTINGS.repeats).all()
    # The synthetic congestion c shows in the stall ratio and the backlog alike.
    traffic = steady.at["traffic alone", "r2_pooled"]
    assert steady.at["traffic and queue backlog", "r2_pooled"] > traffic + 0.1
    assert steady.at["the paper's seven", "r2_pooled"] > traffic + 0.1
    assert (steady["r2_pooled_sd"] >= 0).all()


def test_a_feature_set_naming_a_missing_metric_is_refused(campaign_table):
    with pytest.raises(ValueError, match="feature set 'x': runs lack queue_ns"):
        ceilings.feature_set_r2(campaign_table, {"x": ("nodes", "queue_ns")}, v.Fitting())
