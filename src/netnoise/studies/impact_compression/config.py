"""Checks of the impact_compression config section that its schema cannot express."""

from __future__ import annotations

from typing import Any

from netnoise.config import enabled, nodes_beyond_testbed, undefined_applications


def problems(config: dict[str, Any]) -> list[str]:
    study = enabled(config, "impact_compression")
    if not study:
        return []
    found = undefined_applications(
        config, "impact_compression.applications", study.get("applications", [])
    )
    nodes = study.get("nodes")
    for p in study.get("compression", {}).get("partners", []):
        if nodes is not None and p >= nodes:
            found.append(
                f"impact_compression.compression.partners: {p} needs more than {p} nodes; "
                f"impact_compression.nodes is {nodes}"
            )
    if nodes is not None:
        found += nodes_beyond_testbed(config, {"impact_compression.nodes": [nodes]})
    return found
