"""The simgrid platform: generated platform files, and real smpirun runs whose
simulated times are checked against the platform's latencies and rates."""

from __future__ import annotations

import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pandas as pd
import pytest
import yaml
from scipy import stats
from snakemake.utils import update_config

from netnoise import bundle
from netnoise.config import ConfigError, validate
from netnoise.counters import COLUMNS
from netnoise.io import read_benchmark
from netnoise.platform import PlatformUnavailable, from_settings
from netnoise.platform.simgrid import (
    SimgridPlatform,
    generate,
    link_counter_rows,
    rack_network_ports,
    run_times,
)
from netnoise.provenance import read_sidecar, sidecar_path, summary_table
from netnoise.run import Job, RunFailed, corun
from netnoise.settings import PlatformSettings
from netnoise.sim.topology import parse_spec
from netnoise.studies.latency_variation import injector, tables
from netnoise.studies.latency_variation.injection import run_with_injector

from ..conftest import REPO, quick_study_with, run_pingpong, snakemake

needs_simgrid = pytest.mark.skipif(
    shutil.which("smpicc") is None or shutil.which("smpirun") is None,
    reason="SimGrid not installed (make setup installs libsimgrid-dev)",
)


def simgrid_platform(tmp_path: Path, **simgrid) -> SimgridPlatform:
    """The simgrid platform of the config's defaults with ``simgrid`` and a
    testbed of two racks of two nodes (1000 Mbit/s node links, 400 Mbit/s
    uplinks) over them, its files in ``tmp_path``."""
    config = {
        "platform": {
            "kind": "simgrid",
            "testbed": {"nodes": 4, "racks": 2, "nic_mbit": 1000, "backbone_mbit": 400},
            "simgrid": simgrid,
        }
    }
    for study in ("impact_compression", "latency_variation", "variability", "asymmetric"):
        config[study] = {"enabled": False}
    validate(config, source="test")
    return SimgridPlatform(PlatformSettings.of(config["platform"]), directory=tmp_path / "platform")


def test_racks_platform_routes_cross_rack_pairs_over_both_uplinks(tmp_path):
    generated = simgrid_platform(tmp_path, latency_us=5).generated
    root = ET.fromstring(generated.xml.split("\n", 2)[2])
    routes = {
        (r.get("src"), r.get("dst")): [(c.get("id"), c.get("direction")) for c in r]
        for r in root.iter("route")
    }
    assert len(routes) == 4 * 3
    assert routes[("nn-n01", "nn-n03")] == [
        ("nic-nn-n01", "UP"),
        ("uplink-r1", "UP"),
        ("uplink-r2", "DOWN"),
        ("nic-nn-n03", "DOWN"),
    ]
    assert routes[("nn-n02", "nn-n01")] == [("nic-nn-n02", "UP"), ("nic-nn-n01", "DOWN")]
    # Ranks take the racks in turn: rank 0 and rank 1 talk across the backbone.
    assert generated.hosts == ["nn-n01", "nn-n03", "nn-n02", "nn-n04"]
    rates = {link.get("id"): link.get("bandwidth") for link in root.iter("link")}
    assert rates["nic-nn-n01"] == "1000Mbps" and rates["uplink-r2"] == "400Mbps"


@pytest.mark.parametrize(
    ("spec", "kind", "params"),
    [
        ("xgft:16,8/1,8", "FAT_TREE", "2;16,8;1,8;1,1"),
        ("xgft:12,12/1,6/1,2", "FAT_TREE", "2;12,12;1,6;1,2"),
        ("torus:4x4x8", "TORUS", "4,4,8"),
    ],
)
def test_fat_trees_and_tori_keep_the_simulators_names_and_sizes(tmp_path, spec, kind, params):
    generated = simgrid_platform(tmp_path, topology=spec).generated
    cluster = ET.fromstring(generated.xml.split("\n", 2)[2]).find("cluster")
    assert (cluster.get("topology"), cluster.get("topo_parameters")) == (kind, params)
    assert len(generated.hosts) == parse_spec(spec).n_endpoints


@needs_simgrid
def test_a_dragonfly_routes_within_a_router_over_two_cables(tmp_path, smpi_programs):
    """dragonfly:2,1;2,1;2,1;2 is SimGrid's DRAGONFLY of 2 groups of 1 chassis of 2
    routers of 2 hosts: 16 hosts. Hosts 0 and 1 share a router, so a 1-byte
    round trip is twice their two 5 us cables; the packet model, which needs a
    graph, refuses it."""
    platform = simgrid_platform(tmp_path, topology="dragonfly:2,1;2,1;2,1;2", latency_us=5)
    generated = platform.generated
    cluster = ET.fromstring(generated.xml.split("\n", 2)[2]).find("cluster")
    assert (cluster.get("topology"), cluster.get("topo_parameters")) == (
        "DRAGONFLY",
        "2,1;2,1;2,1;2",
    )
    assert len(generated.hosts) == 16
    args = ("--size", "1", "--warmup", "1", "--iterations", "3")
    near = read_benchmark(run_pingpong(platform, smpi_programs, tmp_path, *args)).data["rtt_us"]
    assert 2 * 2 * 5 <= near.min() <= near.max() < 2 * 2 * 5 + 1.0
    packet = simgrid_platform(tmp_path, topology="dragonfly:2,1;2,1;2,1;2", network_model="packet")
    with pytest.raises(PlatformUnavailable, match="dragonfly is generated for the flow model"):
        generate(packet.settings)


def test_bad_topology_and_model_are_named_when_the_config_is_read(tmp_path):
    with pytest.raises(ConfigError, match=r"platform\.simgrid\.topology"):
        simgrid_platform(tmp_path, topology="dragonfly:4")
    with pytest.raises(ConfigError, match=r"platform\.simgrid\.network_model"):
        simgrid_platform(tmp_path, network_model="fluid")


def test_a_run_larger_than_the_platform_is_refused_before_it_starts(tmp_path):
    platform = simgrid_platform(tmp_path, topology="torus:2x2")
    with pytest.raises(PlatformUnavailable, match="has 4 hosts; a run of 5 ranks"):
        platform.mpi_launch(["./pingpong"], 5)
    with pytest.raises(PlatformUnavailable, match=r"not hosts of the simulated .*: nn-n01$"):
        platform.mpi_launch(["./pingpong"], 2, nodes=["nn-n01", "node-1"])


def _hostfile(launch) -> list[str]:
    return Path(launch.argv[launch.argv.index("-hostfile") + 1]).read_text().split()


def test_ranks_go_to_the_named_hosts_in_turn_or_one_each(tmp_path):
    platform = simgrid_platform(tmp_path)
    assert _hostfile(platform.mpi_launch(["./pingpong"], 2)) == ["nn-n01", "nn-n03"]
    named = platform.mpi_launch(["./pingpong"], 4, nodes=["nn-n04", "nn-n02"])
    assert _hostfile(named) == ["nn-n04", "nn-n02", "nn-n04", "nn-n02"]
    per_rank = platform.mpi_launch(["./pingpong"], 3, nodes=["nn-n02", "nn-n02", "nn-n01"])
    assert _hostfile(per_rank) == ["nn-n02", "nn-n02", "nn-n01"]
    with pytest.raises(PlatformUnavailable, match="one node per rank"):
        platform.mpi_launch(["./pingpong"], 4, nodes=["nn-n02", "nn-n02", "nn-n01"])


def test_link_counters_name_each_direction_after_the_port_that_sends_into_it():
    racks = (("nn-n01", "nn-n02"), ("nn-n03", "nn-n04"))
    readings = pd.DataFrame(
        [
            (0.5, "nic-nn-n01_UP", 1000, 0.25),
            (0.5, "nic-nn-n03_DOWN", 900, 0.0),
            (0.5, "uplink-r1_UP", 800, 0.125),
            (0.5, "uplink-r2_DOWN", 700, 0.0),
            (0.5, "__loopback__", 5, 0.0),
        ],
        columns=["time_s", "link", "bytes", "saturated_s"],
    )
    rows = link_counter_rows(readings, racks)
    assert list(rows.columns) == COLUMNS
    ports = rows.drop_duplicates(["device", "port", "role"])
    assert list(ports[["device", "port", "role"]].itertuples(index=False, name=None)) == [
        ("nn-n01", "nic", "node_nic"),
        ("switch-r2", "nn-n03", "switch_port"),
        ("switch-r1", "uplink", "uplink"),
        ("core", "r2", "core_port"),
    ]
    saturated = rows[rows["counter"] == "saturated_ns"].set_index("device")["value"]
    assert saturated["nn-n01"] == 250_000_000 and saturated["switch-r1"] == 125_000_000
    assert rows.loc[rows["counter"] == "tx_bytes", "value"].tolist() == [1000, 900, 800, 700]
    cluster = link_counter_rows(readings.iloc[:1], None)
    assert set(cluster["role"]) == {"link"} and set(cluster["device"]) == {"nic-nn-n01_UP"}
    with pytest.raises(ValueError, match="'node-3_UP' is none of the racks platform's"):
        link_counter_rows(readings.assign(link="node-3_UP"), racks)
    with pytest.raises(ValueError, match=r"lack column\(s\) saturated_s"):
        link_counter_rows(readings.drop(columns="saturated_s"), racks)
    assert rack_network_ports(racks, ["nn-n01", "nn-n02"]) == {
        ("switch-r1", "nn-n01"),
        ("switch-r1", "nn-n02"),
        ("switch-r1", "uplink"),
        ("core", "r1"),
    }
    with pytest.raises(PlatformUnavailable, match="not hosts of the racks platform: nn-n09"):
        rack_network_ports(racks, ["nn-n09"])


@needs_simgrid
def test_link_counters_count_a_transfers_bytes_and_its_bottleneck_time(tmp_path, smpi_programs):
    """1 MiB ping-pongs between the racks, counted over the timed part by the
    measured program: each direction's NIC, switch port, uplink and core port
    carried every message once (beside the loop's collectives), a node of
    neither rank nothing; each 400 Mbit/s uplink ran at its full rate for each
    message up it, 2^20 x 8 / 400e6 s, the 1000 Mbit/s NICs never did."""
    platform = simgrid_platform(tmp_path, latency_us=5)
    size, iterations = 1 << 20, 4
    argv = [str(smpi_programs / "pingpong"), "--size", str(size), "--warmup", "1"]
    measured = Job("pingpong", [*argv, "--iterations", str(iterations)], 2, tmp_path / "m.csv")
    counters = tmp_path / "counters.csv"
    corun(platform, measured, log=tmp_path / "log", timeout_s=120,
          counters_output=counters, counter_interval_s=0.05)  # fmt: skip
    rows = pd.read_csv(counters)
    assert list(rows.columns) == COLUMNS
    final = rows[rows["time_s"] == rows["time_s"].max()].set_index(["device", "port", "counter"])
    sent = iterations * size
    route = [("nn-n01", "nic"), ("switch-r1", "uplink"), ("core", "r2"), ("switch-r2", "nn-n03")]
    back = [("nn-n03", "nic"), ("switch-r2", "uplink"), ("core", "r1"), ("switch-r1", "nn-n01")]
    for device, port in route + back:
        # Beside the messages, a few KiB of the loop's small collectives.
        assert sent <= final.loc[(device, port, "tx_bytes"), "value"] < sent + 16384
    assert final.loc[("nn-n02", "nic", "tx_bytes"), "value"] == 0
    transfer_ns = size * 8 / 400e6 * 1e9
    uplink_ns = final.loc[("switch-r1", "uplink", "saturated_ns"), "value"]
    # Saturation is sampled every 100 us: up to two samples off per message.
    assert abs(uplink_ns - iterations * transfer_ns) <= iterations * 2e5
    assert final.loc[("nn-n01", "nic", "saturated_ns"), "value"] == 0
    # Read every 50 ms of simulated time between the start and the end.
    assert rows["time_s"].nunique() >= 2 + int(iterations * 2 * transfer_ns * 1e-9 / 0.05) - 1
    packet = simgrid_platform(tmp_path, network_model="packet")
    with pytest.raises(PlatformUnavailable, match="network_model flow"):
        corun(packet, measured, log=tmp_path / "log", timeout_s=120, counters_output=counters)


@needs_simgrid
def test_a_corun_runs_its_jobs_in_one_simulation_on_the_same_links(tmp_path, smpi_programs):
    """A 1 MiB ping-pong between the racks beside another between the same two
    hosts, looping until the measured one ends: the two share every link of the
    route. The measured pair starts up to one handshake pause (10 us, simulated)
    after the other is ready; out of step by that delta, each transfer runs
    alone for delta and shared for the rest, so a round trip takes
    2 x (4 x 5 us + 1 MiB at 200 Mbit/s - delta). Both run in one smpirun,
    under the dispatcher; the CPU record says the host's cores do not apply."""
    platform = simgrid_platform(tmp_path, latency_us=5)
    size = 1 << 20
    pingpong = str(smpi_programs / "pingpong")
    measured = Job("pingpong", [pingpong, "--size", str(size), "--iterations", "6"], 2,
                   tmp_path / "measured.csv")  # fmt: skip
    background = Job("partner", [pingpong, "--size", str(size), "--iterations", "0"], 2,
                     tmp_path / "partner.csv")  # fmt: skip
    corun(platform, measured, [background], log=tmp_path / "corun.log", timeout_s=120)
    rtt = read_benchmark(measured.output).data["rtt_us"]
    shared_us = 2 * (4 * 5 + size * 8 / 200e6 * 1e6)
    assert len(rtt) == 6
    assert shared_us - 2 * 10 <= rtt.min() <= rtt.max() < shared_us + 1.0
    partner = read_benchmark(background.output).data
    assert len(partner) > 6 and read_benchmark(background.output).meta["hosts"] == "nn-n01,nn-n03"
    sidecar = read_sidecar(measured.output)
    assert sidecar["cpu"]["applicable"] is False and sidecar["cpu"]["judged"] is False
    assert [job["name"] for job in sidecar["corun"]] == ["partner", "pingpong"]
    launches = [
        line for line in (tmp_path / "corun.log").read_text().splitlines() if line[:1] == "$"
    ]
    assert len(launches) == 1 and f"{smpi_programs}/corun -np 2 {pingpong}" in launches[0]
    assert sidecar["platform_run"]["simulated_s"] > 6 * shared_us * 1e-6


@needs_simgrid
def test_a_failing_job_fails_the_whole_simulated_corun(tmp_path, smpi_programs):
    platform = simgrid_platform(tmp_path)
    pingpong = str(smpi_programs / "pingpong")
    measured = Job("pingpong", [pingpong, "--iterations", "3"], 2, tmp_path / "m.csv")
    broken = Job("partner", [pingpong, "--size", "-1", "--iterations", "0"], 2, tmp_path / "b.csv")
    with pytest.raises(RunFailed, match="exited with status"):
        corun(platform, measured, [broken], log=tmp_path / "log", timeout_s=120)
    assert not list(tmp_path.glob("*.csv"))
    with pytest.raises(PlatformUnavailable, match="one background job, got 2"):
        corun(platform, measured, [broken, broken], log=tmp_path / "log", timeout_s=10)


def test_simulated_and_wall_time_are_read_from_smpiruns_output():
    output = (
        "[0.5] [smpi_utils/INFO] Simulated time: 0.5 seconds. \n\n"
        "The simulation took 0.25 seconds (after parsing and platform setup)\n"
    )
    assert run_times(output) == {"simulated_s": 0.5, "wall_s": 0.25, "simulated_per_wall": 2.0}
    assert run_times("smpirun: error") is None


def test_platform_file_is_deterministic_and_from_config_knows_the_kind(tmp_path):
    a = simgrid_platform(tmp_path / "a")
    b = simgrid_platform(tmp_path / "b")
    assert a.generated.sha256 == b.generated.sha256
    assert isinstance(from_settings(a.settings), SimgridPlatform)
    assert generate(a.settings).xml == a.generated.xml


@needs_simgrid
@pytest.mark.parametrize("size", [1, 1 << 20])
def test_pingpong_round_trip_is_the_routes_latency_and_bandwidth(tmp_path, smpi_programs, size):
    """Rank 0 (rack 1) and rank 1 (rack 2): a message crosses node link, uplink,
    uplink, node link, 5 us each, at the 400 Mbit/s of the uplinks. In the flow
    model a round trip is twice (4 x 5 us + size x 8 / 400 Mbit/s), and SMPI's
    own calls add under a microsecond (0.65 us: 40.69 us for 1 byte, 41.9839 ms
    for 1 MiB)."""
    platform = simgrid_platform(tmp_path, latency_us=5)
    args = ("--size", str(size), "--warmup", "2", "--iterations", "5")
    output = run_pingpong(platform, smpi_programs, tmp_path, *args, timeout_s=120)
    result = read_benchmark(output)
    expected_us = 2 * (4 * 5 + size * 8 / 400e6 * 1e6)
    rtt = result.data["rtt_us"]
    assert len(rtt) == 5
    assert expected_us <= rtt.min() <= rtt.max() < expected_us + 1.0
    assert result.meta["hosts"] == "nn-n01,nn-n03"
    sidecar = read_sidecar(output)
    described = sidecar["platform"]
    assert described["platform_sha256"] == platform.generated.sha256
    assert described["simgrid"].startswith("SimGrid version")
    assert described["simgrid_network_model"] == "CM02"
    times = sidecar["platform_run"]
    assert times["simulated_s"] >= 5 * expected_us * 1e-6
    assert times["wall_s"] > 0
    row = summary_table([sidecar_path(output)], tmp_path).iloc[0]
    assert (row["simulated_s"], row["simulated_per_wall"]) == (
        times["simulated_s"],
        times["simulated_per_wall"],
    )


@needs_simgrid
def test_two_flows_share_an_uplink_fairly(tmp_path, smpi_programs):
    """Two pairs across the backbone at once (ranks 0-1 and 2-3, each pair one
    node per rack): their 1 MiB transfers share each 400 Mbit/s uplink, so a
    round trip takes twice the transfer time of one alone (within 2e-5: the
    pairs' calls are not quite simultaneous; 83927.37 us for 83926.08)."""
    platform = simgrid_platform(tmp_path, latency_us=5)
    size = 1 << 20
    args = ("--size", str(size), "--warmup", "1", "--iterations", "3")
    output = run_pingpong(platform, smpi_programs, tmp_path, *args, ranks=4, timeout_s=120)
    rtt = read_benchmark(output).data["rtt_us"]
    expected_us = 2 * (4 * 5 + size * 8 / 200e6 * 1e6)
    assert len(rtt) == 6
    assert rtt.to_numpy() == pytest.approx([expected_us] * 6, rel=2e-5)


def _injected_pingpong(tmp_path: Path, programs: Path, table) -> tuple[Path, pd.DataFrame]:
    """pingpong between the racks (as above, 5 us links) with every message
    delayed from ``table`` (µs) by the study's own path: per-rank seeds, the
    injector's variables, a report per rank."""
    platform = simgrid_platform(tmp_path, latency_us=5)
    injector.write_table(table, tmp_path / "d.tab", unit="us")
    injector.write_seed(tmp_path / "d.seed", 7)
    output = tmp_path / "pingpong.csv"
    argv = [str(programs / "pingpong"), "--size", "1", "--warmup", "2", "--iterations", "40"]
    job = Job("pingpong", argv, 2, output=str(output))
    reports = run_with_injector(
        platform,
        job,
        tmp_path / "d.tab",
        tmp_path / "d.seed",
        tmp_path / "reports.csv",
        library=None,
        level="mpi",
        unit="us",
        wait="sleep",
        log=tmp_path / "pingpong.log",
        timeout_s=120,
    )
    return output, reports


@needs_simgrid
def test_an_injected_delay_lengthens_every_message_by_exactly_its_draw(tmp_path, smpi_programs):
    """A constant 200 us table: each message of the round trip takes its route's
    four 5 us links plus 200 us, so a round trip is 2 x 220 us (and SMPI's
    calls, under a microsecond); each rank's report says every delay was held
    exactly, in the network model."""
    output, reports = _injected_pingpong(tmp_path, smpi_programs, injector.constant_table(200))
    rtt = read_benchmark(output).data["rtt_us"]
    assert len(rtt) == 40
    assert 2 * (4 * 5 + 200) <= rtt.min() <= rtt.max() < 2 * (4 * 5 + 200) + 1.0
    assert reports["rank"].tolist() == [0, 1]
    assert (reports["wait"] == "network").all() and (reports["enabled"] == 1).all()
    assert (reports["delays"] >= 42).all()
    assert (reports["mean_ns"] == 200_000).all() and (reports["late_delays"] == 0).all()


@needs_simgrid
def test_the_realised_delays_are_the_drawn_ones(tmp_path, smpi_programs):
    """A log-normal table: the time each message was held back is its draw, so
    the realised mean and spread are the drawn ones, and a round trip's excess
    over the route is the two draws of its messages."""
    table = [round(v) for v in tables.quantile_values(stats.lognorm(s=0.8, scale=150))]
    output, reports = _injected_pingpong(tmp_path, smpi_programs, table)
    assert (reports["mean_ns"] == reports["drawn_mean_ns"]).all()
    assert reports["std_ns"].to_numpy() == pytest.approx(reports["drawn_std_ns"].to_numpy())
    assert (reports["drawn_std_ns"] > 50_000).all()
    excess = read_benchmark(output).data["rtt_us"] - 2 * 4 * 5
    assert excess.min() > 2 * min(table) - 1 and excess.std() > 50
    assert excess.max() < 2 * max(table) + 1


def test_the_packet_model_gets_a_graph_of_one_hop_routes(tmp_path):
    """SimGrid's ns-3 binding ignores longer routes: switches become routers and
    every cable a one-hop route, parallel cables one link of their summed rate."""
    generated = simgrid_platform(
        tmp_path, topology="xgft:12,12/1,6/1,2", network_model="packet", link_gbit=100
    ).generated
    zone = ET.fromstring(generated.xml.split("\n", 2)[2]).find("zone")
    assert zone.get("routing") == "Floyd"
    assert len(zone.findall("host")) == 144 and len(zone.findall("router")) == 18
    routes = zone.findall("route")
    assert all(len(route) == 1 for route in routes)
    rates = sorted({link.get("bandwidth") for link in zone.iter("link")})
    # 144 node cables at 100 Gbit/s, 72 leaf-to-top pairs of two cables.
    assert rates == ["100000Mbps", "200000Mbps"] and len(routes) == 144 + 72


@needs_simgrid
def test_a_packet_model_round_trip_costs_at_least_the_routes_latency(tmp_path, smpi_programs):
    """ns-3 carries each message in TCP packets through every switch: a round trip
    takes more than the four links' latencies twice, and runs to the end."""
    platform = simgrid_platform(tmp_path, latency_us=5, network_model="packet")
    args = ("--size", "1", "--warmup", "1", "--iterations", "3")
    output = run_pingpong(platform, smpi_programs, tmp_path, *args, timeout_s=120)
    rtt = read_benchmark(output).data["rtt_us"]
    assert len(rtt) == 3 and rtt.min() > 2 * 4 * 5
    assert read_sidecar(output)["platform"]["simgrid_network_model"] == "ns-3"


def test_the_simgrid_overlays_make_a_valid_study_at_the_papers_scale():
    config = quick_study_with("simgrid.yaml")
    assert config["platform"]["kind"] == "simgrid"
    bench = config["network_noise"]["benchmark"]
    hosts = len(generate(PlatformSettings.of(config["platform"])).hosts)
    assert bench["nodes"] >= 128 and max(bench["allocations"]) <= hosts
    assert not bench["cpu_control"]
    # The quick slice and the packet model's slice are merged over it.
    slice_ = yaml.safe_load((REPO / "config" / "simgrid-quick.yaml").read_text())
    update_config(config, slice_)
    assert validate(config)["network_noise"]["benchmark"]["nodes"] <= bench["nodes"]
    packet = yaml.safe_load((REPO / "config" / "simgrid-packet.yaml").read_text())
    update_config(config, packet)
    assert validate(config)["platform"]["simgrid"]["network_model"] == "packet"


def test_the_workflow_plans_seeds_000_and_001_on_simgrid_with_the_smpi_build(tmp_path):
    """The SimGrid overlay plans the SMPI build (no preloaded libraries, the
    co-run dispatcher), seed 000's co-runs on its own 18-node switch and seed
    001's 128-node measurements, through the same rules as the testbed."""
    configs = [str(REPO / "config" / name) for name in ("config.yaml", "simgrid.yaml")]
    # The overlay names the shipped bundle from the repository's root.
    shipped = {"latency_variation": {"characterize": {"from_bundle": str(bundle.SHIPPED)}}}
    # In simulated time no CPU-only control is measured, even where asked for.
    shipped["impact_compression"] = {"cpu_control": True}
    (tmp_path / "here.yaml").write_text(yaml.safe_dump(shipped))
    configs.append(str(tmp_path / "here.yaml"))
    out = snakemake("-n", "--forceall", "--configfile", *configs, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    build = re.search(r"rule build_programs:\n(.*?)\n\n", out.stdout, flags=re.S).group(1)
    assert "results/simgrid/bin/noise" in build and "libnnwait.so" not in build
    assert "results/simgrid/bin/corun" in build
    assert re.search(
        r"rule measure_pairing:\n(.*\n)*?    wildcards: app=multigrid, partner=cg_solver",
        out.stdout,
    )
    assert "rule measure_cpu_control:" not in out.stdout
    compression = r"results/simgrid/raw/impact_compression/runs/compression/halo3d/p1_m1_b\d+\.csv"
    assert re.search(compression, out.stdout)
    assert re.search(r"wildcards: collective=allreduce, ratio=0.5, allocation=128", out.stdout)
    # Seed 004 injects the shipped testbed run's latency, probes without tcpping;
    # its claims and every other stand beside that run's.
    assert "rule unpack_latency_characterization:" in out.stdout
    assert "rule measure_latency_under_load:" not in out.stdout
    assert "results/simgrid/raw/latency_variation/injection/multigrid/L40_std1000.csv" in out.stdout
    assert "injection/tcpping/" not in out.stdout and "fig5_packet_mean" not in out.stdout
    assert "results/simgrid/tables/claims_beside.csv" in out.stdout
