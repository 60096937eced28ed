"""Study 100's workflow plan (workflow/rules/characterise.smk): one run of the
canaries and congestors per congestor setting, what each run is given, and
the study's final files.

Pure functions of the config section ``characterise`` and of paths, so the
workflow and the tests plan the same jobs.
"""

from __future__ import annotations

import math

from netnoise.platform import Platform, from_settings
from netnoise.report import ABOUT, Result
from netnoise.settings import PlatformSettings, Settings
from netnoise.studies.characterise.cif import APART, FOUR_GROUPS
from netnoise.studies.characterise.settings import CharacteriseSettings
from netnoise.study import StudyPaths

#: The program's role split, as csrc/bench/characterise.c makes it.
CONGESTOR_SHARE = 0.8
TABLES = ("cif", "canaries", "offered_load")
FIGURES = ("fig_cif",)
REPORT_RESULTS = (
    ABOUT,
    Result(
        "cif",
        "CIF · each canary's Congestion Impact Factor, average and 99th percentile",
        {"cif": "×", "cif_ci_low": "×", "cif_ci_high": "×"},
    ),
    Result("fig_cif", "CIF per canary and congestor setting, with its interval over rounds"),
    Result("canaries", "Each canary alone and beside the congestors, per round"),
    Result("offered_load", "What each congestor put on the network, per rank"),
)


def run_nodes(platform: PlatformSettings, congestor: str, count: int) -> list[str] | None:
    """The nodes of one congestor setting's run, in rank order, on a platform
    whose jobs name their nodes (None elsewhere). The canaries take the nodes
    the shuffle gives them, from every rack in turn, so that their traffic and
    the congestors' cross the backbone; apart, they take the first nodes, which
    share the first rack."""
    if not from_settings(platform).names_nodes:
        return None
    if congestor == APART:
        return from_settings(platform).node_names(count)
    return platform.testbed.rack_interleaved_nodes(count)


def split(nodes: int, canary_fraction: float) -> tuple[int, int]:
    """Canary and congestor nodes of an allocation (GPCNeT: the congestors'
    share rounded down, the rest canaries)."""
    congestors = math.floor((1 - canary_fraction) * nodes + 1e-9)
    return nodes - congestors, congestors


def skipped(platform: Platform) -> str | None:
    """Why the study does not run on ``platform`` (None: it runs)."""
    if platform.places_named_nodes:
        return None
    return (
        f"characterise skipped: its canaries and congestors need nodes of their own, "
        f"which platform {platform.kind!r} has not; use platform.kind testbed, slurm or simgrid"
    )


def program_args(study: CharacteriseSettings, congestor: str) -> list[str]:
    """The arguments of ``characterise`` for one congestor setting."""
    placement = ["--canaries-first"] if congestor == APART else []
    return [
        "--congestor",
        FOUR_GROUPS if congestor == APART else congestor,
        *placement,
        "--canary-fraction",
        f"{study.canary_fraction:g}",
        "--rounds",
        str(study.rounds),
        "--rings",
        str(study.rings),
        "--latency-iterations",
        str(study.latency_iterations),
        "--bandwidth-iterations",
        str(study.bandwidth_iterations),
        "--allreduce-iterations",
        str(study.allreduce_iterations),
        "--bandwidth-size",
        str(study.bandwidth_bytes),
        "--congestor-size",
        str(study.congestor_bytes),
        "--warmup",
        str(study.warmup),
        "--max-seconds",
        f"{study.max_seconds:g}",
        "--seed",
        str(study.seed),
    ]


def raw_result(raw: str, congestor: str) -> str:
    """The raw result of the run under ``congestor``."""
    return f"{raw}/{congestor}.csv"


def targets(platform: Platform, paths: StudyPaths) -> list[str]:
    """The study's final files on ``platform`` (none where it is skipped)."""
    if skipped(platform):
        return []
    return [
        *(f"{paths.figures}/{name}.{ext}" for name in FIGURES for ext in ("svg", "png")),
        *(f"{paths.tables}/{name}.csv" for name in TABLES),
    ]


def final_files(settings: Settings, paths: StudyPaths) -> list[str]:
    """The study's final files in this run (its ``STUDY.plan``), on the platform
    its runs see."""
    return targets(from_settings(settings.effective(settings.study(CharacteriseSettings))), paths)
