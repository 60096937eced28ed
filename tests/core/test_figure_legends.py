"""No legend hides data: netnoise.figures.save moves a legend that covers data to
a free corner of its axes, else beside them, and refuses a figure whose legend
still covers data. (Every figure of every study passes through save: the
shipped bundle's review, tests/core/test_bundle.py, draws them all.)"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pytest

from netnoise import figures


@pytest.fixture(autouse=True)
def style():
    figures.use_style()
    yield
    plt.close("all")


def _bars_under_an_upper_right_legend():
    """Fig. 16's case: tall bars on the right, the legend over them."""
    fig, ax = plt.subplots()
    x = np.arange(4)
    for i in range(6):
        ax.bar(x + 0.12 * i, [5, 5, 200, 160], 0.12, label=f"distribution {i}")
    ax.legend(loc="upper right", fontsize=8)
    return fig, ax


def test_a_legend_over_bars_moves_to_a_free_corner():
    fig, ax = _bars_under_an_upper_right_legend()
    assert figures.legend_problems(fig), "the legend starts over the tall bars"
    figures.place_legends(fig)
    assert figures.legend_problems(fig) == []
    box = ax.get_legend().get_window_extent(fig.canvas.get_renderer())
    inside = ax.get_window_extent()
    assert inside.contains(*box.min) and inside.contains(*box.max)
    assert box.x1 < inside.x0 + inside.width / 2, "the free corner is the upper left"


def test_a_legend_with_no_free_corner_goes_beside_the_axes():
    fig, ax = plt.subplots()
    grid = np.linspace(0, 1, 25)
    xs, ys = np.meshgrid(grid, grid)
    ax.scatter(xs.ravel(), ys.ravel(), s=10, label="runs")
    ax.plot(grid, grid, label="fit")
    ax.legend()
    figures.place_legends(fig)
    assert figures.legend_problems(fig) == []
    box = ax.get_legend().get_window_extent(fig.canvas.get_renderer())
    assert box.x0 > ax.get_window_extent().x1 or box.y1 < ax.get_window_extent().y0


def test_guides_are_not_data():
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1], label="data")
    ax.axhline(0.9, label="zero line")
    ax.axvspan(0, 0.5, alpha=0.1, label="band")
    ax.fill_between([0, 1], 0.5, 1, alpha=0.1, gid=figures.GUIDE, label="region")
    ax.legend(loc="upper left")
    assert [a.get_label() for a in figures.data_artists(ax)] == ["data"]
    assert figures.legend_problems(fig) == []


def test_lines_count_where_they_pass_not_only_at_their_points():
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1], label="diagonal")
    ax.legend(loc="center")
    hidden = figures.legend_problems(fig)
    assert hidden and "diagonal" in hidden[0]


def test_save_moves_the_legend_and_writes(tmp_path):
    fig, _ = _bars_under_an_upper_right_legend()
    figures.save(fig, [tmp_path / "bars.png"])
    assert (tmp_path / "bars.png").stat().st_size > 1000


def test_save_refuses_a_figure_legend_over_data(tmp_path):
    fig, ax = plt.subplots()
    ax.plot(np.linspace(0, 1, 50), np.linspace(0, 1, 50), label="data")
    fig.legend(["data"], loc="center", fontsize=30)
    with pytest.raises(figures.FigureError, match=r"covered\.png: a legend covers data"):
        figures.save(fig, [tmp_path / "covered.png"])
    assert not (tmp_path / "covered.png").exists()
