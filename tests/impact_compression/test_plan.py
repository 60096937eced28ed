"""Seed 000's workflow plan: points, benchmark arguments, raw files and targets."""

from __future__ import annotations

import re

import pytest
import yaml

from netnoise import config as netnoise_config
from netnoise.platform import from_settings
from netnoise.settings import Settings
from netnoise.studies import STUDIES
from netnoise.studies.impact_compression import plan
from netnoise.studies.impact_compression.settings import ImpactCompressionSettings
from tests.conftest import REPO, platform_of, snakemake, study_settings

OTHER_STUDIES = [study.key for study in STUDIES if study.key != "impact_compression"]

STUDY = {
    "nodes": 4,
    "applications": ["halo3d", "cg_solver"],
    "runs": 5,
    "impact_samples": 200,
    "impact_sleep_us": 20000,
    "impact_size": 1024,
    "compression": {
        "partners": [1, 2],
        "messages": [4],
        "sleep_cycles": [2500000, 2.5e7],
        "cycle_hz": 2600000000,
        "size": 40960,
        "offered_loads": None,
        "link_mbit": None,
    },
}
GRID = STUDY["compression"]


def typed(section: dict) -> ImpactCompressionSettings:
    """``section`` over the default impact_compression section, validated and typed."""
    return study_settings(ImpactCompressionSettings, section)


def test_compression_grid_is_every_combination_named_by_its_id():
    assert plan.compression_configs(typed(STUDY)) == {
        "p1_m4_b2500000": (1, 4, 2500000),
        "p1_m4_b25000000": (1, 4, 2.5e7),
        "p2_m4_b2500000": (2, 4, 2500000),
        "p2_m4_b25000000": (2, 4, 2.5e7),
    }


def test_the_link_rate_offered_loads_are_shares_of():
    testbed = platform_of("testbed", testbed={"nic_mbit": 50})
    study = {"compression": GRID | {"offered_loads": [0.2]}}
    assert plan.compression_link_mbit(typed(study), testbed) == 50.0
    assert plan.compression_link_mbit(typed(study), platform_of("localhost")) is None
    given = {"compression": GRID | {"offered_loads": [0.2], "link_mbit": 100}}
    assert plan.compression_link_mbit(typed(given), platform_of("localhost")) == 100.0
    # A grid of B values (the paper's) has no offered load.
    paper = {"compression": GRID | {"offered_loads": None}}
    assert plan.compression_link_mbit(typed(paper), testbed) is None
    assert (
        plan.compression_link_mbit(typed({"compression": {"sleep_cycles": [1]}}), testbed) is None
    )


def test_offered_loads_set_b_so_every_node_offers_that_share_of_its_link():
    study = STUDY | {"compression": GRID | {"offered_loads": [0.2, 1.0], "partners": [1]}}
    # 4 messages of 40960 B at 20 % of 50 Mbit/s: 0.131 s of cycles at 2.6 GHz.
    assert plan.compression_configs(typed(study), 50) == {
        "p1_m4_b340787200": (1, 4, 340787200),
        "p1_m4_b68157440": (1, 4, 68157440),
    }
    with pytest.raises(ValueError, match=r"compression\.link_mbit"):
        plan.compression_configs(typed(study))


def test_pairings_are_every_ordered_pair_itself_included():
    assert plan.pairings(typed(STUDY)) == [
        ("halo3d", "halo3d"),
        ("halo3d", "cg_solver"),
        ("cg_solver", "halo3d"),
        ("cg_solver", "cg_solver"),
    ]


def test_impactb_arguments_measure_samples_or_loop():
    assert plan.impactb_args(typed(STUDY), 200) == [
        "--size", 1024, "--sleep-us", 20000, "--iterations", 200, "--warmup", 2,
    ]  # fmt: skip
    assert plan.impactb_args(typed(STUDY))[5] == 0  # beside a measured application: until it ends


def test_measured_runs_are_exact_or_stop_on_precision():
    assert plan.measured_runs(typed(STUDY)) == (5, [])
    precise = {**STUDY, "precision": {"ci_width": 0.03, "max_runs": 300}}
    assert plan.measured_runs(typed(precise)) == (300, ["--ci-width", 0.03, "--min-iterations", 5])


def test_jitter_arguments_only_when_phases_are_drawn():
    assert plan.application_args(typed(STUDY), "cg_solver") == []
    study = {
        **STUDY,
        "compute_jitter": 0.5,
        "application_args": {"fft_transpose": ["--size", "144"]},
    }
    assert plan.application_args(typed(study), "cg_solver") == ["--compute-jitter", 0.5]
    assert plan.application_args(typed(study), "fft_transpose") == [
        "--compute-jitter",
        0.5,
        "--size",
        "144",
    ]


def test_precision_config_is_checked_against_runs_and_programs():
    def fails(overlay, message):
        with pytest.raises(netnoise_config.ConfigError, match=message):
            netnoise_config.validate(overlay)

    study = {"runs": 10, "precision": {"ci_width": 0.03, "max_runs": 8}}
    fails({"impact_compression": study}, r"precision.max_runs: 8 is below .*runs \(10\)")
    fails({"impact_compression": {"precision": {"ci_width": 0}}}, "ci_width: 0 is out of range")
    external = {"lulesh": {"source": "/src/lulesh", "build": "make", "binary": "lulesh"}}
    fails(
        {
            "applications": external,
            "impact_compression": {
                "applications": ["lulesh", "halo3d"],
                "precision": {"ci_width": 0.03},
            },
        },
        "precision.ci_width: the stopping rule needs built-in proxies; lulesh run",
    )
    fails(
        {
            "applications": external,
            "impact_compression": {"applications": ["lulesh", "halo3d"], "compute_jitter": 0.5},
        },
        "compute_jitter: drawn compute phases need built-in proxies; lulesh run",
    )
    fails({"impact_compression": {"compute_jitter": 1}}, "compute_jitter: 1 is out of range")
    ok = netnoise_config.validate({"impact_compression": {"precision": {"ci_width": 0.03}}})
    assert ok["impact_compression"]["precision"] == {"ci_width": 0.03, "max_runs": 200}


def test_compressionb_arguments_of_one_configuration():
    assert plan.compressionb_args(typed(STUDY), "p2_m4_b25000000") == [
        "--partners", 2, "--messages", 4, "--sleep-cycles", 2.5e7,
        "--cycle-hz", 2600000000, "--size", 40960, "--iterations", 0,
    ]  # fmt: skip
    with pytest.raises(ValueError, match="'p3_m4_b2500000' is not in the CompressionB grid"):
        plan.compressionb_args(typed(STUDY), "p3_m4_b2500000")


def test_impact_files_of_idle_applications_and_configurations():
    assert plan.impact_files("R", typed(STUDY)) == {
        "idle": "R/impact/idle.csv",
        "halo3d": "R/impact/app_halo3d.csv",
        "cg_solver": "R/impact/app_cg_solver.csv",
        "p1_m4_b2500000": "R/impact/compression_p1_m4_b2500000.csv",
        "p1_m4_b25000000": "R/impact/compression_p1_m4_b25000000.csv",
        "p2_m4_b2500000": "R/impact/compression_p2_m4_b2500000.csv",
        "p2_m4_b25000000": "R/impact/compression_p2_m4_b25000000.csv",
    }


def test_runtime_files_alone_under_compression_and_paired():
    files = plan.runtime_files("R", typed(STUDY))
    assert len(files) == 2 + 2 * 4 + 2 * 2
    assert list(files.items())[:3] == [
        (("halo3d", "none", ""), "R/runs/alone/halo3d.csv"),
        (("cg_solver", "none", ""), "R/runs/alone/cg_solver.csv"),
        (
            ("halo3d", "compression", "p1_m4_b2500000"),
            "R/runs/compression/halo3d/p1_m4_b2500000.csv",
        ),
    ]
    assert files[("cg_solver", "application", "halo3d")] == "R/runs/pairing/cg_solver/halo3d.csv"
    assert list(files)[-1] == ("cg_solver", "application", "cg_solver")


def test_runtime_files_with_a_cpu_only_control_per_application():
    files = plan.runtime_files("R", typed(STUDY), cpu_control=True)
    assert len(files) == len(plan.runtime_files("R", typed(STUDY))) + 2
    assert files[("halo3d", "cpu", "cpuhog")] == "R/runs/cpu_control/halo3d.csv"


def test_the_workflow_measures_each_control_after_the_applications_pairings(tmp_path):
    only_seed_000 = {key: {"enabled": False} for key in OTHER_STUDIES}
    overlay = {**only_seed_000, "impact_compression": {"cpu_control": True}}
    (tmp_path / "control.yaml").write_text(yaml.safe_dump(overlay))
    configs = [str(REPO / "config" / "config.yaml"), str(tmp_path / "control.yaml")]
    out = snakemake("-n", "--forceall", "--configfile", *configs, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    job = re.search(r"rule measure_cpu_control:\n(.*?)\n\n", out.stdout, flags=re.S).group(1)
    app = re.search(r"wildcards: app=(\w+)", job).group(1)
    inputs = re.search(r"input: (.*)", job).group(1)
    raw = "results/testbed/raw/impact_compression"
    for partner in ("fft_transpose", "halo3d", "cg_solver", "monte_carlo"):
        assert f"{raw}/runs/pairing/{app}/{partner}.csv.prov.json" in inputs
    assert "results/testbed/bin/cpuhog" in inputs
    assert out.stdout.count("rule measure_cpu_control:") == 4


@pytest.mark.parametrize(
    ("kind", "cores", "planned"),
    [
        ("testbed", "per_job", True),
        # Jobs sharing cores, or a cluster's, leave no partner's own CPU time to match.
        ("testbed", "shared", False),
        ("localhost", "per_job", False),
        ("slurm", "per_job", False),
        # In simulated time no host core enters a result.
        ("simgrid", "per_job", False),
    ],
)
def test_the_cpu_only_control_is_planned_where_partners_have_cores_of_their_own(
    kind, cores, planned
):
    platform = platform_of(kind, testbed={"cores": cores})
    assert plan.cpu_control_planned(typed({"cpu_control": True}), platform) is planned
    assert plan.cpu_control_planned(typed({"cpu_control": False}), platform) is False


def _pairing_record(*busy_cores: float) -> dict:
    jobs = [{"role": "measured", "busy_cores": 0.9}]
    jobs += [{"role": "background", "busy_cores": busy} for busy in busy_cores]
    return {"cpu": {"jobs": jobs}}


def test_the_cpu_only_control_is_as_busy_as_the_busiest_partner():
    records = [_pairing_record(0.2), _pairing_record(0.6), _pairing_record(0.4)]
    # 0.6 of a core over 4 ranks; the measured job's own CPU time does not count.
    assert plan.cpu_control_load(records, 4) == pytest.approx(0.15)
    # A rank never takes more than its core.
    assert plan.cpu_control_load([_pairing_record(6.0)], 4) == 1.0
    with pytest.raises(ValueError, match=r"cpu_control.*cores: per_job"):
        plan.cpu_control_load([_pairing_record(0.2), {"cpu": {"saturated": False}}], 4)
    # Two background jobs in one record do not stand in for another record's none.
    with pytest.raises(ValueError, match=r"cpu_control.*cores: per_job"):
        plan.cpu_control_load([_pairing_record(0.2, 0.3), _pairing_record()], 4)
    with pytest.raises(ValueError, match=r"cpu_control.*no pairing"):
        plan.cpu_control_load([], 4)


def test_targets_are_every_figure_in_both_formats_and_every_table():
    targets = plan.targets("F", "T")
    assert targets[:2] == ["F/fig3_impact_latency.svg", "F/fig3_impact_latency.png"]
    assert "F/table1_slowdowns.png" in targets
    assert targets[-8:] == [
        "T/utilization.csv",
        "T/degradation.csv",
        "T/slowdowns.csv",
        "T/predictions.csv",
        "T/error_summary.csv",
        "T/table1.csv",
        "T/relativity.csv",
        "T/claims.csv",
    ]
    assert len(targets) == 6 * 2 + 8


@pytest.mark.parametrize(
    ("configfile", "configs", "pairs"),
    [("config.yaml", 5, 4 * 4), ("paper.yaml", 5 * 2 * 4, 6 * 6)],
)
def test_shipped_configs_plan_their_grid_and_pairings(configfile, configs, pairs):
    settings = Settings.of(netnoise_config.load(REPO / "config" / configfile))
    study = settings.study(ImpactCompressionSettings)
    link = plan.compression_link_mbit(study, from_settings(settings.platform))
    apps = len(study.applications)
    assert len(plan.compression_configs(study, link)) == configs
    assert len(plan.pairings(study)) == pairs
    assert len(plan.impact_files("R", study, link)) == 1 + apps + configs
    assert len(plan.runtime_files("R", study, link)) == apps + apps * configs + pairs
