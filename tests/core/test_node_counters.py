"""A node's own counters (netdev) and the samplers that read them on a job's nodes."""

from __future__ import annotations

import os
import sys

import pytest

from netnoise.counters import netdev, remote


def fake_interface(root, name, kind, **statistics):
    (root / name / "statistics").mkdir(parents=True)
    (root / name / "type").write_text(f"{kind}\n")
    for counter, value in statistics.items():
        (root / name / "statistics" / counter).write_text(f"{value}\n")


def test_netdev_reads_every_interface_but_loopback(tmp_path):
    fake_interface(tmp_path, "lo", netdev.ARPHRD_LOOPBACK, tx_bytes=5)
    fake_interface(tmp_path, "eth0", "1", tx_bytes=100, rx_bytes=40)
    fake_interface(tmp_path, "ib0", "32", tx_bytes=7)
    assert netdev.interfaces(tmp_path) == ["eth0", "ib0"]
    rows = netdev.snapshot_rows("n1", {"eth0"}, root=tmp_path, queues=False)
    assert {(r["device"], r["port"], r["counter"], r["value"]) for r in rows} == {
        ("n1", "eth0", "tx_bytes", 100),
        ("n1", "eth0", "rx_bytes", 40),
    }
    assert {r["role"] for r in rows} == {"node_nic"}


def test_link_view_puts_what_the_node_receives_on_the_switch_side():
    rows = [
        {"device": "n1", "port": "eth0", "counter": c, "value": v, "time_s": 0.0}
        for c, v in (("tx_bytes", 10), ("rx_bytes", 20), ("qdisc_overlimits", 3))
    ]
    view = {(r["role"], r["port"], r["counter"]): r["value"] for r in remote.link_view(rows)}
    assert view == {
        ("node_nic", "eth0", "tx_bytes"): 10,
        ("switch_port", "switch:eth0", "tx_bytes"): 20,
        ("switch_port", "switch:eth0", "qdisc_overlimits"): 3,
    }
    assert remote.network_ports(remote.link_view(rows)) == {("n1", "switch:eth0")}


@pytest.mark.skipif(not netdev.interfaces(), reason="this host lists no network interface")
def test_samplers_answer_snapshots_and_stop(tmp_path):
    """One sampler on this host, started as a job's step would start it: every
    snapshot carries its rows with the runner's time, and leaving stops it."""
    node = remote.node_name()
    env_path = os.pathsep.join(sys.path)
    launch = lambda argv: ["env", f"PYTHONPATH={env_path}", *argv]  # noqa: E731
    counters = remote.RemoteCounters(
        [node], tmp_path / "exchange", launch, log=tmp_path / "samplers.log", timeout_s=30
    )
    with counters as snapshot:
        first, second = snapshot(), snapshot()
        proc = counters.proc
    assert proc.returncode == 0, (tmp_path / "samplers.log").read_text()
    for rows in (first, second):
        assert {r["device"] for r in rows} == {node}
        assert len({r["time_s"] for r in rows}) == 1
    assert first[0]["time_s"] < second[0]["time_s"]
    assert (tmp_path / "exchange" / "stop").exists()


def test_a_sampler_that_dies_fails_the_run_fast(tmp_path):
    counters = remote.RemoteCounters(
        ["n1"], tmp_path / "exchange", lambda argv: ["false"], log=tmp_path / "log", timeout_s=30
    )
    with pytest.raises(remote.SamplerFailed, match="exited with status 1"):
        counters.__enter__()
