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
