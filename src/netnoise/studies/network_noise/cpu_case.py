"""The study's heaviest co-run for ``netnoise bench cpu``: the noise benchmark
at ratio 0.5 on its own two-rack layout, its control the CPU perturbation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from netnoise.platform.testbed import TestbedPlatform
from netnoise.run import Job
from netnoise.settings import Settings, kept
from netnoise.studies.network_noise.settings import NetworkNoiseSettings
from netnoise.study import CpuCase


def layout(settings: Settings) -> dict[str, Any]:
    return kept(settings.study(NetworkNoiseSettings).benchmark.testbed)


def noise_half(
    bin_dir: Path,
    out: Path,
    settings: Settings,
    platform: TestbedPlatform,
    perturbation: str = "network",
) -> tuple[Job, list[Job]]:
    """The study's largest allocation on its own layout; its application ranks
    on the measured job's cores, its perturbing ranks on the others."""
    bench = settings.study(NetworkNoiseSettings).benchmark
    argv = [str(bin_dir / "noise"), "--ratio", "0.5", "--collective", "allreduce"]
    argv += ["--splits", "10", "--reps", str(bench.reps)]
    argv += ["--phase-warmup", str(bench.phase_warmup)]
    argv += ["--size", str(bench.size), "--perturb-size", str(bench.perturb_size)]
    argv += ["--perturbation", perturbation, "--cpu-load", str(bench.cpu_load)]
    nodes = platform.settings.testbed.rack_interleaved_nodes(bench.nodes)
    job = Job("noise", argv, bench.nodes, out / "measured.csv", nodes, binds_by_role=True)
    return job, []


def cpu_perturbation(
    bin_dir: Path, out: Path, settings: Settings, platform: TestbedPlatform
) -> tuple[Job, list[Job]]:
    return noise_half(bin_dir, out, settings, platform, "cpu")


def split_times(data: pd.DataFrame) -> pd.Series:
    return data[data["perturbed"] == 1].groupby("split")["time_us"].mean() / 1e6


CASES = (
    CpuCase("noise benchmark at ratio 0.5", layout, noise_half, split_times, cpu_perturbation),
)
