"""Seed 002's workflow plan: measurement jobs, their programs and platform, the targets."""

from __future__ import annotations

from netnoise.config import validate
from netnoise.settings import ApplicationSettings, Settings
from netnoise.studies.variability import plan
from netnoise.studies.variability.settings import VariabilitySettings
from tests.conftest import REPO, platform_of, study_settings

STUDY = {
    "applications": ["halo3d", "cg_solver"],
    "node_counts": [2, 4],
    "runs": 3,
    "bursty_runs": 2,
    "controlled_runs": 1,
    "runs_per_job": 5,
}


def typed(study: dict) -> VariabilitySettings:
    """``study`` over the default variability section, typed."""
    return study_settings(VariabilitySettings, study)


def test_runs_are_batched_index_by_index_per_campaign():
    jobs = plan.measurement_batches(typed(STUDY))
    assert list(jobs) == ["production", "bursty", "dedicated", "maximal"]
    assert [len(batch) for batch in jobs["bursty"]] == [5, 3]
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
    quiet = STUDY | {"controlled_runs": 0, "bursty_runs": 0}
    assert list(plan.measurement_batches(typed(quiet))) == ["production"]
    assert plan.batch_dirs("raw", jobs) == [
        "raw/production/batch0",
        "raw/production/batch1",
        "raw/production/batch2",
        "raw/bursty/batch0",
        "raw/bursty/batch1",
        "raw/dedicated/batch0",
        "raw/maximal/batch0",
    ]


def test_the_quick_study_measures_in_six_jobs():
    jobs = plan.measurement_batches(Settings.of(validate({})).study(VariabilitySettings))
    # 4 applications x 2 node counts x 16 runs, 32 runs a job; 2 runs of each extreme.
    assert {campaign: len(batches) for campaign, batches in jobs.items()} == {
        "production": 4,
        "dedicated": 1,
        "maximal": 1,
    }
    assert sum(len(batch) for batch in jobs["production"]) == 128


def test_measured_applications_name_their_program_and_arguments():
    applications = {
        name: ApplicationSettings("unknown", **app)
        for name, app in {
            "halo3d": {"program": "halo3d", "args": ["--steps", 8]},
            "cg_solver": {"program": "cg_solver"},
            "unused": {"program": "other"},
        }.items()
    }
    measured = plan.measured_applications(typed(STUDY), applications, lambda n: f"bin/{n}")
    assert measured == {
        "halo3d": {"program": "bin/halo3d", "args": ["--steps", 8]},
        "cg_solver": {"program": "bin/cg_solver", "args": []},
    }
    assert plan.programs(measured) == ["bin/cg_solver", "bin/halo3d"]
    same = plan.measured_applications(typed(STUDY), applications, lambda name: "bin/one")
    assert plan.programs(same) == ["bin/one"]


def test_targets_are_every_table_figure_and_the_model_on_a_testbed_or_cluster():
    files = plan.targets(platform_of("testbed"), "t", "f", "m.npz")
    assert len(files) == 2 * len(plan.FIGURES) + len(plan.TABLES) + 1 == 39
    assert files[:2] == ["f/fig1_runtimes.svg", "f/fig1_runtimes.png"]
    assert "t/table6_use_cases.csv" in files and files[-1] == "m.npz"
    assert plan.targets(platform_of("slurm"), "t", "f", "m.npz") == files
    assert plan.skipped(platform_of("slurm")) is None
    assert plan.targets(platform_of("localhost"), "t", "f", "m.npz") == []
    assert "variability (seed 002) skipped" in plan.skipped(platform_of("localhost"))


def test_a_cluster_job_holds_its_largest_run_and_the_background_nodes():
    study = typed({"slurm": {"background_nodes": 2}})
    assert plan.allocation(study, [["a", 4, 0], ["b", 8, 0], ["a", 4, 1]]) == 10


def test_every_figure_is_drawn():
    drawn = (REPO / "workflow" / "scripts" / "variability" / "plot.py").read_text()
    assert all(f'"{name}"' in drawn for name in plan.FIGURES)


def test_the_tabulate_rule_writes_every_table_the_analysis_makes(evaluated):
    written_by_the_script = {"table2_runtime_statistics", "table3_metrics", "table4_correlations"}
    assert set(evaluated) | written_by_the_script == set(plan.TABLES)
