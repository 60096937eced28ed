"""The ``characterise`` config section, typed (netnoise.settings)."""

from __future__ import annotations

from dataclasses import dataclass

from netnoise.settings import StudyCpu, StudySection, StudyTestbed


@dataclass(frozen=True)
class CharacteriseSettings(StudySection):
    KEY = "characterise"
    enabled: bool
    nodes: int
    seed: int
    congestors: list[str]
    canary_fraction: float
    rounds: int
    rings: int
    latency_iterations: int
    bandwidth_iterations: int
    allreduce_iterations: int
    bandwidth_bytes: int
    congestor_bytes: int
    warmup: int
    max_seconds: float
    cpu: StudyCpu
    testbed: StudyTestbed
