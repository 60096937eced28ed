import pandas as pd

from netnoise.figures import save_named, use_style
from netnoise.jobs import logged
from netnoise.studies.variability import figures

with logged(snakemake.log[0]):
    use_style(snakemake.input.style)
    inputs = snakemake.input
    runs = pd.read_csv(inputs.runs)
    points = pd.read_csv(inputs.predicted_vs_true)
    summary = pd.read_csv(inputs.model_summary)
    claims = pd.read_csv(inputs.published_claims).set_index("quantity")["value"]
    unseen = pd.read_csv(inputs.published_table5).set_index(["application", "added"])["r2"]
    drawn = {
        "fig1_runtimes": figures.runtimes(runs),
        "fig2_features": figures.feature_distributions(runs),
        "fig4_controlled_extremes": figures.controlled_extremes(runs),
        "fig5_tsne": figures.tsne(pd.read_csv(inputs.tsne)),
        "fig7_predicted_vs_true": figures.predicted_vs_true(
            points[points["figure"] == "fig7"],
            f"R² {claims['train_fraction_0.75']:.2f}, 75 % of the runs trained",
        ),
        "fig9_unseen_application": figures.predicted_vs_true(
            points[points["figure"] == "fig9"],
            f"R² {unseen['MILC Reorder', 0]:.2f} for unseen MILC Reorder",
        ),
        "fig10_sparse_samples": figures.predicted_vs_true(
            points[points["figure"] == "fig10"],
            f"R² {unseen['Nekbone', 40]:.2f} for Nekbone with 40 of its runs trained",
        ),
        "fig8_learning_curve": figures.learning_curve(
            pd.read_csv(inputs.learning_curve), claims["learning_curve_samples"]
        ),
        "fig11_rf_bound": figures.rf_bound(pd.read_csv(inputs.rf_bound), summary),
        "cross_validation": figures.cross_validation(
            pd.read_csv(inputs.cv_folds),
            pd.read_csv(inputs.model_evaluation),
            snakemake.params.bound_level,
        ),
    }
    save_named(drawn, [*snakemake.output.svg, *snakemake.output.png])
