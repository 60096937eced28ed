"""Seed 002's workflow plan: measurement jobs, their programs and platform, the targets."""

from __future__ import annotations

import copy

from netnoise.config import validate
from netnoise.studies.variability import plan
from tests.conftest import REPO

STUDY = {
    "applications": ["halo3d", "cg_solver"],
    "node_counts": [2, 4],
    "runs": 3,
    "controlled_runs": 1,
    "runs_per_job": 5,
}


def test_runs_are_batched_index_by_index_per_campaign():
    jobs = plan.measurement_batches(STUDY)
    assert list(jobs) == ["production", "dedicated", "maximal"]
    assert [len(batch) for batch in jobs["production"]] == [5, 5, 2]
    assert jobs["production"][0] == [
        ["halo3d", 2, 0],
        ["halo3d", 4, 0],
        ["cg_solver", 2, 0],
        ["cg_solver", 4, 0],
        ["halo3d", 2, 1],
    ]
    assert jobs["production"][2] == [["cg_solver", 2, 2], ["cg_solver", 4, 2]]
    assert (
        jobs["dedicated"]
        == jobs["maximal"]
        == [[["halo3d", 2, 0], ["halo3d", 4, 0], ["cg_solver", 2, 0], ["cg_solver", 4, 0]]]
    )
    assert list(plan.measurement_batches(STUDY | {"controlled_runs": 0})) == ["production"]
    assert plan.batch_dirs("raw", jobs) == [
        "raw/production/batch0",
        "raw/production/batch1",
        "raw/production/batch2",
        "raw/dedicated/batch0",
        "raw/maximal/batch0",
    ]


def test_the_quick_study_measures_in_six_jobs():
    study = validate({})["variability"]
    jobs = plan.measurement_batches(study)
    # 4 applications x 2 node counts x 16 runs, 32 runs a job; 2 runs of each extreme.
    assert {campaign: len(batches) for campaign, batches in jobs.items()} == {
        "production": 4,
        "dedicated": 1,
        "maximal": 1,
    }
    assert sum(len(batch) for batch in jobs["production"]) == 128


def test_measured_applications_name_their_program_and_arguments():
    applications = {
        "halo3d": {"program": "halo3d", "args": ["--steps", 8]},
        "cg_solver": {"program": "cg_solver"},
        "unused": {"program": "other"},
    }
    measured = plan.measured_applications(STUDY, applications, lambda name: f"bin/{name}")
    assert measured == {
        "halo3d": {"program": "bin/halo3d", "args": ["--steps", 8]},
        "cg_solver": {"program": "bin/cg_solver", "args": []},
    }
    assert plan.programs(measured) == ["bin/cg_solver", "bin/halo3d"]
    same = plan.measured_applications(STUDY, applications, lambda name: "bin/one")
    assert plan.programs(same) == ["bin/one"]


def test_the_study_platform_lays_its_testbed_over_the_shared_one():
    platform = validate({})["platform"]
    before = copy.deepcopy(platform)
    study = {"testbed": {"nodes": None, "racks": 3, "backbone_mbit": 40}}
    out = plan.study_platform(platform, study)
    assert out["testbed"]["racks"] == 3 and out["testbed"]["backbone_mbit"] == 40
    assert out["testbed"]["nodes"] == platform["testbed"]["nodes"]  # None keeps the shared one
    assert out["kind"] == platform["kind"]
    assert platform == before  # the shared platform is left as it was


def test_targets_are_every_table_figure_and_the_model_on_the_testbed_only():
    files = plan.targets("testbed", "t", "f", "m.joblib")
    assert len(files) == 2 * len(plan.FIGURES) + len(plan.TABLES) + 1 == 37
    assert files[:2] == ["f/fig1_runtimes.svg", "f/fig1_runtimes.png"]
    assert "t/table6_use_cases.csv" in files and files[-1] == "m.joblib"
    assert plan.targets("slurm", "t", "f", "m.joblib") == []


def test_every_reported_table_and_figure_has_a_caption_and_is_made():
    captions = REPO / "workflow" / "report" / "variability"
    assert set(plan.REPORTED_TABLES) <= set(plan.TABLES)
    for name in (*plan.REPORTED_TABLES, *plan.FIGURES):
        assert (captions / f"{name}.rst").is_file(), name
    drawn = (REPO / "workflow" / "scripts" / "variability" / "plot.py").read_text()
    assert all(f'"{name}"' in drawn for name in plan.FIGURES)


def test_the_tabulate_rule_writes_every_table_the_analysis_makes(evaluated):
    written_by_the_script = {"table2_runtime_statistics", "table3_metrics", "table4_correlations"}
    assert set(evaluated) | written_by_the_script == set(plan.TABLES)
