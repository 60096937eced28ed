"""Checks of the characterise config section that its schema cannot express."""

from __future__ import annotations

from typing import Any

from netnoise.config import enabled, nodes_beyond
from netnoise.platform import from_settings
from netnoise.settings import Settings
from netnoise.studies.characterise.cif import APART, FOUR_GROUPS
from netnoise.studies.characterise.plan import split
from netnoise.studies.characterise.settings import CharacteriseSettings
from netnoise.testbed.fabric import frame_problems


def problems(config: dict[str, Any]) -> list[str]:
    """The canary/congestor split the nodes allow, and the nodes the platform
    the study's runs see has (its testbed layout over the platform's)."""
    study = enabled(config, "characterise")
    if not study or "platform" not in config:
        return []
    found = []
    canaries, congestors = split(study["nodes"], study["canary_fraction"])
    if canaries < 2:
        found.append(
            f"characterise.canary_fraction: {study['canary_fraction']:g} of "
            f"{study['nodes']} nodes leaves {canaries} canary node(s); the random rings "
            "need at least 2 (raise the fraction or characterise.nodes)"
        )
    grouped = [c for c in study["congestors"] if c in (FOUR_GROUPS, APART)]
    if grouped and congestors < 8:
        found.append(
            f"characterise.nodes: {study['nodes']} nodes leave {congestors} congestor "
            f"node(s) beside the canaries; congestors {' and '.join(grouped)} run four "
            "groups of at least 2 (8 nodes), so give more nodes, a lower canary_fraction "
            f"or leave {' and '.join(grouped)} out"
        )
    settings = Settings.of(config)
    effective = settings.effective(settings.study(CharacteriseSettings))
    first_rack = -(-effective.testbed.nodes // effective.testbed.racks)
    if (
        APART in study["congestors"]
        and from_settings(effective).shapes_links
        and (canaries > first_rack)
    ):
        found.append(
            f"characterise.congestors: {APART} puts the {canaries} canary nodes in the first "
            f"rack, which holds {first_rack} of characterise.testbed's nodes; give the racks "
            "more nodes, fewer racks or leave it out"
        )
    found += frame_problems(
        effective.testbed.as_config(), "characterise.testbed over platform.testbed"
    )
    return found + nodes_beyond(
        from_settings(effective).max_nodes, {"characterise.nodes": [study["nodes"]]}
    )
