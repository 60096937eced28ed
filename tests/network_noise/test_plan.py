"""What the workflow plans for seed 001: points, job specs and targets of small configs."""

from __future__ import annotations

from dataclasses import replace

import pytest

from netnoise import bundle
from netnoise.config import validate
from netnoise.platform import from_config, from_settings
from netnoise.settings import Settings
from netnoise.studies.network_noise import plan
from netnoise.studies.network_noise.settings import NetworkNoiseSettings
from tests.conftest import REPO, platform_of, study_settings


def typed(nn: dict) -> NetworkNoiseSettings:
    """``nn`` over the default network_noise section, typed."""
    return study_settings(NetworkNoiseSettings, nn)


def _benchmark_platform(config: dict):
    """The platform the noise benchmark's runs see in ``config``."""
    settings = Settings.of(config)
    return settings.effective(settings.study(NetworkNoiseSettings))


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
            "phase_warmup": 1,
            "cpu_control": False,
            "unshared_control": True,
            "cpu_load": 0.2,
            "netgauge": {"source": "", "configure_args": ["--without-ib"], "tests": 4},
        },
    }


def test_simulation_points_cover_every_figure(nn):
    assert plan.simulation_points(typed(nn)) == {
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


def test_default_config_plans_21_simulations_and_27_benchmark_runs():
    nn = Settings.of(validate({})).study(NetworkNoiseSettings)
    figures = [figure for figure, _, _ in plan.simulation_points(nn).values()]
    # 3 fat-trees; 5 ratios x (2-D, 3-D); 4 + 4 torus sizes; no fabric.
    assert figures.count("fat_tree_size") == 3
    assert figures.count("torus_ratio") == 10
    assert figures.count("torus_size") == 8
    assert len(figures) == 21
    # 3 collectives x 5 ratios on 8 nodes, allreduce at 1/2 on 4 and 6 nodes (on 8
    # it is already in the ratio sweep), ratio 0 of those 5 (collective, nodes), and
    # the CPU control of allreduce's 5 ratios; on the testbed its unshared control too.
    assert len(plan.noise_points(nn.benchmark, platform_of("slurm"))) == 15 + 2 + 5 + 5
    assert len(plan.noise_points(nn.benchmark, platform_of("testbed"))) == 15 + 2 + 5 + 5 + 5


def test_fabric_file_is_an_input_only_of_fabric_specs():
    assert plan.fabric_file("fabric:maps/chic.topo") == ["maps/chic.topo"]
    assert plan.fabric_file("torus:4x4") == []
    assert plan.fabric_file("xgft:4,4/1,2") == []


def test_fig11_only_with_fabric_files(nn):
    assert plan.simulation_figures(typed(nn)) == [
        "fig11_fabric_ratio",
        "fig13_fat_tree_size",
        "fig15_torus_ratio",
        "fig16_torus_size",
    ]
    nn["fabrics"] = []
    assert plan.simulation_figures(typed(nn)) == [
        "fig13_fat_tree_size",
        "fig15_torus_ratio",
        "fig16_torus_size",
    ]


def test_noise_points_are_the_sweeps_with_their_controls(nn):
    cluster = platform_of("slurm")
    assert plan.noise_points(typed(nn).benchmark, cluster) == [
        ("allreduce", 0.0, 4, "network"),
        ("allreduce", 0.0, 8, "network"),
        ("allreduce", 0.25, 8, "network"),
        ("allreduce", 0.5, 4, "network"),
        ("allreduce", 0.5, 8, "network"),
        ("bcast", 0.0, 8, "network"),
        ("bcast", 0.25, 8, "network"),
        ("bcast", 0.5, 8, "network"),
    ]
    nn["benchmark"]["cpu_control"] = True
    cpu = [p for p in plan.noise_points(typed(nn).benchmark, cluster) if p[3] == "cpu"]
    assert cpu == [("allreduce", 0.25, 8, "cpu"), ("allreduce", 0.5, 8, "cpu")]
    # Only where the workflow names the nodes can it move the perturbation onto one switch.
    points = plan.noise_points(typed(nn).benchmark, platform_of("testbed"))
    unshared = [p for p in points if p[3] == "unshared"]
    assert unshared == [("allreduce", 0.25, 8, "unshared"), ("allreduce", 0.5, 8, "unshared")]


def test_the_unshared_control_runs_the_network_perturbation_on_one_switch(nn):
    assert plan.noise_args(typed(nn).benchmark, "allreduce", "0.5", 8, "unshared")[:2] == [
        "--perturbation",
        "network",
    ]
    platform = _benchmark_platform(validate({}))
    one_switch = plan.point_platform(platform, "unshared")
    assert (platform.testbed.racks, one_switch.testbed.racks) == (2, 1)
    # Nothing else changes, and the benchmark's own layout stays as it was.
    assert replace(one_switch.testbed, racks=2) == platform.testbed
    assert one_switch.cpu == platform.cpu


def test_the_cpu_control_is_measured_once_and_the_network_points_as_configured():
    platform = _benchmark_platform(validate({}))
    assert platform.cpu.attempts > 1
    assert plan.point_platform(platform, "network") == platform
    cpu_control = plan.point_platform(platform, "cpu")
    assert cpu_control.cpu == replace(platform.cpu, attempts=1)
    assert cpu_control.testbed == platform.testbed
    assert platform.cpu.attempts > 1


def test_the_allocation_sweep_takes_its_own_splits(nn):
    sweep = {**nn["benchmark"], "allocation_splits": 48}

    def splits(*point, bench=sweep):
        args = plan.noise_args(typed({**nn, "benchmark": bench}).benchmark, *point)
        return args[args.index("--splits") + 1]

    # Fig. 5's points, the full allocation's among them, take allocation_splits.
    assert splits("allreduce", "0.5", 4) == splits("allreduce", "0.5", 8) == 48
    # The rest of the ratio sweep, other collectives, the controls: splits.
    assert splits("allreduce", "0.25", 8) == splits("bcast", "0.5", 8) == 16
    assert splits("allreduce", "0", 4) == splits("allreduce", "0.5", 8, "unshared") == 16
    assert splits("allreduce", "0.5", 8, "cpu") == 16
    # Unset, every point takes splits.
    assert splits("allreduce", "0.5", 4, bench=nn["benchmark"]) == 16


def test_noise_args(nn):
    assert plan.noise_args(typed(nn).benchmark, "bcast", "0.25", 8) == [
        "--perturbation", "network", "--collective", "bcast", "--ratio", "0.25",
        "--size", 8, "--perturb-size", 1024, "--splits", 16, "--reps", 3,
        "--phase-warmup", 1,
    ]  # fmt: skip
    assert plan.noise_args(typed(nn).benchmark, "allreduce", "0.5", 8, "cpu")[:4] == [
        "--perturbation", "cpu", "--cpu-load", 0.2,
    ]  # fmt: skip


def test_a_fixed_application_communicator_holds_on_the_ratio_sweeps_allocation(nn):
    nn["benchmark"]["application_ranks"] = 4
    ratio_sweep = plan.noise_args(typed(nn).benchmark, "bcast", "0.3333", 8)
    assert ratio_sweep[4:8] == ["--ratio", "0.3333", "--application-ranks", 4]
    # Fig. 5's smaller allocations split the allocation, as the paper's do.
    assert "--application-ranks" not in plan.noise_args(typed(nn).benchmark, "allreduce", "0.5", 4)


def test_a_ratio0_control_times_the_communicator_of_the_point_it_controls(nn):
    nn["benchmark"]["application_ranks"] = 4
    assert plan.noise_args(typed(nn).benchmark, "allreduce", "0", 8)[4:8] == [
        "--ratio", "0", "--application-ranks", 4,
    ]  # fmt: skip
    # Fig. 5's points on 4 and 6 nodes time 2 and 3 ranks beside 2 and 3 perturbing.
    for allocation, ranks in [(4, 2), (6, 3), (5, 2)]:
        control = plan.noise_args(typed(nn).benchmark, "allreduce", "0", allocation)
        assert control[6:8] == ["--application-ranks", ranks]
        assert plan.application_ranks(typed(nn).benchmark, 0.5, allocation) is None


def test_a_saturated_noise_benchmark_run_is_measured_again_in_both_studies():
    for names in (["config.yaml"], ["config.yaml", "testbed-bundle.yaml"]):
        config = bundle.run_config([REPO / "config" / name for name in names])
        benchmark = from_settings(_benchmark_platform(config))
        assert benchmark.cpu_limits().attempts == 2
        # The CPU control, saturated by design, is kept up to the platform's limit.
        limits = from_config(config["platform"]).cpu_limits()
        assert benchmark.cpu_limits().tolerated_runnable == limits.tolerated_runnable
