"""Seed 003 in ns-3: a small real simulated trial against bottleneck rates computed
by hand, and the config and plan of asymmetric.network: ns3."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from netnoise.config import ConfigError
from netnoise.io import read_benchmark
from netnoise.provenance import cpu_summary, read_sidecar, sidecar_path, summary_table
from netnoise.studies.asymmetric import ns3, plan
from netnoise.studies.asymmetric.cluster import link_rates, rack_map
from netnoise.studies.asymmetric.config import problems
from netnoise.studies.asymmetric.tidy import tidy_mpi
from tests.asymmetric.support import MB, TREE, resolved, simulate_cubic, typed, wire_seconds
from tests.conftest import platform_of


@pytest.fixture(scope="module")
def simulated(ns3_program, tmp_path_factory):
    """Three trials on the small tree: one link alone, two links out of one NIC, and
    four links from four hosts of rack 1 to four of rack 2 (through the backbone)."""
    names = ns3.racks(TREE)
    first, second = names["1"], names["2"]
    size = MB
    rows = [(0, first[0], first[1])]
    rows += [(1, first[0], first[1]), (1, first[0], first[2])]
    rows += [(2, first[i], second[i]) for i in range(4)]
    trials = pd.DataFrame(rows, columns=["trial", "src", "dst"])
    trials["link"] = trials.groupby("trial").cumcount()
    trials["bytes"] = size
    trials["experiment"] = trials["trial"].map({0: "alone", 1: "nic", 2: "backbone"})
    root = tmp_path_factory.mktemp("ns3-run")
    outputs = [root / f"trial{t}.csv" for t in range(3)]
    simulate_cubic(ns3_program, trials, outputs, TREE, log=root / "ns3.log")
    return trials, outputs


@pytest.mark.slow
@pytest.mark.parametrize(
    ("trial", "links", "bottleneck", "rel"),
    [
        # Slow start and the handshake add about a millisecond to 86 ms.
        pytest.param(0, 1, "nic_mbit", 0.03, id="alone"),
        pytest.param(1, 2, "nic_mbit", 0.05, id="nic"),
        # Four links of 100 Mbit/s NICs through a 300 Mbit/s uplink: the uplink limits.
        pytest.param(2, 4, "backbone_mbit", 0.05, id="backbone"),
    ],
)
def test_links_take_their_bytes_at_the_bottlenecks_rate_together(
    simulated, trial, links, bottleneck, rel
):
    _, outputs = simulated
    data = read_benchmark(outputs[trial]).data
    makespan = data.groupby("iteration")["time_s"].max().mean()
    assert makespan == pytest.approx(links * wire_seconds(MB, TREE[bottleneck]), rel=rel)
    # No link carries its bytes faster than its NIC's rate.
    assert data["time_s"].min() > wire_seconds(MB, TREE["nic_mbit"])


@pytest.mark.slow
def test_results_read_as_p2p_concurrent_results(simulated):
    trials, outputs = simulated
    links, summary = tidy_mpi(outputs, trials, "properties", "cubic")
    assert list(summary["iterations"] >= 3) == [True, True, True]
    assert links["rate_mbit"].max() < TREE["nic_mbit"]
    meta = read_benchmark(outputs[2]).meta
    assert meta["tool"] == ns3.PROGRAM and meta["links"] == "4"
    assert meta["stalled_iterations"] == "0"
    sidecar = read_sidecar(outputs[2])
    assert sidecar["platform"]["kind"] == "ns3" and "--seed=3" in sidecar["command"]
    # The run's provenance table reads its sidecars as any platform's.
    table = summary_table([sidecar_path(path) for path in outputs], root=outputs[0].parent)
    assert table["platform"].tolist() == ["ns3"] * 3
    assert table["nodes"].tolist() == [TREE["nodes"]] * 3
    # Simulated time: the CPU summary counts them as simulated, not as unrecorded.
    assert table["cpu_applicable"].tolist() == [False] * 3
    assert cpu_summary(table)["simulated"].tolist() == [3]


def simulate_one_link(program, tmp_path: Path, src: str, tree: dict) -> None:
    """Simulate one trial, a link from ``src`` to ns3-r1n02, for two iterations on
    ``tree``; its result ``tmp_path/trial0.csv``, its log ``tmp_path/ns3.log``."""
    trials = pd.DataFrame(
        {"trial": [0], "link": [0], "src": [src], "dst": ["ns3-r1n02"], "bytes": [MB]}
    )
    simulate_cubic(
        program,
        trials,
        [tmp_path / "trial0.csv"],
        tree,
        log=tmp_path / "ns3.log",
        iterations=(2, 2),
        timeout_s=60,
    )


def test_program_failure_leaves_no_result(ns3_program, tmp_path):
    with pytest.raises(RuntimeError, match="exited with status 2"):
        simulate_one_link(ns3_program, tmp_path, "ns3-r1n01", {**TREE, "queue": "0p"})
    assert not (tmp_path / "trial0.csv").exists()
    assert "--queue must be" in (tmp_path / "ns3.log").read_text()


def test_nodes_outside_the_tree_are_refused(tmp_path):
    with pytest.raises(ValueError, match="nar-n01 are not hosts of the ns-3 tree"):
        simulate_one_link("unused", tmp_path, "nar-n01", TREE)


def test_congestion_controls_ns3_lacks_are_refused():
    with pytest.raises(ValueError, match="ns-3 runs cubic, bbr or reno, not 'default'"):
        ns3.command("p", TREE, "default", {"min": 2, "max": 2, "ci_width": 0.02}, "x", "y", 1)


def test_ns3_network_runs_on_localhost_with_the_trees_racks_and_rates():
    config = resolved(network="ns3", ns3={"nodes": 32}, congestion_controls=["cubic", "bbr"])
    study = config["asymmetric"]
    assert problems(config) == []
    assert plan.skipped(platform_of("localhost"), typed(study)) is None
    assert plan.skipped(platform_of("localhost"), typed({**study, "network": "testbed"}))
    assert not plan.on_testbed(typed(study), platform_of("testbed"))
    assert "T/testbed_validation.csv" not in plan.targets(
        "T", "F", typed(study), platform_of("testbed")
    )
    racks = rack_map(platform_of("localhost"), study)
    assert racks["1"][0] == "ns3-r1n01" and len(racks["1"]) == len(racks["2"]) == 16
    assert link_rates(platform_of("localhost"), study) == {"nic_mbit": 1000, "backbone_mbit": 10000}


def test_ns3_config_problems_name_the_key():
    with pytest.raises(ConfigError) as err:
        resolved(network="ns3", ns3={"nodes": 32, "racks": 3}, congestion_controls=["default"])
    assert "asymmetric.ns3.nodes: 32 nodes do not split evenly" in str(err.value)
    assert "asymmetric.congestion_controls: default (the nodes' own TCP)" in str(err.value)
    with pytest.raises(ConfigError, match=r"asymmetric\.ns3\.socket_buffer_bytes: 8000 bytes"):
        resolved(network="ns3", ns3={"socket_buffer_bytes": 8000, "segment_bytes": 8948})


def test_queue_depth_in_bytes_of_the_tree():
    assert ns3.queue_link(TREE) == {"nic_mbit": 100, "queue_bytes": 1000 * 1502}
    assert ns3.queue_link({**TREE, "queue": "30000B"})["queue_bytes"] == 30000
