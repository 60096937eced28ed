# Seed 004 Sec. 5: latency under background load and the distributions fitted to it.
from netnoise.studies.latency_variation.names import (
    PROBES,
    ZERO,
    distribution_names,
    point_name,
)

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


# Cheap table and figure steps run on the submitting host under a cluster
# executor (profiles/slurm); only builds and measurements become jobs.
localrules:
    tidy_latency_characterization,
    tabulate_latency_characterization,
    fit_latency_distributions,
    plot_latency_characterization,
    tidy_latency_injection,
    analyse_latency_injection,
    plot_latency_injection,


study_targets("latency_variation", latency_variation_targets)


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
        "../scripts/latency_variation/tidy_characterization.py"


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
        "../scripts/latency_variation/tabulate_characterization.py"


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
        "../scripts/latency_variation/fit_distributions.py"


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
        "../scripts/latency_variation/plot_characterization.py"


# Seed 004 Sec. 6-7: probes, barrier and applications with injected latency, statistics.
from netnoise.studies.latency_variation.names import (
    VALIDATION_DISTRIBUTIONS,
    VALIDATION_EXPERIMENTS,
)

LV_APPS = LV_INJ["applications"]
# Sec. 6 validates the injector with the uniform and the fitted log-normal only.
LV_VALIDATION_POINTS = [
    point_name(level, dist)
    for level in sorted(LV_INJ["levels"])
    for dist in VALIDATION_DISTRIBUTIONS
] + [ZERO]
LV_INJ_FIGURES = [
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
]
LV_INJ_TABLES = [
    "table4",
    "injector_delay",
    "injector_delay_summary",
    "validation",
    "runtimes",
    "normality",
    "mann_whitney",
    "fixed_mean",
]


wildcard_constraints:
    injected=r"zero|L\d+_[a-z][a-z0-9_]*",


rule measure_injected_latency:
    input:
        programs=[program(name) for name in VALIDATION_EXPERIMENTS],
        library=program("libnnlatency.so"),
        table=f"{LV_MODELS}/injector/{{injected}}.tab",
        seed=f"{LV_MODELS}/injector/{{injected}}.seed",
    output:
        results=[
            f"{LV_RAW}/injection/{name}/{{injected}}.csv"
            for name in VALIDATION_EXPERIMENTS
        ],
        reports=[
            f"{LV_RAW}/injection/{name}/{{injected}}.injector.csv"
            for name in VALIDATION_EXPERIMENTS
        ],
        provenance=[
            f"{LV_RAW}/injection/{name}/{{injected}}.csv.prov.json"
            for name in VALIDATION_EXPERIMENTS
        ],
    log:
        f"{LOGS}/latency_variation/injected_latency_{{injected}}.log",
    benchmark:
        f"{BENCHMARKS}/latency_variation/injected_latency_{{injected}}.tsv"
    conda:
        "../../envs/build.yaml"
    resources:
        network=1,
    params:
        platform=config["platform"],
        jobs=lambda wc, output: lv_injected_probes(output.results),
        injector_level=LV_INJ["injector_level"],
        unit=LV_FIT["table_unit"],
        wait=LV_INJ["wait"],
        config={"latency_variation": LV},
    script:
        "../scripts/latency_variation/measure_injected.py"


rule measure_injected_applications:
    input:
        programs=[application_binary(app) for app in LV_APPS],
        library=program("libnnlatency.so"),
        table=f"{LV_MODELS}/injector/{{injected}}.tab",
        seed=f"{LV_MODELS}/injector/{{injected}}.seed",
    output:
        results=[f"{LV_RAW}/injection/{app}/{{injected}}.csv" for app in LV_APPS],
        reports=[
            f"{LV_RAW}/injection/{app}/{{injected}}.injector.csv" for app in LV_APPS
        ],
        provenance=[
            f"{LV_RAW}/injection/{app}/{{injected}}.csv.prov.json" for app in LV_APPS
        ],
    log:
        f"{LOGS}/latency_variation/injected_applications_{{injected}}.log",
    benchmark:
        f"{BENCHMARKS}/latency_variation/injected_applications_{{injected}}.tsv"
    conda:
        "../../envs/build.yaml"
    resources:
        network=1,
    params:
        platform=config["platform"],
        jobs=lambda wc, output: lv_injected_applications(output.results),
        injector_level=LV_INJ["injector_level"],
        unit=LV_FIT["table_unit"],
        wait=LV_INJ["wait"],
        config={"latency_variation": LV},
    script:
        "../scripts/latency_variation/measure_injected.py"


rule tidy_latency_injection:
    input:
        probes=[
            f"{LV_RAW}/injection/{name}/{point}.csv"
            for name in VALIDATION_EXPERIMENTS
            for point in LV_VALIDATION_POINTS
        ],
        probe_reports=[
            f"{LV_RAW}/injection/{name}/{point}.injector.csv"
            for name in VALIDATION_EXPERIMENTS
            for point in LV_VALIDATION_POINTS
        ],
        apps=[
            f"{LV_RAW}/injection/{app}/{point}.csv"
            for app in LV_APPS
            for point in LV_POINTS
        ],
        app_reports=[
            f"{LV_RAW}/injection/{app}/{point}.injector.csv"
            for app in LV_APPS
            for point in LV_POINTS
        ],
    output:
        samples=f"{LV_TIDY}/injected_samples.csv",
        runtimes=f"{LV_TIDY}/injected_runtimes.csv",
        reports=f"{LV_TIDY}/injector_reports.csv",
    log:
        f"{LOGS}/latency_variation/tidy_injection.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        probes=[
            (name, point)
            for name in VALIDATION_EXPERIMENTS
            for point in LV_VALIDATION_POINTS
        ],
        apps=[(app, point) for app in LV_APPS for point in LV_POINTS],
    script:
        "../scripts/latency_variation/tidy_injection.py"


rule analyse_latency_injection:
    input:
        samples=f"{LV_TIDY}/injected_samples.csv",
        runtimes=f"{LV_TIDY}/injected_runtimes.csv",
        reports=f"{LV_TIDY}/injector_reports.csv",
        distributions=f"{LV_MODELS}/distributions.csv",
        published_table4=reference("latency_variation", "table4.csv"),
    output:
        **{
            name: report(
                f"{LV_TABLES}/{name}.csv",
                caption=f"../report/latency_variation/{name}.rst",
                category="004 Latency variation",
                labels={"table": name},
            )
            for name in LV_INJ_TABLES
        },
        correlation_runs=f"{LV_TIDY}/correlation_runs.csv",
    log:
        f"{LOGS}/latency_variation/analyse_injection.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        fixed_mean_levels=LV_INJ["fixed_mean_levels"],
    script:
        "../scripts/latency_variation/analyse_injection.py"


rule plot_latency_injection:
    input:
        validation=f"{LV_TABLES}/validation.csv",
        runtimes=f"{LV_TABLES}/runtimes.csv",
        correlation_runs=f"{LV_TIDY}/correlation_runs.csv",
        table4=f"{LV_TABLES}/table4.csv",
        fixed_mean=f"{LV_TABLES}/fixed_mean.csv",
        style=STYLE,
    output:
        svg=expand(f"{LV_FIGURES}/{{name}}.svg", name=LV_INJ_FIGURES),
        png=[
            report(
                f"{LV_FIGURES}/{name}.png",
                caption=f"../report/latency_variation/{name}.rst",
                category="004 Latency variation",
                labels={"figure": name},
            )
            for name in LV_INJ_FIGURES
        ],
    log:
        f"{LOGS}/latency_variation/plot_injection.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        fixed_mean_levels=sorted(LV_INJ["fixed_mean_levels"]),
    script:
        "../scripts/latency_variation/plot_injection.py"
