"""The ``asymmetric`` config section, typed (netnoise.settings)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from netnoise.platform import from_settings
from netnoise.settings import PlatformSettings, Section, StudyCpu, StudySection, kept

#: Keys of asymmetric.testbed that replace those of platform.testbed.
TESTBED_KEYS = ("prefix", "nodes", "racks", "nic_mbit", "backbone_mbit", "queue_bytes")
TESTBED_KEYS += ("burst_bytes", "btl_tcp_links", "socket_buffer_bytes")


@dataclass(frozen=True)
class Ns3Tree(Section):
    nodes: int
    racks: int
    nic_mbit: float
    backbone_mbit: float
    delay_us: float
    queue_disc: str
    queue: str
    segment_bytes: int
    min_rto_ms: float
    socket_buffer_bytes: int | None
    jitter_us: float
    seed: int


@dataclass(frozen=True)
class Regime(Section):
    enabled: bool
    congestion_controls: list[str]
    queues: list[str]
    socket_buffer_bytes: list[int | None]
    message_mb: list[float]
    backbone_ratios: list[float]
    nic_degree: list[int]
    backbone_degree: list[int]
    max_iterations: int
    ci_width: float


@dataclass(frozen=True)
class Cluster(Section):
    racks: list[list[str]] | None
    nic_mbit: float | None
    backbone_mbit: float | None


@dataclass(frozen=True)
class StudyTestbed(Section):
    prefix: str | None
    nodes: int
    racks: int
    nic_mbit: float
    backbone_mbit: float
    queue_bytes: int
    socket_buffer_bytes: int | None
    burst_bytes: int
    btl_tcp_links: int


@dataclass(frozen=True)
class Iterations(Section):
    min: int
    max: int
    ci_width: float


@dataclass(frozen=True)
class Properties(Section):
    message_mb: float
    nic_links: list[int]
    backbone_links: list[int]
    nic_degrees: list[list[int]]
    backbone_degrees: list[list[int]]
    iperf_seconds: float


@dataclass(frozen=True)
class RandomPatterns(Section):
    congestion_controls: list[str]
    nodes: list[int]
    d: list[int]
    patterns: int
    message_mb: list[float]
    seed: int


@dataclass(frozen=True)
class AsymmetricSettings(StudySection):
    KEY = "asymmetric"
    enabled: bool
    network: str
    ns3: Ns3Tree
    regime: Regime
    slurm: Cluster
    testbed: StudyTestbed
    cpu: StudyCpu
    congestion_controls: list[str]
    iterations: Iterations
    properties: Properties
    random: RandomPatterns

    @property
    def in_ns3(self) -> bool:
        """Whether the trials run in ns-3 (``network: ns3``) rather than on the
        platform's own nodes."""
        return self.network == "ns3"

    def prefix(self, platform: PlatformSettings) -> str:
        """The study testbed's prefix: its own, or the main testbed's with ``r`` (racks)."""
        return self.testbed.prefix or f"{platform.testbed.prefix}r"

    def overlay(
        self, platform: PlatformSettings, congestion: str | None = None
    ) -> dict[str, dict[str, Any]]:
        """The study's CPU limits and a testbed of its own: platform.testbed with the
        keys of asymmetric.testbed replaced and its own prefix; on a cluster, whose
        layout is its own, nothing of the layout. ``congestion``: the TCP congestion
        control of one run."""
        chosen = {"tcp_congestion": congestion} if congestion is not None else {}
        if from_settings(platform).discovers_layout:
            return {"cpu": kept(self.cpu), "slurm": chosen}
        testbed = {key: getattr(self.testbed, key) for key in TESTBED_KEYS}
        return {
            "cpu": kept(self.cpu),
            "testbed": {**testbed, "prefix": self.prefix(platform), **chosen},
        }
