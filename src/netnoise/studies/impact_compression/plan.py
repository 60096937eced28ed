"""What seed 000's workflow runs: its points, the benchmarks' arguments, the raw
files the tidy step reads and the study's final files.

Every measurement co-runs on the same ``nodes`` (one rank per node):

- ImpactB on the idle switch, beside each application and beside each
  CompressionB configuration (the impact experiments, Sec. III-A);
- each application alone, beside each configuration (the compression
  experiments, Sec. III-B) and beside each application (every ordered pair,
  itself included: the pairings of Sec. V);
- with ``cpu_control``, each application beside its CPU-only control, after
  its pairings (:func:`cpu_control_load`).

``study`` is the ``impact_compression`` section of the config; ``raw``,
``figures`` and ``tables`` are the study's result folders.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from netnoise.platform import WALL, Platform
from netnoise.report import ABOUT, HEADLINE_CLAIMS, Result
from netnoise.settings import Settings
from netnoise.studies.impact_compression.analysis import (
    ALONE,
    APPLICATION,
    COMPRESSION,
    CPU_CONTROL,
    config_id,
)
from netnoise.studies.impact_compression.settings import (
    CompressionGrid,
    ImpactCompressionSettings,
)
from netnoise.study import StudyPaths

FIGURE_NAMES = (
    "fig3_impact_latency",
    "fig6_compression_utilization",
    "fig7_degradation",
    "fig8_prediction_errors",
    "fig9_error_summary",
    "table1_slowdowns",
)
TABLE_NAMES = (
    "utilization",
    "degradation",
    "slowdowns",
    "predictions",
    "error_summary",
    "table1",
    "relativity",
    "claims",
)

#: The report's results in the paper's order (netnoise.report).
REPORT_RESULTS = (
    HEADLINE_CLAIMS,
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
    Result("error_summary", "Fig. 8–9 · every method and baseline scored, beside the paper"),
    Result("utilization", "Fig. 3, 6 · ImpactB latency and utilisation with their intervals"),
    Result("relativity", "Sec. I · performance relativity: partners ordered by utilisation"),
    Result("claims", "The study's claims, each with its target and the paper's value"),
)


def sleep_cycles(grid: CompressionGrid, messages: int, load: float, link_mbit: float) -> int:
    """B (cycles) at which M messages of the grid's size per partner offer ``load`` of
    a ``link_mbit`` link: every partner's M messages, then B cycles of sleep."""
    seconds = messages * grid.size * 8 / (load * link_mbit * 1e6)
    return round(seconds * grid.cycle_hz)


def compression_link_mbit(study: ImpactCompressionSettings, platform: Platform) -> float | None:
    """The link rate a CompressionB grid swept by offered load is a share of: the
    grid's ``link_mbit``, else the rate the platform shapes its links to; None for
    a grid of B values (``offered_loads`` unset) or a platform that does not know
    its rate."""
    grid = study.compression
    if grid.offered_loads is None:
        return None
    rate = grid.link_mbit or platform.nic_mbit
    return float(rate) if rate is not None else None


def compression_configs(
    study: ImpactCompressionSettings, link_mbit: float | None = None
) -> dict[str, tuple[int, int, float]]:
    """Configuration id -> (P partners, M messages, B sleep cycles) of every point of
    the CompressionB grid: the configured B values, or those that make every node
    offer each of ``offered_loads`` (shares of ``link_mbit``, the grid's own or the
    given one, e.g. the testbed's NIC rate)."""
    grid = study.compression
    if grid.offered_loads is None:
        return {
            config_id(p, m, b): (p, m, b)
            for p in grid.partners
            for m in grid.messages
            for b in grid.sleep_cycles
        }
    rate = grid.link_mbit or link_mbit
    if rate is None:
        raise ValueError(
            "impact_compression.compression.link_mbit: give the link rate the offered "
            "loads are shares of (only the testbed knows its own)"
        )
    configs = {}
    for p in grid.partners:
        for m in grid.messages:
            for load in grid.offered_loads:
                b = sleep_cycles(grid, m, load, rate)
                configs[config_id(p, m, b)] = (p, m, b)
    return configs


def pairings(study: ImpactCompressionSettings) -> list[tuple[str, str]]:
    """(application, partner) of every ordered pair of applications, itself included."""
    apps = study.applications
    return [(a, b) for a in apps for b in apps]


def measured_runs(study: ImpactCompressionSettings) -> tuple[int, list[object]]:
    """A measured application launch's run count and the arguments of its
    stopping rule: exactly ``runs``, or with ``precision.ci_width`` at least
    ``runs`` and at most ``precision.max_runs``, stopping once precise."""
    precision = study.precision
    if precision.ci_width is None:
        return study.runs, []
    return precision.max_runs, ["--ci-width", precision.ci_width, "--min-iterations", study.runs]


def application_args(study: ImpactCompressionSettings, app: str) -> list[object]:
    """What the study adds to application ``app``'s own arguments in every one of
    its jobs (measured, background, beside ImpactB): the proxies'
    ``--compute-jitter`` (none when phases stay exact), then the study's own
    arguments of ``app`` (``application_args``), which win over the
    application's."""
    jitter = study.compute_jitter
    own = study.application_args.get(app, [])
    return [*(["--compute-jitter", jitter] if jitter else []), *own]


def impactb_args(study: ImpactCompressionSettings, samples: int = 0) -> list[object]:
    """ImpactB's arguments, probing every node pair; samples=0 loops until the co-run ends."""
    args = ["--size", study.impact_size, "--sleep-us", study.impact_sleep_us]
    return [*args, "--iterations", samples, "--warmup", 2]


def compressionb_args(
    study: ImpactCompressionSettings, config: str, link_mbit: float | None = None
) -> list[object]:
    """CompressionB's arguments in configuration ``config``, looping until the co-run ends."""
    configs = compression_configs(study, link_mbit)
    if config not in configs:
        raise ValueError(f"{config!r} is not in the CompressionB grid: {', '.join(configs)}")
    partners, messages, cycles = configs[config]
    grid = study.compression
    args = ["--partners", partners, "--messages", messages, "--sleep-cycles", cycles]
    return [*args, "--cycle-hz", grid.cycle_hz, "--size", grid.size, "--iterations", 0]


def impact_files(
    raw: str, study: ImpactCompressionSettings, link_mbit: float | None = None
) -> dict[str, str]:
    """Component -> its ImpactB result file: the idle switch, each application, each
    CompressionB configuration."""
    files = {"idle": f"{raw}/impact/idle.csv"}
    files |= {app: f"{raw}/impact/app_{app}.csv" for app in study.applications}
    configs = compression_configs(study, link_mbit)
    files |= {cb: f"{raw}/impact/compression_{cb}.csv" for cb in configs}
    return files


def runtime_files(
    raw: str,
    study: ImpactCompressionSettings,
    link_mbit: float | None = None,
    cpu_control: bool = False,
) -> dict[tuple[str, str, str], str]:
    """(application, partner kind, partner) -> result file of every measured
    application run: alone, beside each configuration, beside each application
    and, with ``cpu_control``, beside its CPU-only control."""
    apps = study.applications
    files = {(app, ALONE, ""): f"{raw}/runs/alone/{app}.csv" for app in apps}
    files |= {
        (app, COMPRESSION, cb): f"{raw}/runs/compression/{app}/{cb}.csv"
        for app in apps
        for cb in compression_configs(study, link_mbit)
    }
    files |= {
        (app, APPLICATION, partner): f"{raw}/runs/pairing/{app}/{partner}.csv"
        for app, partner in pairings(study)
    }
    if cpu_control:
        files |= {(app, CPU_CONTROL, "cpuhog"): f"{raw}/runs/cpu_control/{app}.csv" for app in apps}
    return files


def cpu_control_planned(study: ImpactCompressionSettings, platform: Platform) -> bool:
    """Whether the CPU-only control is measured: asked for, on a wall clock, where
    each job runs on cores of its own, its own CPU time recorded
    (cpu_control_load). Elsewhere the magnitude claim says it has no control: on
    localhost the jobs share cores unrecorded, on a cluster no node, and in
    simulated time no host core enters a result."""
    return study.cpu_control and platform.clock == WALL and platform.isolates_cores


def cpu_control_load(pairing_records: Sequence[Mapping[str, Any]], ranks: int) -> float:
    """The share of a core each of ``ranks`` cpuhog ranks keeps busy in an
    application's CPU-only control: as much as the busiest of its partners took in
    its pairings (the background job's own CPU time in each pairing's CPU record),
    so the control costs the cores at least what any partner did, and sends nothing."""

    def partner_busy_cores(record: Mapping[str, Any]) -> float:
        partners = [
            job["busy_cores"]
            for job in (record.get("cpu") or {}).get("jobs", [])
            if job.get("role") == "background"
        ]
        if not partners:
            raise ValueError(
                "impact_compression.cpu_control: a pairing's CPU record has no background "
                "job's CPU time; the control needs each job on cores of its own "
                "(platform.testbed.cores: per_job)"
            )
        return max(partners)

    if not pairing_records:
        raise ValueError("impact_compression.cpu_control: the application has no pairing to match")
    busy = [partner_busy_cores(record) for record in pairing_records]
    return min(max(busy) / ranks, 1.0)


def targets(figures: str, tables: str) -> list[str]:
    """The study's final files: every figure as SVG and PNG, every table."""
    return [
        *(f"{figures}/{name}.{ext}" for name in FIGURE_NAMES for ext in ("svg", "png")),
        *(f"{tables}/{name}.csv" for name in TABLE_NAMES),
    ]


def final_files(settings: Settings, paths: StudyPaths) -> list[str]:
    """The study's final files in this run (its ``STUDY.plan``)."""
    return targets(paths.figures, paths.tables)
