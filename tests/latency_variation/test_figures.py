"""Seed 004 figures draw what their tables hold."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from netnoise.studies.latency_variation import analysis, figures
from tests.latency_variation.synthetic import (
    PUBLISHED,
    points_frame,
    reports_for,
    runtimes_frame,
)


def test_figures_draw_what_the_tables_hold():
    table = pd.DataFrame(
        {
            "probe": ["tcpping"] * 3 + ["pingpong"] * 3,
            "level": [0, 50, 100] * 2,
            "mean": [10, 20, 400, 50, 70, 900],
            "std": [1, 5, 300, 4, 9, 800],
        }
    )
    fig = figures.latency_vs_load(table, "mean")
    lines = fig.axes[0].get_lines()
    assert [list(line.get_ydata()) for line in lines] == [[10, 20, 400], [50, 70, 900]]
    plt.close(fig)

    runtimes = runtimes_frame()
    delays = analysis.injector_delays(reports_for(runtimes, {(70, "lognorm"): 150.0}))
    runs = analysis.correlation_runs(runtimes, points_frame(), delays)
    t4 = analysis.table4(runs, PUBLISHED)
    fig = figures.runtime_vs_latency(runs, t4, "std")
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    ours = t4.set_index("application")
    # Our r beside the paper's for the NPB code each application stands for.
    assert labels == [
        f"cg_solver: r = {ours.loc['cg_solver', 'r_std']:.2f}"
        f" (paper, CG: {ours.loc['cg_solver', 'paper_r_std']:.2f})",
        f"lu_wavefront: r = {ours.loc['lu_wavefront', 'r_std']:.2f}"
        f" (paper, LU: {ours.loc['lu_wavefront', 'paper_r_std']:.2f})",
    ]
    # Every point carries its 95 % interval over the runs.
    assert len(fig.axes[0].containers) == 2
    assert "realised" in fig.axes[0].get_xlabel()
    plt.close(fig)
    fixed = analysis.fixed_mean_table(runtimes, points_frame(), [70], delays)
    fig = figures.fixed_mean(fixed, 70)
    assert len(fig.axes[0].patches) == 3 * 2  # three distributions, two applications
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "lognorm (std 200 µs; drawn 200 ± 150)" in labels
    plt.close(fig)
    fig = figures.table4_figure(t4)
    cells = fig.axes[0].tables[0].get_celld()
    header = [cells[0, c].get_text().get_text() for c in range(13)]
    assert header[6:10] == ["p Steiger", "p Fisher", "power", "runs/dist. for 80 %"]
    plt.close(fig)

    summary = analysis.runtime_summary(runtimes_frame())
    fig = figures.runtimes_by_level(summary, "lognorm_scale25")
    lu = next(line for line in fig.axes[0].get_lines() if line.get_label() == "lu_wavefront")
    # 1 + 0.002 × 4 × mean: 1.4 at 20 (mean 50 µs) and 2.6 at 70 (mean 200 µs).
    assert list(lu.get_ydata()) == pytest.approx([1.4, 2.6], abs=0.02)
    plt.close(fig)


def test_fixed_mean_draws_the_papers_increase_beside_lu_and_keeps_the_legend_off_the_bars():
    from netnoise.figures import legend_problems, place_legends, use_style
    from netnoise.studies.latency_variation.headline import CLAIMS, STEADY
    from tests.conftest import shipped_table

    use_style()
    fixed = shipped_table("latency_variation", "fixed_mean")
    level = fixed["level"].max()
    fig = figures.fixed_mean(fixed, level)
    ax = fig.axes[0]
    paper = [c for c in ax.collections if c.get_label().startswith("paper: LU")]
    assert len(paper) == 1
    rows = fixed[(fixed["level"] == level) & (fixed["application"] == "lu_wavefront")]
    steady = rows.loc[rows["distribution"] == STEADY, "difference_pct"].iloc[0]
    increase = CLAIMS["fixed_mean_slowdown"].tests["lu"].paper_number
    (segment,) = paper[0].get_segments()
    assert segment[:, 1] == pytest.approx(((1 + increase / 100) * (1 + steady / 100) - 1) * 100)
    apps = [t.get_text() for t in ax.get_xticklabels()]
    assert segment[:, 0].mean() == pytest.approx(apps.index("lu_wavefront"))
    assert "largest:" in ax.get_title()
    place_legends(fig)
    assert legend_problems(fig) == []
    plt.close(fig)
