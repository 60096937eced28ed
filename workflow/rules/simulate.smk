# Seed 001 Sec. 3-5: the dependency-based congestion simulator on fat-trees and tori.

NN = config["network_noise"]
NN_POINTS = simulation_points()
NN_TIDY = f"{RESULTS}/tidy/network_noise/simulation"
NN_TABLES = f"{RESULTS}/tables/network_noise"
NN_FIGURES = f"{RESULTS}/figures/network_noise"
NN_FIGURE_NAMES = nn_figure_names()


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
        "../scripts/simulate_network_noise.py"


rule summarise_network_noise_simulation:
    input:
        points=expand(f"{NN_TIDY}/{{point}}.csv", point=NN_POINTS),
        published_fat_trees=reference("seed001_table1.csv"),
        published_tori=reference("seed001_table2.csv"),
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
        "../scripts/summarise_network_noise_simulation.py"


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
        "../scripts/plot_network_noise_simulation.py"
