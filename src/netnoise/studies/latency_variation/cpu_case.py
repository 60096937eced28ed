"""The study's heaviest co-run for ``netnoise bench cpu``: its ping-pong probe
beside loadgen at the top level of load."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from netnoise.platform.testbed import TestbedPlatform
from netnoise.run import Job
from netnoise.settings import Settings
from netnoise.studies.latency_variation import plan
from netnoise.studies.latency_variation.settings import LatencyVariationSettings
from netnoise.study import CpuCase, node_names


def layout(settings: Settings) -> dict[str, Any]:
    return {"nodes": max(settings.study(LatencyVariationSettings).nodes, 2)}


def probe_beside_loadgen(
    bin_dir: Path, out: Path, settings: Settings, platform: TestbedPlatform
) -> tuple[Job, list[Job]]:
    study = settings.study(LatencyVariationSettings)
    nodes = node_names(platform)[: study.nodes]
    probe = [str(bin_dir / "pingpong"), *map(str, plan.probe_args(study, "pingpong"))]
    level = max(study.characterize.levels)
    load = [str(bin_dir / "loadgen")]
    load += map(str, plan.loadgen_args(study, level, platform))
    measured = Job("pingpong", probe, 2, out / "measured.csv", nodes[:2])
    return measured, [Job("loadgen", load, len(nodes), out / "background.csv", nodes)]


def round_trips(data: pd.DataFrame) -> pd.Series:
    return data["rtt_us"] / 1e6


CASES = (
    CpuCase("probe beside loadgen at the top load", layout, probe_beside_loadgen, round_trips),
)
