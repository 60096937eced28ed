"""What seed 000's workflow runs: its points, the benchmarks' arguments, the raw
files the tidy step reads and the study's final files.

Every measurement co-runs on the same ``nodes`` (one rank per node):

- ImpactB on the idle switch, beside each application and beside each
  CompressionB configuration (the impact experiments, Sec. III-A);
- each application alone, beside each configuration (the compression
  experiments, Sec. III-B) and beside each application (every ordered pair,
  itself included: the pairings of Sec. V).

``study`` is the ``impact_compression`` section of the config; ``raw``,
``figures`` and ``tables`` are the study's result folders.
"""

from __future__ import annotations

from typing import Any

from netnoise.report import ABOUT, Result
from netnoise.studies.impact_compression.analysis import (
    ALONE,
    APPLICATION,
    COMPRESSION,
    config_id,
)

FIGURE_NAMES = (
    "fig3_impact_latency",
    "fig6_compression_utilization",
    "fig7_degradation",
    "fig8_prediction_errors",
    "fig9_error_summary",
    "table1_slowdowns",
)
TABLE_NAMES = ("utilization", "degradation", "slowdowns", "predictions", "error_summary", "table1")

#: The report's results in the paper's order (netnoise.report).
REPORT_RESULTS = (
    ABOUT,
    Result(
        "fig3_impact_latency",
        "Fig. 3 · ImpactB latency on the idle switch and beside each application",
    ),
    Result(
        "fig6_compression_utilization",
        "Fig. 6 · switch utilisation of each CompressionB configuration",
    ),
    Result("fig7_degradation", "Fig. 7 · degradation of each application against utilisation"),
    Result("table1_slowdowns", "Table I · pairwise slowdowns beside the paper's (figure)"),
    Result("table1", "Table I · pairwise slowdowns, % (table)"),
    Result("fig8_prediction_errors", "Fig. 8 · prediction error of every pairing, per method"),
    Result("fig9_error_summary", "Fig. 9 · quartiles of each method's prediction error"),
)


def compression_configs(study: dict[str, Any]) -> dict[str, tuple[int, int, float]]:
    """Configuration id -> (P partners, M messages, B sleep cycles) of every point of
    the CompressionB grid."""
    grid = study["compression"]
    return {
        config_id(p, m, b): (p, m, b)
        for p in grid["partners"]
        for m in grid["messages"]
        for b in grid["sleep_cycles"]
    }


def pairings(study: dict[str, Any]) -> list[tuple[str, str]]:
    """(application, partner) of every ordered pair of applications, itself included."""
    apps = study["applications"]
    return [(a, b) for a in apps for b in apps]


def impactb_args(study: dict[str, Any], samples: int = 0) -> list[Any]:
    """ImpactB's arguments, probing every node pair; samples=0 loops until the co-run ends."""
    args = ["--size", study["impact_size"], "--sleep-us", study["impact_sleep_us"]]
    return [*args, "--iterations", samples, "--warmup", 2]


def compressionb_args(study: dict[str, Any], config: str) -> list[Any]:
    """CompressionB's arguments in configuration ``config``, looping until the co-run ends."""
    configs = compression_configs(study)
    if config not in configs:
        raise ValueError(f"{config!r} is not in the CompressionB grid: {', '.join(configs)}")
    partners, messages, cycles = configs[config]
    grid = study["compression"]
    args = ["--partners", partners, "--messages", messages, "--sleep-cycles", cycles]
    return [*args, "--cycle-hz", grid["cycle_hz"], "--size", grid["size"], "--iterations", 0]


def impact_files(raw: str, study: dict[str, Any]) -> dict[str, str]:
    """Component -> its ImpactB result file: the idle switch, each application, each
    CompressionB configuration."""
    files = {"idle": f"{raw}/impact/idle.csv"}
    files |= {app: f"{raw}/impact/app_{app}.csv" for app in study["applications"]}
    files |= {cb: f"{raw}/impact/compression_{cb}.csv" for cb in compression_configs(study)}
    return files


def runtime_files(raw: str, study: dict[str, Any]) -> dict[tuple[str, str, str], str]:
    """(application, partner kind, partner) -> result file of every measured
    application run: alone, beside each configuration, beside each application."""
    apps = study["applications"]
    files = {(app, ALONE, ""): f"{raw}/runs/alone/{app}.csv" for app in apps}
    files |= {
        (app, COMPRESSION, cb): f"{raw}/runs/compression/{app}/{cb}.csv"
        for app in apps
        for cb in compression_configs(study)
    }
    files |= {
        (app, APPLICATION, partner): f"{raw}/runs/pairing/{app}/{partner}.csv"
        for app, partner in pairings(study)
    }
    return files


def targets(figures: str, tables: str) -> list[str]:
    """The study's final files: every figure as SVG and PNG, every table."""
    return [
        *(f"{figures}/{name}.{ext}" for name in FIGURE_NAMES for ext in ("svg", "png")),
        *(f"{tables}/{name}.csv" for name in TABLE_NAMES),
    ]
