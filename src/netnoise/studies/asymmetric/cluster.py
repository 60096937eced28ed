"""Seed 003 on a Slurm cluster: trials between the real nodes of two racks.

Where the testbed emulates two racks, a cluster has them: the nodes under two
leaf switches, from ``asymmetric.slurm.racks`` or from ``scontrol show
topology`` (the first two leaf switches with enough nodes). The rates of their
links come from the config or from the property experiments: messages are
scaled by ``asymmetric.slurm.nic_mbit`` (the paper's sizes without it), the
models' NIC rate is fitted to one link alone as on the testbed, and the
backbone's is ``asymmetric.slurm.backbone_mbit`` or the largest rate the
backbone property runs reached together. Every trial is one MPI job placed by
``srun --distribution=arbitrary``: nothing needs root. The TCP level (iperf3)
stays on the testbed, whose emulated links it checks.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from netnoise.platform import Platform
from netnoise.platform.slurm import leaf_switches
from netnoise.studies.asymmetric import ns3
from netnoise.studies.asymmetric.patterns import PAPER_LINK_MBIT
from netnoise.studies.asymmetric.testbed import racks as racks_of_testbed

RACKS = 2


def nodes_per_rack(study: Mapping[str, Any]) -> int:
    """Nodes each rack must have for every pattern of the study: the backbone
    experiments' links, half of the random patterns' nodes, the Alltoallv's four."""
    props = study["properties"]
    return max(
        4,
        *props["backbone_links"],
        *(max(pair) for pair in props["backbone_degrees"]),
        *(n // RACKS for n in study["random"]["nodes"]),
    )


def cluster_racks(study: Mapping[str, Any]) -> dict[str, list[str]]:
    """Rack number (as text) -> node names on a cluster: the configured racks, or the
    first two leaf switches of the cluster's tree topology with enough nodes."""
    configured = study["slurm"]["racks"]
    if configured:
        return {str(i): list(nodes) for i, nodes in enumerate(configured, start=1)}
    need = nodes_per_rack(study)
    switches = leaf_switches()
    chosen = [nodes for nodes in switches.values() if len(nodes) >= need][:RACKS]
    if len(chosen) < RACKS:
        sizes = ", ".join(f"{name} ({len(nodes)})" for name, nodes in switches.items())
        raise ValueError(
            f"seed 003 needs {RACKS} racks of at least {need} nodes; scontrol show topology "
            f"lists {sizes or 'no leaf switch (no tree topology)'}: give them in "
            "asymmetric.slurm.racks"
        )
    return {str(i): nodes for i, nodes in enumerate(chosen, start=1)}


def rack_map(platform: Platform, study: Mapping[str, Any]) -> dict[str, list[str]]:
    """The racks the study's patterns are drawn on (``platform``: the one its runs
    see): the ns-3 tree's, its own testbed's, or a cluster's."""
    if study["network"] == "ns3":
        return ns3.racks(study["ns3"])
    if platform.discovers_layout:
        return cluster_racks(study)
    return racks_of_testbed(platform.settings.testbed.as_config())


def link_rates(platform: Platform, study: Mapping[str, Any]) -> dict[str, Any]:
    """The link rates (Mbit/s) the study's sizes and models use: the simulated ones in
    ns-3, the emulated ones on the testbed; on a cluster the configured ones, the
    paper's NIC (sizes as in the paper) and None (fitted) for the backbone when not
    configured."""
    if study["network"] == "ns3":
        return {
            "nic_mbit": study["ns3"]["nic_mbit"],
            "backbone_mbit": study["ns3"]["backbone_mbit"],
        }
    if platform.discovers_layout:
        cluster = study["slurm"]
        return {
            "nic_mbit": cluster["nic_mbit"] or PAPER_LINK_MBIT,
            "backbone_mbit": cluster["backbone_mbit"],
        }
    testbed = study["testbed"]
    return {"nic_mbit": testbed["nic_mbit"], "backbone_mbit": testbed["backbone_mbit"]}


def on_platform(platform: Platform, study: Mapping[str, Any]) -> dict[str, Any]:
    """The study section with the link rates of where it runs in ``testbed`` (what its
    patterns and models read)."""
    out = copy.deepcopy(dict(study))
    out["testbed"] = {**out["testbed"], **link_rates(platform, study)}
    return out
