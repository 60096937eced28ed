# Seed 001 Sec. 3-5: the dependency-based congestion simulator on fat-trees and tori.

NN = config["network_noise"]
NN_POINTS = simulation_points()
NN_TIDY = f"{RESULTS}/tidy/network_noise/simulation"
NN_TABLES = f"{RESULTS}/tables/network_noise"
NN_FIGURES = f"{RESULTS}/figures/network_noise"
NN_FIGURE_NAMES = nn_figure_names()


# Cheap table and figure steps run on the submitting host under a cluster
# executor (profiles/slurm); only builds and measurements become jobs.
localrules:
    summarise_network_noise_simulation,
    plot_network_noise_simulation,
    tidy_network_noise_benchmark,
    tabulate_network_noise_benchmark,
    plot_network_noise_benchmark,
    tidy_netgauge_collvsnoise,
    tabulate_netgauge_comparison,


study_targets("network_noise", network_noise_targets)


rule simulate_network_noise:
    input:
        fabric=lambda wc: fabric_file(NN_POINTS[wc.point][1]),
    output:
        f"{NN_TIDY}/{{point}}.csv",
    log:
        f"{LOGS}/network_noise/simulate_{{point}}.log",
    benchmark:
        f"{BENCHMARKS}/network_noise/simulate_{{point}}.tsv"
    conda:
        "../../envs/analysis.yaml"
    params:
        spec=lambda wc: NN_POINTS[wc.point][1],
        ratio=lambda wc: NN_POINTS[wc.point][2],
        collective=NN["collective"],
        runs=NN["runs"],
        seed=NN["seed"],
    script:
        "../scripts/network_noise/simulate.py"


rule summarise_network_noise_simulation:
    input:
        points=expand(f"{NN_TIDY}/{{point}}.csv", point=NN_POINTS),
        published_fat_trees=reference("network_noise", "table1.csv"),
        published_tori=reference("network_noise", "table2.csv"),
    output:
        summary=f"{NN_TABLES}/simulation_summary.csv",
        topologies=f"{NN_TABLES}/topologies.csv",
    log:
        f"{LOGS}/network_noise/summarise_simulation.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        figures=[NN_POINTS[p][0] for p in NN_POINTS],
    script:
        "../scripts/network_noise/summarise_simulation.py"


rule plot_network_noise_simulation:
    input:
        summary=f"{NN_TABLES}/simulation_summary.csv",
        style=STYLE,
    output:
        svg=expand(f"{NN_FIGURES}/{{name}}.svg", name=NN_FIGURE_NAMES),
        png=[
            report(
                f"{NN_FIGURES}/{name}.png",
                caption=f"../report/network_noise/{name}.rst",
                category="001 Network noise",
                labels={"figure": name},
            )
            for name in NN_FIGURE_NAMES
        ],
    log:
        f"{LOGS}/network_noise/plot_simulation.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/network_noise/plot_simulation.py"


# Seed 001 Sec. 2: the noise benchmark, perturbed vs unperturbed collectives.

NB = config["network_noise"]["benchmark"]
NB_RAW = f"{RESULTS}/raw/network_noise/benchmark"
NB_TIDY = f"{RESULTS}/tidy/network_noise/benchmark.csv"
NB_FIGURE_NAMES = [
    "fig3_boxplot_ratio",
    "fig4_slowdown_ratio",
    "fig5_slowdown_allocation",
    "fig6_boxplot_collectives",
]
NB_POINTS = noise_points()


wildcard_constraints:
    collective=r"allreduce|reduce|bcast",
    ratio=r"[0-9.]+",
    allocation=r"\d+",


rule measure_network_noise:
    input:
        program=program("noise"),
    output:
        result=f"{NB_RAW}/{{collective}}_r{{ratio}}_n{{allocation}}.csv",
        provenance=f"{NB_RAW}/{{collective}}_r{{ratio}}_n{{allocation}}.csv.prov.json",
    log:
        f"{LOGS}/network_noise/noise_{{collective}}_r{{ratio}}_n{{allocation}}.log",
    benchmark:
        f"{BENCHMARKS}/network_noise/noise_{{collective}}_r{{ratio}}_n{{allocation}}.tsv"
    conda:
        "../../envs/build.yaml"
    resources:
        network=1,
    params:
        ranks=lambda wc: int(wc.allocation),
        nodes=lambda wc: study_nodes(int(wc.allocation)),
        args=lambda wc: [
            "--collective",
            wc.collective,
            "--ratio",
            wc.ratio,
            "--size",
            NB["size"],
            "--perturb-size",
            NB["perturb_size"],
            "--splits",
            NB["splits"],
            "--reps",
            NB["reps"],
        ],
        platform=config["platform"],
        config={"network_noise": {"benchmark": NB}},
    script:
        "../scripts/run_benchmark.py"


rule tidy_network_noise_benchmark:
    input:
        results=[f"{NB_RAW}/{c}_r{r:g}_n{n}.csv" for c, r, n in NB_POINTS],
    output:
        NB_TIDY,
    log:
        f"{LOGS}/network_noise/tidy_benchmark.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        identifiers={
            "collective": [c for c, _, _ in NB_POINTS],
            "ratio": [r for _, r, _ in NB_POINTS],
            "allocation": [n for _, _, n in NB_POINTS],
        },
    script:
        "../scripts/tidy_results.py"


rule tabulate_network_noise_benchmark:
    input:
        NB_TIDY,
    output:
        f"{NN_TABLES}/benchmark_slowdown.csv",
    log:
        f"{LOGS}/network_noise/tabulate_benchmark.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/network_noise/tabulate_benchmark.py"


rule plot_network_noise_benchmark:
    input:
        tidy=NB_TIDY,
        slowdown=f"{NN_TABLES}/benchmark_slowdown.csv",
        style=STYLE,
    output:
        svg=expand(f"{NN_FIGURES}/{{name}}.svg", name=NB_FIGURE_NAMES),
        png=[
            report(
                f"{NN_FIGURES}/{name}.png",
                caption=f"../report/network_noise/{name}.rst",
                category="001 Network noise",
                labels={"figure": name},
            )
            for name in NB_FIGURE_NAMES
        ],
    log:
        f"{LOGS}/network_noise/plot_benchmark.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        nodes=NB["nodes"],
    script:
        "../scripts/network_noise/plot_benchmark.py"


# Netgauge's collvsnoise beside the noise benchmark, when its source is configured.
NETGAUGE = NB["netgauge"]
NETGAUGE_RAW = f"{NB_RAW}/netgauge_collvsnoise_n{NB['nodes']}.csv"
NETGAUGE_TIDY = f"{RESULTS}/tidy/network_noise/netgauge.csv"


rule build_netgauge:
    output:
        binary=f"{BIN}/netgauge",
        info=f"{BIN}/netgauge.build.json",
    log:
        f"{LOGS}/build_netgauge.log",
    conda:
        "../../envs/build.yaml"
    params:
        name="netgauge",
        source=NETGAUGE["source"],
        command=netgauge_build_command(),
        binary="netgauge",
        work_dir=f"{RESULTS}/build/netgauge",
        env=build_environment(),
    script:
        "../scripts/build_external.py"


rule measure_netgauge_collvsnoise:
    input:
        program=f"{BIN}/netgauge",
    output:
        result=NETGAUGE_RAW,
        provenance=f"{NETGAUGE_RAW}.prov.json",
    log:
        f"{LOGS}/network_noise/netgauge_collvsnoise.log",
    benchmark:
        f"{BENCHMARKS}/network_noise/netgauge_collvsnoise.tsv"
    conda:
        "../../envs/build.yaml"
    resources:
        network=1,
    params:
        platform=config["platform"],
        measured=lambda wc, input, output: netgauge_job(input.program, output.result),
        background=[],
        config={"network_noise": {"benchmark": NB}},
    script:
        "../scripts/corun.py"


rule tidy_netgauge_collvsnoise:
    input:
        results=[NETGAUGE_RAW],
    output:
        NETGAUGE_TIDY,
    log:
        f"{LOGS}/network_noise/tidy_netgauge.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        identifiers={},
    script:
        "../scripts/tidy_results.py"


rule tabulate_netgauge_comparison:
    input:
        netgauge=NETGAUGE_TIDY,
        netnoise=f"{NN_TABLES}/benchmark_slowdown.csv",
    output:
        report(
            f"{NN_TABLES}/netgauge_comparison.csv",
            caption="../report/network_noise/netgauge_comparison.rst",
            category="001 Network noise",
            labels={"table": "netgauge_comparison"},
        ),
    log:
        f"{LOGS}/network_noise/tabulate_netgauge.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        perturb_bytes=NB["perturb_size"],
    script:
        "../scripts/network_noise/tabulate_netgauge_comparison.py"
