"""Seed 003's workflow plan (plan.py): result files, jobs, figures and targets of a config."""

from __future__ import annotations

import pytest

from netnoise.studies.asymmetric import plan
from tests.asymmetric.support import resolved, typed
from tests.conftest import platform_of

RAW = "results/testbed/raw/asymmetric"


@pytest.fixture(scope="module")
def small() -> dict:
    """Two property trials, two random ones (BBR only), the Alltoallv."""
    return resolved(
        congestion_controls=["cubic", "bbr"],
        properties={
            "nic_links": [1],
            "backbone_links": [4],
            "nic_degrees": [],
            "backbone_degrees": [],
        },
        random={"nodes": [4], "d": [1, 2], "patterns": 1, "congestion_controls": ["bbr"]},
    )["asymmetric"]


def test_results_name_one_file_per_trial_with_the_congestion_control_open(small):
    assert plan.results(RAW, typed(small), "properties") == [
        f"{RAW}/mpi/properties/{{congestion}}/trial000.csv",
        f"{RAW}/mpi/properties/{{congestion}}/trial001.csv",
    ]
    assert plan.results(RAW, typed(small), "alltoallv", ".prov.json") == [
        f"{RAW}/mpi/alltoallv/{{congestion}}/trial000.csv.prov.json"
    ]


def test_runs_pair_every_family_with_its_congestion_controls(small):
    runs = plan.runs(RAW, typed(small))
    assert [(family, cc) for family, cc, _ in runs] == [
        ("properties", "cubic"),
        ("properties", "bbr"),
        ("random", "bbr"),
        ("alltoallv", "cubic"),
        ("alltoallv", "bbr"),
    ]
    assert runs[2][2] == [
        f"{RAW}/mpi/random/bbr/trial000.csv",
        f"{RAW}/mpi/random/bbr/trial001.csv",
    ]
    assert plan.congestions(typed(small), "random") == ["bbr"]
    assert plan.congestions(typed(small), "properties") == ["cubic", "bbr"]


def test_one_fig6_per_congestion_control_of_the_random_patterns_shares_a_caption(small):
    both = dict(small, random={**small["random"], "congestion_controls": ["cubic", "bbr"]})
    names = plan.figure_names(typed(both))
    assert names == [
        "fig4_fairness",
        "fig4a_nic_bidirectional",
        "fig4b_backbone_bidirectional",
        "fig6_errors_cubic",
        "fig6_errors_bbr",
        "fig8_alltoallv",
    ]
    assert [plan.caption(n) for n in names][3:5] == ["fig6_errors", "fig6_errors"]
    assert plan.caption("fig8_alltoallv") == "fig8_alltoallv"


def test_run_config_records_the_section_and_the_congestion_control(small):
    assert plan.run_config(typed(small), "bbr") == {"asymmetric": small, "congestion": "bbr"}
    assert plan.run_config(typed(small), "bbr")["asymmetric"] is small


def test_targets_only_on_the_testbed(small):
    targets = plan.targets("T", "F", typed(small), platform_of("testbed"))
    assert targets[:3] == [
        "F/fig4_fairness.svg",
        "F/fig4_fairness.png",
        "F/fig4a_nic_bidirectional.svg",
    ]
    assert targets[-5:] == [
        "T/table2.csv",
        "T/within10.csv",
        "T/properties.csv",
        "T/alltoallv.csv",
        "T/testbed_validation.csv",
    ]
    assert len(targets) == 2 * 5 + 5
    assert plan.skipped(platform_of("testbed"), typed(small)) is None
    assert plan.skipped(platform_of("slurm"), typed(small)) is None
    # On a cluster: no check of emulated links.
    assert plan.targets("T", "F", typed(small), platform_of("slurm")) == targets[:-1]
    assert plan.targets("T", "F", typed(small), platform_of("localhost")) == []
    assert plan.skipped(platform_of("localhost"), typed(small)) == (
        "asymmetric (seed 003) skipped: it needs two racks, its own testbed's or a "
        "Slurm cluster's, so platform.kind testbed or slurm, not localhost (or "
        "asymmetric.network: ns3, simulated)"
    )


def test_a_cluster_job_holds_the_nodes_of_its_patterns(tmp_path):
    patterns = tmp_path / "p.csv"
    patterns.write_text("trial,link,src,dst,bytes\n0,0,b1,a1,5\n0,1,a1,b2,5\n1,0,a2,b1,5\n")
    assert plan.pattern_nodes(patterns) == ["b1", "a1", "b2", "a2"]
    assert plan.slurm_placement(patterns) == "--exclusive --nodelist=b1,a1,b2,a2"
