# Seed 000: ImpactB and CompressionB experiments (Sec. III), one job per point.
from netnoise.impact_compression import config_id

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
