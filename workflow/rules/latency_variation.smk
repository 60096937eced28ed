# Seed 004: latency under background load (Sec. 5), the fitted distributions injected
# into probes, barrier (Sec. 6) and applications (Sec. 7), and the statistics (Table 4).
# What runs is planned in netnoise.studies.latency_variation.plan.
from netnoise.studies.latency_variation import plan as lv_plan
from netnoise.studies.latency_variation.names import PROBES
from netnoise.studies.latency_variation.settings import LatencyVariationSettings

LV = SETTINGS.study(LatencyVariationSettings)
LV_FIT = LV.fit
LV_INJ = LV.injection
LV_PATHS = study_paths("latency_variation")
LV_RAW = LV_PATHS.raw
LV_NODES = study_nodes(LV.nodes)
LV_RANKS = LV.nodes
LV_APPS = LV_INJ.applications
LV_CHARACTERIZATION = lv_plan.characterization_runs(LV)
# Every injected distribution (level x distribution) and the zero table.
LV_POINTS = lv_plan.injected_points(LV)
# The probes and the barrier this platform runs (no tcpping in a simulation).
LV_VALIDATION = lv_plan.validation_experiments(PLATFORM)
LV_PROBE_RUNS = lv_plan.probe_runs(LV, LV_VALIDATION)
LV_FIGURES = lv_plan.injection_figures(PLATFORM)
LV_APP_RUNS = lv_plan.application_runs(LV)


wildcard_constraints:
    probe="|".join(PROBES),
    level=r"\d+",
    injected=r"zero|L\d+_[a-z][a-z0-9_]*",


# Cheap table and figure steps run on the submitting host under a cluster
# executor (profiles/slurm); only builds and measurements become jobs.
localrules:
    tabulate_latency_characterization,
    fit_latency_distributions,
    plot_latency_characterization,
    tidy_latency_injection,
    analyse_latency_injection,
    plot_latency_injection,


# Sec. 5: each probe at each level of background load, the fits of Sec. 5.3
# and the injector tables made from them. A platform that cannot run a probe
# beside a load takes the latency another run measured
# (characterize.from_bundle): it injects that network's.
if LV.characterize.from_bundle:

    localrules:
        unpack_latency_characterization,

    rule unpack_latency_characterization:
        input:
            bundle=LV.characterize.from_bundle,
        output:
            samples=f"{LV_PATHS.tidy}/characterization.csv",
            load=f"{LV_PATHS.tidy}/load.csv",
        log:
            f"{LV_PATHS.logs}/unpack_characterization.log",
        conda:
            "../../envs/analysis.yaml"
        params:
            levels=LV.characterize.levels,
        script:
            "../scripts/latency_variation/unpack_characterization.py"

else:

    localrules:
        tidy_latency_characterization,

    use rule corun as measure_latency_under_load with:
        input:
            probe=lambda wc: program(wc.probe),
            loadgen=program("loadgen"),
        output:
            latency=f"{LV_RAW}/characterize/{{probe}}_L{{level}}.csv",
            load=f"{LV_RAW}/characterize/{{probe}}_L{{level}}.loadgen.csv",
            provenance=f"{LV_RAW}/characterize/{{probe}}_L{{level}}.csv.prov.json",
        log:
            f"{LV_PATHS.logs}/characterize_{{probe}}_L{{level}}.log",
        benchmark:
            f"{LV_PATHS.benchmarks}/characterize_{{probe}}_L{{level}}.tsv"
        resources:
            **measurement_resources(LV_RANKS, 2),
        params:
            measured=lambda wc, output: benchmark_job(
                wc.probe,
                output.latency,
                *lv_plan.probe_placement(LV, wc.probe, LV_NODES),
                lv_plan.probe_args(LV, wc.probe),
            ),
            background=lambda wc, output: [
                benchmark_job(
                    "loadgen",
                    output.load,
                    LV_RANKS,
                    LV_NODES,
                    lv_plan.loadgen_args(LV, int(wc.level), PLATFORM),
                )
            ],
            config={"latency_variation": LV.as_config()},

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
            samples=f"{LV_PATHS.tidy}/characterization.csv",
            load=f"{LV_PATHS.tidy}/load.csv",
        log:
            f"{LV_PATHS.logs}/tidy_characterization.log",
        conda:
            "../../envs/analysis.yaml"
        params:
            points=LV_CHARACTERIZATION,
        script:
            "../scripts/latency_variation/tidy_characterization.py"


rule tabulate_latency_characterization:
    input:
        samples=f"{LV_PATHS.tidy}/characterization.csv",
        load=f"{LV_PATHS.tidy}/load.csv",
    output:
        f"{LV_PATHS.tables}/characterization.csv",
    log:
        f"{LV_PATHS.logs}/tabulate_characterization.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/latency_variation/tabulate_characterization.py"


rule fit_latency_distributions:
    input:
        samples=f"{LV_PATHS.tidy}/characterization.csv",
    output:
        fits=f"{LV_PATHS.models}/fits.csv",
        distributions=f"{LV_PATHS.models}/distributions.csv",
        tables=expand(
            f"{LV_PATHS.models}/injector/{{injected}}.tab", injected=LV_POINTS
        ),
        seeds=expand(
            f"{LV_PATHS.models}/injector/{{injected}}.seed", injected=LV_POINTS
        ),
    log:
        f"{LV_PATHS.logs}/fit_distributions.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        fit=LV_FIT.as_config(),
        injected_levels=LV_INJ.levels,
        seed=LV.seed,
    script:
        "../scripts/latency_variation/fit_distributions.py"


rule plot_latency_characterization:
    input:
        table=f"{LV_PATHS.tables}/characterization.csv",
        samples=f"{LV_PATHS.tidy}/characterization.csv",
        fits=f"{LV_PATHS.models}/fits.csv",
        style=figure_style(),
    output:
        svg=expand(
            f"{LV_PATHS.figures}/{{name}}.svg", name=lv_plan.CHARACTERIZATION_FIGURES
        ),
        png=[
            report_result(
                f"{LV_PATHS.figures}/{name}.png",
                "latency_variation",
                name,
                caption=f"{LV_PATHS.captions}/{name}.rst",
            )
            for name in lv_plan.CHARACTERIZATION_FIGURES
        ],
    log:
        f"{LV_PATHS.logs}/plot_characterization.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        probe=LV_FIT.probe,
    script:
        "../scripts/latency_variation/plot_characterization.py"


# The preloaded library, where this flavour builds one (SMPI's programs carry
# the injector themselves).
LV_INJECTOR_TABLE = {
    **(
        {"library": program("libnnlatency.so")}
        if "libnnlatency.so" in _C_PROGRAMS
        else {}
    ),
    "table": f"{LV_PATHS.models}/injector/{{injected}}.tab",
    "seed": f"{LV_PATHS.models}/injector/{{injected}}.seed",
}


# Sec. 6: the probes and the barrier with every send delayed from an injector
# table (the uniform and the fitted log-normal of each level, and zero).
rule measure_injected_latency:
    input:
        **LV_INJECTOR_TABLE,
        programs=[program(name) for name in LV_VALIDATION],
    output:
        **lv_plan.injected_files(LV_RAW, LV_VALIDATION),
    log:
        f"{LV_PATHS.logs}/injected_latency_{{injected}}.log",
    benchmark:
        f"{LV_PATHS.benchmarks}/injected_latency_{{injected}}.tsv"
    conda:
        "../../envs/build.yaml"
    threads: MEASUREMENT_THREADS
    resources:
        **measurement_resources(LV_RANKS),
    params:
        platform=study_platform(LV),
        jobs=lambda wc, output: lv_plan.injected_probes(
            LV, LV_NODES, output.results, benchmark_job, LV_VALIDATION
        ),
        injector_level=lv_plan.injector_level(LV, PLATFORM),
        unit=LV_FIT.table_unit,
        wait=LV_INJ.wait,
        sleep_margin_us=LV_INJ.sleep_margin_us,
        config={"latency_variation": LV.as_config()},
    script:
        "../scripts/latency_variation/measure_injected.py"


# Sec. 7: the applications with every distribution of every level, and zero.
use rule measure_injected_latency as measure_injected_applications with:
    input:
        **LV_INJECTOR_TABLE,
        programs=[application_binary(app) for app in LV_APPS],
    output:
        **lv_plan.injected_files(LV_RAW, LV_APPS),
    log:
        f"{LV_PATHS.logs}/injected_applications_{{injected}}.log",
    benchmark:
        f"{LV_PATHS.benchmarks}/injected_applications_{{injected}}.tsv"
    params:
        jobs=lambda wc, output: lv_plan.injected_applications(
            LV, LV_NODES, output.results, application_job
        ),


# Sec. 6-7: tidy tables of every injected run, the statistics (Table 4) and figures.
rule tidy_latency_injection:
    input:
        probes=[
            f"{LV_RAW}/injection/{name}/{point}.csv" for name, point in LV_PROBE_RUNS
        ],
        probe_reports=[
            f"{LV_RAW}/injection/{name}/{point}.injector.csv"
            for name, point in LV_PROBE_RUNS
        ],
        apps=[f"{LV_RAW}/injection/{app}/{point}.csv" for app, point in LV_APP_RUNS],
        app_reports=[
            f"{LV_RAW}/injection/{app}/{point}.injector.csv"
            for app, point in LV_APP_RUNS
        ],
    output:
        samples=f"{LV_PATHS.tidy}/injected_samples.csv",
        runtimes=f"{LV_PATHS.tidy}/injected_runtimes.csv",
        reports=f"{LV_PATHS.tidy}/injector_reports.csv",
    log:
        f"{LV_PATHS.logs}/tidy_injection.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        probes=LV_PROBE_RUNS,
        apps=LV_APP_RUNS,
    script:
        "../scripts/latency_variation/tidy_injection.py"


rule analyse_latency_injection:
    input:
        samples=f"{LV_PATHS.tidy}/injected_samples.csv",
        runtimes=f"{LV_PATHS.tidy}/injected_runtimes.csv",
        reports=f"{LV_PATHS.tidy}/injector_reports.csv",
        distributions=f"{LV_PATHS.models}/distributions.csv",
        published_table4=reference("latency_variation", "table4.csv"),
    output:
        **{name: f"{LV_PATHS.tables}/{name}.csv" for name in lv_plan.INJECTION_TABLES},
        correlation_runs=f"{LV_PATHS.tidy}/correlation_runs.csv",
    log:
        f"{LV_PATHS.logs}/analyse_injection.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        fixed_mean_levels=LV_INJ.fixed_mean_levels,
    script:
        "../scripts/latency_variation/analyse_injection.py"


rule plot_latency_injection:
    input:
        validation=f"{LV_PATHS.tables}/validation.csv",
        runtimes=f"{LV_PATHS.tables}/runtimes.csv",
        correlation_runs=f"{LV_PATHS.tidy}/correlation_runs.csv",
        table4=f"{LV_PATHS.tables}/table4.csv",
        fixed_mean=f"{LV_PATHS.tables}/fixed_mean.csv",
        style=figure_style(),
    output:
        svg=expand(f"{LV_PATHS.figures}/{{name}}.svg", name=LV_FIGURES),
        png=[
            report_result(
                f"{LV_PATHS.figures}/{name}.png",
                "latency_variation",
                name,
                caption=f"{LV_PATHS.captions}/{name}.rst",
            )
            for name in LV_FIGURES
        ],
    log:
        f"{LV_PATHS.logs}/plot_injection.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        fixed_mean_levels=sorted(LV_INJ.fixed_mean_levels),
        figures=LV_FIGURES,
    script:
        "../scripts/latency_variation/plot_injection.py"
