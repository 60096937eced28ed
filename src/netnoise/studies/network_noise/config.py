"""Checks of the network_noise config section that its schema cannot express."""

from __future__ import annotations

from typing import Any

from netnoise.config import enabled, nodes_beyond_testbed
from netnoise.sim.topology import SpecError, check_spec
from netnoise.studies.network_noise.netgauge import size_problems


def _netgauge_problems(bench: dict[str, Any]) -> list[str]:
    if not bench.get("enabled", True) or not bench.get("netgauge", {}).get("source"):
        return []
    problems = size_problems(bench.get("nodes", 8), bench.get("ratios", []))
    return [
        f"network_noise.benchmark.ratios: {p} (network_noise.benchmark.netgauge is set; "
        "change the ratios or nodes, or unset netgauge.source)"
        for p in problems
    ]


def _topology_problems(study: dict[str, Any]) -> list[str]:
    """Every simulated topology, read by the simulator's own parser: possible, and
    within the size it builds."""
    specs = [(f"network_noise.fat_trees.{i}", s) for i, s in enumerate(study["fat_trees"])]
    specs += [(f"network_noise.{key}", study[key]) for key in ("torus_2d", "torus_3d")]
    specs += [(f"network_noise.torus_sizes_2d.{i}", f"torus:{k}x{k}")
              for i, k in enumerate(study["torus_sizes_2d"])]  # fmt: skip
    specs += [(f"network_noise.torus_sizes_3d.{i}", f"torus:{k}x{k}x{k}")
              for i, k in enumerate(study["torus_sizes_3d"])]  # fmt: skip
    problems = []
    for key, spec in specs:
        try:
            check_spec(spec)
        except SpecError as err:
            problems.append(f"{key}: {err}")
    return problems


def problems(config: dict[str, Any]) -> list[str]:
    study = enabled(config, "network_noise")
    if not study:
        return []
    found = _topology_problems(study)
    bench = study["benchmark"]
    if not bench["enabled"]:
        return found
    wanted = {
        "network_noise.benchmark.nodes": [bench["nodes"]],
        "network_noise.benchmark.allocations": bench["allocations"],
    }
    return found + _netgauge_problems(bench) + nodes_beyond_testbed(config, wanted)
