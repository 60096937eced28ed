"""Seed 002 config cross-checks (studies/variability/config.py) name the bad key."""

from __future__ import annotations

import pytest

from netnoise.config import ConfigError, validate


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
    # The bursty campaign is cross-validated on its own runs: enough of them, 2 a group.
    fails({"variability": {"bursty_runs": 2}}, r"bursty_runs: 16 runs of the campaign .*\(need 20")
    fails({"variability": {"bursty_runs": 1}}, "bursty_runs: 1 run per application and node")
    fails({"variability": {"background": {"generators": ["loadgen"]}}}, "generators")
    assert validate({"variability": {"bursty_runs": 3}})["variability"]["bursty_runs"] == 3
    assert validate({})["variability"]["bursty_runs"] == 0  # none unless asked for
    ok = validate({"variability": {"testbed": {"nodes": 12}, "node_counts": [4, 12]}})
    assert ok["variability"]["testbed"] == {
        "nodes": 12,
        "racks": 2,
        "backbone_mbit": 100,
        "queue_bytes": None,
        "mtu_bytes": None,
    }
    fails({"variability": {"testbed": {"queue_bytes": 100}}}, "queue_bytes")
    fails(
        {"variability": {"testbed": {"mtu_bytes": 20000}}},
        r"variability.testbed over platform.testbed: burst_bytes \(16000\) must hold",
    )
    # On a cluster the jobs' allocations hold the nodes: no testbed size to check,
    # but the maximal extreme needs nodes to load and loadgen a link rate.
    on_cluster = {
        "platform": {"kind": "slurm"},
        "asymmetric": {"enabled": False},
        "latency_variation": {"enabled": False},
    }
    fails(
        {**on_cluster, "variability": {"node_counts": [4, 512]}},
        r"controlled_runs: .* variability.slurm.background_nodes \(0; loadgen needs at least 2\)",
    )
    fails(
        {**on_cluster, "variability": {"slurm": {"background_nodes": 4}}},
        "variability.slurm.link_mbit: null, but loadgen's load",
    )
    assert validate({**on_cluster, "variability": {"node_counts": [4, 512], "controlled_runs": 0}})
    assert validate(
        {**on_cluster, "variability": {"slurm": {"background_nodes": 4, "link_mbit": 100}}}
    )
