"""The ``network_noise`` config section, typed (netnoise.settings)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from netnoise.settings import PlatformSettings, Section, StudyCpu, StudySection, kept


@dataclass(frozen=True)
class BenchmarkTestbed(Section):
    nodes: int | None
    racks: int
    nic_mbit: float | None
    backbone_mbit: float
    queue_bytes: int | None
    mtu_bytes: int | None
    backbone_arbitration: str | None
    tcp_rto_min_ms: float | None


@dataclass(frozen=True)
class Netgauge(Section):
    source: str
    configure_args: list[str]
    tests: int


@dataclass(frozen=True)
class Benchmark(Section):
    enabled: bool
    cpu: StudyCpu
    testbed: BenchmarkTestbed
    cpu_control: bool
    unshared_control: bool
    cpu_load: float
    nodes: int
    ratios: list[float]
    application_ranks: int | None
    collectives: list[str]
    allocations: list[int]
    size: int
    perturb_size: int
    splits: int
    allocation_splits: int | None
    reps: int
    phase_warmup: int
    netgauge: Netgauge


@dataclass(frozen=True)
class NetworkNoiseSettings(StudySection):
    KEY = "network_noise"
    enabled: bool
    runs: int
    seed: int
    collective: str
    fat_trees: list[str]
    torus_2d: str
    torus_3d: str
    ratios: list[float]
    torus_sizes_2d: list[int]
    torus_sizes_3d: list[int]
    fabrics: list[str]
    benchmark: Benchmark

    def overlay(self, platform: PlatformSettings, **choices: Any) -> dict[str, dict[str, Any]]:
        """The noise benchmark's layout and CPU limits: only it runs on the platform."""
        if choices:
            raise TypeError(f"network_noise runs choose nothing: {', '.join(choices)}")
        return {"testbed": kept(self.benchmark.testbed), "cpu": kept(self.benchmark.cpu)}
