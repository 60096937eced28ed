"""Seed 003 in the workflow: which jobs it runs and which files it delivers.

Pure functions of the study's config section (``asymmetric``) and its result
folders; ``workflow/rules/asymmetric.smk`` calls them to plan its rules.
"""

from __future__ import annotations

import os
from typing import Any

import pandas as pd

from netnoise.platform import Platform, from_settings
from netnoise.report import ABOUT, HEADLINE_CLAIMS, Result
from netnoise.settings import Settings
from netnoise.studies.asymmetric.patterns import FAMILIES, trial_count
from netnoise.studies.asymmetric.settings import AsymmetricSettings
from netnoise.study import StudyPaths

TABLE_NAMES = ("table2", "within10", "properties", "alltoallv")
#: The table and figure of the ns-3 sweeps (asymmetric.regime).
REGIME_TABLE, REGIME_FIGURE = "regime", "regime_asymmetry"
EXTENSIONS = ("svg", "png")
#: The report's results in the paper's order (netnoise.report); one Fig. 6 per
#: congestion control the schema allows.
REPORT_RESULTS = (
    HEADLINE_CLAIMS,
    ABOUT,
    Result("testbed_validation", "The two-rack testbed: TCP goodput per link"),
    Result("fig4_fairness", "Fig. 4 · unidirectional fairness on a NIC and the backbone"),
    Result("fig4a_nic_bidirectional", "Fig. 4a · links into and out of one NIC at once"),
    Result("fig4b_backbone_bidirectional", "Fig. 4b · links into and out of a rack at once"),
    Result("properties", "Sec. 5 · link shares of every property experiment (table)"),
    Result(
        "regime",
        "Where the asymmetric property lives · ns-3 sweeps (table)",
        {
            "queue_bdp": "BDPs",
            "queue_windows": "windows",
            "backbone_ratio": "× NIC",
            "loaded_rtts_at_least": "round trips",
        },
    ),
    Result("regime_asymmetry", "Where the asymmetric property lives · ns-3 sweeps (figure)"),
    Result("table2", "Table II · prediction errors of the random patterns"),
    Result("within10", "Sec. 7.2 · share of links predicted within 10 %"),
    *(
        Result(
            f"fig6_errors_{cc}",
            f"Fig. 6 · prediction errors of the random patterns, {cc.upper()}"
            if cc != "default"
            else "Fig. 6 · prediction errors of the random patterns, the site's TCP",
        )
        for cc in ("cubic", "bbr", "reno", "default")
    ),
    Result("alltoallv", "Sec. 7.3 · Alltoallv time, measured and predicted (table)"),
    Result("fig8_alltoallv", "Fig. 8 · Alltoallv time, measured and predicted (figure)"),
)


def figure_names(study: AsymmetricSettings) -> list[str]:
    """Figures of the study: Fig. 4 (fairness, then its bidirectional panels), one
    Fig. 6 per congestion control of the random patterns, and Fig. 8."""
    return [
        "fig4_fairness",
        "fig4a_nic_bidirectional",
        "fig4b_backbone_bidirectional",
        *[f"fig6_errors_{cc}" for cc in study.random.congestion_controls],
        "fig8_alltoallv",
    ]


def caption(figure: str) -> str:
    """The caption file (without .rst) of a figure: one serves Fig. 6 of every
    congestion control."""
    return "fig6_errors" if figure.startswith("fig6_errors_") else figure


def congestions(study: AsymmetricSettings, family: str) -> list[str]:
    """Congestion controls a pattern family runs with."""
    if family == "random":
        return study.random.congestion_controls
    return study.congestion_controls


def results(raw: str, study: AsymmetricSettings, family: str, suffix: str = "") -> list[str]:
    """The p2p_concurrent result of every trial of a family under ``raw`` (the study's
    raw folder), ``{congestion}`` left open; ``suffix`` names a sidecar instead."""
    return [
        f"{raw}/mpi/{family}/{{congestion}}/trial{i:03d}.csv{suffix}"
        for i in range(trial_count(family, study.as_config()))
    ]


def runs(raw: str, study: AsymmetricSettings) -> list[tuple[str, str, list[str]]]:
    """(family, congestion control, result files) of every MPI-level job."""
    return [
        (family, cc, [path.format(congestion=cc) for path in results(raw, study, family)])
        for family in FAMILIES
        for cc in congestions(study, family)
    ]


def run_config(study: AsymmetricSettings, congestion: str) -> dict[str, Any]:
    """What a measurement's provenance records of the config: the section and the
    congestion control of the run."""
    return {"asymmetric": study.as_config(), "congestion": congestion}


def skipped(platform: Platform, study: AsymmetricSettings) -> str | None:
    """Why the study does not run on ``platform`` (None: it runs); in ns-3 it runs
    on every platform."""
    if platform.places_named_nodes or study.in_ns3:
        return None
    return (
        "asymmetric (seed 003) skipped: it needs two racks, its own testbed's or a "
        f"Slurm cluster's, so platform.kind testbed or slurm, not {platform.kind} (or "
        "asymmetric.network: ns3, simulated)"
    )


def on_testbed(study: AsymmetricSettings, platform: Platform) -> bool:
    """Whether the study's trials run on its own emulated testbed, whose links the
    platform shapes (it also checks them and measures the TCP level with iperf3)."""
    return platform.shapes_links and not study.in_ns3


def targets(tables: str, figures: str, study: AsymmetricSettings, platform: Platform) -> list[str]:
    """The study's final files (its figures, tables, the ns-3 sweeps where enabled
    and, on the testbed, the check of its links) under the folders ``tables`` and
    ``figures``; none where it is skipped."""
    if skipped(platform, study):
        return []
    validation = [f"{tables}/testbed_validation.csv"] if on_testbed(study, platform) else []
    regime = (
        [
            f"{tables}/{REGIME_TABLE}.csv",
            *(f"{figures}/{REGIME_FIGURE}.{ext}" for ext in EXTENSIONS),
        ]
        if study.regime.enabled
        else []
    )
    return [
        *(f"{figures}/{name}.{ext}" for name in figure_names(study) for ext in EXTENSIONS),
        *(f"{tables}/{name}.csv" for name in TABLE_NAMES),
        *validation,
        *regime,
    ]


def pattern_nodes(path: str | os.PathLike[str]) -> list[str]:
    """Every node a family's patterns (the file ``path``) use, in order of appearance."""
    links = pd.read_csv(path)
    return list(
        dict.fromkeys(
            node for pair in zip(links["src"], links["dst"], strict=True) for node in pair
        )
    )


def slurm_placement(path: str | os.PathLike[str]) -> str:
    """sbatch words of a Slurm job running the patterns of ``path``: whole nodes, those
    the patterns name (processes are then placed on them one per link end)."""
    return f"--exclusive --nodelist={','.join(pattern_nodes(path))}"


def final_files(settings: Settings, paths: StudyPaths) -> list[str]:
    """The study's final files in this run (its ``STUDY.plan``)."""
    study = settings.study(AsymmetricSettings)
    return targets(paths.tables, paths.figures, study, from_settings(settings.platform))
