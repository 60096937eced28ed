"""Checks of the network_noise config section that its schema cannot express."""

from __future__ import annotations

from typing import Any

from netnoise.config import enabled, nodes_beyond_testbed
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


def problems(config: dict[str, Any]) -> list[str]:
    bench = enabled(config, "network_noise").get("benchmark", {})
    if not bench.get("enabled", True):
        return []
    wanted = {
        "network_noise.benchmark.nodes": [bench["nodes"]] if "nodes" in bench else [],
        "network_noise.benchmark.allocations": bench.get("allocations", []),
    }
    return _netgauge_problems(bench) + nodes_beyond_testbed(config, wanted)
