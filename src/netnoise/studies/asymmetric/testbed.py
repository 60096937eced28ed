"""Seed 003's own emulated cluster (``asymmetric.testbed``).

Racks of nodes joined through a core switch by uplinks (the backbone), NIC:backbone
1:10 as the paper's 1 GbE / 10 GbE. It replaces those keys of ``platform.testbed``
and has a prefix of its own (netnoise.studies.asymmetric.settings), so it exists
beside the main testbed; the workflow removes it when it ends (:func:`release`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from netnoise.platform.testbed import TestbedPlatform
from netnoise.settings import PlatformSettings
from netnoise.studies.asymmetric.settings import AsymmetricSettings
from netnoise.testbed.fabric import TestbedSpec


def racks(testbed: Mapping[str, Any]) -> dict[str, list[str]]:
    """Rack number (as text) -> node names of a testbed config section, in order."""
    spec = TestbedSpec.from_config(dict(testbed))
    out: dict[str, list[str]] = {}
    for node in spec.node_list():
        out.setdefault(str(node.rack), []).append(node.name)
    return out


def release(platform: PlatformSettings, study: AsymmetricSettings) -> None:
    """Tear the study's testbed (``platform``: the one its runs see) down when the
    workflow ends, if the study is enabled.

    The workflow calls this only where the platform released its own and unless
    ``platform.testbed.keep_up`` asks to keep the testbeds; in ns-3 the study brings
    none up."""
    if study.enabled and not study.in_ns3:
        TestbedPlatform(platform).testbed.down()
