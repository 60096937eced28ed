# Seed 002: a production campaign with a random background per run, the two
# controlled extremes, and the counter-based variability model (Sec. II-VI).

VB = config["variability"]
VB_RAW = f"{RESULTS}/raw/variability"
VB_TIDY = f"{RESULTS}/tidy/variability/runs.csv"
VB_MODEL = f"{RESULTS}/models/variability.joblib"
VB_TABLES = f"{RESULTS}/tables/variability"
VB_FIGURES = f"{RESULTS}/figures/variability"
VB_BATCHES = variability_batches()
VB_TABLE_NAMES = [
    "table2_runtime_statistics",
    "table3_metrics",
    "table4_correlations",
    "feature_importance",
    "model_summary",
    "learning_curve",
    "train_fraction",
    "table5_unseen_application",
    "predicted_vs_true",
    "rf_bound",
    "tsne",
    "table6_use_cases",
    "controlled_estimates",
]
# Tables the report shows; the others only feed figures.
VB_REPORTED_TABLES = [
    "table2_runtime_statistics",
    "table3_metrics",
    "table4_correlations",
    "feature_importance",
    "model_summary",
    "train_fraction",
    "table5_unseen_application",
    "table6_use_cases",
    "controlled_estimates",
]
VB_FIGURE_NAMES = [
    "fig1_runtimes",
    "fig2_features",
    "fig4_controlled_extremes",
    "fig5_tsne",
    "fig7_predicted_vs_true",
    "fig8_learning_curve",
    "fig9_unseen_application",
    "fig10_sparse_samples",
    "fig11_rf_bound",
]


wildcard_constraints:
    campaign=r"production|dedicated|maximal",
    batch=r"\d+",


# Cheap table and figure steps run on the submitting host under a cluster
# executor (profiles/slurm); only builds and measurements become jobs.
localrules:
    tidy_variability_runs,
    train_variability_model,
    tabulate_variability,
    plot_variability,


study_targets("variability", variability_targets)


rule measure_variability_runs:
    input:
        applications=variability_programs(),
        loadgen=program("loadgen"),
        compressionb=program("compressionb"),
    output:
        directory(f"{VB_RAW}/{{campaign}}/batch{{batch}}"),
    log:
        f"{LOGS}/variability/{{campaign}}_batch{{batch}}.log",
    benchmark:
        f"{BENCHMARKS}/variability/{{campaign}}_batch{{batch}}.tsv"
    conda:
        "../../envs/build.yaml"
    resources:
        network=1,
    params:
        runs=variability_batch_runs,
        applications={name: application_program(name) for name in VB["applications"]},
        platform=variability_platform(),
        config={"variability": VB},
    script:
        "../scripts/variability/measure.py"


rule tidy_variability_runs:
    input:
        batches=[
            f"{VB_RAW}/{campaign}/batch{b}"
            for campaign, runs in VB_BATCHES.items()
            for b in range(len(runs))
        ],
    output:
        VB_TIDY,
    log:
        f"{LOGS}/variability/tidy.log",
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
        f"{LOGS}/variability/train.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        model=VB["model"],
        seed=VB["seed"],
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
        **{
            name: (
                report(
                    f"{VB_TABLES}/{name}.csv",
                    caption=f"../report/variability/{name}.rst",
                    category="002 Variability model",
                    labels={"table": name},
                )
                if name in VB_REPORTED_TABLES
                else f"{VB_TABLES}/{name}.csv"
            )
            for name in VB_TABLE_NAMES
        },
    log:
        f"{LOGS}/variability/tabulate.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        model=VB["model"],
        seed=VB["seed"],
    script:
        "../scripts/variability/tabulate.py"


rule plot_variability:
    input:
        **{name: f"{VB_TABLES}/{name}.csv" for name in VB_TABLE_NAMES},
        runs=VB_TIDY,
        published_claims=reference("variability", "claims.csv"),
        published_table5=reference("variability", "table5.csv"),
        style=STYLE,
    output:
        svg=expand(f"{VB_FIGURES}/{{name}}.svg", name=VB_FIGURE_NAMES),
        png=[
            report(
                f"{VB_FIGURES}/{name}.png",
                caption=f"../report/variability/{name}.rst",
                category="002 Variability model",
                labels={"figure": name},
            )
            for name in VB_FIGURE_NAMES
        ],
    log:
        f"{LOGS}/variability/plot.log",
    conda:
        "../../envs/analysis.yaml"
    script:
        "../scripts/variability/plot.py"
