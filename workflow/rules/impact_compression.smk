# Seed 000: ImpactB and CompressionB experiments (Sec. III), one co-run per point,
# every ordered pair of applications co-run on the same nodes (Sec. V), then every
# prediction method against the measured slowdowns. What runs (points, benchmark
# arguments, the files the tidy step reads, targets) is planned in
# netnoise.studies.impact_compression.plan.
from netnoise.studies.impact_compression import analysis as ic_analysis
from netnoise.studies.impact_compression import plan as ic_plan
from netnoise.studies.impact_compression.settings import ImpactCompressionSettings

IC = SETTINGS.study(ImpactCompressionSettings)
IC_PATHS = study_paths("impact_compression")
IC_RAW = IC_PATHS.raw
IC_NODES = study_nodes(IC.nodes)
IC_RANKS = IC.nodes
IC_CORUN_CONFIG = {"impact_compression": IC.as_config()}
IC_PLATFORM = study_platform(IC)
IC_LINK_MBIT = ic_plan.compression_link_mbit(IC, PLATFORM)
IC_IMPACT_FILES = ic_plan.impact_files(IC_RAW, IC, IC_LINK_MBIT)
IC_CPU_CONTROL = ic_plan.cpu_control_planned(IC, PLATFORM)
IC_RUNTIME_FILES = ic_plan.runtime_files(IC_RAW, IC, IC_LINK_MBIT, IC_CPU_CONTROL)
IC_TABLES = {name: f"{IC_PATHS.tables}/{name}.csv" for name in ic_plan.TABLE_NAMES}
# Co-run job specs: ImpactB (measured: its samples; beside: until the co-run ends),
# CompressionB in configuration {cb}, and an application measured (runs timed
# launches) or beside (looping until the co-run ends).
IC_IMPACTB = lambda output, samples=0: benchmark_job(
    "impactb", output, IC_RANKS, IC_NODES, ic_plan.impactb_args(IC, samples)
)
IC_COMPRESSIONB = lambda wc, output: benchmark_job(
    "compressionb",
    output.compression,
    IC_RANKS,
    IC_NODES,
    ic_plan.compressionb_args(IC, wc.cb, IC_LINK_MBIT),
)
IC_MEASURED_RUNS, IC_PRECISION_ARGS = ic_plan.measured_runs(IC)
IC_MEASURED_APP = lambda wc, output: application_job(
    wc.app,
    output.runs,
    IC_RANKS,
    IC_NODES,
    IC_MEASURED_RUNS,
    1,
    [*IC_PRECISION_ARGS, *ic_plan.application_args(IC, wc.app)],
)
IC_BACKGROUND_APP = lambda app, output: application_job(
    app, output, IC_RANKS, IC_NODES, 0, 1, ic_plan.application_args(IC, app)
)


wildcard_constraints:
    app=r"[a-z][a-z0-9_]*",
    partner=r"[a-z][a-z0-9_]*",
    cb=ic_analysis.CONFIG_PATTERN,


# Cheap table and figure steps run on the submitting host under a cluster
# executor (profiles/slurm); only builds and measurements become jobs.
localrules:
    tidy_impact_compression,
    analyse_impact_compression,
    plot_impact_compression,


# Impact experiments: ImpactB on the idle switch, beside each application and
# beside each CompressionB configuration.


use rule corun as measure_impact_idle with:
    input:
        impactb=program("impactb"),
    output:
        impact=f"{IC_RAW}/impact/idle.csv",
        provenance=f"{IC_RAW}/impact/idle.csv.prov.json",
    log:
        f"{IC_PATHS.logs}/impact_idle.log",
    benchmark:
        f"{IC_PATHS.benchmarks}/impact_idle.tsv"
    resources:
        **measurement_resources(IC_RANKS),
    params:
        measured=lambda wc, output: IC_IMPACTB(output.impact, IC.impact_samples),
        background=[],
        platform=IC_PLATFORM,
        config=IC_CORUN_CONFIG,


use rule corun as measure_impact_of_application with:
    input:
        app=lambda wc: application_binary(wc.app),
        impactb=program("impactb"),
    output:
        impact=f"{IC_RAW}/impact/app_{{app}}.csv",
        runs=f"{IC_RAW}/runs/with_impactb/{{app}}.csv",
        provenance=f"{IC_RAW}/impact/app_{{app}}.csv.prov.json",
    log:
        f"{IC_PATHS.logs}/impact_app_{{app}}.log",
    benchmark:
        f"{IC_PATHS.benchmarks}/impact_app_{{app}}.tsv"
    resources:
        **measurement_resources(IC_RANKS, 2),
    params:
        # ImpactB measures (a fixed sample count) while the application loops, as
        # for the idle switch and CompressionB: its samples all fall in the
        # application's steady state, none in its launch or teardown.
        measured=lambda wc, output: IC_IMPACTB(output.impact, IC.impact_samples),
        background=lambda wc, output: [IC_BACKGROUND_APP(wc.app, output.runs)],
        platform=IC_PLATFORM,
        config=IC_CORUN_CONFIG,


use rule corun as measure_impact_of_compression with:
    input:
        compressionb=program("compressionb"),
        impactb=program("impactb"),
    output:
        impact=f"{IC_RAW}/impact/compression_{{cb}}.csv",
        compression=f"{IC_RAW}/compression/{{cb}}/impactb.csv",
        provenance=f"{IC_RAW}/impact/compression_{{cb}}.csv.prov.json",
    log:
        f"{IC_PATHS.logs}/impact_compression_{{cb}}.log",
    benchmark:
        f"{IC_PATHS.benchmarks}/impact_compression_{{cb}}.tsv"
    resources:
        **measurement_resources(IC_RANKS, 2),
    params:
        measured=lambda wc, output: IC_IMPACTB(output.impact, IC.impact_samples),
        background=lambda wc, output: [IC_COMPRESSIONB(wc, output)],
        platform=IC_PLATFORM,
        config=IC_CORUN_CONFIG,


# Compression experiments: each application alone and beside each configuration.


use rule corun as measure_application_alone with:
    input:
        app=lambda wc: application_binary(wc.app),
    output:
        runs=f"{IC_RAW}/runs/alone/{{app}}.csv",
        provenance=f"{IC_RAW}/runs/alone/{{app}}.csv.prov.json",
    log:
        f"{IC_PATHS.logs}/alone_{{app}}.log",
    benchmark:
        f"{IC_PATHS.benchmarks}/alone_{{app}}.tsv"
    resources:
        **measurement_resources(IC_RANKS),
    params:
        measured=IC_MEASURED_APP,
        background=[],
        platform=IC_PLATFORM,
        config=IC_CORUN_CONFIG,


use rule corun as measure_application_under_compression with:
    input:
        app=lambda wc: application_binary(wc.app),
        compressionb=program("compressionb"),
    output:
        runs=f"{IC_RAW}/runs/compression/{{app}}/{{cb}}.csv",
        compression=f"{IC_RAW}/compression/{{cb}}/{{app}}.csv",
        provenance=f"{IC_RAW}/runs/compression/{{app}}/{{cb}}.csv.prov.json",
    log:
        f"{IC_PATHS.logs}/compression_{{app}}_{{cb}}.log",
    benchmark:
        f"{IC_PATHS.benchmarks}/compression_{{app}}_{{cb}}.tsv"
    resources:
        **measurement_resources(IC_RANKS, 2),
    params:
        measured=IC_MEASURED_APP,
        background=lambda wc, output: [IC_COMPRESSIONB(wc, output)],
        platform=IC_PLATFORM,
        config=IC_CORUN_CONFIG,


# Sec. V: every ordered pair of applications co-run on the same nodes; the
# partner loops until the measured application's runs end.


use rule corun as measure_pairing with:
    input:
        app=lambda wc: application_binary(wc.app),
        partner=lambda wc: application_binary(wc.partner),
    output:
        runs=f"{IC_RAW}/runs/pairing/{{app}}/{{partner}}.csv",
        partner=f"{IC_RAW}/background/{{partner}}_beside_{{app}}.csv",
        provenance=f"{IC_RAW}/runs/pairing/{{app}}/{{partner}}.csv.prov.json",
    log:
        f"{IC_PATHS.logs}/pairing_{{app}}_{{partner}}.log",
    benchmark:
        f"{IC_PATHS.benchmarks}/pairing_{{app}}_{{partner}}.tsv"
    resources:
        **measurement_resources(IC_RANKS, 2),
    params:
        measured=IC_MEASURED_APP,
        background=lambda wc, output: [IC_BACKGROUND_APP(wc.partner, output.partner)],
        platform=IC_PLATFORM,
        config=IC_CORUN_CONFIG,


# The CPU-only control (impact_compression.cpu_control): the application beside
# cpuhog ranks on the partner's nodes and cores, as busy as its busiest partner
# was in its pairings (ic_plan.cpu_control_load), sending nothing.
rule measure_cpu_control:
    input:
        app=lambda wc: application_binary(wc.app),
        cpuhog=program("cpuhog"),
        pairings=lambda wc: [
            f"{IC_RAW}/runs/pairing/{wc.app}/{partner}.csv.prov.json"
            for partner in IC.applications
        ],
    output:
        runs=f"{IC_RAW}/runs/cpu_control/{{app}}.csv",
        cpuhog=f"{IC_RAW}/background/cpuhog_beside_{{app}}.csv",
        provenance=f"{IC_RAW}/runs/cpu_control/{{app}}.csv.prov.json",
    log:
        f"{IC_PATHS.logs}/cpu_control_{{app}}.log",
    benchmark:
        f"{IC_PATHS.benchmarks}/cpu_control_{{app}}.tsv"
    conda:
        "../../envs/build.yaml"
    threads: MEASUREMENT_THREADS
    resources:
        **measurement_resources(IC_RANKS, 2),
    params:
        measured=IC_MEASURED_APP,
        cpuhog=lambda wc, output: benchmark_job(
            "cpuhog", output.cpuhog, IC_RANKS, IC_NODES, ["--iterations", 0]
        ),
        platform=IC_PLATFORM,
        config=IC_CORUN_CONFIG,
    script:
        "../scripts/impact_compression/cpu_control.py"


rule tidy_impact_compression:
    input:
        impact=list(IC_IMPACT_FILES.values()),
        runtimes=list(IC_RUNTIME_FILES.values()),
    output:
        impact=f"{IC_PATHS.tidy}/impact.csv",
        runtimes=f"{IC_PATHS.tidy}/runtimes.csv",
    log:
        f"{IC_PATHS.logs}/tidy.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        # What each input file is, in the inputs' order.
        components=list(IC_IMPACT_FILES),
        runs=[list(key) for key in IC_RUNTIME_FILES],
    script:
        "../scripts/impact_compression/tidy.py"


rule analyse_impact_compression:
    input:
        impact=f"{IC_PATHS.tidy}/impact.csv",
        runtimes=f"{IC_PATHS.tidy}/runtimes.csv",
        published_table1=reference("impact_compression", "table1.csv"),
        published_claims=reference("impact_compression", "claims.csv"),
    output:
        **IC_TABLES,
    log:
        f"{IC_PATHS.logs}/analyse.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        clock=PLATFORM.clock,
        link_mbit=IC_LINK_MBIT,
    script:
        "../scripts/impact_compression/analyse.py"


rule plot_impact_compression:
    input:
        **IC_TABLES,
        impact=f"{IC_PATHS.tidy}/impact.csv",
        published_table1=reference("impact_compression", "table1.csv"),
        published_claims=reference("impact_compression", "claims.csv"),
        style=figure_style(),
    output:
        svg=expand(f"{IC_PATHS.figures}/{{name}}.svg", name=ic_plan.FIGURE_NAMES),
        png=[
            report_result(
                f"{IC_PATHS.figures}/{name}.png",
                "impact_compression",
                name,
                caption=f"{IC_PATHS.captions}/{name}.rst",
            )
            for name in ic_plan.FIGURE_NAMES
        ],
    log:
        f"{IC_PATHS.logs}/plot.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/impact_compression/plot.py"
