"""The study's heaviest co-runs for ``netnoise bench cpu``: two network-heavy
proxies paired, and the heaviest CompressionB beside an application."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from netnoise.platform.testbed import TestbedPlatform
from netnoise.run import Job
from netnoise.settings import Settings, kept
from netnoise.studies.impact_compression.settings import ImpactCompressionSettings
from netnoise.study import CpuCase, application_argv, application_runtimes, node_names


def layout(settings: Settings) -> dict[str, Any]:
    return kept(settings.study(ImpactCompressionSettings).testbed)


def paired_proxies(
    bin_dir: Path, out: Path, settings: Settings, platform: TestbedPlatform
) -> tuple[Job, list[Job]]:
    nodes = node_names(platform)[:4]
    timed = ["--iterations", "10", "--warmup", "1"]
    measured = Job(
        "fft_transpose",
        application_argv(bin_dir, "fft_transpose", settings, timed),
        4,
        out / "measured.csv",
        nodes,
    )
    looping = ["--iterations", "0", "--warmup", "1"]
    background = Job(
        "halo3d", application_argv(bin_dir, "halo3d", settings, looping), 4,
        out / "background.csv", nodes,
    )  # fmt: skip
    return measured, [background]


def compression_beside_app(
    bin_dir: Path, out: Path, settings: Settings, platform: TestbedPlatform
) -> tuple[Job, list[Job]]:
    nodes = node_names(platform)[:4]
    grid = settings.study(ImpactCompressionSettings).compression
    measured = Job(
        "cg_solver",
        application_argv(bin_dir, "cg_solver", settings, ["--iterations", "10", "--warmup", "1"]),
        4,
        out / "measured.csv",
        nodes,
    )
    compression = [
        str(bin_dir / "compressionb"),
        *("--partners", str(max(grid.partners)), "--messages", str(max(grid.messages))),
        *("--sleep-cycles", str(min(grid.sleep_cycles)), "--cycle-hz", str(grid.cycle_hz)),
        *("--size", str(grid.size), "--iterations", "0"),
    ]
    return measured, [Job("compressionb", compression, 4, out / "background.csv", nodes)]


CASES = (
    CpuCase("two network-heavy proxies paired", layout, paired_proxies, application_runtimes),
    CpuCase(
        "heaviest CompressionB beside cg_solver",
        layout,
        compression_beside_app,
        application_runtimes,
    ),
)
