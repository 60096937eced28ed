"""What the workflow runs for seed 001: simulation points, benchmark points, job specs, targets.

Pure functions of the ``network_noise`` config section (``nn``), its ``benchmark``
subsection (``bench``) and the study's result folders, called by
``workflow/rules/network_noise.smk``.
"""

from __future__ import annotations

import math

from netnoise.jobs import JobSpec
from netnoise.platform import Platform
from netnoise.report import ABOUT, HEADLINE_CLAIMS, Result
from netnoise.settings import PlatformSettings, Settings, overlaid
from netnoise.studies.network_noise.analysis import PERTURBATIONS as PERTURBATIONS  # the rules'
from netnoise.studies.network_noise.analysis import point_name
from netnoise.studies.network_noise.netgauge import collvsnoise_argv
from netnoise.studies.network_noise.settings import Benchmark, Netgauge, NetworkNoiseSettings
from netnoise.study import StudyPaths

#: Figures of the simulator part (Sec. 3-5); Fig. 11 only with fabric files.
FABRIC_FIGURE = "fig11_fabric_ratio"
SIMULATION_FIGURES = ("fig13_fat_tree_size", "fig15_torus_ratio", "fig16_torus_size")
#: Figures of the noise benchmark (Sec. 2).
BENCHMARK_FIGURES = (
    "fig3_boxplot_ratio",
    "fig4_slowdown_ratio",
    "fig5_slowdown_allocation",
    "fig6_boxplot_collectives",
)
#: The simulation points run at one fixed ratio (Fig. 13 and 16).
SIZE_SWEEP_RATIO = 0.5

#: The report's results in the paper's order (netnoise.report).
REPORT_RESULTS = (
    HEADLINE_CLAIMS,
    ABOUT,
    Result(
        "fig3_boxplot_ratio", "Fig. 3 · allreduce times with and without perturbation, per ratio"
    ),
    Result(
        "fig4_slowdown_ratio", "Fig. 4 · slowdown of each collective against the perturbation ratio"
    ),
    Result("fig5_slowdown_allocation", "Fig. 5 · allreduce slowdown against the allocation size"),
    Result("fig6_boxplot_collectives", "Fig. 6 · every collective with and without perturbation"),
    Result("benchmark_claims", "Sec. 4 · the benchmark's claims beside their controls"),
    Result("netgauge_comparison", "Sec. 2 · Netgauge's collvsnoise beside the noise benchmark"),
    Result("fig11_fabric_ratio", "Fig. 11 · simulated slowdown on real fabrics"),
    Result("topologies", "Tables 1–2 · the simulated fat-trees and tori"),
    Result("fig13_fat_tree_size", "Fig. 13 · simulated slowdown against fat-tree size"),
    Result("fig15_torus_ratio", "Fig. 15 · simulated slowdown on tori against the ratio"),
    Result("fig16_torus_size", "Fig. 16 · simulated slowdown against torus size"),
)


def simulation_points(nn: NetworkNoiseSettings) -> dict[str, tuple[str, str, float]]:
    """Point id -> (figure, topology SPEC, ratio) of every simulation."""
    points = {}

    def add(figure: str, spec: str, ratio: float) -> None:
        points[point_name(figure, spec, ratio)] = (figure, spec, ratio)

    for spec in nn.fat_trees:
        add("fat_tree_size", spec, SIZE_SWEEP_RATIO)
    for ratio in nn.ratios:
        add("torus_ratio", nn.torus_2d, ratio)
        add("torus_ratio", nn.torus_3d, ratio)
    for k in nn.torus_sizes_2d:
        add("torus_size", f"torus:{k}x{k}", SIZE_SWEEP_RATIO)
    for k in nn.torus_sizes_3d:
        add("torus_size", f"torus:{k}x{k}x{k}", SIZE_SWEEP_RATIO)
    for path in nn.fabrics:
        for ratio in nn.ratios:
            add("fabric_ratio", f"fabric:{path}", ratio)
    return points


def fabric_file(spec: str) -> list[str]:
    """The topology file a fabric SPEC reads (an input of its simulations)."""
    return [spec.split(":", 1)[1]] if spec.startswith("fabric:") else []


def simulation_figures(nn: NetworkNoiseSettings) -> list[str]:
    """The simulator's figures; Fig. 11 exists only when fabric files are configured."""
    return [FABRIC_FIGURE, *SIMULATION_FIGURES] if nn.fabrics else list(SIMULATION_FIGURES)


def noise_points(bench: Benchmark, platform: Platform) -> list[tuple[str, float, int, str]]:
    """(collective, ratio, allocation, perturbation) of every noise-benchmark run: the
    ratio sweep of Fig. 3, 4, 6 on the full allocation, the allocation sweep of
    Fig. 5, a ratio-0 control (no perturbing process: what the split alone does) of
    every collective and allocation, and allreduce's ratio sweep with a CPU-only
    perturbation (``cpu_control``) and, where the workflow names the nodes, with
    the perturbation on one switch (``unshared_control``: elsewhere the
    launcher's placement is given)."""
    points = [(c, r, bench.nodes, "network") for c in bench.collectives for r in bench.ratios]
    points += [("allreduce", SIZE_SWEEP_RATIO, n, "network") for n in bench.allocations]
    points += [(c, 0.0, n, "network") for c, _, n, _ in points]
    if bench.cpu_control:
        points += [("allreduce", r, bench.nodes, "cpu") for r in bench.ratios if r > 0]
    if bench.unshared_control and platform.names_nodes:
        points += [("allreduce", r, bench.nodes, "unshared") for r in bench.ratios if r > 0]
    return sorted(set(points))


def point_splits(
    bench: Benchmark, collective: str, ratio: float, allocation: int, perturbation: str
) -> int:
    """Random splits of one point: ``allocation_splits`` (where set) for the
    allocation sweep's points, whose slowdowns differ by tens of points where the
    ratio sweep's differ by a hundred, ``splits`` for the rest."""
    in_allocation_sweep = (
        collective == "allreduce"
        and ratio == SIZE_SWEEP_RATIO
        and allocation in bench.allocations
        and perturbation == "network"
    )
    sweep_splits = bench.allocation_splits
    return sweep_splits if in_allocation_sweep and sweep_splits else bench.splits


def point_platform(platform: PlatformSettings, perturbation: str) -> PlatformSettings:
    """The benchmark's platform for one perturbation. The unshared control's testbed
    has every node on one switch, where the perturbation's traffic crosses only its
    own nodes' links. The CPU control is measured once: its processes keep the cores
    busy by design, so another attempt would be as saturated."""
    if perturbation == "unshared":
        return overlaid(platform, {"testbed": {"racks": 1}})
    if perturbation == "cpu":
        return overlaid(platform, {"cpu": {"attempts": 1}})
    return platform


def noise_result(raw: str, collective: str, ratio: float, allocation: int, perturbation: str):
    """The result file of one noise-benchmark point."""
    return f"{raw}/{collective}_r{ratio:g}_n{allocation}_{perturbation}.csv"


def application_ranks(bench: Benchmark, ratio: float, allocation: int) -> int | None:
    """The processes of the application communicator at one point, where the plan sets
    them (None: the ranks the perturbation leaves). A set ``application_ranks`` holds
    on the ratio sweep's allocation (``nodes``); a ratio-0 control elsewhere keeps
    the communicator of its allocation's Fig. 5 point, the rest idle, so that it
    times the collective that point perturbs."""
    fixed = bench.application_ranks
    if fixed and allocation == bench.nodes:
        return fixed
    if ratio == 0:
        # The benchmark rounds the perturbing processes half away from zero.
        return allocation - math.floor(SIZE_SWEEP_RATIO * allocation + 0.5)
    return None


def noise_args(
    bench: Benchmark,
    collective: str,
    ratio: str,
    allocation: int,
    perturbation: str = "network",
) -> list[object]:
    """Arguments of the ``noise`` benchmark at one point (``ratio`` as its file names
    spell it); the unshared control's perturbation is the network one."""
    cpu = ["--cpu-load", bench.cpu_load] if perturbation == "cpu" else []
    ranks = application_ranks(bench, float(ratio), allocation)
    application = [] if ranks is None else ["--application-ranks", ranks]
    return [
        "--perturbation",
        "network" if perturbation == "unshared" else perturbation,
        *cpu,
        "--collective",
        collective,
        "--ratio",
        ratio,
        *application,
        "--size",
        bench.size,
        "--perturb-size",
        bench.perturb_size,
        "--splits",
        point_splits(bench, collective, float(ratio), allocation, perturbation),
        "--reps",
        bench.reps,
        "--phase-warmup",
        bench.phase_warmup,
    ]


def netgauge_build_command(netgauge: Netgauge) -> str:
    """Netgauge's autotools build against the MPI of build.mpicc (``$MPICC``)."""
    mpi_root = '"$(dirname "$(dirname "$(command -v "$MPICC")")")"'
    extra = netgauge.configure_args
    return " ".join(["./configure", f"--with-mpi={mpi_root}", *extra, "&& make"])


def netgauge_job(bench: Benchmark, binary: str, output: str, nodes: list[str] | None) -> JobSpec:
    """The co-run job spec of the collvsnoise run covering the benchmark's ratio sweep
    on ``bench.nodes`` ranks (placed on ``nodes``, None: the launcher places them)."""
    argv = collvsnoise_argv(binary, bench.netgauge.tests, bench.nodes, bench.ratios)
    return {
        "name": "netgauge",
        "program": argv[0],
        "args": argv[1:],
        "ranks": bench.nodes,
        "nodes": nodes,
        "output": output,
        "external": {"tool": "netgauge", "table": "netgauge_collvsnoise"},
    }


def netgauge_notice(nn: NetworkNoiseSettings) -> str | None:
    """Why the Netgauge side-by-side run is skipped, or None when it runs (or the
    study or its benchmark is off)."""
    bench = nn.benchmark
    if nn.enabled and bench.enabled and not bench.netgauge.source:
        return (
            "network_noise.benchmark.netgauge.source is empty: "
            "the Netgauge side-by-side run is skipped"
        )
    return None


def _figure_files(figures: str, names: list[str] | tuple[str, ...]) -> list[str]:
    return [f"{figures}/{name}.{ext}" for name in names for ext in ("svg", "png")]


def simulation_targets(nn: NetworkNoiseSettings, figures: str, tables: str) -> list[str]:
    """Final files of the simulator part (``figures``, ``tables``: the study's folders)."""
    return [
        *_figure_files(figures, simulation_figures(nn)),
        f"{tables}/simulation_summary.csv",
        f"{tables}/topologies.csv",
    ]


def benchmark_targets(bench: Benchmark, figures: str, tables: str) -> list[str]:
    """Final files of the noise benchmark, with Netgauge's comparison when its source is set."""
    targets = [
        *_figure_files(figures, BENCHMARK_FIGURES),
        f"{tables}/benchmark_slowdown.csv",
        f"{tables}/benchmark_claims.csv",
    ]
    if bench.netgauge.source:
        targets.append(f"{tables}/netgauge_comparison.csv")
    return targets


def targets(nn: NetworkNoiseSettings, figures: str, tables: str) -> list[str]:
    """Every final file of the study: the simulator's, and the benchmark's when enabled."""
    found = simulation_targets(nn, figures, tables)
    if nn.benchmark.enabled:
        found += benchmark_targets(nn.benchmark, figures, tables)
    return found


def final_files(settings: Settings, paths: StudyPaths) -> list[str]:
    """The study's final files in this run (its ``STUDY.plan``)."""
    return targets(settings.study(NetworkNoiseSettings), paths.figures, paths.tables)
