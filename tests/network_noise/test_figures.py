"""The simulator's slowdown figures: one band per topology group, the right axes."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
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


def _point(collective, ratio, allocation, perturbation, slowdown, half_width=5.0):
    return {
        "collective": collective,
        "ratio": ratio,
        "allocation": allocation,
        "perturbation": perturbation,
        "slowdown_pct": slowdown,
        "slowdown_ci_low": slowdown - half_width,
        "slowdown_ci_high": slowdown + 2 * half_width,
    }


@pytest.fixture
def benchmark() -> pd.DataFrame:
    rows = [
        _point("allreduce", r, 8, "network", s) for r, s in [(0.25, 120), (0.5, 130), (0.75, 150)]
    ]
    rows += [_point("allreduce", 0.0, 8, "network", 100.0)]
    rows += [_point("allreduce", 0.5, 8, "cpu", 104.0)]
    rows += [_point("allreduce", 0.5, n, "network", s) for n, s in [(4, 110), (6, 118)]]
    rows += [_point("allreduce", 0.5, n, "cpu", 101.0) for n in (4, 6)]
    rows += [_point("allreduce", 0.5, 8, "unshared", 112.0)]
    return pd.DataFrame(rows)


def _errorbar_points(ax):
    """(x, y) of each errorbar series' markers, by label ('_nolegend_' for controls)."""
    return [
        (c.get_label(), list(c.lines[0].get_xdata()), list(c.lines[0].get_ydata()))
        for c in ax.containers
    ]


def test_slowdown_by_ratio_starts_at_the_ratio0_control_and_shows_the_controls(benchmark):
    fig = figures.slowdown_by_ratio(benchmark, 8)
    ax = fig.axes[0]
    (label, x, y), (cpu_label, cpu_x, cpu_y), unshared = _errorbar_points(ax)
    # One collective: no dodge; the ratio-0 run is the sweep's first point.
    assert label == "allreduce (ρ 1.00)"
    assert (x, y) == ([0.0, 0.25, 0.5, 0.75], [100.0, 120.0, 130.0, 150.0])
    assert (cpu_label, cpu_x, cpu_y) == ("_nolegend_", [0.5], [104.0])
    assert unshared == ("_nolegend_", [0.5], [112.0])
    assert [c.lines[0].get_marker() for c in ax.containers[1:]] == ["s", "^"]
    # Bars: 5 below and 10 above each point.
    ends = np.array([seg[:, 1] for seg in ax.containers[0].lines[2][0].get_segments()])
    assert np.array(y) - ends[:, 0] == pytest.approx([5] * 4)
    assert ends[:, 1] - np.array(y) == pytest.approx([10] * 4)
    assert "hollow squares: CPU-only control; hollow triangles: no shared link" in ax.get_title()
    plt.close(fig)


def test_the_ratio_figures_name_an_application_communicator_held_at_every_ratio(benchmark):
    held = benchmark.assign(application_ranks=4)
    fig = figures.slowdown_by_ratio(held, 8)
    assert "8-node allocation, 4 application ranks at every ratio" in fig.axes[0].get_title()
    plt.close(fig)
    # Split as in the paper, the communicator shrinks as the ratio grows.
    split = benchmark.assign(application_ranks=8 - 8 * benchmark["ratio"])
    fig = figures.slowdown_by_ratio(split, 8)
    assert "application ranks" not in fig.axes[0].get_title()
    plt.close(fig)


def test_slowdown_by_allocation_gives_its_rank_correlation(benchmark):
    fig = figures.slowdown_by_allocation(benchmark)
    (label, x, y), (_, cpu_x, _), (_, unshared_x, _) = _errorbar_points(fig.axes[0])
    assert label == "allreduce, ratio 1/2 (ρ 1.00)"  # 110, 118, 130 % at 4, 6, 8 nodes
    assert (x, y) == ([4, 6, 8], [110.0, 118.0, 130.0])
    assert (cpu_x, unshared_x) == ([4, 6, 8], [8])
    plt.close(fig)


def test_slowdown_by_allocation_shows_the_time_added_to_a_call(benchmark):
    """Two splits a point: the perturbation adds 1, 2 and 4 ms at 4, 6 and 8 nodes."""
    rows = []
    for nodes, added_us in [(4, 1000.0), (6, 2000.0), (8, 4000.0)]:
        for split, quiet in enumerate([100.0, 300.0]):
            for perturbed, time_us in [(0, quiet), (1, quiet + added_us + 10 * split)]:
                rows.append((nodes, split, perturbed, time_us))
    cpu = [(8, split, perturbed, 100.0) for split in (0, 1) for perturbed in (0, 1)]
    tidy = pd.DataFrame(rows + cpu, columns=["allocation", "split", "perturbed", "time_us"]).assign(
        collective="allreduce",
        ratio=0.5,
        perturbation=["network"] * len(rows) + ["cpu"] * len(cpu),
    )
    fig = figures.slowdown_by_allocation(benchmark, tidy)
    assert len(fig.axes) == 2
    ((_, x, y),) = _errorbar_points(fig.axes[1])
    assert x == [4, 6, 8]
    assert y == pytest.approx([1.005, 2.005, 4.005])
    assert "added" in fig.axes[1].get_ylabel()
    plt.close(fig)


def test_benchmark_figures_read_tables_from_before_the_cpu_control(benchmark):
    old = benchmark[benchmark["perturbation"] == "network"].drop(columns="perturbation")
    fig = figures.slowdown_by_ratio(old, 8)
    ((_, x, _),) = _errorbar_points(fig.axes[0])
    assert x == [0.0, 0.25, 0.5, 0.75]
    assert "hollow" not in fig.axes[0].get_title()
    plt.close(fig)
    tidy = pd.DataFrame(
        {
            "collective": "allreduce",
            "ratio": [0.0, 0.0, 0.5, 0.5, 0.5, 0.5],
            "allocation": 8,
            "perturbation": ["network", "network", "network", "network", "cpu", "cpu"],
            "perturbed": [0, 1] * 3,
            "time_us": [10.0, 11.0, 10.0, 15.0, 10.0, 10.5],
        }
    )
    fig = figures.boxplot_by_ratio(tidy, 8)
    ticks = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert ticks == ["0", "0.5"]  # the ratio-0 run, the measurement; not the CPU control
    plt.close(fig)


def test_fig4_draws_the_papers_stated_slowdowns_beside_ours():
    from netnoise.figures import legend_problems, place_legends, use_style
    from tests.conftest import REPO, shipped_table

    use_style()
    published = pd.read_csv(REPO / "resources" / "reference" / "network_noise" / "fig4.csv")
    slowdown = shipped_table("network_noise", "benchmark_slowdown")
    fig = figures.slowdown_by_ratio(slowdown, 8, published)
    ax = fig.axes[0]
    paper = {
        line.get_label(): set(line.get_ydata()) for line in ax.get_lines()
        if line.get_label().startswith("paper: ")
    }  # fmt: skip
    assert paper == {f"paper: {row.label}": {row.slowdown_pct} for row in published.itertuples()}
    assert {200, 150} == {v for values in paper.values() for v in values}
    assert all(s.startswith("001_") for s in published["source"])
    place_legends(fig)
    assert legend_problems(fig) == []
    plt.close(fig)
