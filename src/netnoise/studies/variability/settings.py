"""The ``variability`` config section, typed (netnoise.settings)."""

from __future__ import annotations

from dataclasses import dataclass

from netnoise.settings import Section, StudySection, StudySimgrid


@dataclass(frozen=True)
class StudyTestbed(Section):
    nodes: int | None
    racks: int
    backbone_mbit: float
    queue_bytes: int | None
    mtu_bytes: int | None


@dataclass(frozen=True)
class Cluster(Section):
    background_nodes: int
    link_mbit: float | None
    ports: list[str]


@dataclass(frozen=True)
class Background(Section):
    load: list[float]
    maximal_load: float
    compression_messages: list[int]
    compression_sleep_cycles: list[float]
    cycle_hz: float


@dataclass(frozen=True)
class Grid(Section):
    C: list[float]
    gamma: list[float]
    epsilon: list[float]


@dataclass(frozen=True)
class UseCase(Section):
    applications: list[str]
    nodes: int


@dataclass(frozen=True)
class Model(Section):
    cv: int
    grid: Grid
    trees: int
    repeats: int
    inner_cv: int
    bound_level: float
    added: list[int]
    train_fractions: list[float]
    unseen_application: str
    sparse_application: str
    use_case: UseCase


@dataclass(frozen=True)
class VariabilitySettings(StudySection):
    KEY = "variability"
    enabled: bool
    seed: int
    applications: list[str]
    node_counts: list[int]
    runs: int
    bursty_runs: int
    controlled_runs: int
    runs_per_job: int
    warmup: int
    iterations: int
    counter_interval_s: float
    queue_time: bool
    simgrid: StudySimgrid
    testbed: StudyTestbed
    slurm: Cluster
    background: Background
    model: Model
