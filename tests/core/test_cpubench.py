"""The co-runs of ``netnoise bench cpu`` are the studies' own heaviest ones."""

import copy
from pathlib import Path

import pytest

from netnoise import config as netnoise_config
from netnoise import cpubench
from netnoise.settings import Settings
from netnoise.studies.variability.campaign import draw, racks_of_testbed

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def config():
    return netnoise_config.load(str(REPO / "config" / "config.yaml"))


@pytest.fixture(scope="module")
def settings(config):
    return Settings.of(config)


def _case(title_start):
    return next(case for _, case in cpubench.cases() if case.title.startswith(title_start))


def test_the_variability_case_is_the_studys_maximal_run_on_its_layout(config, settings, tmp_path):
    case = _case("application beside the maximal")
    platform = cpubench._platform(settings, case.layout)
    spec = platform.testbed.spec
    study = config["variability"]
    assert (spec.racks, spec.backbone_mbit) == (
        study["testbed"]["racks"],
        study["testbed"]["backbone_mbit"],
    )
    measured, (background,) = case.jobs(Path("/bin"), tmp_path, settings, platform)
    maximal = draw(racks_of_testbed(spec), max(study["node_counts"]), "maximal", study["seed"])
    assert measured.nodes == list(maximal.job_nodes)
    assert background.nodes == list(maximal.loaded_nodes)
    load = background.program[background.program.index("--load") + 1]
    assert float(load) == study["background"]["maximal_load"] == 0.6
    heavier = copy.deepcopy(config)
    heavier["variability"]["background"]["maximal_load"] = 0.9
    _, (background,) = case.jobs(Path("/bin"), tmp_path, Settings.of(heavier), platform)
    assert background.program[background.program.index("--load") + 1] == "0.9000"


def test_the_noise_case_spans_both_racks_of_the_studys_layout(config, settings, tmp_path):
    case = _case("noise benchmark")
    platform = cpubench._platform(settings, case.layout)
    spec = platform.testbed.spec
    bench = config["network_noise"]["benchmark"]
    assert (spec.racks, spec.nic_mbit, spec.backbone_mbit) == (
        bench["testbed"]["racks"],
        bench["testbed"]["nic_mbit"],
        bench["testbed"]["backbone_mbit"],
    )
    measured, background = case.jobs(Path("/bin"), tmp_path, settings, platform)
    assert background == []
    racks = {node.name: node.rack for node in spec.node_list()}
    assert len(measured.nodes) == bench["nodes"]
    assert {racks[name] for name in measured.nodes} == {1, 2}
    assert measured.program[measured.program.index("--perturb-size") + 1] == str(
        bench["perturb_size"]
    )


def test_each_layout_has_its_prefix_by_rack_count(settings):
    prefixes = {
        case.title: cpubench._platform(settings, case.layout).testbed.spec.prefix
        for _, case in cpubench.cases()
    }
    assert prefixes["two network-heavy proxies paired"] == cpubench.PREFIX
    assert prefixes["16-node pattern across two racks"] == f"{cpubench.PREFIX}r"


def test_the_noise_case_binds_by_role_and_its_control_is_the_cpu_perturbation(
    config, settings, tmp_path
):
    case = _case("noise benchmark")
    platform = cpubench._platform(settings, case.layout)
    measured, _ = case.jobs(Path("/bin"), tmp_path, settings, platform)
    control, background = case.cpu_control(Path("/bin"), tmp_path, settings, platform)
    assert measured.binds_by_role and control.binds_by_role and background == []
    kinds = [job.program[job.program.index("--perturbation") + 1] for job in (measured, control)]
    assert kinds == ["network", "cpu"]
    load = control.program[control.program.index("--cpu-load") + 1]
    assert float(load) == config["network_noise"]["benchmark"]["cpu_load"]


def test_the_cpu_control_of_a_corun_is_as_busy_as_each_background_was(tmp_path):
    background = [cpubench.Job("loadgen", ["loadgen"], 4, tmp_path / "b.csv", ["n1", "n2"])]
    record = {"jobs": [{"name": "loadgen", "role": "background", "busy_cores": 0.6},
                       {"name": "app", "role": "measured", "busy_cores": 1.0}]}  # fmt: skip
    (hog,) = cpubench._cpu_hogs(Path("/bin"), background, record)
    assert hog.program[:3] == ["/bin/cpuhog", "--load", "0.150"]
    assert (hog.ranks, hog.nodes, hog.output) == (4, ["n1", "n2"], tmp_path / "b.csv")


def test_the_probe_case_is_seed_004s_top_load_on_its_nodes(config, settings, tmp_path):
    case = _case("probe beside loadgen")
    platform = cpubench._platform(settings, case.layout)
    measured, (loadgen,) = case.jobs(Path("/bin"), tmp_path, settings, platform)
    lv = config["latency_variation"]
    assert measured.ranks == 2 and len(loadgen.nodes) == lv["nodes"]
    load = float(loadgen.program[loadgen.program.index("--load") + 1])
    assert load == max(lv["characterize"]["levels"]) / 100


def test_an_unknown_core_setting_is_refused():
    with pytest.raises(netnoise_config.ConfigError, match="--cores: half: expected"):
        cpubench.main(["--cores", "half", "--policies", "", "--sleepers", ""])
