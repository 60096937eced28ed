"""Where seed 003's property lives (regime.py): the sweeps' points and a real
small sweep in ns-3 through the regime table and figure."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from netnoise.studies.asymmetric import figures, ns3, plan, regime
from tests.asymmetric.support import MB, TREE, resolved, simulate_cubic, typed
from tests.conftest import platform_of


@pytest.fixture(scope="module")
def study() -> dict:
    return resolved(regime={"enabled": True})["asymmetric"]


def test_the_sweeps_vary_one_setting_of_the_tree_each(study):
    points = regime.points(study)
    # Five queues by three windows, three messages, three backbone rates.
    assert [p["sweep"] for p in points] == (
        ["queue_window"] * 15 + ["transfer_length"] * 3 + ["backbone_ratio"] * 3
    )
    assert [p["point"] for p in points[:2]] == ["p00", "p01"]
    grid = {(p["ns3"]["queue"], p["ns3"]["socket_buffer_bytes"]) for p in points[:15]}
    assert len(grid) == 15 and ("16p", None) in grid and ("4096p", 262144) in grid
    base = study["ns3"]
    lengths = points[15:18]
    assert [p["message_mb"] for p in lengths] == [5, 20, 80]
    assert all(p["ns3"] == base and p["experiment"] == "nic_bidirectional" for p in lengths)
    ratios = points[18:]
    assert [p["ns3"]["backbone_mbit"] for p in ratios] == [2000, 4000, 10000]
    assert {p["experiment"] for p in ratios} == {"backbone_bidirectional"}
    assert regime.named_point(study, "p18") == ratios[0]
    with pytest.raises(KeyError, match=r"no regime point 'p99'; asymmetric\.regime has 21"):
        regime.named_point(study, "p99")


def test_a_point_runs_the_link_alone_then_its_experiment(study):
    backbone = regime.points(study)[-1]
    trials = regime.point_patterns(backbone)
    alone, experiment = (group for _, group in trials.groupby("trial"))
    assert alone["experiment"].tolist() == ["nic_unidirectional"]
    assert experiment["direction"].tolist() == ["in"] * 4 + ["out"]
    # Into rack 1 from rack 2, out the other way: every link crosses the backbone.
    racks = ns3.racks(backbone["ns3"])
    assert set(experiment.loc[experiment["direction"] == "in", "dst"]) <= set(racks["1"])
    assert set(experiment.loc[experiment["direction"] == "in", "src"]) <= set(racks["2"])


def test_the_unloaded_round_trip_is_propagation_and_one_packet_per_link(study):
    nic, *_ = regime.points(study)
    # Two 1 GbE links each way at 5 µs, a 1502-byte packet serialised on each.
    assert regime.unloaded_rtt_s(nic) == pytest.approx(4 * 5e-6 + 2 * 8 * 1502 / 1e9)
    backbone = regime.points(study)[-1]
    assert regime.unloaded_rtt_s(backbone) == pytest.approx(
        8 * 5e-6 + 2 * 8 * 1502 / 1e9 + 2 * 8 * 1502 / 1e10
    )


def test_results_of_every_point_in_the_order_the_table_reads_them(study):
    paths = regime.result_paths("R", study, "cubic")
    assert paths[:3] == [
        "R/regime/cubic/p00/trial0.csv",
        "R/regime/cubic/p00/trial1.csv",
        "R/regime/cubic/p01/trial0.csv",
    ]
    assert len(paths) == 2 * 21
    with pytest.raises(ValueError, match="3 results for 21 points of 2 trials"):
        regime.tabulate(study, ["cubic"], paths[:3])


def test_the_sweeps_are_targets_only_where_enabled(study):
    targets = plan.targets("T", "F", typed(study), platform_of("testbed"))
    assert targets[-3:] == ["T/regime.csv", "F/regime_asymmetry.svg", "F/regime_asymmetry.png"]
    without = {**study, "regime": {**study["regime"], "enabled": False}}
    assert plan.targets("T", "F", typed(without), platform_of("testbed")) == targets[:-3]


@pytest.mark.slow
def test_fixed_windows_in_a_queue_that_holds_them_show_the_asymmetric_property(
    ns3_program, tmp_path
):
    """Two transfers into a NIC and one out of it, through 32-packet queues. With
    the kernel's windows CUBIC's losses keep the outgoing transfer near the NIC's
    rate (the fairness model); with 6 kB windows, which the queue holds, its ACKs
    wait behind the incoming data and all three move at half the NIC (the
    asymmetric model's 1/δ⁺), as the paper's Fig. 4 has it."""
    study = resolved(
        network="ns3",
        ns3=TREE,
        iterations={"min": 3},
        # 1 MB on the tree's 100 Mbit/s NICs; the rest fits its four hosts a rack.
        properties={
            "message_mb": MB / 1e6 * 940 / TREE["nic_mbit"],
            "backbone_links": [],
            "backbone_degrees": [],
        },
        random={"nodes": [4]},
        regime={
            "enabled": True,
            "queues": ["32p"],
            "socket_buffer_bytes": [None, 6144],
            "message_mb": [],
            "backbone_ratios": [],
            "nic_degree": [2, 1],
            # What simulate_cubic stops on.
            "max_iterations": 6,
            "ci_width": 0.02,
        },
    )["asymmetric"]
    paths = []
    for point in regime.points(study):
        outputs = [tmp_path / point["point"] / f"trial{t}.csv" for t in range(regime.TRIALS)]
        trials = regime.point_patterns(point)
        assert trials["bytes"].eq(MB).all()
        simulate_cubic(ns3_program, trials, outputs, point["ns3"], log=tmp_path / "ns3.log")
        paths += outputs
    table = regime.tabulate(study, ["cubic"], paths)
    kernel, fixed = (row for _, row in table.iterrows())
    assert pd.isna(kernel["socket_buffer_bytes"]) and fixed["socket_buffer_bytes"] == 6144
    # Shares are of the link alone: each of the three links gets half the NIC.
    assert (fixed["in_share"], fixed["out_share"]) == pytest.approx((0.5, 0.5), rel=0.05)
    assert (fixed["fairness_out_share"], fixed["asymmetric_out_share"]) == pytest.approx(
        (1.0, 0.5), rel=0.05
    )
    assert fixed["asymmetry_low"] <= fixed["asymmetry"] <= fixed["asymmetry_high"]
    assert fixed["asymmetry"] == pytest.approx(1, abs=0.1)
    assert kernel["out_share"] > 0.75
    assert kernel["asymmetry_high"] < 0.5
    # 32 packets of 1502 bytes hold almost eight windows of 6 kB; a round trip of
    # 20 µs of propagation and two packets at 100 Mbit/s carries 3,255 bytes.
    assert fixed["queue_windows"] == pytest.approx(32 * 1502 / 6144)
    assert fixed["queue_bdp"] == pytest.approx(32 * 1502 / 3255, rel=0.01)
    assert fixed["loaded_rtts_at_least"] > 1
    fig = figures.regime(table)
    assert len(fig.axes) == 3 and len(fig.axes[0].lines) > 0
    plt.close(fig)
