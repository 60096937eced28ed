"""Seed 002 variability model on counters and runs whose truth is known."""

from __future__ import annotations

import argparse
import dataclasses
import json
import math

import numpy as np
import pandas as pd
import pytest

from netnoise.counters import COLUMNS, csvimport, infiniband
from netnoise.studies.variability import cli as variability_cli
from netnoise.studies.variability import model as v
from netnoise.testbed.fabric import TestbedSpec

GRID = {"C": [10.0, 100.0], "gamma": [0.03, 0.3]}
SIMILAR = {
    "alpha": {"base": 560.0, "sens": 0.15, "rate": 2.0e8, "stall_scale": 1.0},
    "beta": {"base": 1500.0, "sens": 0.08, "rate": 6.0e7, "stall_scale": 1.0},
    "gamma": {"base": 430.0, "sens": 0.04, "rate": 1.2e8, "stall_scale": 1.0},
    "delta": {"base": 680.0, "sens": 0.10, "rate": 3.0e8, "stall_scale": 1.0},
}
INFORMATIVE = {"stall_ratio_p75", "net_to_nic_ratio", "network_stalls_p95"}


def rows(t: float, entries: list[tuple[str, str, str, str, float]]) -> list[dict]:
    return [
        {"time_s": t, "device": d, "port": p, "role": r, "counter": c, "value": val}
        for d, p, r, c, val in entries
    ]


# --------------------------------------------------------------------------- metrics


def hand_made_table() -> pd.DataFrame:
    """Two job nodes, one foreign node; three job network queues, one foreign one."""
    end = [
        ("nn-n01", "eth0", "node_nic", "tx_bytes", 1000),
        ("nn-n01", "eth0", "node_nic", "tx_packets", 10),
        ("nn-n02", "eth0", "node_nic", "tx_bytes", 3000),
        ("nn-n02", "eth0", "node_nic", "tx_packets", 30),
        ("nn-n03", "eth0", "node_nic", "tx_bytes", 99999),
        ("nn-fabric", "nnp01", "switch_port", "tx_bytes", 2000),
        ("nn-fabric", "nnp01", "switch_port", "tx_packets", 20),
        ("nn-fabric", "nnp01", "switch_port", "qdisc_overlimits", 100),
        ("nn-fabric", "nnp01", "switch_port", "qdisc_drops", 1),
        ("nn-fabric", "nnp02", "switch_port", "tx_bytes", 4000),
        ("nn-fabric", "nnp02", "switch_port", "tx_packets", 40),
        ("nn-fabric", "nnp02", "switch_port", "qdisc_overlimits", 200),
        ("nn-fabric", "nnp02", "switch_port", "qdisc_drops", 2),
        ("nn-fabric", "nnup1", "uplink", "tx_bytes", 6000),
        ("nn-fabric", "nnup1", "uplink", "tx_packets", 50),
        ("nn-fabric", "nnup1", "uplink", "qdisc_overlimits", 400),
        ("nn-fabric", "nnup1", "uplink", "qdisc_drops", 0),
        ("nn-fabric", "nnp03", "switch_port", "tx_bytes", 5_000_000),
        ("nn-fabric", "nnp03", "switch_port", "tx_packets", 5000),
        ("nn-fabric", "nnp03", "switch_port", "qdisc_overlimits", 9),
    ]
    start = [(d, p, r, c, 0) for d, p, r, c, _ in end]
    backlog = [
        (0.0, "nnp01", "switch_port", 0),
        (10.0, "nnp01", "switch_port", 400),
        (0.0, "nnp02", "switch_port", 0),
        (10.0, "nnp02", "switch_port", 200),
        (0.0, "nnup1", "uplink", 0),
        (10.0, "nnup1", "uplink", 0),
    ]
    gauge = [
        {"time_s": t, "device": "nn-fabric", "port": p, "role": r}
        | {"counter": "qdisc_backlog_bytes", "value": val}
        for t, p, r, val in backlog
    ]
    return pd.DataFrame(rows(0.0, start) + rows(10.0, end) + gauge, columns=COLUMNS)


JOB_PORTS = {("nn-fabric", "nnp01"), ("nn-fabric", "nnp02"), ("nn-fabric", "nnup1")}


def test_run_metrics_of_a_hand_made_table_are_exact():
    m = v.run_metrics(
        hand_made_table(), ["nn-n01", "nn-n02"], runtime_s=8.0, network_ports=JOB_PORTS
    )
    assert m["nodes"] == 2 and m["nic_ports"] == 2 and m["network_ports"] == 3
    assert m["nic_selection"] == "by node name"
    # Injection: 1000 and 3000 bytes over 8 s of runtime (not the 10 s the samples span).
    assert m["injection_rate_mean"] == pytest.approx(250.0)
    assert m["injection_rate_var"] == pytest.approx(125.0**2)
    assert m["injection_rate_p75"] == pytest.approx(125 + 0.75 * 250)
    assert m["injection_rate_p95"] == pytest.approx(125 + 0.95 * 250)
    assert m["injection_rate_p99"] == pytest.approx(125 + 0.99 * 250)
    assert m["injection_rate_total"] == pytest.approx(500.0)
    assert m["job_bytes_total"] == 4000
    # Network queues: 2000, 4000, 6000 bytes; 100, 200, 400 stalls; 20, 40, 50 packets.
    assert m["network_bytes_mean"] == pytest.approx(4000.0)
    assert m["network_bytes_var"] == pytest.approx(8e6 / 3)
    assert m["network_bytes_p75"] == pytest.approx(5000.0)
    assert m["network_bytes_p95"] == pytest.approx(5800.0)
    assert m["network_bytes_total"] == 12000
    assert m["network_stalls_mean"] == pytest.approx(700 / 3)
    assert m["network_stalls_p95"] == pytest.approx(380.0)
    assert m["network_stalls_p99"] == pytest.approx(396.0)
    assert m["network_stalls_total"] == 700
    assert m["stall_counter"] == "qdisc_overlimits"
    # Stalls per packet 5, 5, 8.
    assert m["stall_ratio_mean"] == pytest.approx(6.0)
    assert m["stall_ratio_p75"] == pytest.approx(6.5)
    # Ratio of the averages: 4000 / 2000.
    assert m["net_to_nic_ratio"] == pytest.approx(2.0)
    assert m["net_to_nic_ratio_mean"] == pytest.approx(2.0)
    assert m["net_to_nic_ratio_var"] == 0.0
    assert m["network_drops_total"] == 3
    assert m["network_backlog_bytes_mean"] == pytest.approx(100.0)
    assert m["network_backlog_bytes_p75"] == pytest.approx(150.0)
    assert m["intervals"] == 1
    X = v.features(m)
    assert list(X.columns) == list(v.FEATURES)
    assert X.iloc[0].tolist() == pytest.approx([2.0, 250.0, 6.5, 380.0, 4000.0, 700 / 3, 2])


def test_without_a_port_list_every_network_row_counts_and_node_count_overrides():
    m = v.run_metrics(hand_made_table(), ["nn-n01", "nn-n02"], 8.0, node_count=128)
    assert m["network_ports"] == 4 and m["nodes"] == 128
    assert m["network_bytes_total"] == 12000 + 5_000_000
    assert m["network_stalls_total"] == 709


def test_time_samples_give_a_distribution_and_short_intervals_are_merged():
    times = [0.0, 5.0, 10.0, 10.5]  # the last snapshot closely follows a periodic one
    series = {
        ("nn-n01", "eth0", "node_nic", "tx_bytes"): [0, 1000, 3000, 3100],
        ("nn-fabric", "nnp01", "switch_port", "tx_bytes"): [0, 2000, 8000, 8200],
        ("nn-fabric", "nnp01", "switch_port", "tx_packets"): [0, 20, 80, 82],
        ("nn-fabric", "nnp01", "switch_port", "qdisc_overlimits"): [0, 10, 70, 71],
    }
    table = pd.DataFrame(
        [
            {"time_s": t, "device": d, "port": p, "role": r, "counter": c, "value": val}
            for (d, p, r, c), values in series.items()
            for t, val in zip(times, values, strict=True)
        ]
    )
    m = v.run_metrics(table, ["nn-n01"], runtime_s=10.5)
    assert m["intervals"] == 2  # [0, 5] and [5, 10.5]
    # Interval amounts scaled to the 10.5 s span, per second of runtime.
    inj = [1000 * 10.5 / 5 / 10.5, 2100 * 10.5 / 5.5 / 10.5]
    assert m["injection_rate_mean"] == pytest.approx(np.mean(inj))
    assert m["injection_rate_var"] == pytest.approx(np.var(inj))
    assert m["network_bytes_mean"] == pytest.approx(np.mean([2000 * 2.1, 6200 * 10.5 / 5.5]))
    assert m["stall_ratio_mean"] == pytest.approx(np.mean([10 / 20, 61 / 62]))
    assert m["network_stalls_total"] == 71
    assert m["net_to_nic_ratio"] == pytest.approx(8200 / 3100)
    assert m["net_to_nic_ratio_mean"] == pytest.approx(np.mean([2000 / 1000, 6200 / 2100]))


def test_a_counter_reset_drops_that_interval():
    table = pd.DataFrame(
        rows(0.0, [("n1", "eth0", "node_nic", "tx_bytes", 0)])
        + rows(5.0, [("n1", "eth0", "node_nic", "tx_bytes", 1000)])
        + rows(10.0, [("n1", "eth0", "node_nic", "tx_bytes", 200)])
        + rows(15.0, [("n1", "eth0", "node_nic", "tx_bytes", 700)])
    )
    m = v.run_metrics(table, ["n1"], runtime_s=15.0)
    # Intervals 1000 and 500 bytes in 5 s each, scaled to 15 s, per second.
    assert m["injection_rate_mean"] == pytest.approx(np.mean([200.0, 100.0]))
    assert m["job_bytes_total"] == 1500
    assert math.isnan(m["network_bytes_mean"]) and math.isnan(m["net_to_nic_ratio"])
    assert v.features(m).isna().any(axis=None)


def fake_ib_tree(root, xmit_words: int, wait: int) -> None:
    counters = root / "mlx5_0" / "ports" / "1" / "counters"
    counters.mkdir(parents=True, exist_ok=True)
    values = {
        "port_xmit_data": xmit_words,
        "port_rcv_data": xmit_words,
        "port_xmit_packets": xmit_words // 64,
        "port_xmit_wait": wait,
    }
    for name, value in values.items():
        (counters / name).write_text(f"{value}\n")


def test_infiniband_and_site_csv_counters_feed_the_same_metrics(tmp_path):
    fake_ib_tree(tmp_path / "ib", xmit_words=1000, wait=7)
    before = infiniband.snapshot_rows(tmp_path / "ib")
    fake_ib_tree(tmp_path / "ib", xmit_words=26000, wait=107)
    after = infiniband.snapshot_rows(tmp_path / "ib")
    switch = tmp_path / "switch.csv"
    switch.write_text(
        "time_s,device,port,role,counter,value\n"
        "0,ibsw1,17,switch_port,tx_bytes,0\n"
        "0,ibsw1,17,switch_port,tx_packets,0\n"
        "0,ibsw1,17,switch_port,xmit_wait_ticks,0\n"
        "60,ibsw1,17,switch_port,tx_bytes,300000\n"
        "60,ibsw1,17,switch_port,tx_packets,500\n"
        "60,ibsw1,17,switch_port,xmit_wait_ticks,1000\n"
    )
    table = pd.concat([pd.DataFrame(before + after), csvimport.read(switch)], ignore_index=True)
    m = v.run_metrics(table, ["host7"], runtime_s=50.0)
    # sysfs names the HCA, not the host: all node_nic rows are the job's.
    assert m["nic_selection"].startswith("all node_nic rows")
    assert m["injection_rate_mean"] == pytest.approx(25000 * 4 / 50.0)
    assert m["stall_counter"] == "xmit_wait_ticks"
    assert m["stall_ratio_p75"] == pytest.approx(2.0)  # PortXmitWait / PortXmitPackets
    assert m["net_to_nic_ratio"] == pytest.approx(3.0)
    assert m["net_to_nic_ratio_mean"] == pytest.approx(3.0)  # different sample times
    assert m["nic_stalls_total"] == 100
    assert v.features(m).notna().all(axis=None)


def test_bad_counter_tables_are_refused_with_a_reason():
    only_network = hand_made_table().query("role != 'node_nic'")
    with pytest.raises(ValueError, match="tx_bytes"):
        v.run_metrics(only_network, ["nn-n01"], 8.0)
    with pytest.raises(ValueError, match="runtime_s"):
        v.run_metrics(hand_made_table(), ["nn-n01"], 0.0)
    with pytest.raises(ValueError, match="column"):
        v.run_metrics(hand_made_table().drop(columns="role"), ["nn-n01"], 8.0)


def test_testbed_network_ports_are_the_jobs_switch_ports_and_rack_uplinks():
    spec = TestbedSpec("nn", 4, 2, 100.0, 50.0, 4000, 20000, "cubic", 1)
    ports = v.testbed_network_ports(spec, ["nn-n01", "nn-n02"])
    assert ports == {
        ("nn-fabric", "nnp01"),
        ("nn-fabric", "nnp02"),
        ("nn-fabric", "nnup1"),
        ("nn-fabric", "nndn1"),
    }
    with pytest.raises(ValueError, match="nn-n09"):
        v.testbed_network_ports(spec, ["nn-n09"])


# --------------------------------------------------------------------------- model


@pytest.fixture(scope="module")
def clean():
    """Four applications that see congestion alike: a generic model fits them."""
    return v.synthetic_table(runs_per_group=25, applications=SIMILAR, seed=1)


@pytest.fixture(scope="module")
def mixed():
    """The four plus 'odd', whose stall ratio reads three times higher."""
    return v.synthetic_table(runs_per_group=20, seed=1)


@pytest.fixture(scope="module")
def model(mixed):
    return v.train(mixed, grid=GRID, n_estimators=50)


@pytest.fixture(scope="module")
def fresh():
    return v.synthetic_table(runs_per_group=20, seed=7)


def test_zscore_target_standardises_each_application_and_node_count(mixed):
    z = v.zscore_target(mixed)
    stats = z.groupby([mixed["application"], mixed["nodes"]]).agg(["mean", "std"])
    assert np.allclose(stats["mean"], 0, atol=1e-12)
    assert np.allclose(stats["std"] * np.sqrt(19 / 20), 1)  # population std
    one = pd.DataFrame({"application": ["a", "b", "b"], "nodes": 4, "runtime_s": [1, 2, 2]})
    assert v.zscore_target(one).isna().all()  # one run, or no spread: undefined


def test_feature_ranking_puts_the_informative_features_first(clean):
    X, y = v.dataset(clean)
    ranking = v.rank_features(X, y, n_estimators=100)
    assert set(ranking.index[:3]) == INFORMATIVE
    assert ranking.iloc[:3].sum() > 0.8


def test_svr_cross_validated_r2_is_high_on_the_truth_and_zero_on_shuffled(clean):
    X, y = v.dataset(clean)
    params, best = v.grid_search(X, y, grid=GRID)
    scores = v.cv_r2(X, y, params)
    assert len(scores) == 10
    assert scores.mean() == pytest.approx(best)
    assert best > 0.8
    shuffled = np.random.default_rng(0).permutation(y.to_numpy())
    _, noise = v.grid_search(X, shuffled, grid={"C": [1.0], "gamma": [0.03, 0.3]})
    assert -0.3 < noise < 0.1


def test_more_training_data_gives_better_r2(clean):
    X, y = v.dataset(clean)
    params = {"C": 100.0, "gamma": 0.03}
    curve = v.learning_curve_table(X, y, params, train_sizes=(0.1, 0.5, 1.0))
    assert curve["n_train"].tolist() == [27, 135, 270]
    assert curve["cv_r2"].iloc[-1] > curve["cv_r2"].iloc[0] + 0.3
    fractions = v.train_fraction_r2(X, y, params)
    assert fractions["train_fraction"].tolist() == [0.75, 0.5, 0.25, 0.1]
    assert fractions["n_train"].tolist() == [225, 150, 75, 30]
    assert fractions["r2"].iloc[0] > 0.8
    assert fractions["r2"].iloc[0] > fractions["r2"].iloc[-1]


def test_leave_one_application_out_and_added_samples(mixed, model):
    table = v.leave_one_application_out(mixed, model.params, added=(0, 40))
    r2 = table.set_index(["application", "added"])["r2"]
    assert table["n_test"].tolist() == [60, 20] * 5
    similar = r2.loc[list(SIMILAR), 0]
    assert similar.mean() > 0.6  # unseen but alike: predicted well
    assert r2["odd", 0] < 0  # unseen and unlike: worse than the mean
    assert r2["odd", 40] > 0.2  # a few of its runs in training fix much of it
    fig9 = v.predicted_vs_true(mixed, model.params, test_application="alpha")
    assert set(fig9["application"]) == {"alpha"} and len(fig9) == 60
    assert fig9.attrs["r2"] == pytest.approx(r2["alpha", 0])
    fig7 = v.predicted_vs_true(mixed, model.params)
    assert len(fig7) == 75 and fig7.attrs["n_train"] == 225
    agree = np.sign(fig7["z_true"]) == np.sign(fig7["z_pred"])
    assert ((fig7["region"] != "mismatch") == agree).all()
    assert agree.mean() > 0.75


def test_combined_model_coverage_and_containment(model, fresh):
    X, y = v.dataset(fresh)
    pred = model.predict(X)
    inside_rf = (pred["svr"] - pred["rf"]).abs() <= pred["bound"]
    assert (pred["accepted"] == inside_rf).all()
    assert pred.loc[~pred["accepted"], "z"].isna().all()
    assert (pred.loc[pred["accepted"], "z"] == pred.loc[pred["accepted"], "svr"]).all()
    pred["z_true"] = y
    measured = v.rates(pred)
    assert measured["coverage"] == pytest.approx(inside_rf.mean())
    # The stated rates (out of fold on the training runs) hold on runs never seen.
    assert 0.6 < model.coverage < 1.0 and 0.6 < model.containment <= 1.0
    assert measured["coverage"] == pytest.approx(model.coverage, abs=0.1)
    assert measured["containment"] == pytest.approx(model.containment, abs=0.1)
    given = pred[pred["accepted"]]
    inside = (given["z_true"] - given["z"]).abs() <= given["bound"]
    assert inside.mean() == pytest.approx(measured["containment"])


def test_stated_rates_are_those_of_the_out_of_fold_predictions(mixed, model):
    X, y = v.dataset(mixed)
    table = model.evaluation
    assert table.index.equals(X.index) and (table["z_true"] == y).all()
    inside_rf = (table["svr"] - table["rf"]).abs() <= table["bound"]
    assert model.coverage == pytest.approx(inside_rf.mean())
    given = table[inside_rf]
    assert model.containment == pytest.approx(
        ((given["z_true"] - given["svr"]).abs() <= given["bound"]).mean()
    )
    assert model.cv_r2 > 0.7


def test_training_is_deterministic(mixed):
    small = mixed.groupby(["application", "nodes"]).head(8)
    grid = {"C": [10.0], "gamma": [0.03, 0.3]}
    fit = [v.train(small, grid=grid, cv=5, n_estimators=20) for _ in range(2)]
    assert fit[0].params == fit[1].params
    assert (fit[0].cv_r2, fit[0].coverage) == (fit[1].cv_r2, fit[1].coverage)
    pd.testing.assert_frame_equal(fit[0].evaluation, fit[1].evaluation)
    X, _ = v.dataset(mixed)
    pd.testing.assert_frame_equal(fit[0].predict(X), fit[1].predict(X))
    Xs, ys = v.dataset(small)
    other, _ = v.combined_evaluation(Xs, ys, fit[0].params, cv=5, n_estimators=20, seed=1)
    assert not other.equals(fit[0].evaluation)  # the seed does matter
    assert v.synthetic_table(seed=3).equals(v.synthetic_table(seed=3))


def test_tsne_separates_the_unlike_application_and_is_seeded(mixed):
    sample = mixed.groupby("application").head(20)  # 100 runs: quick
    X, _ = v.dataset(sample)
    apps = sample.loc[X.index, "application"]
    one = v.tsne_coordinates(X, apps, max_iter=300)
    two = v.tsne_coordinates(X, apps, max_iter=300)
    pd.testing.assert_frame_equal(one, two)
    centre = one.groupby("application")[["x", "y"]].mean()
    others = centre.drop(index="odd")
    spread = np.linalg.norm(others - others.mean(), axis=1).max()
    assert np.linalg.norm(centre.loc["odd"] - others.mean()) > 2 * spread


def test_save_and_load_round_trip(model, fresh, tmp_path):
    path = tmp_path / "models" / "variability.joblib"
    v.save_model(path, model)
    assert [p.name for p in path.parent.iterdir()] == ["variability.joblib"]
    loaded = v.load_model(path)
    X, _ = v.dataset(fresh)
    pd.testing.assert_frame_equal(loaded.predict(X), model.predict(X))
    assert loaded.params == model.params and loaded.applications == model.applications
    junk = tmp_path / "junk.joblib"
    junk.write_text("not a model")
    with pytest.raises(ValueError, match="not a"):
        v.load_model(junk)


def test_estimate_gives_z_and_bound_or_refuses_with_a_reason(model, fresh):
    X, _ = v.dataset(fresh)
    pred = model.predict(X)
    given = pred.index[pred["accepted"]][0]
    refused = pred.index[~pred["accepted"]][0]
    ok = v.estimate(model, fresh.loc[given].to_dict())
    assert ok["z"] == pytest.approx(pred.at[given, "svr"])
    assert ok["bound"] == pytest.approx(pred.at[given, "bound"])
    assert ok["reason"] is None and ok["verdict"] == v.verdict(ok["z"], ok["bound"])
    no = v.estimate(model, fresh.loc[refused].to_dict())
    assert no["z"] is None and no["bound"] is None
    assert "outside the random-forest interval" in no["reason"]
    assert abs(no["svr"] - no["rf"]) > no["rf_bound"]
    missing = fresh.loc[given].to_dict() | {"net_to_nic_ratio": math.nan}
    none = v.estimate(model, missing)
    assert none["z"] is None and "net_to_nic_ratio" in none["reason"]
    assert [v.verdict(z, 0.5) for z in (1.0, -1.0, 0.2)] == ["congested", "favourable", "typical"]


def test_use_case_table_reads_congested_and_favourable_runs(model, fresh):
    table = v.use_case_table(model, fresh, ["alpha", "beta"], nodes=256)
    assert table["run"].tolist() == ["A", "B", "C"] * 2
    assert set(table["nodes"]) == {256}
    by = table.set_index(["application", "run"])
    # B is a fast run of the first application and a slow run of the second.
    assert by.at[("alpha", "B"), "runtime_s"] < by.at[("alpha", "C"), "runtime_s"]
    assert by.at[("beta", "B"), "runtime_s"] > by.at[("beta", "C"), "runtime_s"]
    for app in ("alpha", "beta"):
        fast, slow = sorted(["B", "C"], key=lambda r, a=app: by.at[(a, r), "runtime_s"])
        assert by.at[(app, slow), "z"] > by.at[(app, "A"), "z"] > by.at[(app, fast), "z"]
        # The use case: a congested run is told from a typical one.
        assert by.at[(app, slow), "verdict"] == "congested"
        assert by.at[(app, "A"), "verdict"] == "typical"
        assert by.at[(app, fast), "verdict"] != "congested"
    assert (table["z"] - table["z_true"]).abs().mean() < 0.6


# --------------------------------------------------------------------------- CLI


def write_run(path, *, app: str, volume: float, sens: float, c: float, b: float, seed: int):
    """A run directory whose counters follow latent congestion c and background b."""
    rng = np.random.default_rng(seed)
    runtime = 100.0 * (1 + sens * (0.6 * c**1.5 + 1.5 * np.sin(np.pi * b)))
    runtime *= 1 + 0.01 * rng.standard_normal()
    nodes = [f"nn-n0{i}" for i in range(1, 5)]
    end = []
    for i, node in enumerate(nodes, 1):
        sent = volume * (1 + 0.02 * rng.standard_normal())
        end += [(node, "eth0", "node_nic", "tx_bytes", sent)]
        end += [(node, "eth0", "node_nic", "tx_packets", sent / 1500)]
        port_bytes = volume * (1 + 3 * b) * (1 + 0.02 * rng.standard_normal())
        packets = port_bytes / 1500
        stalls = packets * (0.02 + 0.05 * c) * (1 + 0.02 * rng.standard_normal())
        end += [
            ("nn-fabric", f"nnp0{i}", "switch_port", "tx_bytes", port_bytes),
            ("nn-fabric", f"nnp0{i}", "switch_port", "tx_packets", packets),
            ("nn-fabric", f"nnp0{i}", "switch_port", "qdisc_overlimits", stalls),
        ]
    start = [(d, p, r, k, 0) for d, p, r, k, _ in end]
    frame = pd.DataFrame(rows(0.0, start) + rows(runtime, end))
    path.mkdir(parents=True)
    frame.to_csv(path / "counters.csv", index=False)
    info = {"nodes": nodes, "runtime_s": runtime, "application": app}
    (path / "run.json").write_text(json.dumps(info))
    return path


def cli(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="netnoise")
    variability_cli.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(list(argv))
    return args.func(args)


@pytest.fixture(scope="module")
def cli_model(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    rng = np.random.default_rng(11)
    dirs = []
    for app, volume, sens in (("milc", 4e8, 0.15), ("nekbone", 1e8, 0.08)):
        for k in range(20):
            c, b = rng.gamma(2.0, 0.5), rng.uniform()
            dirs.append(
                write_run(root / f"{app}{k}", app=app, volume=volume, sens=sens, c=c, b=b, seed=k)
            )
    model = root / "model.joblib"
    assert cli("variability", "train", *map(str, dirs), "--model", str(model), "--cv", "5") == 0
    return root, model


def test_cli_estimate_prints_the_models_estimate(cli_model, capsys):
    root, model = cli_model
    capsys.readouterr()
    run = write_run(root / "new", app="milc", volume=4e8, sens=0.15, c=1.0, b=0.5, seed=99)
    assert cli("variability", "estimate", str(run), "--model", str(model)) == 0
    text = capsys.readouterr().out
    expected = v.estimate(v.load_model(model), variability_cli.metrics_of(run))
    assert str(run) in text and "milc, 4 nodes" in text
    if expected["z"] is None:
        assert "no prediction can be given" in text
    else:
        assert f"{expected['z']:+.2f} ± {expected['bound']:.2f}" in text
    assert cli("variability", "estimate", str(run), "--model", str(model), "--json") == 0
    out = json.loads(capsys.readouterr().out)
    assert out["z"] == (None if expected["z"] is None else pytest.approx(expected["z"]))
    assert out["application"] == "milc"
    assert cli("variability", "metrics", str(run)) == 0
    metrics = json.loads(capsys.readouterr().out)
    assert metrics["nodes"] == 4 and metrics["network_ports"] == 4


def test_cli_says_when_no_prediction_can_be_given(cli_model, tmp_path, capsys):
    _, model = cli_model
    # A zero bound: no SVR prediction can fall inside the forest's interval.
    strict = dataclasses.replace(v.load_model(model), bound_scale=0.0)
    v.save_model(tmp_path / "strict.joblib", strict)
    run = write_run(tmp_path / "run", app="milc", volume=4e8, sens=0.15, c=1.0, b=0.5, seed=5)
    capsys.readouterr()
    assert cli("variability", "estimate", str(run), "--model", str(tmp_path / "strict.joblib")) == 0
    assert "no prediction can be given: SVR prediction" in capsys.readouterr().out


def test_cli_bad_input_gives_a_message_and_exit_code_2(cli_model, tmp_path, capsys):
    _, model = cli_model
    run = write_run(tmp_path / "run", app="milc", volume=4e8, sens=0.15, c=1.0, b=0.5, seed=5)
    capsys.readouterr()

    def fails(*argv: str, match: str) -> None:
        assert cli("variability", *argv) == 2
        assert match in capsys.readouterr().err

    fails("estimate", str(tmp_path / "nowhere"), "--model", str(model), match="not a directory")
    fails("estimate", str(run), "--model", str(tmp_path / "none.joblib"), match="none.joblib")
    (tmp_path / "junk.joblib").write_text("x")
    fails("estimate", str(run), "--model", str(tmp_path / "junk.joblib"), match="not a")
    info = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps(info | {"runtime_s": -1}))
    fails("estimate", str(run), "--model", str(model), match="'runtime_s' must be")
    (run / "run.json").write_text("{nodes")
    fails("metrics", str(run), match="not valid JSON")
    (run / "run.json").write_text(json.dumps(info | {"nodes": []}))
    fails("metrics", str(run), match="'nodes'")
    (run / "run.json").write_text(json.dumps(info))
    pd.read_csv(run / "counters.csv").drop(columns="counter").to_csv(run / "counters.csv")
    fails("estimate", str(run), "--model", str(model), match="missing column")
    (run / "counters.csv").unlink()
    fails("metrics", str(run), match="counters.csv: missing")
    no_app = write_run(tmp_path / "noapp", app="", volume=1e8, sens=0.1, c=1.0, b=0.5, seed=1)
    fails("train", str(no_app), "--model", str(tmp_path / "m.joblib"), match="'application'")
