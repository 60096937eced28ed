# Seed 000: ImpactB and CompressionB experiments (Sec. III), one job per point.
from netnoise.studies.impact_compression.analysis import config_id

IC = config["impact_compression"]
IC_RAW = f"{RESULTS}/raw/impact_compression"
IC_NODES = study_nodes(IC["nodes"])
IC_RANKS = IC["nodes"]
IC_APPS = IC["applications"]
IC_GRID = IC["compression"]
IC_CONFIGS = {
    config_id(p, m, b): (p, m, b)
    for p in IC_GRID["partners"]
    for m in IC_GRID["messages"]
    for b in IC_GRID["sleep_cycles"]
}


wildcard_constraints:
    app=r"[a-z][a-z0-9_]*",
    partner=r"[a-z][a-z0-9_]*",
    cb=r"p\d+_m\d+_b\d+",


# Cheap table and figure steps run on the submitting host under a cluster
# executor (profiles/slurm); only builds and measurements become jobs.
localrules:
    tidy_impact_compression,
    analyse_impact_compression,
    plot_impact_compression,


study_targets("impact_compression", impact_compression_targets)


rule measure_impact_idle:
    input:
        impactb=program("impactb"),
    output:
        impact=f"{IC_RAW}/impact/idle.csv",
        provenance=f"{IC_RAW}/impact/idle.csv.prov.json",
    log:
        f"{LOGS}/impact_compression/impact_idle.log",
    benchmark:
        f"{BENCHMARKS}/impact_compression/impact_idle.tsv"
    conda:
        "../../envs/build.yaml"
    resources:
        network=1,
    params:
        platform=config["platform"],
        measured=lambda wc, output: impactb(output.impact, IC["impact_samples"]),
        background=[],
        config={"impact_compression": IC},
    script:
        "../scripts/corun.py"


rule measure_impact_of_application:
    input:
        app=app_program,
        impactb=program("impactb"),
    output:
        impact=f"{IC_RAW}/impact/app_{{app}}.csv",
        runs=f"{IC_RAW}/runs/with_impactb/{{app}}.csv",
        provenance=f"{IC_RAW}/impact/app_{{app}}.csv.prov.json",
    log:
        f"{LOGS}/impact_compression/impact_app_{{app}}.log",
    benchmark:
        f"{BENCHMARKS}/impact_compression/impact_app_{{app}}.tsv"
    conda:
        "../../envs/build.yaml"
    resources:
        network=1,
    params:
        platform=config["platform"],
        measured=lambda wc, output: measured_app(wc.app, output.runs),
        background=lambda wc, output: [impactb(output.impact)],
        config={"impact_compression": IC},
    script:
        "../scripts/corun.py"


rule measure_impact_of_compression:
    input:
        compressionb=program("compressionb"),
        impactb=program("impactb"),
    output:
        impact=f"{IC_RAW}/impact/compression_{{cb}}.csv",
        compression=f"{IC_RAW}/compression/{{cb}}/impactb.csv",
        provenance=f"{IC_RAW}/impact/compression_{{cb}}.csv.prov.json",
    log:
        f"{LOGS}/impact_compression/impact_compression_{{cb}}.log",
    benchmark:
        f"{BENCHMARKS}/impact_compression/impact_compression_{{cb}}.tsv"
    conda:
        "../../envs/build.yaml"
    resources:
        network=1,
    params:
        platform=config["platform"],
        measured=lambda wc, output: impactb(output.impact, IC["impact_samples"]),
        background=lambda wc, output: [compressionb(wc.cb, output.compression)],
        config={"impact_compression": IC},
    script:
        "../scripts/corun.py"


rule measure_application_alone:
    input:
        app=app_program,
    output:
        runs=f"{IC_RAW}/runs/alone/{{app}}.csv",
        provenance=f"{IC_RAW}/runs/alone/{{app}}.csv.prov.json",
    log:
        f"{LOGS}/impact_compression/alone_{{app}}.log",
    benchmark:
        f"{BENCHMARKS}/impact_compression/alone_{{app}}.tsv"
    conda:
        "../../envs/build.yaml"
    resources:
        network=1,
    params:
        platform=config["platform"],
        measured=lambda wc, output: measured_app(wc.app, output.runs),
        background=[],
        config={"impact_compression": IC},
    script:
        "../scripts/corun.py"


rule measure_application_under_compression:
    input:
        app=app_program,
        compressionb=program("compressionb"),
    output:
        runs=f"{IC_RAW}/runs/compression/{{app}}/{{cb}}.csv",
        compression=f"{IC_RAW}/compression/{{cb}}/{{app}}.csv",
        provenance=f"{IC_RAW}/runs/compression/{{app}}/{{cb}}.csv.prov.json",
    log:
        f"{LOGS}/impact_compression/compression_{{app}}_{{cb}}.log",
    benchmark:
        f"{BENCHMARKS}/impact_compression/compression_{{app}}_{{cb}}.tsv"
    conda:
        "../../envs/build.yaml"
    resources:
        network=1,
    params:
        platform=config["platform"],
        measured=lambda wc, output: measured_app(wc.app, output.runs),
        background=lambda wc, output: [compressionb(wc.cb, output.compression)],
        config={"impact_compression": IC},
    script:
        "../scripts/corun.py"


# Seed 000 Sec. V: every ordered pair of applications co-run on the same nodes,
# then every prediction method against the measured slowdowns.

IC_TIDY = f"{RESULTS}/tidy/impact_compression"
IC_TABLES = f"{RESULTS}/tables/impact_compression"
IC_FIGURES = f"{RESULTS}/figures/impact_compression"
IC_PAIRS = [(a, b) for a in IC_APPS for b in IC_APPS]
IC_FIGURE_NAMES = [
    "fig3_impact_latency",
    "fig6_compression_utilization",
    "fig7_degradation",
    "fig8_prediction_errors",
    "fig9_error_summary",
    "table1_slowdowns",
]
IC_TABLE_NAMES = [
    "utilization",
    "degradation",
    "slowdowns",
    "predictions",
    "error_summary",
    "table1",
]


rule measure_pairing:
    input:
        app=app_program,
        partner=partner_program,
    output:
        runs=f"{IC_RAW}/runs/pairing/{{app}}/{{partner}}.csv",
        partner=f"{IC_RAW}/background/{{partner}}_beside_{{app}}.csv",
        provenance=f"{IC_RAW}/runs/pairing/{{app}}/{{partner}}.csv.prov.json",
    log:
        f"{LOGS}/impact_compression/pairing_{{app}}_{{partner}}.log",
    benchmark:
        f"{BENCHMARKS}/impact_compression/pairing_{{app}}_{{partner}}.tsv"
    conda:
        "../../envs/build.yaml"
    resources:
        network=1,
    params:
        platform=config["platform"],
        measured=lambda wc, output: measured_app(wc.app, output.runs),
        background=lambda wc, output: [background_app(wc.partner, output.partner)],
        config={"impact_compression": IC},
    script:
        "../scripts/corun.py"


rule tidy_impact_compression:
    input:
        idle=f"{IC_RAW}/impact/idle.csv",
        impact_apps=expand(f"{IC_RAW}/impact/app_{{app}}.csv", app=IC_APPS),
        impact_compression=expand(
            f"{IC_RAW}/impact/compression_{{cb}}.csv", cb=IC_CONFIGS
        ),
        alone=expand(f"{IC_RAW}/runs/alone/{{app}}.csv", app=IC_APPS),
        compression=expand(
            f"{IC_RAW}/runs/compression/{{app}}/{{cb}}.csv", app=IC_APPS, cb=IC_CONFIGS
        ),
        pairing=[f"{IC_RAW}/runs/pairing/{a}/{b}.csv" for a, b in IC_PAIRS],
    output:
        impact=f"{IC_TIDY}/impact.csv",
        runtimes=f"{IC_TIDY}/runtimes.csv",
    log:
        f"{LOGS}/impact_compression/tidy.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        apps=IC_APPS,
        configs=list(IC_CONFIGS),
        pairs=IC_PAIRS,
    script:
        "../scripts/impact_compression/tidy.py"


rule analyse_impact_compression:
    input:
        impact=f"{IC_TIDY}/impact.csv",
        runtimes=f"{IC_TIDY}/runtimes.csv",
    output:
        **{name: f"{IC_TABLES}/{name}.csv" for name in IC_TABLE_NAMES},
    log:
        f"{LOGS}/impact_compression/analyse.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/impact_compression/analyse.py"


rule plot_impact_compression:
    input:
        **{name: f"{IC_TABLES}/{name}.csv" for name in IC_TABLE_NAMES},
        impact=f"{IC_TIDY}/impact.csv",
        published_table1=reference("impact_compression", "table1.csv"),
        published_claims=reference("impact_compression", "claims.csv"),
        style=STYLE,
    output:
        svg=expand(f"{IC_FIGURES}/{{name}}.svg", name=IC_FIGURE_NAMES),
        png=[
            report(
                f"{IC_FIGURES}/{name}.png",
                caption=f"../report/impact_compression/{name}.rst",
                category="000 Impact and Compression",
                labels={"figure": name},
            )
            for name in IC_FIGURE_NAMES
        ],
    log:
        f"{LOGS}/impact_compression/plot.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/impact_compression/plot.py"
