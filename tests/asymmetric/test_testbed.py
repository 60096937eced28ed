"""Seed 003's own two-rack testbed (testbed.py): its platform config, racks,
process placement and teardown."""

from __future__ import annotations

import pytest

from netnoise.platform import PlatformUnavailable, from_settings
from netnoise.platform.testbed import TestbedPlatform
from netnoise.settings import Settings
from netnoise.studies.asymmetric import testbed as asymmetric_testbed
from netnoise.studies.asymmetric.settings import AsymmetricSettings
from tests.asymmetric.support import resolved, study_platform


def test_study_platform_replaces_only_the_study_keys(config):
    testbed = study_platform(config, "bbr").testbed
    assert testbed.prefix == "nar"  # its own, beside the main testbed "na"
    assert (testbed.nodes, testbed.racks) == (32, 2)
    assert (testbed.nic_mbit, testbed.backbone_mbit) == (20, 200)
    assert testbed.tcp_congestion == "bbr" and testbed.btl_tcp_links == 1
    assert testbed.burst_bytes == 3028  # two frames, not the platform's 16 kB
    assert testbed.keep_up == config["platform"]["testbed"]["keep_up"]
    assert config["platform"]["testbed"]["prefix"] == "na"  # the shared config is untouched
    assert study_platform(resolved(testbed={"prefix": "nax"})).testbed.prefix == "nax"
    assert testbed.socket_buffer_bytes == config["asymmetric"]["testbed"]["socket_buffer_bytes"]
    fixed = resolved(testbed={"socket_buffer_bytes": 32768})
    assert study_platform(fixed).testbed.socket_buffer_bytes == 32768
    assert fixed["platform"]["testbed"]["socket_buffer_bytes"] is None
    # On a cluster, whose layout is its own, the run's congestion control is its TCP's.
    cluster = resolved()
    cluster["platform"]["kind"] = "slurm"
    on_cluster = study_platform(cluster, "bbr")
    assert on_cluster.slurm.tcp_congestion == "bbr" and on_cluster.testbed.prefix == "na"


def test_study_platform_keeps_the_study_runs_up_to_its_own_cpu_tolerance():
    study = resolved(cpu={"tolerated_runnable": 12})
    study["platform"]["cpu"]["tolerated_runnable"] = 8.5
    for kind in ("testbed", "slurm"):
        study["platform"]["kind"] = kind
        limits = from_settings(study_platform(study)).cpu_limits()
        assert limits.tolerated_runnable == 12
    assert study["platform"]["cpu"]["tolerated_runnable"] == 8.5
    default = resolved()
    limits = from_settings(study_platform(default)).cpu_limits()
    assert limits.tolerated_runnable == default["platform"]["cpu"]["tolerated_runnable"]


def test_racks_split_the_nodes_in_order(rack_nodes):
    assert list(rack_nodes) == ["1", "2"]
    assert rack_nodes["1"] == [f"nar-n{i:02d}" for i in range(1, 17)]
    assert rack_nodes["2"] == [f"nar-n{i:02d}" for i in range(17, 33)]


def test_testbed_launch_places_every_rank_on_its_node(config):
    platform = TestbedPlatform(study_platform(config))
    argv = platform.mpi_launch(
        ["./p2p_concurrent"], 4, ["nar-n01", "nar-n02", "nar-n01", "nar-n17"]
    ).argv
    i = argv.index("--host")
    assert argv[i + 1 : i + 4] == ["10.77.0.1,10.77.0.2,10.77.0.1,10.77.0.17", "--map-by", "seq"]
    # Distinct nodes keep the spread-over-nodes launch of the other studies.
    argv = platform.mpi_launch(["./pingpong"], 4, ["nar-n01", "nar-n02"]).argv
    i = argv.index("--host")
    assert argv[i + 1 : i + 4] == ["10.77.0.1:2,10.77.0.2:2", "--map-by", "node"]
    with pytest.raises(PlatformUnavailable, match="one node per rank"):
        platform.mpi_launch(["./p2p_concurrent"], 3, ["nar-n01", "nar-n01"])
    # A node named by its index is the same node: the placement repeats it.
    with pytest.raises(PlatformUnavailable, match="2 nodes for 3 ranks"):
        platform.mpi_launch(["./p2p_concurrent"], 3, ["nar-n01", "1"])


def test_release_takes_down_the_study_testbed_only_when_enabled(config, monkeypatch):
    downed = []

    class Recording:
        def __init__(self, platform):
            self.testbed = self
            self.prefix = platform.testbed.prefix

        def down(self):
            downed.append(self.prefix)

    monkeypatch.setattr(asymmetric_testbed, "TestbedPlatform", Recording)
    asymmetric_testbed.release(study_platform(config), _section(config))
    assert downed == ["nar"]  # the study's testbed, not the main one ("na")
    disabled = resolved(enabled=False)
    asymmetric_testbed.release(study_platform(disabled), _section(disabled))
    assert downed == ["nar"]


def _section(config: dict) -> AsymmetricSettings:
    return Settings.of(config).study(AsymmetricSettings)
