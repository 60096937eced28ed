"""The co-runs of ``netnoise bench cpu`` are the studies' own heaviest ones."""

import copy
from pathlib import Path

import pytest

from netnoise import config as netnoise_config
from netnoise import cpubench
from netnoise.studies.variability.campaign import draw, racks_of_testbed

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def config():
    return netnoise_config.load(str(REPO / "config" / "config.yaml"))


def _case(title_start):
    return next(case for case in cpubench.cases() if case.title.startswith(title_start))


def test_the_variability_case_is_the_studys_maximal_run_on_its_layout(config, tmp_path):
    case = _case("application beside the maximal")
    spec = cpubench._platform(config, case.layout).testbed.spec
    study = config["variability"]
    assert (spec.racks, spec.backbone_mbit) == (
        study["testbed"]["racks"],
        study["testbed"]["backbone_mbit"],
    )
    measured, (background,) = case.jobs(Path("/bin"), tmp_path, config, spec)
    maximal = draw(racks_of_testbed(spec), max(study["node_counts"]), "maximal", study["seed"])
    assert measured.nodes == list(maximal.job_nodes)
    assert background.nodes == list(maximal.loaded_nodes)
    load = background.program[background.program.index("--load") + 1]
    assert float(load) == study["background"]["maximal_load"] == 0.6
    heavier = copy.deepcopy(config)
    heavier["variability"]["background"]["maximal_load"] = 0.9
    _, (background,) = case.jobs(Path("/bin"), tmp_path, heavier, spec)
    assert background.program[background.program.index("--load") + 1] == "0.9000"


def test_the_noise_case_spans_both_racks_of_the_studys_layout(config, tmp_path):
    case = _case("noise benchmark")
    spec = cpubench._platform(config, case.layout).testbed.spec
    bench = config["network_noise"]["benchmark"]
    assert (spec.racks, spec.nic_mbit, spec.backbone_mbit) == (
        bench["testbed"]["racks"],
        bench["testbed"]["nic_mbit"],
        bench["testbed"]["backbone_mbit"],
    )
    measured, background = case.jobs(Path("/bin"), tmp_path, config, spec)
    assert background == []
    racks = {node.name: node.rack for node in spec.node_list()}
    assert len(measured.nodes) == bench["nodes"]
    assert {racks[name] for name in measured.nodes} == {1, 2}
    assert measured.program[measured.program.index("--perturb-size") + 1] == str(
        bench["perturb_size"]
    )


def test_each_layout_has_its_prefix_by_rack_count(config):
    prefixes = {
        case.title: cpubench._platform(config, case.layout).testbed.spec.prefix
        for case in cpubench.cases()
    }
    assert prefixes["two network-heavy proxies paired"] == cpubench.PREFIX
    assert prefixes["16-node pattern across two racks"] == f"{cpubench.PREFIX}r"
