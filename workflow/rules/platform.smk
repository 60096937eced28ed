# Cheap table and figure steps run on the submitting host under a cluster
# executor (profiles/slurm); only builds and measurements become jobs.
localrules:
    tidy_baseline_latency,
    tabulate_baseline_latency,
    plot_baseline_latency,
    tabulate_provenance,


rule validate_testbed:
    output:
        table=report(
            f"{RESULTS}/tables/testbed_validation.csv",
            caption="../report/platform/testbed_validation.rst",
            category="Platform",
            labels={"table": "testbed validation"},
        ),
        provenance=f"{RESULTS}/tables/testbed_validation.csv.prov.json",
    log:
        f"{LOGS}/validate_testbed.log",
    benchmark:
        f"{BENCHMARKS}/validate_testbed.tsv"
    conda:
        "../../envs/build.yaml"
    resources:
        network=1,
    params:
        platform=config["platform"],
        seconds=5,
    script:
        "../scripts/platform/validate_testbed.py"


onsuccess:
    release_testbed()


onerror:
    release_testbed()


BASELINE = config["baseline"]
BASELINE_RAW = f"{RESULTS}/raw/baseline/pingpong_size{{size}}_rep{{rep}}.csv"
BASELINE_RUNS = [
    {"size": size, "rep": rep}
    for size in BASELINE["sizes"]
    for rep in range(BASELINE["repetitions"])
]


rule measure_baseline_latency:
    input:
        program=program("pingpong"),
    output:
        result=BASELINE_RAW,
        provenance=f"{BASELINE_RAW}.prov.json",
    log:
        f"{LOGS}/baseline/pingpong_size{{size}}_rep{{rep}}.log",
    benchmark:
        f"{BENCHMARKS}/baseline/pingpong_size{{size}}_rep{{rep}}.tsv"
    conda:
        "../../envs/build.yaml"
    params:
        ranks=BASELINE["ranks"],
        args=lambda wc: [
            "--size",
            wc.size,
            "--warmup",
            BASELINE["warmup"],
            "--iterations",
            BASELINE["iterations"],
            "--seed",
            wc.rep,
        ],
        platform=config["platform"],
        config={"baseline": BASELINE},
    script:
        "../scripts/run_benchmark.py"


rule tidy_baseline_latency:
    input:
        results=[BASELINE_RAW.format(**run) for run in BASELINE_RUNS],
    output:
        f"{RESULTS}/tidy/baseline_latency.csv",
    log:
        f"{LOGS}/tidy_baseline_latency.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        identifiers={"rep": [run["rep"] for run in BASELINE_RUNS]},
    script:
        "../scripts/tidy_results.py"


rule tabulate_baseline_latency:
    input:
        f"{RESULTS}/tidy/baseline_latency.csv",
    output:
        report(
            f"{RESULTS}/tables/baseline_latency.csv",
            caption="../report/platform/baseline_latency_table.rst",
            category="Platform",
            labels={"table": "baseline latency"},
        ),
    log:
        f"{LOGS}/tabulate_baseline_latency.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/platform/tabulate_baseline_latency.py"


rule plot_baseline_latency:
    input:
        tidy=f"{RESULTS}/tidy/baseline_latency.csv",
        style=STYLE,
    output:
        svg=f"{RESULTS}/figures/baseline_latency.svg",
        png=report(
            f"{RESULTS}/figures/baseline_latency.png",
            caption="../report/platform/baseline_latency_figure.rst",
            category="Platform",
            labels={"figure": "baseline latency"},
        ),
    log:
        f"{LOGS}/plot_baseline_latency.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        platform=PLATFORM,
    script:
        "../scripts/platform/plot_baseline_latency.py"


# Provenance of every measured result, tabulated for the report.

PROVENANCE_TABLE = f"{RESULTS}/tables/provenance.csv"


rule tabulate_provenance:
    input:
        # After every table, so every measurement (and its sidecar) exists.
        tables=[t for t in all_targets() if t.endswith(".csv")],
    output:
        report(
            PROVENANCE_TABLE,
            caption="../report/platform/provenance.rst",
            category="Provenance",
            labels={"table": "provenance"},
        ),
    log:
        f"{LOGS}/tabulate_provenance.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        results=lambda wc, output: str(Path(output[0]).parent.parent),
    script:
        "../scripts/platform/tabulate_provenance.py"
