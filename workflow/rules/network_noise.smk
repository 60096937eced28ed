# Seed 001: network noise. The simulator (Sec. 3-5) on fat-trees and tori, the noise
# benchmark (Sec. 2) on the platform, and Netgauge's collvsnoise beside it. What runs
# (points, job specs, targets) is planned in netnoise.studies.network_noise.plan.
from snakemake.logging import logger

from netnoise.studies.network_noise import plan as nn_plan
from netnoise.studies.network_noise.settings import NetworkNoiseSettings

NN = SETTINGS.study(NetworkNoiseSettings)
NN_PATHS = study_paths("network_noise")
NN_POINTS = nn_plan.simulation_points(NN)
NN_SIMULATIONS = f"{NN_PATHS.tidy}/simulation"
NN_FIGURE_NAMES = nn_plan.simulation_figures(NN)
NB = NN.benchmark
NB_POINTS = nn_plan.noise_points(NB, PLATFORM)
# The benchmark's own layout (racks, backbone), and its allocations spread over
# the racks in turn so that application and perturbation traffic share links;
# the unshared control's on one switch, the CPU control's measured once.
NB_PLATFORM = SETTINGS.effective(NN)
nb_platform = lambda perturbation: nn_plan.point_platform(NB_PLATFORM, perturbation)
NB_NODES = lambda count, perturbation="network": (
    nb_platform(perturbation).testbed.rack_interleaved_nodes(count)
    if PLATFORM.names_nodes
    else None
)
NB_RAW = f"{NN_PATHS.raw}/benchmark"
NB_TIDY = f"{NN_PATHS.tidy}/benchmark.csv"
NB_FIGURE_NAMES = nn_plan.BENCHMARK_FIGURES
NETGAUGE = NB.netgauge
NETGAUGE_BIN = program("netgauge")
NETGAUGE_RAW = f"{NB_RAW}/netgauge_collvsnoise_n{NB.nodes}.csv"
NETGAUGE_TIDY = f"{NN_PATHS.tidy}/netgauge.csv"
NETGAUGE_NOTICE = nn_plan.netgauge_notice(NN)

# Once, from the process that plans the run: a job a cluster runs parses this
# file again and would repeat it in every job's log.
if NETGAUGE_NOTICE and workflow.is_main_process:
    logger.info(NETGAUGE_NOTICE)


# Cheap table and figure steps run on the submitting host under a cluster
# executor (profiles/slurm); only measurements and the C build become jobs.
# Netgauge is built there too: its source may be a URL, and a login node
# reaches the internet where compute nodes usually do not.
localrules:
    build_netgauge,
    summarise_network_noise_simulation,
    plot_network_noise_simulation,
    tidy_network_noise_benchmark,
    tabulate_network_noise_benchmark,
    plot_network_noise_benchmark,
    tidy_netgauge_collvsnoise,
    tabulate_netgauge_comparison,


wildcard_constraints:
    collective=r"allreduce|reduce|bcast",
    ratio=r"[0-9.]+",
    allocation=r"\d+",
    perturbation="|".join(nn_plan.PERTURBATIONS),


# Sec. 3-5: the dependency-based congestion simulator, one job per point.


rule simulate_network_noise:
    input:
        fabric=lambda wc: nn_plan.fabric_file(NN_POINTS[wc.point][1]),
    output:
        f"{NN_SIMULATIONS}/{{point}}.csv",
    log:
        f"{NN_PATHS.logs}/simulate_{{point}}.log",
    benchmark:
        f"{NN_PATHS.benchmarks}/simulate_{{point}}.tsv"
    conda:
        "../../envs/analysis.yaml"
    params:
        spec=lambda wc: NN_POINTS[wc.point][1],
        ratio=lambda wc: NN_POINTS[wc.point][2],
        collective=NN.collective,
        runs=NN.runs,
        seed=NN.seed,
    script:
        "../scripts/network_noise/simulate.py"


rule summarise_network_noise_simulation:
    input:
        points=expand(f"{NN_SIMULATIONS}/{{point}}.csv", point=NN_POINTS),
        published_fat_trees=reference("network_noise", "table1.csv"),
        published_tori=reference("network_noise", "table2.csv"),
    output:
        summary=f"{NN_PATHS.tables}/simulation_summary.csv",
        topologies=f"{NN_PATHS.tables}/topologies.csv",
    log:
        f"{NN_PATHS.logs}/summarise_simulation.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        figures=[figure for figure, _, _ in NN_POINTS.values()],
    script:
        "../scripts/network_noise/summarise_simulation.py"


rule plot_network_noise_simulation:
    input:
        summary=f"{NN_PATHS.tables}/simulation_summary.csv",
        style=figure_style(),
    output:
        svg=expand(f"{NN_PATHS.figures}/{{name}}.svg", name=NN_FIGURE_NAMES),
        png=[
            report_result(
                f"{NN_PATHS.figures}/{name}.png",
                "network_noise",
                name,
                caption=f"{NN_PATHS.captions}/{name}.rst",
            )
            for name in NN_FIGURE_NAMES
        ],
    log:
        f"{NN_PATHS.logs}/plot_simulation.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/network_noise/plot_simulation.py"


# Sec. 2: the noise benchmark, perturbed vs unperturbed collectives.


rule measure_network_noise:
    input:
        program=program("noise"),
    output:
        result=f"{NB_RAW}/{{collective}}_r{{ratio}}_n{{allocation}}_{{perturbation}}.csv",
        provenance=f"{NB_RAW}/{{collective}}_r{{ratio}}_n{{allocation}}_{{perturbation}}.csv.prov.json",
    log:
        f"{NN_PATHS.logs}/noise_{{collective}}_r{{ratio}}_n{{allocation}}_{{perturbation}}.log",
    benchmark:
        f"{NN_PATHS.benchmarks}/noise_{{collective}}_r{{ratio}}_n{{allocation}}_{{perturbation}}.tsv"
    conda:
        "../../envs/build.yaml"
    threads: MEASUREMENT_THREADS
    resources:
        # The allocation sweep's jobs are as large as their allocation.
        **measurement_resources(lambda wc: int(wc.allocation)),
    params:
        ranks=lambda wc: int(wc.allocation),
        nodes=lambda wc: NB_NODES(int(wc.allocation), wc.perturbation),
        args=lambda wc: nn_plan.noise_args(
            NB, wc.collective, wc.ratio, int(wc.allocation), wc.perturbation
        ),
        platform=lambda wc: nb_platform(wc.perturbation).as_config(),
        config={"network_noise": {"benchmark": NB.as_config()}},
        # The application processes on the measured job's cores, the perturbing
        # ones (network or CPU-only) on the others, drawn anew every split.
        binds_by_role=True,
    script:
        "../scripts/run_benchmark.py"


rule tidy_network_noise_benchmark:
    input:
        results=[nn_plan.noise_result(NB_RAW, *point) for point in NB_POINTS],
    output:
        NB_TIDY,
    log:
        f"{NN_PATHS.logs}/tidy_benchmark.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        identifiers={
            "collective": [c for c, _, _, _ in NB_POINTS],
            "ratio": [r for _, r, _, _ in NB_POINTS],
            "allocation": [n for _, _, n, _ in NB_POINTS],
            "perturbation": [p for _, _, _, p in NB_POINTS],
        },
    script:
        "../scripts/tidy_results.py"


rule tabulate_network_noise_benchmark:
    input:
        NB_TIDY,
    output:
        slowdown=f"{NN_PATHS.tables}/benchmark_slowdown.csv",
        claims=f"{NN_PATHS.tables}/benchmark_claims.csv",
    log:
        f"{NN_PATHS.logs}/tabulate_benchmark.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        clock=PLATFORM.clock,
    script:
        "../scripts/network_noise/tabulate_benchmark.py"


rule plot_network_noise_benchmark:
    input:
        tidy=NB_TIDY,
        slowdown=f"{NN_PATHS.tables}/benchmark_slowdown.csv",
        published_fig4=reference("network_noise", "fig4.csv"),
        style=figure_style(),
    output:
        svg=expand(f"{NN_PATHS.figures}/{{name}}.svg", name=NB_FIGURE_NAMES),
        png=[
            report_result(
                f"{NN_PATHS.figures}/{name}.png",
                "network_noise",
                name,
                caption=f"{NN_PATHS.captions}/{name}.rst",
            )
            for name in NB_FIGURE_NAMES
        ],
    log:
        f"{NN_PATHS.logs}/plot_benchmark.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        nodes=NB.nodes,
    script:
        "../scripts/network_noise/plot_benchmark.py"


# Netgauge's collvsnoise beside the noise benchmark, when its source is configured.


rule build_netgauge:
    output:
        binary=NETGAUGE_BIN,
        info=f"{NETGAUGE_BIN}.build.json",
    log:
        f"{platform_paths().logs}/build_netgauge.log",
    conda:
        "../../envs/build.yaml"
    params:
        name="netgauge",
        source=NETGAUGE.source,
        command=nn_plan.netgauge_build_command(NETGAUGE),
        binary="netgauge",
        work_dir=f"{platform_paths().build}/netgauge",
        env=build_environment(),
    script:
        "../scripts/build_external.py"


use rule corun as measure_netgauge_collvsnoise with:
    input:
        program=NETGAUGE_BIN,
    output:
        result=NETGAUGE_RAW,
        provenance=f"{NETGAUGE_RAW}.prov.json",
    log:
        f"{NN_PATHS.logs}/netgauge_collvsnoise.log",
    benchmark:
        f"{NN_PATHS.benchmarks}/netgauge_collvsnoise.tsv"
    resources:
        **measurement_resources(NB.nodes),
    params:
        measured=lambda wc, input, output: nn_plan.netgauge_job(
            NB, input.program, output.result, NB_NODES(NB.nodes)
        ),
        platform=NB_PLATFORM.as_config(),
        config={"network_noise": {"benchmark": NB.as_config()}},


rule tidy_netgauge_collvsnoise:
    input:
        results=[NETGAUGE_RAW],
    output:
        NETGAUGE_TIDY,
    log:
        f"{NN_PATHS.logs}/tidy_netgauge.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        identifiers={},
    script:
        "../scripts/tidy_results.py"


rule tabulate_netgauge_comparison:
    input:
        netgauge=NETGAUGE_TIDY,
        netnoise=f"{NN_PATHS.tables}/benchmark_slowdown.csv",
    output:
        f"{NN_PATHS.tables}/netgauge_comparison.csv",
    log:
        f"{NN_PATHS.logs}/tabulate_netgauge.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        perturb_bytes=NB.perturb_size,
    script:
        "../scripts/network_noise/tabulate_netgauge_comparison.py"
