"""Seed 002 Table III metrics of hand-made counters, and the run directories they come from."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from netnoise.counters import COLUMNS, csvimport, infiniband
from netnoise.studies.variability import metrics
from netnoise.studies.variability.features import FEATURES, features
from netnoise.testbed.fabric import TestbedSpec
from tests.conftest import fake_ib_tree
from tests.variability.conftest import counter_rows


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
    return pd.DataFrame(counter_rows(0.0, start) + counter_rows(10.0, end) + gauge, columns=COLUMNS)


JOB_PORTS = {("nn-fabric", "nnp01"), ("nn-fabric", "nnp02"), ("nn-fabric", "nnup1")}


def test_run_metrics_of_a_hand_made_table_are_exact():
    m = metrics.run_metrics(
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
    X = features(m)
    assert list(X.columns) == list(FEATURES)
    assert X.iloc[0].tolist() == pytest.approx([2.0, 250.0, 6.5, 380.0, 4000.0, 700 / 3, 2])


def test_queue_time_is_the_stall_counter_where_the_ports_have_it():
    table = hand_made_table()
    waited = {"nnp01": 3_000_000, "nnp02": 1_000_000, "nnup1": 0}
    queue_time = [
        {"time_s": t, "device": "nn-fabric", "port": port, "role": "switch_port"}
        | {"counter": "qdisc_stall_ns", "value": ns if t else 0}
        for port, ns in waited.items()
        for t in (0.0, 10.0)
    ]
    table = pd.concat([table, pd.DataFrame(queue_time)], ignore_index=True)
    m = metrics.run_metrics(table, ["nn-n01", "nn-n02"], runtime_s=8.0, network_ports=JOB_PORTS)
    assert m["stall_counter"] == "qdisc_stall_ns"
    assert m["network_stalls_total"] == 4_000_000
    # Nanoseconds per packet: 3e6 / 20, 1e6 / 40, 0 / 50.
    assert m["stall_ratio_mean"] == pytest.approx((150_000 + 25_000 + 0) / 3)


def test_without_a_port_list_every_network_row_counts_and_node_count_overrides():
    m = metrics.run_metrics(hand_made_table(), ["nn-n01", "nn-n02"], 8.0, node_count=128)
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
    m = metrics.run_metrics(table, ["nn-n01"], runtime_s=10.5)
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
        counter_rows(0.0, [("n1", "eth0", "node_nic", "tx_bytes", 0)])
        + counter_rows(5.0, [("n1", "eth0", "node_nic", "tx_bytes", 1000)])
        + counter_rows(10.0, [("n1", "eth0", "node_nic", "tx_bytes", 200)])
        + counter_rows(15.0, [("n1", "eth0", "node_nic", "tx_bytes", 700)])
    )
    m = metrics.run_metrics(table, ["n1"], runtime_s=15.0)
    # Intervals 1000 and 500 bytes in 5 s each, scaled to 15 s, per second.
    assert m["injection_rate_mean"] == pytest.approx(np.mean([200.0, 100.0]))
    assert m["job_bytes_total"] == 1500
    assert math.isnan(m["network_bytes_mean"]) and math.isnan(m["net_to_nic_ratio"])
    assert features(m).isna().any(axis=None)


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
    m = metrics.run_metrics(table, ["host7"], runtime_s=50.0)
    # sysfs names the HCA, not the host: all node_nic rows are the job's.
    assert m["nic_selection"].startswith("all node_nic rows")
    assert m["injection_rate_mean"] == pytest.approx(25000 * 4 / 50.0)
    assert m["stall_counter"] == "xmit_wait_ticks"
    assert m["stall_ratio_p75"] == pytest.approx(2.0)  # PortXmitWait / PortXmitPackets
    assert m["net_to_nic_ratio"] == pytest.approx(3.0)
    assert m["net_to_nic_ratio_mean"] == pytest.approx(3.0)  # different sample times
    assert m["nic_stalls_total"] == 100
    assert features(m).notna().all(axis=None)


def test_bad_counter_tables_are_refused_with_a_reason():
    only_network = hand_made_table().query("role != 'node_nic'")
    with pytest.raises(ValueError, match="tx_bytes"):
        metrics.run_metrics(only_network, ["nn-n01"], 8.0)
    with pytest.raises(ValueError, match="runtime_s"):
        metrics.run_metrics(hand_made_table(), ["nn-n01"], 0.0)
    with pytest.raises(ValueError, match="column"):
        metrics.run_metrics(hand_made_table().drop(columns="role"), ["nn-n01"], 8.0)


def test_testbed_network_ports_are_the_jobs_switch_ports_and_rack_uplinks():
    spec = TestbedSpec("nn", 4, 2, 100.0, 50.0, 4000, 20000, "cubic", 1)
    ports = metrics.testbed_network_ports(spec, ["nn-n01", "nn-n02"])
    assert ports == {
        ("nn-fabric", "nnp01"),
        ("nn-fabric", "nnp02"),
        ("nn-fabric", "nnup1"),
        ("nn-fabric", "nndn1"),
    }
    with pytest.raises(ValueError, match="nn-n09"):
        metrics.testbed_network_ports(spec, ["nn-n09"])
