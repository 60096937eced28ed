"""Checks of the asymmetric config section beyond its schema (config.py)."""

from __future__ import annotations

import pytest

from netnoise.config import ConfigError
from netnoise.studies.asymmetric import ns3
from netnoise.studies.asymmetric.config import problems
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
        (
            {"regime": {"enabled": True, "backbone_degree": [16, 1]}},
            "asymmetric.regime.backbone_degree: [16, 1] needs 16 hosts per rack; "
            "asymmetric.ns3 has 15",
        ),
        (
            {
                "regime": {"enabled": True, "socket_buffer_bytes": [None, 8000]},
                "ns3": {"segment_bytes": 8948},
            },
            "asymmetric.regime.socket_buffer_bytes: 8000 bytes hold fewer than four",
        ),
        (
            {"regime": {"enabled": True, "max_iterations": 3}, "iterations": {"min": 5}},
            "asymmetric.regime.max_iterations: 3 is below asymmetric.iterations.min (5)",
        ),
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


@pytest.mark.parametrize(
    ("overlays", "queue_bytes", "window"),
    [
        pytest.param([], lambda s: s["testbed"]["queue_bytes"], "testbed", id="testbed"),
        pytest.param(
            ["asymmetric-ns3.yaml"],
            lambda s: ns3.queue_link(s["ns3"])["queue_bytes"],
            "ns3",
            id="ns3",
        ),
    ],
)
def test_the_shipped_regimes_hold_every_window_through_a_nic_in_its_queue(
    overlays, queue_bytes, window
):
    """The asymmetric property needs fixed windows that the queue of a NIC's port
    holds all together (docs/asymmetric.md): the most transfers of a property
    trial through one NIC, each with its window, fit that port's queue."""
    study = quick_study_with(*overlays)["asymmetric"]
    properties = study["properties"]
    most = max([*properties["nic_links"], *(d_in for d_in, _ in properties["nic_degrees"])])
    buffer = study[window]["socket_buffer_bytes"]
    assert buffer is not None
    assert most * buffer <= queue_bytes(study)
