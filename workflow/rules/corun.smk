# Every co-run measurement derives from this rule (`use rule corun as ... with:`),
# giving its own input, output, log, benchmark and the params measured
# (a job spec), background (job specs) and config (the study's section).
rule corun:
    output:
        f"{platform_paths().raw}/corun/{{name}}.csv",
    log:
        f"{platform_paths().logs}/corun/{{name}}.log",
    benchmark:
        f"{platform_paths().benchmarks}/corun/{{name}}.tsv"
    conda:
        "../../envs/build.yaml"
    threads: MEASUREMENT_THREADS
    resources:
        network=1,
    params:
        platform=config["platform"],
        measured=None,
        background=[],
        config={},
    script:
        "../scripts/corun.py"
