from netnoise.figures import plot_job
from netnoise.studies.variability import figures


def draw(table):
    runs, points, summary = table("runs"), table("predicted_vs_true"), table("model_summary")
    claims = table("published_claims").set_index("quantity")["value"]
    unseen = table("published_table5").set_index(["application", "added"])["r2"]
    return {
        "fig1_runtimes": figures.runtimes(runs),
        "fig2_features": figures.feature_distributions(runs),
        "fig4_controlled_extremes": figures.controlled_extremes(runs),
        "fig5_tsne": figures.tsne(table("tsne")),
        "fig7_predicted_vs_true": figures.predicted_vs_true(
            points[points["figure"] == "fig7"],
            f"R² {claims['train_fraction_0.75']:.2f}, 75 % of the runs trained",
            table("rf_bound").dropna(subset=["z_true", "svr"]),
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
            table("learning_curve"), claims["learning_curve_samples"]
        ),
        "fig11_rf_bound": figures.rf_bound(table("rf_bound"), summary),
        "cross_validation": figures.cross_validation(
            table("cv_folds"), table("model_evaluation"), snakemake.params.bound_level
        ),
    }


plot_job(snakemake, draw)
