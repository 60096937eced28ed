# Seed 004 Sec. 5: latency under background load and the distributions fitted to it.
from netnoise.latency_variation import PROBES, ZERO, distribution_names, point_name

LV = config["latency_variation"]
LV_CHAR = LV["characterize"]
LV_FIT = LV["fit"]
LV_INJ = LV["injection"]
LV_NODES = study_nodes(LV["nodes"])
LV_RANKS = LV["nodes"]
LV_RAW = f"{RESULTS}/raw/latency_variation"
LV_TIDY = f"{RESULTS}/tidy/latency_variation"
LV_MODELS = f"{RESULTS}/models/latency_variation"
LV_TABLES = f"{RESULTS}/tables/latency_variation"
LV_FIGURES = f"{RESULTS}/figures/latency_variation"
LV_LEVELS = sorted(LV_CHAR["levels"])
LV_DISTRIBUTIONS = distribution_names(LV_FIT["scale_fractions"])
# Every injected distribution (level x distribution) and the zero table.
LV_POINTS = [
    point_name(level, dist)
    for level in sorted(LV_INJ["levels"])
    for dist in LV_DISTRIBUTIONS
] + [ZERO]
LV_CHARACTERIZATION = [(probe, level) for probe in PROBES for level in LV_LEVELS]
LV_CHAR_FIGURES = ["fig2_latency_mean", "fig3_latency_std", "fig4_idle_distribution"]


wildcard_constraints:
    probe="|".join(PROBES),
    level=r"\d+",


rule measure_latency_under_load:
    input:
        probe=lv_probe_program,
        loadgen=program("loadgen"),
    output:
        latency=f"{LV_RAW}/characterize/{{probe}}_L{{level}}.csv",
        load=f"{LV_RAW}/characterize/{{probe}}_L{{level}}.loadgen.csv",
        provenance=f"{LV_RAW}/characterize/{{probe}}_L{{level}}.csv.prov.json",
    log:
        f"{LOGS}/latency_variation/characterize_{{probe}}_L{{level}}.log",
    benchmark:
        f"{BENCHMARKS}/latency_variation/characterize_{{probe}}_L{{level}}.tsv"
    conda:
        "../../envs/build.yaml"
    resources:
        network=1,
    params:
        platform=config["platform"],
        measured=lambda wc, output: lv_characterization_probe(wc.probe, output.latency),
        background=lambda wc, output: [lv_loadgen(int(wc.level), output.load)],
        config={"latency_variation": LV},
    script:
        "../scripts/corun.py"


rule tidy_latency_characterization:
    input:
        latency=[
            f"{LV_RAW}/characterize/{probe}_L{level}.csv"
            for probe, level in LV_CHARACTERIZATION
        ],
        load=[
            f"{LV_RAW}/characterize/{probe}_L{level}.loadgen.csv"
            for probe, level in LV_CHARACTERIZATION
        ],
    output:
        samples=f"{LV_TIDY}/characterization.csv",
        load=f"{LV_TIDY}/load.csv",
    log:
        f"{LOGS}/latency_variation/tidy_characterization.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        points=LV_CHARACTERIZATION,
    script:
        "../scripts/tidy_latency_characterization.py"


rule tabulate_latency_characterization:
    input:
        samples=f"{LV_TIDY}/characterization.csv",
        load=f"{LV_TIDY}/load.csv",
    output:
        report(
            f"{LV_TABLES}/characterization.csv",
            caption="../report/latency_variation/characterization.rst",
            category="004 Latency variation",
            labels={"table": "latency under load"},
        ),
    log:
        f"{LOGS}/latency_variation/tabulate_characterization.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/tabulate_latency_characterization.py"


rule fit_latency_distributions:
    input:
        samples=f"{LV_TIDY}/characterization.csv",
    output:
        fits=f"{LV_MODELS}/fits.csv",
        distributions=f"{LV_MODELS}/distributions.csv",
        tables=expand(f"{LV_MODELS}/injector/{{injected}}.tab", injected=LV_POINTS),
        seeds=expand(f"{LV_MODELS}/injector/{{injected}}.seed", injected=LV_POINTS),
    log:
        f"{LOGS}/latency_variation/fit_distributions.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        fit=LV_FIT,
        injected_levels=LV_INJ["levels"],
        seed=LV["seed"],
    script:
        "../scripts/fit_latency_distributions.py"


rule plot_latency_characterization:
    input:
        table=f"{LV_TABLES}/characterization.csv",
        samples=f"{LV_TIDY}/characterization.csv",
        fits=f"{LV_MODELS}/fits.csv",
        style=STYLE,
    output:
        svg=expand(f"{LV_FIGURES}/{{name}}.svg", name=LV_CHAR_FIGURES),
        png=[
            report(
                f"{LV_FIGURES}/{name}.png",
                caption=f"../report/latency_variation/{name}.rst",
                category="004 Latency variation",
                labels={"figure": name},
            )
            for name in LV_CHAR_FIGURES
        ],
    log:
        f"{LOGS}/latency_variation/plot_characterization.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        probe=LV_FIT["probe"],
    script:
        "../scripts/plot_latency_characterization.py"
