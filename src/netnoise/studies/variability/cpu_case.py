"""The study's heaviest co-run for ``netnoise bench cpu``: its largest job beside
the maximal campaign's background."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from netnoise.platform.testbed import TestbedPlatform
from netnoise.run import Job
from netnoise.settings import Settings, kept
from netnoise.studies.variability.campaign import BackgroundSettings, draw, racks_of_testbed
from netnoise.studies.variability.settings import VariabilitySettings
from netnoise.study import CpuCase, application_argv, application_runtimes


def layout(settings: Settings) -> dict[str, Any]:
    return kept(settings.study(VariabilitySettings).testbed)


def maximal_run(
    bin_dir: Path, out: Path, settings: Settings, platform: TestbedPlatform
) -> tuple[Job, list[Job]]:
    """The study's maximal campaign (loadgen at its maximal_load on a free partner
    of every job node, pairs across the racks) beside its largest job, on the
    study's own layout."""
    study = settings.study(VariabilitySettings)
    spec = platform.testbed.spec
    nodes = max(study.node_counts)
    background = BackgroundSettings.from_config(study.background.as_config())
    maximal = draw(racks_of_testbed(spec), nodes, "maximal", study.seed, background)
    timed = ["--iterations", "10", "--warmup", "1"]
    measured = Job(
        "fft_overlap",
        application_argv(bin_dir, "fft_overlap", settings, timed),
        nodes,
        out / "measured.csv",
        list(maximal.job_nodes),
    )
    load = [str(bin_dir / "loadgen"), *maximal.background_args(background, spec.nic_mbit)]
    loaded = list(maximal.loaded_nodes)
    return measured, [Job("loadgen", load, len(loaded), out / "background.csv", loaded)]


CASES = (
    CpuCase("application beside the maximal background", layout, maximal_run, application_runtimes),
)
