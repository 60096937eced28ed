"""Dependency-based congestion simulator of network noise (seed 001, Sec. 3-5).

Topologies (:mod:`~netnoise.sim.topology`), static routing
(:mod:`~netnoise.sim.routing`), collective patterns and perturbation
(:mod:`~netnoise.sim.patterns`), the congestion model (:mod:`~netnoise.sim.congestion`)
and the ``topology describe`` / ``simulate`` commands (:mod:`~netnoise.studies.network_noise.cli`).
"""

from netnoise.sim.congestion import layout, simulate, simulate_levels, summarize
from netnoise.sim.topology import (
    XGFT,
    Fabric,
    SpecError,
    Topology,
    Torus,
    describe,
    parse_spec,
    read_ibnetdiscover,
)

__all__ = [
    "XGFT",
    "Fabric",
    "SpecError",
    "Topology",
    "Torus",
    "describe",
    "layout",
    "parse_spec",
    "read_ibnetdiscover",
    "simulate",
    "simulate_levels",
    "summarize",
]
