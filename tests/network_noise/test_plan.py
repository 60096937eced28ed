"""What the workflow plans for seed 001: points, job specs and targets of small configs."""

from __future__ import annotations

import copy

import pytest

from netnoise.config import validate
from netnoise.studies.network_noise import plan


@pytest.fixture
def nn() -> dict:
    """A small network_noise section: one fat-tree, two ratios, a fabric file."""
    return {
        "enabled": True,
        "fat_trees": ["xgft:4,4/1,2"],
        "torus_2d": "torus:4x4",
        "torus_3d": "torus:3x3x3",
        "ratios": [0.25, 0.5],
        "torus_sizes_2d": [4],
        "torus_sizes_3d": [3],
        "fabrics": ["data/small.topo"],
        "benchmark": {
            "enabled": True,
            "nodes": 8,
            "ratios": [0.25, 0.5],
            "collectives": ["allreduce", "bcast"],
            "allocations": [4, 8],
            "size": 8,
            "perturb_size": 1024,
            "splits": 16,
            "reps": 3,
            "netgauge": {"source": "", "configure_args": ["--without-ib"], "tests": 4},
        },
    }


def test_simulation_points_cover_every_figure(nn):
    assert plan.simulation_points(nn) == {
        "fat_tree_size__xgft-4.4_1.2__r0.5": ("fat_tree_size", "xgft:4,4/1,2", 0.5),
        "torus_ratio__torus-4x4__r0.25": ("torus_ratio", "torus:4x4", 0.25),
        "torus_ratio__torus-3x3x3__r0.25": ("torus_ratio", "torus:3x3x3", 0.25),
        "torus_ratio__torus-4x4__r0.5": ("torus_ratio", "torus:4x4", 0.5),
        "torus_ratio__torus-3x3x3__r0.5": ("torus_ratio", "torus:3x3x3", 0.5),
        "torus_size__torus-4x4__r0.5": ("torus_size", "torus:4x4", 0.5),
        "torus_size__torus-3x3x3__r0.5": ("torus_size", "torus:3x3x3", 0.5),
        "fabric_ratio__fabric-data_small.topo__r0.25": (
            "fabric_ratio",
            "fabric:data/small.topo",
            0.25,
        ),
        "fabric_ratio__fabric-data_small.topo__r0.5": (
            "fabric_ratio",
            "fabric:data/small.topo",
            0.5,
        ),
    }


def test_default_config_plans_21_simulations_and_11_benchmark_runs():
    nn = validate({})["network_noise"]
    figures = [figure for figure, _, _ in plan.simulation_points(nn).values()]
    # 3 fat-trees; 5 ratios x (2-D, 3-D); 4 + 4 torus sizes; no fabric.
    assert figures.count("fat_tree_size") == 3
    assert figures.count("torus_ratio") == 10
    assert figures.count("torus_size") == 8
    assert len(figures) == 21
    # 3 collectives x 3 ratios on 8 nodes, plus allreduce at 1/2 on 4 and 6 nodes
    # (on 8 it is already in the ratio sweep).
    assert len(plan.noise_points(nn["benchmark"])) == 11


def test_fabric_file_is_an_input_only_of_fabric_specs():
    assert plan.fabric_file("fabric:maps/chic.topo") == ["maps/chic.topo"]
    assert plan.fabric_file("torus:4x4") == []
    assert plan.fabric_file("xgft:4,4/1,2") == []


def test_fig11_only_with_fabric_files(nn):
    assert plan.simulation_figures(nn) == [
        "fig11_fabric_ratio",
        "fig13_fat_tree_size",
        "fig15_torus_ratio",
        "fig16_torus_size",
    ]
    nn["fabrics"] = []
    assert plan.simulation_figures(nn) == [
        "fig13_fat_tree_size",
        "fig15_torus_ratio",
        "fig16_torus_size",
    ]


def test_noise_points_are_the_ratio_sweep_and_the_allocation_sweep(nn):
    assert plan.noise_points(nn["benchmark"]) == [
        ("allreduce", 0.25, 8),
        ("allreduce", 0.5, 4),
        ("allreduce", 0.5, 8),
        ("bcast", 0.25, 8),
        ("bcast", 0.5, 8),
    ]


def test_noise_args(nn):
    assert plan.noise_args(nn["benchmark"], "bcast", "0.25") == [
        "--collective",
        "bcast",
        "--ratio",
        "0.25",
        "--size",
        8,
        "--perturb-size",
        1024,
        "--splits",
        16,
        "--reps",
        3,
    ]


def test_netgauge_build_command_uses_the_mpi_of_mpicc(nn):
    assert plan.netgauge_build_command(nn["benchmark"]["netgauge"]) == (
        './configure --with-mpi="$(dirname "$(dirname "$(command -v "$MPICC")")")" '
        "--without-ib && make"
    )


def test_netgauge_job_runs_collvsnoise_over_the_ratio_sweep(nn):
    nodes = [f"nn-n{i:02d}" for i in range(1, 9)]
    job = plan.netgauge_job(nn["benchmark"], "bin/netgauge", "raw/ng.csv", nodes)
    # Ratios 1/4 and 1/2 of 8 ranks leave 6 and 4 application ranks.
    assert job == {
        "name": "netgauge",
        "program": "bin/netgauge",
        "args": ["-c", "4", "-m", "mpi", "-x", "collvsnoise", "--commsize", "4-6"],
        "ranks": 8,
        "nodes": nodes,
        "output": "raw/ng.csv",
        "external": {"tool": "netgauge", "table": "netgauge_collvsnoise"},
    }
    assert plan.netgauge_job(nn["benchmark"], "ng", "out.csv", None)["nodes"] is None


def test_netgauge_notice_only_when_the_benchmark_runs_without_it(nn):
    assert "netgauge.source is empty" in plan.netgauge_notice(nn)
    with_source = copy.deepcopy(nn)
    with_source["benchmark"]["netgauge"]["source"] = "netgauge.tar.gz"
    assert plan.netgauge_notice(with_source) is None
    nn["benchmark"]["enabled"] = False
    assert plan.netgauge_notice(nn) is None
    nn["benchmark"]["enabled"] = True
    nn["enabled"] = False
    assert plan.netgauge_notice(nn) is None


def test_targets(nn):
    figures, tables = "fig", "tab"
    simulator = [
        "fig/fig11_fabric_ratio.svg",
        "fig/fig11_fabric_ratio.png",
        "fig/fig13_fat_tree_size.svg",
        "fig/fig13_fat_tree_size.png",
        "fig/fig15_torus_ratio.svg",
        "fig/fig15_torus_ratio.png",
        "fig/fig16_torus_size.svg",
        "fig/fig16_torus_size.png",
        "tab/simulation_summary.csv",
        "tab/topologies.csv",
    ]
    benchmark = [
        "fig/fig3_boxplot_ratio.svg",
        "fig/fig3_boxplot_ratio.png",
        "fig/fig4_slowdown_ratio.svg",
        "fig/fig4_slowdown_ratio.png",
        "fig/fig5_slowdown_allocation.svg",
        "fig/fig5_slowdown_allocation.png",
        "fig/fig6_boxplot_collectives.svg",
        "fig/fig6_boxplot_collectives.png",
        "tab/benchmark_slowdown.csv",
    ]
    assert plan.simulation_targets(nn, figures, tables) == simulator
    assert plan.targets(nn, figures, tables) == simulator + benchmark
    nn["benchmark"]["netgauge"]["source"] = "netgauge.tar.gz"
    assert plan.targets(nn, figures, tables) == [
        *simulator,
        *benchmark,
        "tab/netgauge_comparison.csv",
    ]
    nn["benchmark"]["enabled"] = False
    assert plan.targets(nn, figures, tables) == simulator
