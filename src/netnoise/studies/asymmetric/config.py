"""Checks of the asymmetric config section that its schema cannot express."""

from __future__ import annotations

from typing import Any

from netnoise.config import enabled
from netnoise.platform import from_config
from netnoise.studies.asymmetric.cluster import nodes_per_rack


def problems(config: dict[str, Any]) -> list[str]:
    study = enabled(config, "asymmetric")
    if "testbed" not in study:
        return []
    platform = config["platform"]
    if study["network"] == "ns3":
        found = _ns3_problems(study)
    elif from_config(platform).discovers_layout:
        found = _cluster_problems(study, platform.get("slurm", {}))
    else:
        found = _testbed_problems(study, platform.get("testbed", {}).get("prefix"))
    return found + _regime_problems(study)


def _small_windows(key: str, buffers: list[int | None], tree: dict[str, Any]) -> list[str]:
    """Socket buffers (``asymmetric.<key>``) of fewer than four of the tree's segments,
    which leave TCP no room for fast retransmit."""
    segment = tree["segment_bytes"]
    small = [b for b in buffers if b is not None and b < 4 * segment]
    if not small:
        return []
    return [
        f"asymmetric.{key}: {', '.join(map(str, small))} bytes hold fewer than four segments "
        f"of asymmetric.ns3.segment_bytes ({segment}); use at least {4 * segment} or null"
    ]


def _regime_problems(study: dict[str, Any]) -> list[str]:
    """The ns-3 sweeps: experiments the tree holds, windows of several segments, a cap
    above the least iterations."""
    regime, tree = study["regime"], study["ns3"]
    if not regime["enabled"]:
        return []
    problems = []
    per_rack = tree["nodes"] // tree["racks"]
    if max(regime["backbone_degree"]) > per_rack:
        problems.append(
            f"asymmetric.regime.backbone_degree: {regime['backbone_degree']} needs "
            f"{max(regime['backbone_degree'])} hosts per rack; asymmetric.ns3 has {per_rack}"
        )
    problems += _small_windows("regime.socket_buffer_bytes", regime["socket_buffer_bytes"], tree)
    least = study["iterations"]["min"]
    if regime["max_iterations"] < least:
        problems.append(
            f"asymmetric.regime.max_iterations: {regime['max_iterations']} is below "
            f"asymmetric.iterations.min ({least})"
        )
    return problems


def _cluster_problems(study: dict[str, Any], slurm: dict[str, Any]) -> list[str]:
    """Seed 003 on a cluster: racks that fit its patterns, congestion controls its
    MPI can use."""
    problems = []
    racks = study["slurm"]["racks"]
    if racks is not None:
        shared = set(racks[0]).intersection(*racks[1:])
        if shared:
            problems.append(
                f"asymmetric.slurm.racks: {', '.join(sorted(shared))} in more than one rack"
            )
        need = nodes_per_rack(study)
        for i, nodes in enumerate(racks, start=1):
            if len(nodes) < need:
                problems.append(
                    f"asymmetric.slurm.racks: rack {i} has {len(nodes)} nodes; the study's "
                    f"patterns need {need} per rack"
                )
    chosen = {*study["congestion_controls"], *study["random"]["congestion_controls"]}
    if slurm.get("fabric", "rdma") == "rdma" and chosen != {"default"}:
        problems.append(
            "asymmetric.congestion_controls: platform.slurm.fabric is rdma, where MPI moves "
            "its messages without TCP, so TCP congestion controls do not apply; use "
            "[default] (and random.congestion_controls: [default]), or set "
            "platform.slurm.fabric: tcp if the cluster's MPI runs over TCP"
        )
    return problems + _pattern_problems(study, min(map(len, racks)) if racks else None, 2)


def _ns3_problems(study: dict[str, Any]) -> list[str]:
    """Seed 003 in ns-3: a tree its patterns fit, congestion controls ns-3 has."""
    problems = []
    ns3 = study["ns3"]
    nodes, racks = ns3["nodes"], ns3["racks"]
    if nodes % racks:
        problems.append(
            f"asymmetric.ns3.nodes: {nodes} nodes do not split evenly over "
            f"asymmetric.ns3.racks ({racks})"
        )
    if nodes // racks < 4:
        problems.append(
            f"asymmetric.ns3.nodes: {nodes // racks} nodes per rack; the Alltoallv needs 4"
        )
    if "default" in study["congestion_controls"]:
        problems.append(
            "asymmetric.congestion_controls: default (the nodes' own TCP) has no meaning in "
            "ns-3 (asymmetric.network: ns3); choose among cubic, bbr and reno"
        )
    problems += _small_windows("ns3.socket_buffer_bytes", [ns3["socket_buffer_bytes"]], ns3)
    return problems + _pattern_problems(study, nodes // racks, racks)


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
    return problems + _pattern_problems(study, per_rack, racks)


def _pattern_problems(study: dict[str, Any], per_rack: int | None, racks: int) -> list[str]:
    """The patterns against racks of ``per_rack`` nodes (None: not known before the
    study runs), and the study's other keys."""
    problems = []
    nodes = None if per_rack is None else per_rack * racks
    props = study["properties"]
    if 1 not in props["nic_links"]:
        problems.append(
            "asymmetric.properties.nic_links: must include 1 (one link alone calibrates "
            "the models' NIC rate)"
        )
    for n in props["backbone_links"] if per_rack is not None else []:
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
        if n % racks or (per_rack is not None and n // racks > per_rack):
            problems.append(
                f"asymmetric.random.nodes: {n} must be a multiple of the racks "
                f"({racks})" + (f" and at most their nodes ({nodes})" if nodes else "")
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
