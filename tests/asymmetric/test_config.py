"""Checks of the asymmetric config section beyond its schema (config.py)."""

from __future__ import annotations

import pytest

from netnoise.config import ConfigError
from netnoise.studies.asymmetric.config import problems
from netnoise.studies.asymmetric.patterns import paper_bytes
from tests.asymmetric.support import resolved
from tests.conftest import quick_study_with


@pytest.mark.parametrize(
    ("asymmetric", "message"),
    [
        ({"testbed": {"nodes": 31}}, "do not split evenly"),
        ({"properties": {"nic_links": [2, 4]}}, "must include 1"),
        ({"properties": {"backbone_links": [17]}}, "17 links need 17 nodes per rack"),
        ({"properties": {"backbone_degrees": [[4, 20]]}}, "[4, 20] needs 20 nodes per rack"),
        ({"properties": {"nic_degrees": [[0, 0]]}}, "[0, 0] has no link"),
        ({"random": {"nodes": [9]}}, "asymmetric.random.nodes: 9 must be a multiple"),
        ({"random": {"congestion_controls": ["reno"]}}, "reno not in asymmetric.congestion"),
        ({"iterations": {"min": 20, "max": 10}}, "asymmetric.iterations.min: 20 exceeds"),
        ({"testbed": {"prefix": "na"}}, "the study's testbed needs its own"),
        ({"testbed": {"nodes": 8, "racks": 4}}, "the Alltoallv needs 4"),
    ],
)
def test_config_errors_name_the_key(asymmetric, message):
    with pytest.raises(ConfigError, match="asymmetric") as err:
        resolved(**asymmetric)
    assert message in str(err.value)


def test_a_disabled_study_is_not_checked():
    resolved(enabled=False, properties={"nic_links": [2]})


def test_the_defaults_have_no_problems(config):
    assert problems(config) == []
    broken = {**config, "asymmetric": {**config["asymmetric"], "iterations": {"min": 9, "max": 3}}}
    assert problems(broken) == [
        "asymmetric.iterations.min: 9 exceeds asymmetric.iterations.max (3)"
    ]


def test_shallow_queue_overlay_is_in_the_papers_regime():
    config = quick_study_with("asymmetric-shallow-queue.yaml")
    study = config["asymmetric"]
    testbed = study["testbed"]
    shortest = min(paper_bytes(mb, testbed["nic_mbit"]) for mb in study["random"]["message_mb"])
    # The queue drains in under a tenth of the shortest transfer alone: a
    # transfer is not one queue-full, as in the quick study.
    assert testbed["queue_bytes"] < shortest / 10
    assert paper_bytes(study["properties"]["message_mb"], testbed["nic_mbit"]) == shortest
    others = ("impact_compression", "network_noise", "variability", "latency_variation")
    assert not [key for key in others if config[key]["enabled"]], "it runs seed 003 alone"
