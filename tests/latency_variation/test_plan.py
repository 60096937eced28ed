"""What the workflow runs for seed 004, on a small config section."""

from __future__ import annotations

import pytest

from netnoise.config import load, merge_like_snakemake
from netnoise.settings import Settings
from netnoise.studies.latency_variation import plan
from netnoise.studies.latency_variation.names import VALIDATION_EXPERIMENTS
from netnoise.studies.latency_variation.settings import LatencyVariationSettings
from tests.conftest import REPO, platform_of, quick_study_with, study_settings


def small_section(**changes) -> LatencyVariationSettings:
    """Two levels measured, one injected, one scale fraction, two applications
    (``changes``: some keys of the section over these), typed."""
    section = {
        "nodes": 4,
        "seed": 7,
        "characterize": {
            "levels": [40, 0],
            "link_mbit": 100,
            "load_size": 32768,
            "duration_s": 2,
            "iterations": 500,
            "gap_us": 250,
            "warmup": 5,
        },
        "fit": {"scale_fractions": [0.5], "stds_us": []},
        "injection": {
            "levels": [40],
            "applications": ["cg_solver", "lu_wavefront"],
            "application_args": {"lu_wavefront": ["--steps", "300"]},
            "runs": 3,
            "probe_iterations": 30,
            "warmup": 2,
        },
    }
    return study_settings(LatencyVariationSettings, merge_like_snakemake(section, changes))


def job(*fields):
    """A stand-in for the workflow's job builders: the fields it is given."""
    return fields


def test_characterization_runs_each_probe_at_each_level_in_order():
    assert plan.characterization_runs(small_section()) == [
        ("tcpping", 0),
        ("tcpping", 40),
        ("pingpong", 0),
        ("pingpong", 40),
    ]


def test_probe_and_loadgen_arguments():
    lv = small_section()
    tcpping = plan.probe_args(lv, "tcpping")
    assert tcpping == [
        "--size",
        1,
        "--warmup",
        5,
        "--iterations",
        500,
        "--duration",
        2,
        "--gap-us",
        250,
    ]
    assert plan.probe_args(lv, "pingpong") == tcpping[:-2]  # no gap between MPI round trips
    platform = platform_of("testbed", testbed={"nic_mbit": 50})
    assert plan.loadgen_args(lv, 40, platform) == [
        "--load",
        0.4,
        "--link-mbit",
        100,
        "--size",
        32768,
        "--seed",
        47,
    ]


def test_link_rate_is_configured_or_the_testbeds():
    platform = platform_of("testbed", testbed={"nic_mbit": 50})
    assert plan.link_mbit(small_section(), platform) == 100
    lv = small_section(characterize={"link_mbit": None})
    assert plan.link_mbit(lv, platform) == 50
    assert plan.loadgen_args(lv, 20, platform)[:4] == ["--load", 0.2, "--link-mbit", 50]


def test_injected_points_runs_and_validation_subset():
    lv = small_section()
    assert plan.distributions(lv) == ["lognorm", "uniform", "lognorm_scale50"]
    assert plan.injected_points(lv) == [
        "L40_lognorm",
        "L40_uniform",
        "L40_lognorm_scale50",
        "zero",
    ]
    assert plan.validation_points(lv) == ["L40_uniform", "L40_lognorm", "zero"]
    assert plan.probe_runs(lv, VALIDATION_EXPERIMENTS)[:4] == [
        ("tcpping", "L40_uniform"),
        ("tcpping", "L40_lognorm"),
        ("tcpping", "zero"),
        ("pingpong", "L40_uniform"),
    ]
    assert len(plan.probe_runs(lv, VALIDATION_EXPERIMENTS)) == 3 * 3
    assert plan.application_runs(lv)[-1] == ("lu_wavefront", "zero")
    assert len(plan.application_runs(lv)) == 2 * 4


def test_injected_probes_pair_the_first_two_nodes_and_the_barrier_spans_all():
    nodes = ["n1", "n2", "n3", "n4"]
    jobs = plan.injected_probes(small_section(), nodes, ["t.csv", "p.csv", "b.csv"], job)
    common = ["--warmup", 2, "--iterations", 30]
    assert jobs == [
        ("tcpping", "t.csv", 2, ["n1", "n2"], ["--size", 1, *common]),
        ("pingpong", "p.csv", 2, ["n1", "n2"], ["--size", 1, *common]),
        ("barrier", "b.csv", 4, nodes, common),
    ]
    # Without node names the launcher places the ranks.
    unplaced = plan.injected_probes(small_section(), None, ["t", "p", "b"], job)
    assert [spec[3] for spec in unplaced] == [None, None, None]
    with pytest.raises(ValueError):
        plan.injected_probes(small_section(), nodes, ["t.csv"], job)


def test_the_barrier_spans_the_first_barrier_nodes_and_the_probes_one_pair():
    nodes = ["n1", "n2", "n3", "n4"]
    lv = small_section(injection={"barrier_nodes": 2})
    assert plan.probe_placement(lv, "barrier", nodes) == (2, ["n1", "n2"])
    assert plan.probe_placement(lv, "barrier", None) == (2, None)
    lv = small_section(injection={"barrier_nodes": None})
    assert plan.probe_placement(lv, "barrier", nodes) == (4, nodes)
    # The probes under load (Sec. 5) are placed as the injected ones (Sec. 6).
    for probe in ("tcpping", "pingpong"):
        assert plan.probe_placement(lv, probe, nodes) == (2, ["n1", "n2"])


def test_injected_applications_time_every_run_after_one_warmup():
    jobs = plan.injected_applications(small_section(), None, ["cg.csv", "lu.csv"], job)
    assert jobs == [
        ("cg_solver", "cg.csv", 4, None, 3, 1, []),
        ("lu_wavefront", "lu.csv", 4, None, 3, 1, ["--steps", "300"]),
    ]


def test_targets_of_the_quick_config():
    lv = Settings.of(load(REPO / "config" / "config.yaml")).study(LatencyVariationSettings)
    points = plan.injected_points(lv)
    assert points[:2] == ["L20_lognorm", "L20_uniform"]
    # Levels 20 and 40: two fitted families, three scaled log-normals (the
    # grid of spreads is the bundle study's); and no injection at all.
    assert len(points) == 2 * 5 + 1
    assert points[2:5] == ["L20_lognorm_scale75", "L20_lognorm_scale50", "L20_lognorm_scale25"]
    bundle = Settings.of(quick_study_with("testbed-bundle.yaml")).study(LatencyVariationSettings)
    assert plan.injected_points(bundle)[5:7] == ["L20_std300", "L20_std1000"]
    found = plan.targets("F", "T", "M")
    assert found[:2] == ["F/fig2_latency_mean.svg", "F/fig2_latency_mean.png"]
    assert len(found) == 2 * 16 + 1 + 10 + 1
    assert "T/table4.csv" in found and found[-1] == "M/fits.csv"
    assert len(set(found)) == len(found)
