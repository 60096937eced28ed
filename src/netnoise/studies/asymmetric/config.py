"""Checks of the asymmetric config section that its schema cannot express."""

from __future__ import annotations

from typing import Any

from netnoise.config import enabled


def problems(config: dict[str, Any]) -> list[str]:
    study = enabled(config, "asymmetric")
    if "testbed" not in study:
        return []
    return _testbed_problems(study, config.get("platform", {}).get("testbed", {}).get("prefix"))


def _testbed_problems(study: dict[str, Any], main_prefix: str | None) -> list[str]:
    """Seed 003: its patterns must fit its own testbed."""
    problems = []
    testbed = study["testbed"]
    nodes, racks = testbed["nodes"], testbed["racks"]
    per_rack = nodes // racks
    if nodes % racks:
        problems.append(
            f"asymmetric.testbed.nodes: {nodes} nodes do not split evenly over "
            f"asymmetric.testbed.racks ({racks})"
        )
    if per_rack < 4:
        problems.append(
            f"asymmetric.testbed.nodes: {per_rack} nodes per rack; the Alltoallv needs 4"
        )
    if testbed["prefix"] is not None and testbed["prefix"] == main_prefix:
        problems.append(
            f"asymmetric.testbed.prefix: {main_prefix!r} is platform.testbed.prefix too; "
            "the study's testbed needs its own"
        )
    props = study["properties"]
    if 1 not in props["nic_links"]:
        problems.append(
            "asymmetric.properties.nic_links: must include 1 (one link alone calibrates "
            "the models' NIC rate)"
        )
    for n in props["backbone_links"]:
        if n > per_rack:
            problems.append(
                f"asymmetric.properties.backbone_links: {n} links need {n} nodes per rack; "
                f"the testbed has {per_rack}"
            )
    for key, limit in (("nic_degrees", None), ("backbone_degrees", per_rack)):
        for pair in props[key]:
            if sum(pair) == 0:
                problems.append(f"asymmetric.properties.{key}: {pair} has no link")
            if limit is not None and max(pair) > limit:
                problems.append(
                    f"asymmetric.properties.{key}: {pair} needs {max(pair)} nodes per rack; "
                    f"the testbed has {limit}"
                )
    rand = study["random"]
    for n in rand["nodes"]:
        if n % racks or n // racks > per_rack:
            problems.append(
                f"asymmetric.random.nodes: {n} must be a multiple of asymmetric.testbed.racks "
                f"({racks}) and at most asymmetric.testbed.nodes ({nodes})"
            )
    extra = [c for c in rand["congestion_controls"] if c not in study["congestion_controls"]]
    if extra:
        problems.append(
            f"asymmetric.random.congestion_controls: {', '.join(extra)} not in "
            f"asymmetric.congestion_controls ({', '.join(study['congestion_controls'])}), "
            "whose property runs calibrate the models"
        )
    iterations = study["iterations"]
    if iterations["min"] > iterations["max"]:
        problems.append(
            f"asymmetric.iterations.min: {iterations['min']} exceeds "
            f"asymmetric.iterations.max ({iterations['max']})"
        )
    return problems
