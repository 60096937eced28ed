"""Checks of the impact_compression config section that its schema cannot express."""

from __future__ import annotations

from typing import Any

from netnoise.config import enabled, nodes_beyond, undefined_applications
from netnoise.platform import from_config


def problems(config: dict[str, Any]) -> list[str]:
    study = enabled(config, "impact_compression")
    if not study:
        return []
    found = undefined_applications(
        config, "impact_compression.applications", study.get("applications", [])
    )
    found += undefined_applications(
        config, "impact_compression.application_args", list(study.get("application_args", {}))
    )
    nodes = study.get("nodes")
    for p in study.get("compression", {}).get("partners", []):
        if nodes is not None and p >= nodes:
            found.append(
                f"impact_compression.compression.partners: {p} needs more than {p} nodes; "
                f"impact_compression.nodes is {nodes}"
            )
    external = sorted(
        app
        for app in study.get("applications", [])
        if "program" not in config.get("applications", {}).get(app, {"program": ""})
    )
    precision = study.get("precision", {})
    if precision.get("ci_width") is not None:
        runs, most = study.get("runs", 5), precision.get("max_runs", 200)
        if most < runs:
            found.append(
                f"impact_compression.precision.max_runs: {most} is below "
                f"impact_compression.runs ({runs}), the least runs of a launch"
            )
        if external:
            found.append(
                "impact_compression.precision.ci_width: the stopping rule needs built-in "
                f"proxies; {', '.join(external)} run through netnoise.external (set "
                "ci_width: null)"
            )
    if study.get("compute_jitter") and external:
        found.append(
            "impact_compression.compute_jitter: drawn compute phases need built-in "
            f"proxies; {', '.join(external)} run through netnoise.external (set "
            "compute_jitter: 0)"
        )
    platform = from_config(config["platform"])
    if nodes is not None:
        found += nodes_beyond(platform.max_nodes, {"impact_compression.nodes": [nodes]})
    grid = study.get("compression", {})
    if grid.get("offered_loads") and not grid.get("link_mbit") and platform.nic_mbit is None:
        found.append(
            "impact_compression.compression.link_mbit: null only works on the testbed "
            "(the offered loads are shares of platform.testbed.nic_mbit); give the link "
            f"rate of your network in Mbit/s, or offered_loads: null for the grid of "
            f"sleep_cycles (platform.kind is {platform.kind})"
        )
    return found
