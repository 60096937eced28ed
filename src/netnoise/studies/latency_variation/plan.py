"""What the workflow runs for seed 004: the runs, their arguments and job specs, the targets.

Pure functions of the ``latency_variation`` config section (``lv``) and the
study's result folders, called by ``workflow/rules/latency_variation.smk``.
A job spec is built by the ``job`` function the workflow passes in
(``benchmark_job`` or ``application_job`` of ``workflow/rules/common.smk``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from netnoise.jobs import JobSpec
from netnoise.platform import Platform, from_settings
from netnoise.report import ABOUT, HEADLINE_CLAIMS, LATENCY_UNITS, Result
from netnoise.settings import Settings
from netnoise.studies.latency_variation.names import (
    PROBES,
    VALIDATION_DISTRIBUTIONS,
    VALIDATION_EXPERIMENTS,
    ZERO,
    distribution_names,
    point_name,
)
from netnoise.studies.latency_variation.settings import LatencyVariationSettings
from netnoise.study import StudyPaths

#: Sec. 5: latency under load (Fig. 2, 3) and the idle distribution with its fit (Fig. 4).
CHARACTERIZATION_FIGURES = ("fig2_latency_mean", "fig3_latency_std", "fig4_idle_distribution")
#: Sec. 6 (Fig. 5–12) and Sec. 7 (Fig. 13–16, Table 4) with the injector.
INJECTION_FIGURES = (
    "fig5_packet_mean",
    "fig6_packet_median",
    "fig7_pingpong_mean",
    "fig8_pingpong_median",
    "fig9_barrier_mean",
    "fig10_barrier_median",
    "fig11_runtime_uniform",
    "fig12_runtime_lognorm",
    "fig13_runtime_vs_mean",
    "fig14_runtime_vs_std",
    "fig15_fixed_mean_low",
    "fig16_fixed_mean_high",
    "table4_correlations",
)
#: Fig. 5–6: tcpping's, at the packet level: a simulation has no socket for it.
PACKET_FIGURES = ("fig5_packet_mean", "fig6_packet_median")
#: The report's results in the paper's order (netnoise.report).
REPORT_RESULTS = (
    HEADLINE_CLAIMS,
    ABOUT,
    Result("injector_delay", "Sec. 3.2 · injector validation: intended and achieved delays"),
    Result("injector_delay_summary", "Sec. 3.2 · injector validation per level and distribution"),
    Result(
        "characterization",
        "Sec. 5 · latency under load (the data of Fig. 2–3)",
        LATENCY_UNITS | {"level": "%"},
    ),
    Result("fig2_latency_mean", "Fig. 2 · mean latency against background load"),
    Result("fig3_latency_std", "Fig. 3 · latency standard deviation against background load"),
    Result("fig4_idle_distribution", "Fig. 4 · idle latency distribution and its log-normal fit"),
    Result("fig5_packet_mean", "Fig. 5 · mean packet latency under injection"),
    Result("fig6_packet_median", "Fig. 6 · median packet latency under injection"),
    Result("fig7_pingpong_mean", "Fig. 7 · mean MPI ping-pong latency under injection"),
    Result("fig8_pingpong_median", "Fig. 8 · median MPI ping-pong latency under injection"),
    Result("fig9_barrier_mean", "Fig. 9 · mean barrier time under injection"),
    Result("fig10_barrier_median", "Fig. 10 · median barrier time under injection"),
    Result(
        "validation",
        "Fig. 5–10 · the probes and the barrier under injection (table)",
        {"level": "%"},
    ),
    Result("fig11_runtime_uniform", "Fig. 11 · runtimes under uniform injection"),
    Result("fig12_runtime_lognorm", "Fig. 12 · runtimes under log-normal injection"),
    Result("runtimes", "Fig. 11–12 · runtimes per level and distribution (table)", {"level": "%"}),
    Result("normality", "Sec. 6 · normality tests of latencies and runtimes", {"level": "%"}),
    Result("mann_whitney", "Sec. 6 · Mann–Whitney U, log-normal against uniform", {"level": "%"}),
    Result("fig13_runtime_vs_mean", "Fig. 13 · runtime against injected latency mean"),
    Result("fig14_runtime_vs_std", "Fig. 14 · runtime against injected latency spread"),
    Result("table4_correlations", "Table 4 · correlation of runtime with latency mean and spread"),
    Result("table4", "Table 4 · the correlation tests in full (table)"),
    Result("table4_grid", "Table 4 · the correlation tests on the mean × spread grid (table)"),
    Result("grid_effects", "Table 4 · runtime per 100 µs of latency mean and of spread (grid)"),
    Result("fig15_fixed_mean_low", "Fig. 15 · runtime at the lower fixed mean"),
    Result("fig16_fixed_mean_high", "Fig. 16 · runtime at the higher fixed mean"),
    Result("fixed_mean", "Fig. 15–16 · runtimes at fixed means (table)", {"level": "%"}),
)
INJECTION_TABLES = (
    "table4",
    "table4_grid",
    "grid_effects",
    "injector_delay",
    "injector_delay_summary",
    "validation",
    "runtimes",
    "normality",
    "mann_whitney",
    "fixed_mean",
)

Job = Callable[..., JobSpec]


# ---------------------------------------------------------------- Sec. 5


def characterization_runs(lv: LatencyVariationSettings) -> list[tuple[str, int]]:
    """(probe, level) of every measurement under load: each probe at each level."""
    levels = sorted(lv.characterize.levels)
    return [(probe, level) for probe in PROBES for level in levels]


def link_mbit(lv: LatencyVariationSettings, platform: Platform) -> float:
    """The link rate the loads are shares of: configured, or the rate the platform
    shapes its links to."""
    link = lv.characterize.link_mbit
    return link if link is not None else platform.nic_mbit


def probe_args(lv: LatencyVariationSettings, probe: str) -> list[object]:
    """Arguments of a latency probe measuring for the configured duration beside the load."""
    char = lv.characterize
    args = ["--size", 1, "--warmup", char.warmup, "--iterations", char.iterations]
    args += ["--duration", char.duration_s]
    if probe == "tcpping":
        args += ["--gap-us", char.gap_us]
    return args


def loadgen_args(lv: LatencyVariationSettings, level: int, platform: Platform) -> list[object]:
    """Arguments of the loadgen pairs at ``level`` % of the link rate (:func:`link_mbit`)."""
    char = lv.characterize
    return [
        "--load",
        level / 100,
        "--link-mbit",
        link_mbit(lv, platform),
        "--size",
        char.load_size,
        "--seed",
        lv.seed + level,
    ]


# ---------------------------------------------------------------- Sec. 6–7


def injector_level(lv: LatencyVariationSettings, platform: Platform) -> str:
    """Where the injector delays (``injection.injector_level``, ``auto`` resolved): a
    TCP-level injector injects nothing where MPI does not move its messages through
    TCP sockets (an rdma fabric, a simulation, whose programs link the injector in
    and delay every message in the network model), so ``auto`` takes the MPI
    level there and the TCP level, the paper's post_send, elsewhere."""
    level = lv.injection.injector_level
    if level != "auto":
        return level
    return "tcp" if platform.mpi_over_tcp else "mpi"


def distributions(lv: LatencyVariationSettings) -> list[str]:
    """The distributions fitted at every level (:func:`.names.distribution_names`)."""
    return distribution_names(lv.fit.scale_fractions, lv.fit.stds_us)


def _points(lv: LatencyVariationSettings, names: Sequence[str]) -> list[str]:
    levels = sorted(lv.injection.levels)
    return [point_name(level, name) for level in levels for name in names] + [ZERO]


def injected_points(lv: LatencyVariationSettings) -> list[str]:
    """Every injected distribution (level × distribution) and the zero table."""
    return _points(lv, distributions(lv))


def validation_points(lv: LatencyVariationSettings) -> list[str]:
    """The points of Sec. 6's validation: the uniform and the fitted log-normal only."""
    return _points(lv, VALIDATION_DISTRIBUTIONS)


def validation_experiments(platform: Platform) -> tuple[str, ...]:
    """The probes and the barrier of Sec. 6 that run on ``platform``: all three, but
    tcpping where ranks have no TCP socket (a simulation)."""
    return tuple(e for e in VALIDATION_EXPERIMENTS if platform.tcp_sockets or e != "tcpping")


def injection_figures(platform: Platform | None) -> tuple[str, ...]:
    """The figures of Sec. 6–7 that ``platform``'s experiments make (None: all)."""
    sockets = platform is None or platform.tcp_sockets
    return tuple(f for f in INJECTION_FIGURES if sockets or f not in PACKET_FIGURES)


def probe_runs(lv: LatencyVariationSettings, experiments: Sequence[str]) -> list[tuple[str, str]]:
    """(experiment, point) of every injected probe and barrier result."""
    points = validation_points(lv)
    return [(name, point) for name in experiments for point in points]


def application_runs(lv: LatencyVariationSettings) -> list[tuple[str, str]]:
    """(application, point) of every injected application result."""
    points = injected_points(lv)
    return [(app, point) for app in lv.injection.applications for point in points]


def probe_placement(
    lv: LatencyVariationSettings, name: str, nodes: list[str] | None
) -> tuple[int, list[str] | None]:
    """(ranks, nodes) of a latency probe or the barrier (``nodes``: the study's; None:
    the launcher places the ranks).

    The ping-pongs run one pair, as the paper's ib_write_lat and ping-pong: a second
    pair's waits and polling would take the cores this pair's wake-ups need. The
    barrier spans the first ``injection.barrier_nodes`` nodes (null: all of them).
    """
    if name in PROBES:
        return 2, nodes[:2] if nodes else None
    ranks = lv.injection.barrier_nodes or lv.nodes
    return ranks, nodes[:ranks] if nodes else None


def injected_files(raw: str, names: Sequence[str]) -> dict[str, list[str]]:
    """The files of one injected run of every program in ``names`` (a rule's
    outputs, ``{injected}`` its wildcard): results, the injector's reports and
    the provenance sidecars, under the study's raw folder ``raw``."""
    runs = [f"{raw}/injection/{name}/{{injected}}" for name in names]
    return {
        "results": [f"{run}.csv" for run in runs],
        "reports": [f"{run}.injector.csv" for run in runs],
        "provenance": [f"{run}.csv.prov.json" for run in runs],
    }


def injected_probes(
    lv: LatencyVariationSettings,
    nodes: list[str] | None,
    outputs: Sequence[str],
    job: Job,
    experiments: Sequence[str] = VALIDATION_EXPERIMENTS,
) -> list[JobSpec]:
    """The ``experiments`` (of tcpping, pingpong and barrier) on ``outputs``, placed
    by :func:`probe_placement`; ``job(name, output, ranks, nodes, args)`` builds
    each spec."""
    inj = lv.injection
    args = ["--warmup", inj.warmup, "--iterations", inj.probe_iterations]
    sizes = {"tcpping": ["--size", 1], "pingpong": ["--size", 1], "barrier": []}
    return [
        job(name, output, *probe_placement(lv, name, nodes), [*sizes[name], *args])
        for name, output in zip(experiments, outputs, strict=True)
    ]


def injected_applications(
    lv: LatencyVariationSettings, nodes: list[str] | None, outputs: Sequence[str], job: Job
) -> list[JobSpec]:
    """Every application of the study, ``runs`` timed runs after one warm-up, on
    ``outputs``, sized by ``application_args``; ``job(name, output, ranks, nodes,
    iterations, warmup, extra_args)`` builds each spec."""
    inj = lv.injection
    return [
        job(app, output, lv.nodes, nodes, inj.runs, 1, inj.application_args.get(app, []))
        for app, output in zip(inj.applications, outputs, strict=True)
    ]


# ---------------------------------------------------------------- targets


def targets(figures: str, tables: str, models: str, platform: Platform | None = None) -> list[str]:
    """Every final file of the study (``figures``, ``tables``, ``models``: its folders)
    on ``platform`` (None: one that runs every experiment)."""
    names = [*CHARACTERIZATION_FIGURES, *injection_figures(platform)]
    return [
        *(f"{figures}/{name}.{ext}" for name in names for ext in ("svg", "png")),
        f"{tables}/characterization.csv",
        *(f"{tables}/{name}.csv" for name in INJECTION_TABLES),
        f"{models}/fits.csv",
    ]


def final_files(settings: Settings, paths: StudyPaths) -> list[str]:
    """The study's final files in this run (its ``STUDY.plan``)."""
    platform = from_settings(settings.platform)
    return targets(paths.figures, paths.tables, paths.models, platform)
