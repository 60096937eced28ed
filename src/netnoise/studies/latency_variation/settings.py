"""The ``latency_variation`` config section, typed (netnoise.settings)."""

from __future__ import annotations

from dataclasses import dataclass

from netnoise.settings import Section, StudySection


@dataclass(frozen=True)
class Characterize(Section):
    levels: list[int]
    link_mbit: float | None
    load_size: int
    duration_s: float
    iterations: int
    gap_us: float
    warmup: int
    from_bundle: str | None


@dataclass(frozen=True)
class Fit(Section):
    probe: str
    scale_fractions: list[float]
    stds_us: list[float]
    mean_from: str
    table_unit: str


@dataclass(frozen=True)
class Injection(Section):
    levels: list[int]
    fixed_mean_levels: list[int]
    injector_level: str
    wait: str
    sleep_margin_us: int
    barrier_nodes: int | None
    applications: list[str]
    application_args: dict[str, list[str]]
    runs: int
    probe_iterations: int
    warmup: int


@dataclass(frozen=True)
class LatencyVariationSettings(StudySection):
    KEY = "latency_variation"
    enabled: bool
    nodes: int
    seed: int
    characterize: Characterize
    fit: Fit
    injection: Injection
