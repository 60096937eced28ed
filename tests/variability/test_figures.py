"""Seed 002 figures draw ours with the paper's values."""

from __future__ import annotations

import matplotlib.pyplot as plt

from netnoise.studies.variability import figures


def test_figures_draw_ours_with_the_papers_values(campaign_table, evaluated):
    summary = evaluated["model_summary"]
    fig = figures.rf_bound(evaluated["rf_bound"], summary)
    title = fig.axes[0].get_title()
    assert "90.2%" in title and "96.1%" in title
    points = evaluated["predicted_vs_true"]
    fig7 = figures.predicted_vs_true(points[points["figure"] == "fig7"], "R² 0.91")
    assert f"R² {points[points['figure'] == 'fig7']['r2'].iloc[0]:.2f}" in fig7.axes[0].get_title()
    assert len(figures.runtimes(campaign_table).axes) == 4  # 3 applications on a 2 x 2 grid
    assert len(figures.controlled_extremes(campaign_table).axes) == 2  # one per node count
    assert len(figures.feature_distributions(campaign_table).axes) == 4
    assert len(figures.tsne(evaluated["tsne"]).axes[0].collections) == 6
    assert "2000" in figures.learning_curve(evaluated["learning_curve"], 2000).axes[0].get_title()
    cv = figures.cross_validation(evaluated["cv_folds"], evaluated["model_evaluation"], 0.9)
    left, right = cv.axes
    assert [t.get_text() for t in left.get_yticklabels()] == list(figures.CV_LABELS.values())
    legend = [t.get_text() for t in left.get_legend().get_texts()]
    assert "paper (0.91)" in legend and sum(t.startswith("ceiling") for t in legend) == 2
    assert "calibration level 90%" in [t.get_text() for t in right.get_legend().get_texts()]
    assert "Nested 2 x 5-fold" in cv.texts[0].get_text()
    plt.close("all")


def test_fig7_names_its_split_r2_and_the_headline_claims_apart():
    # The figure's one 75/25 split and the claim's 10-fold out-of-fold R² over
    # every run differ: the title says which is which.
    from netnoise.studies.variability.headline import pooled_r2
    from tests.conftest import shipped_table

    points = shipped_table("variability", "predicted_vs_true")
    out_of_fold = shipped_table("variability", "rf_bound").dropna(subset=["z_true", "svr"])
    fig7 = points[points["figure"] == "fig7"]
    title = figures.predicted_vs_true(fig7, "R² 0.91", out_of_fold).axes[0].get_title()
    claimed = pooled_r2(list(zip(out_of_fold["z_true"], out_of_fold["svr"], strict=True)))
    assert f"R² {fig7['r2'].iloc[0]:.2f} on this split" in title
    assert f"headline claim: R² {claimed:.2f}, all {len(out_of_fold)} runs out of fold" in title
    plt.close("all")
