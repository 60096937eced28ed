"""Checks of the network_noise config section that its schema cannot express."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from netnoise.config import enabled, nodes_beyond
from netnoise.inputs import quoted
from netnoise.platform import from_config
from netnoise.settings import Settings
from netnoise.sim.topology import SpecError, check_spec
from netnoise.studies.network_noise.netgauge import size_problems
from netnoise.studies.network_noise.plan import SIZE_SWEEP_RATIO
from netnoise.studies.network_noise.settings import NetworkNoiseSettings
from netnoise.testbed.fabric import frame_problems


def _netgauge_problems(bench: dict[str, Any]) -> list[str]:
    if not bench.get("enabled", True) or not bench.get("netgauge", {}).get("source"):
        return []
    problems = size_problems(bench.get("nodes", 8), bench.get("ratios", []))
    return [
        f"network_noise.benchmark.ratios: {p} (network_noise.benchmark.netgauge is set; "
        "change the ratios or nodes, or unset netgauge.source)"
        for p in problems
    ]


def perturbing_beside(ratio: float, application_ranks: int) -> int:
    """Perturbing ranks the noise benchmark runs beside ``application_ranks`` at
    ``ratio``, rounded as it rounds (half away from zero)."""
    return math.floor(ratio * application_ranks / (1 - ratio) + 0.5)


def _application_problems(bench: dict[str, Any]) -> list[str]:
    """A fixed application communicator must fit the ratio sweep's allocation, and
    so must every ratio's perturbation beside it (Fig. 5's ratio 1/2 too, should it
    reach that allocation), which needs 0 or at least 2 ranks."""
    fixed, nodes = bench.get("application_ranks"), bench["nodes"]
    if not fixed:
        return []
    key = "network_noise.benchmark.application_ranks"
    if fixed > nodes:
        return [f"{key}: {fixed} exceeds network_noise.benchmark.nodes ({nodes})"]
    problems = []
    if bench["netgauge"]["source"]:
        problems.append(
            f"{key}: Netgauge's collvsnoise splits the whole allocation; set it to null "
            "to run network_noise.benchmark.netgauge"
        )
    ratios = set(bench["ratios"]) | ({SIZE_SWEEP_RATIO} if nodes in bench["allocations"] else set())
    for ratio in sorted(ratios):
        perturbing = perturbing_beside(ratio, fixed)
        if perturbing == 1 or fixed + perturbing > nodes:
            problems.append(
                f"{key}: {fixed} ranks at ratio {ratio:g} need {perturbing} perturbing "
                f"rank(s) beside them; allowed are 0 or 2 to {nodes - fixed} "
                f"(network_noise.benchmark.nodes: {nodes})"
            )
    return problems


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
    problems += [
        f"network_noise.fabrics.{i}: {quoted(path)} is not a regular file (an "
        "ibnetdiscover output; a relative path is from the working directory)"
        for i, path in enumerate(study["fabrics"])
        if not Path(path).is_file()
    ]
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
    found += _netgauge_problems(bench) + _application_problems(bench)
    settings = Settings.of(config)
    layout = settings.effective(settings.study(NetworkNoiseSettings)).testbed.as_config()
    found += frame_problems(layout, "network_noise.benchmark.testbed over platform.testbed")
    return found + nodes_beyond(from_config(config["platform"]).max_nodes, wanted)
