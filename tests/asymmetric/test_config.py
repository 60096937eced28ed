"""Checks of the asymmetric config section beyond its schema (config.py)."""

from __future__ import annotations

import pytest

from netnoise.config import ConfigError
from netnoise.studies.asymmetric.config import problems
from tests.asymmetric.support import resolved


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
