"""The simulator's slowdown figures: one band per topology group, the right axes."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from netnoise.studies.network_noise import figures


def _row(figure, topology, dimensions, endpoints, ratio, mean):
    return {
        "figure": figure,
        "topology": topology,
        "dimensions": dimensions,
        "endpoints": endpoints,
        "ratio": ratio,
        "slowdown_mean": mean,
        "slowdown_p2.5": 1.0,
        "slowdown_p97.5": mean + 1,
    }


@pytest.fixture
def summary() -> pd.DataFrame:
    rows = [
        _row("fat_tree_size", "xgft:4,8/1,4", None, 32, 0.5, 1.4),
        _row("fat_tree_size", "xgft:4,4/1,2", None, 16, 0.5, 1.2),
        _row("torus_size", "torus:4x4", 2, 16, 0.5, 2.0),
        _row("torus_size", "torus:3x3x3", 3, 27, 0.5, 1.5),
    ]
    for ratio in (0.5, 0.25):
        rows += [
            _row("torus_ratio", "torus:4x4", 2, 16, ratio, 1 + 4 * ratio),
            _row("torus_ratio", "torus:3x3x3", 3, 27, ratio, 1 + 2 * ratio),
            _row("fabric_ratio", "fabric:maps/chic.topo", None, 20, ratio, 1 + ratio),
        ]
    return pd.DataFrame(rows)


def _lines(fig):
    ax = fig.axes[0]
    return {
        line.get_label(): (list(line.get_xdata()), list(line.get_ydata()))
        for line in ax.get_lines()
    }


def test_fabric_ratio_names_each_file(summary):
    fig = figures.fabric_ratio(summary)
    assert _lines(fig) == {"chic.topo (20 endpoints)": ([0.25, 0.5], [1.25, 1.5])}
    assert fig.axes[0].get_xscale() == "linear"
    plt.close(fig)


def test_fat_tree_size_is_one_band_over_log_endpoints(summary):
    fig = figures.fat_tree_size(summary)
    assert _lines(fig) == {"XGFT, ratio 1/2": ([16, 32], [1.2, 1.4])}
    assert fig.axes[0].get_xscale() == "log"
    plt.close(fig)


def test_torus_figures_have_one_band_per_dimension(summary):
    fig = figures.torus_ratio(summary)
    assert _lines(fig) == {
        "2-D torus, 16 endpoints": ([0.25, 0.5], [2.0, 3.0]),
        "3-D torus, 27 endpoints": ([0.25, 0.5], [1.5, 2.0]),
    }
    plt.close(fig)
    fig = figures.torus_size(summary)
    assert _lines(fig) == {"2-D torus": ([16], [2.0]), "3-D torus": ([27], [1.5])}
    assert fig.axes[0].get_xscale() == "log"
    assert fig.axes[0].get_ylabel() == "slowdown (perturbed / unperturbed)"
    plt.close(fig)


def test_no_fabric_rows_draw_no_legend(summary):
    fig = figures.fabric_ratio(summary[summary["figure"] != "fabric_ratio"])
    assert fig.axes[0].get_legend() is None
    plt.close(fig)
