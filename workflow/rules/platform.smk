# Cheap table and figure steps run on the submitting host under a cluster
# executor (profiles/slurm); only builds and measurements become jobs.
localrules:
    tidy_baseline_latency,
    tabulate_baseline_latency,
    plot_baseline_latency,
    tabulate_provenance,


PLATFORM_PATHS = platform_paths()


rule validate_testbed:
    output:
        table=f"{PLATFORM_PATHS.tables}/testbed_validation.csv",
        provenance=f"{PLATFORM_PATHS.tables}/testbed_validation.csv.prov.json",
    log:
        f"{PLATFORM_PATHS.logs}/validate_testbed.log",
    benchmark:
        f"{PLATFORM_PATHS.benchmarks}/validate_testbed.tsv"
    conda:
        "../../envs/build.yaml"
    threads: MEASUREMENT_THREADS
    resources:
        network=1,
    params:
        platform=config["platform"],
        seconds=5,
    script:
        "../scripts/platform/validate_testbed.py"


onsuccess:
    release_platform()
    scheduler_timers.cancel_pending()


onerror:
    release_platform()
    scheduler_timers.cancel_pending()


BASELINE = config["baseline"]
BASELINE_RAW = f"{PLATFORM_PATHS.raw}/baseline/pingpong_size{{size}}_rep{{rep}}.csv"
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
        f"{PLATFORM_PATHS.logs}/baseline/pingpong_size{{size}}_rep{{rep}}.log",
    benchmark:
        f"{PLATFORM_PATHS.benchmarks}/baseline/pingpong_size{{size}}_rep{{rep}}.tsv"
    conda:
        "../../envs/build.yaml"
    threads: MEASUREMENT_THREADS
    resources:
        **measurement_resources(BASELINE["ranks"]),
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
        f"{PLATFORM_PATHS.tidy}/baseline_latency.csv",
    log:
        f"{PLATFORM_PATHS.logs}/tidy_baseline_latency.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        identifiers={"rep": [run["rep"] for run in BASELINE_RUNS]},
    script:
        "../scripts/tidy_results.py"


rule tabulate_baseline_latency:
    input:
        f"{PLATFORM_PATHS.tidy}/baseline_latency.csv",
    output:
        f"{PLATFORM_PATHS.tables}/baseline_latency.csv",
    log:
        f"{PLATFORM_PATHS.logs}/tabulate_baseline_latency.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/platform/tabulate_baseline_latency.py"


rule plot_baseline_latency:
    input:
        tidy=f"{PLATFORM_PATHS.tidy}/baseline_latency.csv",
        style=figure_style(),
    output:
        svg=f"{PLATFORM_PATHS.figures}/baseline_latency.svg",
        png=report_result(
            f"{PLATFORM_PATHS.figures}/baseline_latency.png",
            "platform",
            "baseline_latency_figure",
            caption=f"{PLATFORM_PATHS.captions}/baseline_latency_figure.rst",
        ),
    log:
        f"{PLATFORM_PATHS.logs}/plot_baseline_latency.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        platform=config["platform"]["kind"],
    script:
        "../scripts/platform/plot_baseline_latency.py"


# Provenance of every measured result, tabulated for the report.


rule tabulate_provenance:
    input:
        # After every table, so every measurement (and its sidecar) exists.
        tables=[t for t in all_targets() if t.endswith(".csv")],
    output:
        provenance=f"{PLATFORM_PATHS.tables}/provenance.csv",
        cpu=f"{PLATFORM_PATHS.tables}/cpu_summary.csv",
    log:
        f"{PLATFORM_PATHS.logs}/tabulate_provenance.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        results=lambda wc, output: str(Path(output[0]).parent.parent),
    script:
        "../scripts/platform/tabulate_provenance.py"
