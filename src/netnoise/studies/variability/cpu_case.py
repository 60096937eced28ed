"""The study's heaviest co-run for ``netnoise bench cpu`` (registered as the
``netnoise.cpu_cases`` entry point ``variability``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from netnoise.cpubench import Case, application_argv, application_runtimes
from netnoise.platform.testbed import TestbedPlatform
from netnoise.run import Job
from netnoise.studies.variability.campaign import BackgroundSettings, draw, racks_of_testbed


def layout(config: dict[str, Any]) -> dict[str, Any]:
    layout = config["variability"]["testbed"]
    return {k: v for k, v in layout.items() if v is not None}


def maximal_run(
    bin_dir: Path, out: Path, config: dict[str, Any], platform: TestbedPlatform
) -> tuple[Job, list[Job]]:
    """The study's maximal campaign (loadgen at its maximal_load on a free partner
    of every job node, pairs across the racks) beside its largest job, on the
    study's own layout."""
    study = config["variability"]
    spec = platform.testbed.spec
    nodes = max(study["node_counts"])
    settings = BackgroundSettings.from_config(study["background"])
    maximal = draw(racks_of_testbed(spec), nodes, "maximal", study["seed"], settings)
    measured = Job(
        "fft_overlap",
        application_argv(bin_dir, "fft_overlap", config, ["--iterations", "10", "--warmup", "1"]),
        nodes,
        out / "measured.csv",
        list(maximal.job_nodes),
    )
    load = [str(bin_dir / "loadgen"), *maximal.background_args(settings, spec.nic_mbit)]
    loaded = list(maximal.loaded_nodes)
    return measured, [Job("loadgen", load, len(loaded), out / "background.csv", loaded)]


CASE = Case(
    "variability",
    "application beside the maximal background",
    layout,
    maximal_run,
    application_runtimes,
)
