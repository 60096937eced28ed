"""The ``impact_compression`` config section, typed (netnoise.settings)."""

from __future__ import annotations

from dataclasses import dataclass

from netnoise.settings import Section, StudySection, StudySimgrid


@dataclass(frozen=True)
class Precision(Section):
    ci_width: float | None
    max_runs: int


@dataclass(frozen=True)
class StudyTestbed(Section):
    queue_bytes: int | None


@dataclass(frozen=True)
class CompressionGrid(Section):
    partners: list[int]
    messages: list[int]
    sleep_cycles: list[float]
    offered_loads: list[float] | None
    link_mbit: float | None
    cycle_hz: float
    size: int


@dataclass(frozen=True)
class ImpactCompressionSettings(StudySection):
    KEY = "impact_compression"
    enabled: bool
    nodes: int
    applications: list[str]
    runs: int
    precision: Precision
    compute_jitter: float
    application_args: dict[str, list[str]]
    cpu_control: bool
    testbed: StudyTestbed
    simgrid: StudySimgrid
    impact_samples: int
    impact_sleep_us: float
    impact_size: int
    compression: CompressionGrid
