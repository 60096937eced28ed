"""Seed 004 figures draw what their tables hold."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from netnoise.studies.latency_variation import analysis, figures
from tests.latency_variation.synthetic import PUBLISHED, points_frame, runtimes_frame


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

    runs = analysis.correlation_runs(runtimes_frame(), points_frame())
    t4 = analysis.table4(runs, PUBLISHED)
    fig = figures.runtime_vs_latency(runs, t4, "std")
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels == ["cg_solver (r = 1.00)", "lu_wavefront (r = 1.00)"]
    plt.close(fig)
    fig = figures.fixed_mean(analysis.fixed_mean_table(runtimes_frame(), points_frame(), [70]), 70)
    assert len(fig.axes[0].patches) == 3 * 2  # three distributions, two applications
    plt.close(fig)
    fig = figures.table4_figure(t4)
    assert fig.axes[0].tables
    plt.close(fig)

    summary = analysis.runtime_summary(runtimes_frame())
    fig = figures.runtimes_by_level(summary, "lognorm_scale25")
    lu = next(line for line in fig.axes[0].get_lines() if line.get_label() == "lu_wavefront")
    # 1 + 0.002 × 4 × mean: 1.4 at 20 (mean 50 µs) and 2.6 at 70 (mean 200 µs).
    assert list(lu.get_ydata()) == pytest.approx([1.4, 2.6], abs=0.02)
    plt.close(fig)
