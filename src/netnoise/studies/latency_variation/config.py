"""Checks of the latency_variation config section that its schema cannot express."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from netnoise.config import enabled, nodes_beyond, undefined_applications
from netnoise.inputs import quoted
from netnoise.platform import SIMULATED, from_config


def problems(config: dict[str, Any]) -> list[str]:
    """Levels that build on each other, applications, a link rate, node counts."""
    study = enabled(config, "latency_variation")
    if not study:
        return []
    platform = from_config(config["platform"])
    problems = []
    characterize = study.get("characterize", {})
    injection = study.get("injection", {})
    measured = characterize.get("levels", [])
    if measured and 0 not in measured:
        problems.append(
            "latency_variation.characterize.levels: must include 0 (the idle network of "
            "Fig. 4 and the zero-load reference)"
        )
    for level in injection.get("levels", []):
        if level not in measured:
            problems.append(
                f"latency_variation.injection.levels: {level} is not one of "
                f"latency_variation.characterize.levels ({measured})"
            )
    for level in injection.get("fixed_mean_levels", []):
        if level not in injection.get("levels", []):
            problems.append(
                f"latency_variation.injection.fixed_mean_levels: {level} is not one of "
                f"latency_variation.injection.levels ({injection.get('levels', [])})"
            )
    problems += undefined_applications(
        config, "latency_variation.injection.applications", injection.get("applications", [])
    )
    problems += undefined_applications(
        config,
        "latency_variation.injection.application_args",
        list(injection.get("application_args", {})),
    )
    from_bundle = characterize.get("from_bundle")
    if from_bundle is not None and not Path(from_bundle).is_file():
        problems.append(
            f"latency_variation.characterize.from_bundle: {quoted(from_bundle)} is not a "
            "regular file (a results bundle; a relative path is from the working directory)"
        )
    if platform.clock == SIMULATED and from_bundle is None:
        problems.append(
            "latency_variation.characterize.from_bundle: null measures latency under load "
            f"here, but on platform.kind {platform.kind} each launch is a simulation of its own, "
            "so no probe runs beside a load; give a bundle whose run measured it, e.g. "
            "resources/cache/quick-testbed.tar.gz"
        )
    if not platform.tcp_sockets and injection.get("injector_level") == "tcp":
        problems.append(
            "latency_variation.injection.injector_level: tcp delays a rank's TCP sends, but "
            f"on platform.kind {platform.kind} no message crosses a socket; use mpi or auto"
        )
    if platform.supports_ns3:
        problems.append(
            "platform.simgrid.network_model: packet (ns-3) takes no latency callback, through "
            "which the injector delays messages in SimGrid; use flow for latency_variation"
        )
    if from_bundle is None and characterize.get("link_mbit") is None and platform.nic_mbit is None:
        problems.append(
            "latency_variation.characterize.link_mbit: null only works on the testbed "
            "(it takes platform.testbed.nic_mbit); give the link rate of your network in Mbit/s"
        )
    if (
        injection.get("injector_level") == "tcp"
        and platform.tcp_sockets
        and not platform.mpi_over_tcp
    ):
        problems.append(
            "latency_variation.injection.injector_level: tcp delays a rank's TCP sends, but "
            "platform.slurm.fabric is rdma: MPI moves its messages without TCP there "
            "(InfiniBand, RoCE, Omni-Path, Slingshot), so nothing would be injected; use "
            "mpi or auto (mpi there), or set platform.slurm.fabric: tcp if the cluster's "
            "MPI runs over TCP sockets"
        )
    barrier_nodes = injection.get("barrier_nodes")
    if barrier_nodes is not None and barrier_nodes > study["nodes"]:
        problems.append(
            f"latency_variation.injection.barrier_nodes: {barrier_nodes} is more than "
            f"latency_variation.nodes ({study['nodes']}); the barrier spans the study's "
            "first nodes, so give 2 to nodes, or null for all of them"
        )
    if "nodes" in study:
        problems += nodes_beyond(platform.max_nodes, {"latency_variation.nodes": [study["nodes"]]})
    return problems
