# Seed 002: production campaigns with a random background per run (steady and
# bursty), the two controlled extremes, and the counter-based variability model
# (Sec. II-VI).
# Its plan (jobs, programs, platform, targets): netnoise.studies.variability.plan.

from snakemake.logging import logger

from netnoise.studies.variability import plan as variability_plan
from netnoise.studies.variability.settings import VariabilitySettings

VB = SETTINGS.study(VariabilitySettings)
VB_PATHS = study_paths("variability")
VB_TIDY = f"{VB_PATHS.tidy}/runs.csv"
VB_MODEL = variability_plan.model_file(VB_PATHS)
VB_BATCHES = variability_plan.measurement_batches(VB)
VB_APPLICATIONS = variability_plan.measured_applications(
    VB, SETTINGS.applications, application_binary
)
VB_ALLOCATION = lambda wc: variability_plan.allocation(
    VB, VB_BATCHES[wc.campaign][int(wc.batch)]
)
VB_PLATFORM = netnoise_platform.from_settings(SETTINGS.effective(VB))
VB_SKIPPED = variability_plan.skipped(VB_PLATFORM)

if VB.enabled and VB_SKIPPED:
    logger.warning(VB_SKIPPED)


wildcard_constraints:
    campaign=r"production|bursty|dedicated|maximal",
    batch=r"\d+",


# Cheap table and figure steps run on the submitting host under a cluster
# executor (profiles/slurm); only builds and measurements become jobs.
localrules:
    tidy_variability_runs,
    train_variability_model,
    tabulate_variability,
    plot_variability,


rule measure_variability_runs:
    input:
        applications=variability_plan.programs(VB_APPLICATIONS),
        loadgen=program("loadgen"),
        compressionb=program("compressionb"),
    output:
        directory(f"{VB_PATHS.raw}/{{campaign}}/batch{{batch}}"),
    log:
        f"{VB_PATHS.logs}/{{campaign}}_batch{{batch}}.log",
    benchmark:
        f"{VB_PATHS.benchmarks}/{{campaign}}_batch{{batch}}.tsv"
    conda:
        "../../envs/build.yaml"
    threads: MEASUREMENT_THREADS
    resources:
        # On a cluster, a job holding the batch's largest measured job and its
        # background nodes, one task per node.
        **measurement_resources(VB_ALLOCATION, nodes=VB_ALLOCATION),
    params:
        runs=lambda wildcards: VB_BATCHES[wildcards.campaign][int(wildcards.batch)],
        applications=VB_APPLICATIONS,
        platform=VB_PLATFORM.settings.as_config(),
        config={"variability": VB.as_config()},
    script:
        "../scripts/variability/measure.py"


rule tidy_variability_runs:
    input:
        batches=variability_plan.batch_dirs(VB_PATHS.raw, VB_BATCHES),
    output:
        VB_TIDY,
    log:
        f"{VB_PATHS.logs}/tidy.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/variability/tidy.py"


rule train_variability_model:
    input:
        VB_TIDY,
    output:
        VB_MODEL,
    log:
        f"{VB_PATHS.logs}/train.log",
    conda:
        "../../envs/analysis.yaml"
    # Folds of the out-of-fold evaluation train in parallel (same result).
    threads: 2
    params:
        model=VB.model.as_config(),
        seed=VB.seed,
    script:
        "../scripts/variability/train.py"


rule tabulate_variability:
    input:
        runs=VB_TIDY,
        model=VB_MODEL,
        published_table2=reference("variability", "table2.csv"),
        published_table4=reference("variability", "table4.csv"),
        published_table5=reference("variability", "table5.csv"),
        published_table6=reference("variability", "table6.csv"),
        published_claims=reference("variability", "claims.csv"),
        published_features=reference("variability", "features.csv"),
    output:
        **{name: f"{VB_PATHS.tables}/{name}.csv" for name in variability_plan.TABLES},
    log:
        f"{VB_PATHS.logs}/tabulate.log",
    conda:
        "../../envs/analysis.yaml"
    # Folds of the nested repeated cross-validation run in parallel (same tables).
    threads: 2
    params:
        model=VB.model.as_config(),
        seed=VB.seed,
        clock=VB_PLATFORM.clock,
    script:
        "../scripts/variability/tabulate.py"


rule plot_variability:
    input:
        **{name: f"{VB_PATHS.tables}/{name}.csv" for name in variability_plan.TABLES},
        runs=VB_TIDY,
        published_claims=reference("variability", "claims.csv"),
        published_table5=reference("variability", "table5.csv"),
        style=figure_style(),
    output:
        svg=expand(f"{VB_PATHS.figures}/{{name}}.svg", name=variability_plan.FIGURES),
        png=[
            report_result(
                f"{VB_PATHS.figures}/{name}.png",
                "variability",
                name,
                caption=f"{VB_PATHS.captions}/{name}.rst",
            )
            for name in variability_plan.FIGURES
        ],
    log:
        f"{VB_PATHS.logs}/plot.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        bound_level=VB.model.bound_level,
    script:
        "../scripts/variability/plot.py"
