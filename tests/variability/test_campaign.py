"""Seed 002 campaign: background draws, run plans, and real runs on the testbed."""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from netnoise.cli import main as cli_main
from netnoise.config import validate
from netnoise.io import read_benchmark
from netnoise.platform import PlatformUnavailable
from netnoise.platform.simgrid import SimgridPlatform, rack_network_ports
from netnoise.platform.testbed import TestbedPlatform
from netnoise.provenance import read_sidecar
from netnoise.settings import PlatformSettings, Settings
from netnoise.studies.variability import analysis as study
from netnoise.studies.variability.campaign import (
    BackgroundSettings,
    Draw,
    Measured,
    RunKey,
    batches,
    draw,
    machine_of_testbed,
    measure_runs,
    racks_of_testbed,
    racks_spanned,
    run_keys,
    run_seed,
    simgrid_machine,
)
from netnoise.studies.variability.features import FEATURES
from netnoise.studies.variability.settings import VariabilitySettings
from netnoise.testbed.fabric import TestbedSpec
from netnoise.testbed.queue_time import QueueTime
from tests.conftest import UNJUDGED_CPU

SPEC = TestbedSpec("nv", 8, 2, 50.0, 100.0, 16000, 100000, "default", 2)
RACKS = racks_of_testbed(SPEC)
RACK = {n.name: n.rack for n in SPEC.node_list()}


def test_a_runs_seed_depends_on_what_identifies_it_only():
    seeds = {
        run_seed(2, c, a, n, i)
        for c in ("production", "maximal")
        for a in ("cg_solver", "halo3d")
        for n in (2, 4)
        for i in range(20)
    }
    assert len(seeds) == 2 * 2 * 2 * 20  # all distinct
    assert run_seed(2, "production", "halo3d", 4, 7) == run_seed(2, "production", "halo3d", 4, 7)
    assert run_seed(3, "production", "halo3d", 4, 7) != run_seed(2, "production", "halo3d", 4, 7)
    assert all(0 <= s < 2**31 for s in seeds)  # what the C programs accept


def production_draws(campaign: str, count: int = 600) -> list[Draw]:
    return [draw(RACKS, 4, campaign, run_seed(2, campaign, "a", 4, i)) for i in range(count)]


def test_production_draws_are_valid_reproducible_and_cover_the_conditions():
    draws = production_draws("production")
    assert draws[17] == draw(RACKS, 4, "production", draws[17].seed)
    for d in draws:
        assert len(d.job_nodes) == 4 == len(set(d.job_nodes))
        assert len(d.loaded_nodes) == len(set(d.loaded_nodes)) and len(d.loaded_nodes) % 2 == 0
        # The shared job nodes come first, each paired with a free node.
        shared = d.loaded_nodes[: 2 * d.shared_nodes]
        assert set(shared[0::2]) <= set(d.job_nodes) and not set(shared[1::2]) & set(d.job_nodes)
        assert not set(d.loaded_nodes[2 * d.shared_nodes :]) & set(d.job_nodes)
        # The steady campaign's background is loadgen's, whenever there is one.
        assert d.generator == ("loadgen" if d.loaded_nodes else "none")
        if d.loaded_nodes:
            assert 0.1 <= d.parameters["load"] <= 1.0
    # 0 to 4 of the job's nodes share their links, each about a fifth of the time.
    shared = Counter(d.shared_nodes for d in draws)
    assert set(shared) == {0, 1, 2, 3, 4} and min(shared.values()) > 80
    # Placement: jobs in one rack and across both, loadgen pairs within and across.
    assert {racks_spanned(RACKS, d.job_nodes) for d in draws} == {1, 2}
    crossing = [RACK[d.loaded_nodes[0]] != RACK[d.loaded_nodes[1]] for d in draws if d.loaded_nodes]
    assert 0.2 < np.mean(crossing) < 0.8
    # The loads spread over the range: the mean of a uniform draw.
    loads = [d.parameters["load"] for d in draws if d.loaded_nodes]
    assert np.mean(loads) == pytest.approx(0.55, abs=0.05)


def test_bursty_draws_place_like_the_steady_ones_with_compressionb_bursts():
    draws = production_draws("bursty")
    assert draws[5] == draw(RACKS, 4, "bursty", draws[5].seed)
    assert {d.generator for d in draws} == {"compressionb", "none"}
    for d in draws:
        assert (d.generator == "none") == (not d.loaded_nodes)
        if d.loaded_nodes:
            assert 1 <= d.parameters["messages"] <= 4
            assert 2.5e6 <= d.parameters["sleep_cycles"] <= 2.5e8
    shared = Counter(d.shared_nodes for d in draws)
    assert set(shared) == {0, 1, 2, 3, 4} and min(shared.values()) > 80
    sleeps = np.log10([d.parameters["sleep_cycles"] for d in draws if d.loaded_nodes])
    assert np.mean(sleeps) == pytest.approx(7.4, abs=0.15)  # log-uniform in 10^6.4-10^8.4
    # The two campaigns draw apart: a run's seed depends on its campaign.
    assert draws[0].seed != production_draws("production", 1)[0].seed


def test_the_controlled_extremes():
    dedicated = draw(RACKS, 4, "dedicated", 5)
    assert dedicated.job_nodes == ("nv-n01", "nv-n02", "nv-n03", "nv-n04")  # one rack
    assert dedicated.generator == "none" and dedicated.loaded_nodes == ()
    maximal = draw(RACKS, 4, "maximal", 5)
    assert Counter(RACK[n] for n in maximal.job_nodes) == {1: 2, 2: 2}
    # Every node loaded, each job node paired with a free node of the other rack.
    assert set(maximal.loaded_nodes) == set(RACK) and maximal.shared_nodes == 4
    pairs = list(zip(maximal.loaded_nodes[0::2], maximal.loaded_nodes[1::2], strict=True))
    assert all(RACK[a] != RACK[b] for a, b in pairs)
    assert maximal.generator == "loadgen" and maximal.parameters == {"load": 0.6}
    heavier = draw(RACKS, 4, "maximal", 5, BackgroundSettings(maximal_load=0.9))
    assert heavier.parameters == {"load": 0.9} and heavier.loaded_nodes == maximal.loaded_nodes
    pairs = zip(maximal.loaded_nodes[::2], maximal.loaded_nodes[1::2], strict=True)
    assert all(RACK[a] != RACK[b] for a, b in pairs)  # every pair crosses the backbone
    assert draw(RACKS, 2, "maximal", 1).job_nodes == ("nv-n01", "nv-n05")
    with pytest.raises(ValueError, match="unknown campaign 'busy'"):
        draw(RACKS, 2, "busy", 1)
    with pytest.raises(ValueError, match="does not fit the 8 nodes"):
        draw(RACKS, 9, "production", 1)


def test_background_arguments_and_settings():
    settings = BackgroundSettings()
    loadgen = draw(RACKS, 2, "maximal", 3).background_args(settings, 50.0)
    assert loadgen == ["--load", "0.6000", "--link-mbit", "50", "--size", "65536", "--seed", "3"]
    burst = Draw(
        "bursty",
        9,
        ("a", "b"),
        "compressionb",
        ("c", "d"),
        {"messages": 2, "sleep_cycles": 5e6},
    )
    args = burst.background_args(settings, 50.0)
    assert args[:6] == ["--partners", "1", "--messages", "2", "--sleep-cycles", "5000000"]
    assert args[-4:] == ["--iterations", "0", "--seed", "9"]
    with pytest.raises(ValueError, match="at most 1"):
        BackgroundSettings(load=(0.5, 1.5))
    with pytest.raises(ValueError, match=r"maximal_load: a share of the link rate in \(0, 1\]"):
        BackgroundSettings(maximal_load=1.2)
    only = BackgroundSettings.from_config({"load": [0.2, 0.4], "maximal_load": 0.5})
    assert only.load == (0.2, 0.4) and only.maximal_load == 0.5


def test_runs_are_planned_index_by_index_and_batched():
    keys = run_keys(["a", "b"], [2, 4], 3)
    assert keys[:4] == [RunKey("a", 2, 0), RunKey("a", 4, 0), RunKey("b", 2, 0), RunKey("b", 4, 0)]
    assert len(keys) == 12 and keys[0].name == "a_n2_run0000"
    jobs = batches(keys, 5)
    assert [len(b) for b in jobs] == [5, 5, 2] and [k for b in jobs for k in b] == keys
    with pytest.raises(ValueError, match="at least 1"):
        batches(keys, 0)


@pytest.mark.root
@pytest.mark.mpi
def _simgrid_platform(topology: str = "testbed") -> SimgridPlatform:
    """The variability study's layout in SimGrid: two racks of four nodes, 50 Mbit/s
    node links, a 100 Mbit/s backbone, 5 us links."""
    config = validate(
        {
            "platform": {
                "kind": "simgrid",
                "testbed": {"prefix": "nvs", "nodes": 8, "nic_mbit": 50},
                "simgrid": {"latency_us": 5},
            },
            "impact_compression": {"enabled": False},
            "network_noise": {"benchmark": {"enabled": False}},
            "latency_variation": {"enabled": False},
        }
    )
    config["variability"]["simgrid"] = {**config["variability"]["simgrid"], "topology": topology}
    settings = Settings.of(config)
    return SimgridPlatform(settings.effective(settings.study(VariabilitySettings)))


def test_a_simgrid_campaign_needs_the_testbeds_racks_of_named_hosts():
    machine = simgrid_machine(_simgrid_platform())
    assert machine.racks == (
        ("nvs-n01", "nvs-n02", "nvs-n03", "nvs-n04"),
        ("nvs-n05", "nvs-n06", "nvs-n07", "nvs-n08"),
    )
    assert machine.nic_mbit == 50
    with pytest.raises(PlatformUnavailable, match=r"variability\.simgrid\.topology: testbed"):
        simgrid_machine(_simgrid_platform("torus:2x4"))


@pytest.mark.skipif(shutil.which("smpirun") is None, reason="SimGrid not installed")
def test_campaign_runs_in_simgrid_feed_the_model_with_the_links_counters(smpi_programs, tmp_path):
    """Production and maximal runs of halo3d on the simulated layout, measured as
    the workflow measures them: each run's counters come from inside the
    simulation, under the testbed's port names, and give every feature of the
    model; the maximal background moves more bytes over the job's ports and
    holds its links at full rate longer than a quiet production run."""
    platform = _simgrid_platform()
    machine = simgrid_machine(platform)
    apps = {"halo3d": Measured(str(smpi_programs / "halo3d"), ("--steps", "20"), warmup=1)}

    def measure(keys, campaign):
        return measure_runs(
            platform,
            machine,
            keys,
            apps,
            campaign=campaign,
            seed=2,
            out_dir=tmp_path / campaign,
            programs={n: str(smpi_programs / n) for n in ("loadgen", "compressionb")},
            log=tmp_path / "campaign.log",
            timeout_s=300,
            counter_interval_s=0.05,
        )

    runs = measure(run_keys(["halo3d"], [2], 4), "production")
    (busy,) = measure([RunKey("halo3d", 4, 0)], "maximal")
    table = study.tidy_runs([*runs, busy])
    assert set(table["stall_counter"]) == {"saturated_ns"}
    assert table.loc[:, list(FEATURES)].notna().all().all()
    for run in [*runs, busy]:
        info = json.loads((run / "run.json").read_text())
        counters = pd.read_csv(run / "counters.csv")
        assert set(info["nodes"]) <= set(counters["device"])
        assert {tuple(p) for p in info["network_ports"]} == rack_network_ports(
            machine.racks, info["nodes"]
        )
        assert read_sidecar(run / "application.csv")["platform"]["kind"] == "simgrid"
    quiet = table[table["campaign"] == "production"]
    maximal = table[table["campaign"] == "maximal"].iloc[0]
    assert maximal["network_bytes_mean"] > quiet["network_bytes_mean"].min()
    assert maximal["network_stalls_mean"] > quiet["network_stalls_mean"].min()


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root")
def test_campaign_runs_feed_the_variability_cli(built_programs, tmp_path, capsys):
    """Runs measured on a two-rack testbed as the workflow measures them; the CLI
    trains on their directories and estimates one of them."""
    config = validate(
        {
            "platform": {
                "testbed": {"prefix": "nvt", "racks": 2, "backbone_mbit": 100},
                "cpu": UNJUDGED_CPU,
            },
            "impact_compression": {"enabled": False},
            "network_noise": {"benchmark": {"enabled": False}},
        }
    )
    platform = TestbedPlatform(PlatformSettings.of(config["platform"]))
    spec = platform.testbed.spec
    apps = {"halo3d": Measured(str(built_programs / "halo3d"), ("--steps", "8"), warmup=1)}
    common = {
        "seed": 2,
        "programs": {name: str(built_programs / name) for name in ("loadgen", "compressionb")},
        "log": tmp_path / "campaign.log",
        "timeout_s": 120,
        "counter_interval_s": 0.05,
    }

    def measure(keys, campaign, tracer=None):
        return measure_runs(
            platform,
            machine_of_testbed(spec, tracer),
            keys,
            apps,
            campaign=campaign,
            out_dir=tmp_path / campaign,
            **common,
        )

    try:
        platform.check()
        with QueueTime(spec.fabric) as tracer:
            runs = measure(run_keys(["halo3d"], [2], 8), "production", tracer)
        # Index 0 of the bursty campaign draws compressionb on two free nodes.
        (burst,) = measure([RunKey("halo3d", 2, 0)], "bursty")
        (busy,) = measure([RunKey("halo3d", 4, 0)], "maximal")
    finally:
        platform.testbed.down()
    assert [r.name for r in runs] == [f"halo3d_n2_run{i:04d}" for i in range(8)]
    for run in [*runs, burst, busy]:
        info = json.loads((run / "run.json").read_text())
        assert info["runtime_s"] > 0 and len(info["nodes"]) == info["node_count"]
        counters = pd.read_csv(run / "counters.csv")
        assert set(counters["device"]) == {*info["nodes"], "nvt-fabric"}  # the job's view
        assert counters["time_s"].nunique() >= 2
        record = read_sidecar(run / "application.csv")
        assert record["config"]["draw"]["seed"] == info["draw"]["seed"]
        assert (run / "background.csv").exists() == (info["draw"]["generator"] != "none")
    burst_info = json.loads((burst / "run.json").read_text())
    assert burst_info["campaign"] == "bursty" and burst_info["draw"]["generator"] == "compressionb"
    assert len(read_benchmark(burst / "background.csv").data) == 2
    steady = [json.loads((r / "run.json").read_text())["draw"]["generator"] for r in runs]
    assert set(steady) <= {"loadgen", "none"} and "loadgen" in steady
    busy_info = json.loads((busy / "run.json").read_text())
    assert busy_info["racks_spanned"] == 2 and busy_info["draw"]["parameters"] == {"load": 0.6}
    # loadgen on the job's 2 nodes, each paired with a free node of the other rack, and
    # on the other 4 free nodes in pairs across the racks: 8 ranks.
    assert len(read_benchmark(busy / "background.csv").data) == 8
    table = study.tidy_runs([*runs, busy])
    # The production runs read the fabric's queue time; the maximal one, without a
    # tracer, tbf's overlimits.
    assert set(table["stall_counter"]) == {"qdisc_stall_ns", "qdisc_overlimits"}
    quiet = table[table["campaign"] == "production"]["network_bytes_mean"].median()
    assert table.loc[table["campaign"] == "maximal", "network_bytes_mean"].iloc[0] > quiet

    model = tmp_path / "model.npz"
    # 8 runs: 3 folds, 2 inside each, and a bound for half of new runs need 6.
    train = ["--cv", "3", "--inner-cv", "2", "--bound-level", "0.5"]
    assert cli_main(["variability", "train", *map(str, runs), "--model", str(model), *train]) == 0
    capsys.readouterr()
    assert cli_main(["variability", "estimate", str(busy), "--model", str(model)]) == 0
    text = capsys.readouterr().out
    assert str(busy) in text and "halo3d, 4 nodes" in text
    assert "variability estimate" in text or "no prediction can be given" in text
    assert cli_main(["variability", "estimate", str(runs[0]), "--model", str(model), "--json"]) == 0
    estimate = json.loads(capsys.readouterr().out)
    assert (estimate["z"] is None) == (estimate["reason"] is not None)
