"""Seed 003's own emulated cluster (``asymmetric.testbed``).

Racks of nodes joined through a core switch by uplinks (the backbone), NIC:backbone
1:10 as the paper's 1 GbE / 10 GbE. It replaces those keys of ``platform.testbed``
and has a prefix of its own, so it exists beside the main testbed; the workflow
removes it when it ends (:func:`release`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from netnoise.config import with_study_cpu
from netnoise.platform import from_config
from netnoise.platform.testbed import TestbedPlatform
from netnoise.testbed.fabric import TestbedSpec

# Keys of asymmetric.testbed that replace those of platform.testbed.
TESTBED_KEYS = ("prefix", "nodes", "racks", "nic_mbit", "backbone_mbit", "queue_bytes")
TESTBED_KEYS += ("burst_bytes", "btl_tcp_links", "socket_buffer_bytes")


def study_prefix(platform: Mapping[str, Any], study: Mapping[str, Any]) -> str:
    """The study testbed's prefix: its own, or the main testbed's with ``r`` (racks)."""
    return study["testbed"]["prefix"] or f"{platform['testbed']['prefix']}r"


def study_platform(
    platform: Mapping[str, Any], study: Mapping[str, Any], congestion: str | None = None
) -> dict[str, Any]:
    """The ``platform`` config of the study's testbed: platform.testbed with the keys of
    asymmetric.testbed replaced, its own prefix, the TCP congestion control of the run and
    the study's CPU limits. On a cluster, whose layout is its own, the platform
    itself, with the run's congestion control and the study's CPU limits."""
    merged = with_study_cpu(dict(platform), dict(study))
    if from_config(merged).discovers_layout:
        if congestion is not None:
            merged["slurm"] = {**merged["slurm"], "tcp_congestion": congestion}
        return merged
    testbed = dict(merged["testbed"])
    testbed.update({k: study["testbed"][k] for k in TESTBED_KEYS})
    testbed["prefix"] = study_prefix(platform, study)
    if congestion is not None:
        testbed["tcp_congestion"] = congestion
    merged["testbed"] = testbed
    return merged


def racks(testbed: Mapping[str, Any]) -> dict[str, list[str]]:
    """Rack number (as text) -> node names of a testbed config section, in order."""
    spec = TestbedSpec.from_config(dict(testbed))
    out: dict[str, list[str]] = {}
    for node in spec.node_list():
        out.setdefault(str(node.rack), []).append(node.name)
    return out


def release(platform: Mapping[str, Any], study: Mapping[str, Any]) -> None:
    """Tear the study's testbed down when the workflow ends (if the study is enabled).

    The workflow calls this only on the testbed platform and unless
    ``platform.testbed.keep_up`` asks to keep the testbeds; in ns-3 the study brings
    none up."""
    if study["enabled"] and study["network"] != "ns3":
        TestbedPlatform(study_platform(platform, study)).testbed.down()
