# The test tree's study (tests/core/toy_study): the smallest and largest
# message of the platform's baseline ping-pong, for its claim.
TOY = SETTINGS.study(netnoise_studies.get("toy").settings)
TOY_PATHS = study_paths("toy")


rule tabulate_toy:
    input:
        f"{platform_paths().tidy}/baseline_latency.csv",
    output:
        f"{TOY_PATHS.tables}/latency_growth.csv",
    log:
        f"{TOY_PATHS.logs}/tabulate.log",
    params:
        min_ratio=TOY.min_ratio,
    script:
        "scripts/latency_growth.py"
