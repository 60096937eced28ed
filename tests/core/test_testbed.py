"""The emulated cluster, for real: namespaces, shaped links, Open MPI across them."""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import pytest

from netnoise import cpusets, lifeline
from netnoise.config import validate
from netnoise.counters import deltas
from netnoise.cpu import wait_for_quiet_cores
from netnoise.io import read_benchmark
from netnoise.platform import PlatformUnavailable
from netnoise.platform import testbed as testbed_platform
from netnoise.platform.testbed import TestbedPlatform
from netnoise.provenance import read_sidecar
from netnoise.run import Job, corun, run_benchmark
from netnoise.settings import PlatformSettings
from netnoise.studies.variability import metrics
from netnoise.testbed import bench as testbed_bench
from netnoise.testbed import counters as testbed_counters
from netnoise.testbed.fabric import TestbedError, TestbedSpec
from netnoise.testbed.queue_time import QueueTime
from netnoise.testbed.validation import iperf3_mbit, link_checks
from tests.conftest import UNJUDGED_CPU, run_pingpong

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root"),
]

PREFIX = "nnt"


def platform_config(**testbed) -> dict:
    """The default config's platform, under a prefix of the tests' own."""
    config = {
        "platform": {"testbed": {"prefix": PREFIX, **testbed}, "cpu": UNJUDGED_CPU},
        # Studies sized for the default testbed would not fit a smaller one.
        "impact_compression": {"enabled": False},
        "network_noise": {"benchmark": {"enabled": False}},
        "variability": {"enabled": False},
        "latency_variation": {"enabled": False},
    }
    return validate(config)["platform"]


@pytest.fixture
def make_platform():
    made = []

    def make(**testbed) -> TestbedPlatform:
        platform = TestbedPlatform(PlatformSettings.of(platform_config(**testbed)))
        made.append(platform)
        platform.check()
        return platform

    yield make
    for platform in made:
        platform.testbed.down()
    assert _leftovers() == ([], [])


def _leftovers() -> tuple[list[str], list[str]]:
    namespaces = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    return (
        [line.split()[0] for line in namespaces.splitlines() if line.startswith(f"{PREFIX}-")],
        [line for line in links.splitlines() if f" {PREFIX}" in line],
    )


def test_up_status_and_down_leave_nothing_behind(make_platform):
    platform = make_platform()
    status = platform.testbed.status()
    assert status["up"]
    assert [n["name"] for n in status["nodes"]] == [f"{PREFIX}-n0{i}" for i in range(1, 9)]
    assert status["links"] == {"nic_mbit": 50}
    hostname = subprocess.run(
        platform.testbed.exec_argv(platform.testbed.node(3), ["hostname"]),
        capture_output=True,
        text=True,
    ).stdout.strip()
    assert hostname == f"{PREFIX}-n03"
    platform.testbed.down()
    assert _leftovers() == ([], [])
    assert not platform.testbed.status()["up"]


def test_up_is_idempotent_and_detects_a_changed_spec(make_platform):
    platform = make_platform()
    assert platform.testbed.is_up()
    platform.testbed.ensure_up()
    other = TestbedPlatform(PlatformSettings.of(platform_config(nodes=3)))
    assert not other.testbed.is_up()
    other.check()
    assert other.testbed.existing_namespaces() == [f"{PREFIX}-fabric"] + [
        f"{PREFIX}-n0{i}" for i in range(1, 4)
    ]


def test_a_job_waits_for_quiet_cores_before_its_first_run_only(make_platform, monkeypatch, caplog):
    waits = []

    def counted_wait(**options):
        waits.append(options)
        return wait_for_quiet_cores(**options)

    monkeypatch.setattr(testbed_platform, "wait_for_quiet_cores", counted_wait)
    caplog.set_level(logging.INFO, logger="netnoise")
    platform = make_platform()
    platform.check()
    assert waits == [{"timeout_s": UNJUDGED_CPU["quiet_wait_s"]}]
    assert f"testbed {PREFIX}: cores" in caplog.text


def test_a_job_told_not_to_wait_for_quiet_cores_starts_at_once(monkeypatch):
    def no_wait(**options):
        raise AssertionError("waited for quiet cores")

    monkeypatch.setattr(testbed_platform, "wait_for_quiet_cores", no_wait)
    config = platform_config()
    config["cpu"]["quiet_wait_s"] = 0
    TestbedPlatform(PlatformSettings.of(config))._settle_cores()


def test_iperf3_over_a_nic_link_never_exceeds_its_rate(make_platform):
    platform = make_platform()
    checks = link_checks(platform.testbed, seconds=3, attempts=1)
    assert checks["path"].tolist() == ["nic (same rack)"]
    rate = checks["measured_mbit"].iloc[0]
    # The shaper bounds the rate under any load; how close a run comes to it
    # depends on the machine's (netnoise bench testbed prints it).
    assert 0 < rate <= 50, f"{rate:.1f} Mbit/s on a 50 Mbit/s link"


def test_mpi_pingpong_crosses_namespaces(make_platform, built_programs, tmp_path):
    platform = make_platform()
    before = pd.DataFrame(testbed_counters.snapshot_rows(platform.testbed.spec))
    out = run_pingpong(platform, built_programs, tmp_path, "--size", "1K", "--iterations", "200")
    after = pd.DataFrame(testbed_counters.snapshot_rows(platform.testbed.spec))
    result = read_benchmark(out)
    assert result.meta["hosts"] == f"{PREFIX}-n01,{PREFIX}-n02"
    # Every 1 KiB message left node 1 through its NIC's shaped queue, not shared
    # memory. (A round trip's time proves nothing: within the token bucket's
    # burst the fastest took 9.5 us on a fast machine.)
    moved = deltas(pd.concat([before, after]))
    sent = moved[(moved.device == f"{PREFIX}-n01") & (moved.counter == "qdisc_bytes")]
    assert sent["value"].sum() > 200 * 1024


def test_two_racks_route_across_the_backbone(make_platform):
    platform = make_platform(racks=2, nic_mbit=50, backbone_mbit=20)
    spec = platform.testbed.spec
    assert [n.rack for n in spec.node_list()] == [1, 1, 1, 1, 2, 2, 2, 2]
    before = pd.DataFrame(testbed_counters.snapshot_rows(spec))
    started = time.monotonic()
    checks = link_checks(platform.testbed, seconds=3, attempts=1).set_index("path")
    elapsed_s = time.monotonic() - started
    after = pd.DataFrame(testbed_counters.snapshot_rows(spec))
    # The 20 Mbit/s backbone, not the 50 Mbit/s NICs, limits cross-rack traffic,
    # whatever else the machine does (which only slows either down).
    assert checks.loc["backbone (cross rack)", "configured_mbit"] == 20
    assert 0 < checks.loc["backbone (cross rack)", "measured_mbit"] <= 20
    assert 0 < checks.loc["nic (same rack)", "measured_mbit"] <= 50
    # What crossed the rack's uplink: no more than the backbone's rate carries in
    # the time the checks took, and its token bucket's burst.
    moved = deltas(pd.concat([before, after]))
    uplink = moved[(moved.port == f"{PREFIX}up1") & (moved.counter == "qdisc_bytes")]
    assert 0 < uplink["value"].iloc[0] <= 20e6 / 8 * elapsed_s + 1e6


@pytest.mark.skipif(shutil.which("bpftrace") is None, reason="needs bpftrace (make setup)")
def test_queue_time_counts_how_long_the_backbone_holds_a_bulk_flow(make_platform):
    platform = make_platform(racks=2, nic_mbit=50, backbone_mbit=20)
    spec = platform.testbed.spec
    with QueueTime(spec.fabric) as tracer, testbed_counters.Counters(spec, None, tracer) as read:
        before = pd.DataFrame(read())
        started = time.monotonic()
        iperf3_mbit(platform.testbed, server=5, client=1, seconds=3)
        elapsed_ns = (time.monotonic() - started) * 1e9
        samples = pd.concat([before, pd.DataFrame(read())])
    moved = deltas(samples).set_index(["port", "counter"])
    # Read with the fabric's other counters, at their time: seed 002's metrics use them.
    job = metrics.run_metrics(samples, [f"{PREFIX}-n01", f"{PREFIX}-n05"], runtime_s=4.0)
    assert job["stall_counter"] == "qdisc_stall_ns" and job["network_stalls_mean"] > 0
    uplink, idle = moved.loc[f"{PREFIX}up1", "value"], moved.loc[f"{PREFIX}p03", "value"]
    # TCP keeps the 20 Mbit/s backbone's queue from emptying for the 4 s the flow
    # lasts; it waits there at most the 100 kB queue's 40 ms.
    assert 0.5 * 4e9 < uplink["qdisc_stall_ns"] <= elapsed_ns
    waited_ms = uplink["qdisc_sojourn_ns"] / uplink["qdisc_packets"] / 1e6
    assert 0.5 < waited_ms < 45, f"a packet waited {waited_ms:.2f} ms on average"
    assert idle["qdisc_stall_ns"] < 0.01 * uplink["qdisc_stall_ns"]


def test_round_robin_backbone_serves_a_small_message_between_the_frames_of_a_bulk_flow(
    make_platform, built_programs, tmp_path
):
    """Each arbitration carries a probe beside a bulk flow that loads the backbone;
    how long the probe waits in each (tens of ms behind the FIFO's queue, about a
    frame each way in turn) depends on the machine's load, and netnoise bench
    testbed prints it. What no load changes: the arbitration configured is the
    one the backbone has, and no flow crosses it faster than its rate."""
    layout = {"nodes": 4, "racks": 2, "nic_mbit": 50, "backbone_mbit": 20}
    for arbitration in ("fifo", "round_robin"):
        platform = make_platform(**layout, backbone_arbitration=arbitration)
        assert platform.describe()["links"]["backbone_arbitration"] == arbitration
        rtt_us, flow_mbit = testbed_bench.probe_rtt_us(platform, built_programs, tmp_path)
        assert rtt_us > 0 and 0 < flow_mbit <= 20
        platform.testbed.down()


def _uplink_totals_by_ip_and_tc(fabric: str, port: str) -> dict[str, int]:
    link = json.loads(
        subprocess.run(
            ["ip", "-n", fabric, "-s", "-j", "link", "show", port],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )[0]["stats64"]
    qdisc = json.loads(
        subprocess.run(
            ["tc", "-n", fabric, "-s", "-j", "qdisc", "show", "dev", port],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )[0]
    return {
        "tx_bytes": link["tx"]["bytes"],
        "qdisc_bytes": qdisc["bytes"],
        "qdisc_drops": qdisc["drops"],
    }


def test_netlink_counters_agree_with_ip_and_tc(make_platform):
    platform = make_platform(racks=2)
    spec = platform.testbed.spec
    uplink = f"{PREFIX}up1"
    iperf3_mbit(platform.testbed, server=5, client=1, seconds=1)
    # The connection's last segments, and the kernel's own IPv6 multicast reports, may
    # cross the uplink at any time: compare in a window where ip and tc read the same
    # totals before and after our snapshot.
    for _ in range(50):
        before = _uplink_totals_by_ip_and_tc(spec.fabric, uplink)
        ours = pd.DataFrame(testbed_counters.snapshot_rows(spec)).set_index(
            ["device", "port", "counter"]
        )["value"]
        if _uplink_totals_by_ip_and_tc(spec.fabric, uplink) == before:
            break
        time.sleep(0.2)
    else:
        pytest.fail(f"{uplink} never stood still for one snapshot in 50 tries")
    assert before["tx_bytes"] > 1e6
    for counter, total in before.items():
        assert ours[(spec.fabric, uplink, counter)] == total, counter
    roles = set(ours.index.get_level_values("port"))
    assert {uplink, f"{PREFIX}up2", "eth0"} <= roles


def test_tcp_congestion_control_is_set_per_socket(make_platform, built_programs, tmp_path):
    platform = make_platform(tcp_congestion="reno")
    launch = platform.mpi_launch([str(built_programs / "pingpong")], 2)
    assert "NN_TCP_CONGESTION=reno" in launch.argv
    assert any(a.startswith("LD_PRELOAD=") and a.endswith("libnntcpcc.so") for a in launch.argv)
    assert platform.describe()["tcp_congestion"] == "reno"


_ECHO_SERVER = """
import socket
server = socket.create_server(("", 5299))
peer, _ = server.accept()
peer.sendall(peer.recv(1))
peer.recv(1)
"""

# After one echoed byte the connection has a round-trip sample; ss prints the
# retransmission timeout the kernel then uses.
_ECHO_CLIENT = """
import socket, subprocess, sys, time
for _ in range(100):
    try:
        peer = socket.create_connection((sys.argv[1], 5299))
        break
    except OSError:
        time.sleep(0.05)
peer.sendall(b"x")
peer.recv(1)
print(subprocess.run(["ss", "-tin", "dport", "5299"], capture_output=True, text=True).stdout)
"""


def _retransmission_timeout_ms(testbed) -> float:
    server = subprocess.Popen(
        testbed.exec_argv(testbed.node(2), [sys.executable, "-c", _ECHO_SERVER])
    )
    try:
        client = subprocess.run(
            testbed.exec_argv(
                testbed.node(1),
                [sys.executable, "-c", _ECHO_CLIENT, testbed.node(2).address],
            ),
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
    finally:
        server.wait(timeout=30)
    rto = [word for word in client.stdout.split() if word.startswith("rto:")]
    assert len(rto) == 1, client.stdout
    return float(rto[0].removeprefix("rto:"))


def test_retransmission_timeout_floor_is_set_between_the_nodes(make_platform):
    assert _retransmission_timeout_ms(make_platform(nodes=2).testbed) >= 200
    floored = make_platform(nodes=2, tcp_rto_min_ms=5)
    assert floored.describe()["tcp_rto_min_ms"] == 5
    assert 5 <= _retransmission_timeout_ms(floored.testbed) < 50
    host = subprocess.run(["ip", "route"], capture_output=True, text=True).stdout
    assert "rto_min" not in host


def test_corun_with_counters_sees_the_background_load(make_platform, built_programs, tmp_path):
    platform = make_platform()
    spec = platform.testbed.spec
    nodes = [f"{PREFIX}-n01", f"{PREFIX}-n02"]
    pingpong = str(built_programs / "pingpong")
    # A one-second window: the load's 1 MiB exchanges cross it even when a
    # loaded host slows their start.
    probe = [pingpong, "--iterations", "1000000", "--duration", "1"]
    corun(
        platform,
        Job("probe", [*probe, "--size", "1K"], 2, tmp_path / "p.csv", nodes),
        [
            Job(
                "load",
                [pingpong, "--size", "1M", "--iterations", "0"],
                2,
                tmp_path / "l.csv",
                nodes,
            )
        ],
        log=tmp_path / "run.log",
        timeout_s=120,
        counters=lambda: testbed_counters.snapshot_rows(spec),
        counters_output=tmp_path / "counters.csv",
        counter_interval_s=0.2,
    )
    assert len(read_benchmark(tmp_path / "l.csv").data) > 0
    probes = len(read_benchmark(tmp_path / "p.csv").data)
    assert probes > 0
    moved = deltas(pd.read_csv(tmp_path / "counters.csv"))
    nic = moved[(moved.device == nodes[0]) & (moved.counter == "tx_bytes")]["value"].iloc[0]
    # Beyond the probe's own messages of 1 KiB (twice that, for headers and
    # acknowledgements), at least one 1 MiB background message crossed n01's NIC
    # during the probe's window.
    assert nic - 2 * probes * 1024 > 1024 * 1024, f"{nic} bytes beside {probes} probes"
    record = json.loads((tmp_path / "p.csv.prov.json").read_text())
    assert [job["name"] for job in record["corun"]] == ["load", "probe"]
    assert set(record["cpu"]) >= {"busy_fraction", "mean_runnable_tasks", "saturated"}


def _job_cgroups() -> list[str]:
    return [
        entry
        for controller in (*cpusets.V1_CONTROLLERS, cpusets.UNIFIED)
        for entry in os.listdir(cpusets.CGROUP_ROOT / controller)
        if entry.startswith(cpusets.NAME_PREFIX)
    ]


def test_per_job_cores_keep_the_measured_job_off_its_backgrounds_cores(
    make_platform, built_programs, tmp_path
):
    platform = make_platform(nodes=2)
    sets = platform.core_sets()
    assert sets.disjoint
    nodes = [f"{PREFIX}-n01", f"{PREFIX}-n02"]
    pingpong, cpuhog = str(built_programs / "pingpong"), str(built_programs / "cpuhog")
    probe = [pingpong, "--size", "1K", "--iterations", "1000000", "--duration", "2"]
    corun(
        platform,
        Job("probe", probe, 2, tmp_path / "p.csv", nodes),
        [
            Job("load", [pingpong, "--size", "1M", "--iterations", "0"], 2, tmp_path / "l", nodes),
            Job("hog", [cpuhog, "--load", "1", "--iterations", "0"], 2, tmp_path / "h.csv", nodes),
        ],
        log=tmp_path / "run.log",
        timeout_s=120,
    )
    record = read_sidecar(tmp_path / "p.csv")
    assert record["platform"]["cores"]["mode"] == "per_job"
    jobs = {job["name"]: job for job in record["cpu"]["jobs"]}
    assert [jobs[n]["role"] for n in ("load", "hog", "probe")] == ["background"] * 2 + ["measured"]
    # Where each job ran by the kernel's own accounting (cpuacct, per core) over
    # the timed region: the measured job's ranks never on a core of a background.
    ran = {name: set(cpusets.parse_cpu_list(job["ran_on"])) for name, job in jobs.items()}
    assert ran["probe"] and ran["probe"] <= set(sets.measured)
    assert ran["hog"] and ran["load"] and (ran["hog"] | ran["load"]) <= set(sets.others)
    assert not ran["probe"] & (ran["hog"] | ran["load"])
    # And where the kernel let each job's ranks run.
    measured, others = (cpusets.format_cpu_list(s) for s in (sets.measured, sets.others))
    assert jobs["probe"]["cpus_allowed"]["pingpong"] == [measured]
    assert jobs["hog"]["cpus_allowed"]["cpuhog"] == [others]
    # Launcher and daemons included.
    for name, cores in (("probe", measured), ("load", others), ("hog", others)):
        assert {v for values in jobs[name]["cpus_allowed"].values() for v in values} == {cores}
    assert _job_cgroups() == []


@pytest.mark.parametrize("perturbation", ["cpu", "network"])
def test_the_noise_benchmark_puts_its_perturbing_ranks_on_the_other_cores(
    make_platform, built_programs, tmp_path, perturbation
):
    platform = make_platform(nodes=4)
    sets = platform.core_sets()
    out = tmp_path / "noise.csv"
    argv = [str(built_programs / "noise"), "--ratio", "0.5", "--splits", "4", "--reps", "20"]
    argv += ["--perturbation", perturbation, "--perturb-size", "64K"]
    run_benchmark(platform, argv, 4, out, tmp_path / "run.log", 120, binds_by_role=True)
    measured, others = (cpusets.format_cpu_list(s) for s in (sets.measured, sets.others))
    meta = read_benchmark(out).meta
    assert (meta["cpus_application"], meta["cpus_perturbing"]) == (measured, others)
    (job,) = read_sidecar(out)["cpu"]["jobs"]
    # Every rank is bound to one side at a time, the application ranks to the
    # measured job's cores; over the splits the ranks took both roles.
    assert job["cpus_allowed"]["noise"] == sorted([measured, others])
    assert set(cpusets.parse_cpu_list(job["ran_on"])) <= set(sets.measured) | set(sets.others)
    assert _job_cgroups() == []


def test_killed_launcher_is_recovered_by_the_next_up(make_platform, built_programs):
    platform = make_platform()
    launch = platform.mpi_launch(
        [str(built_programs / "pingpong"), "--iterations", "0", "--duration", "120"], 4
    )
    proc = subprocess.Popen(
        launch.argv,
        env=launch.environment(),
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    running = []
    deadline = time.monotonic() + 120  # a hang guard: the ranks start at the launch's pace
    while not running:
        assert proc.poll() is None and time.monotonic() < deadline, "no rank started on node 2"
        time.sleep(0.1)
        running = subprocess.run(
            ["ip", "netns", "pids", f"{PREFIX}-n02"], capture_output=True, text=True
        ).stdout.split()
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    # Ranks and daemons of the killed run are still inside the testbed ...
    platform.testbed.up()
    # ... until the next up removes them with the old namespaces.
    for pid in running:
        assert not _alive(int(pid)), f"process {pid} survived"
    assert platform.testbed.is_up()
    assert 0 < link_checks(platform.testbed, seconds=2, attempts=1)["measured_mbit"].iloc[0] <= 50


def _alive(pid: int) -> bool:
    """Running, not merely a zombie waiting for a parent that is gone to reap it."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_cli_up_status_down(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text(json.dumps({"platform": platform_config()}))
    netnoise = [sys.executable, "-m", "netnoise", "testbed", "--config", str(config)]
    try:
        up = subprocess.run([*netnoise, "up"], capture_output=True, text=True, check=True)
        assert "8 nodes" in up.stdout
        status = subprocess.run([*netnoise, "status", "--json"], capture_output=True, text=True)
        assert json.loads(status.stdout)["up"] is True
    finally:
        subprocess.run([*netnoise, "down"], check=True, capture_output=True)
    status = subprocess.run([*netnoise, "status", "--check"], capture_output=True, text=True)
    assert status.returncode == 1
    assert _leftovers() == ([], [])


def test_jumbo_frames_cross_the_backbone_whole(make_platform):
    platform = make_platform(racks=2, mtu_bytes=9000)
    spec = platform.testbed.spec
    for namespace in spec.namespaces():
        links = subprocess.run(
            ["ip", "netns", "exec", namespace, "ip", "-o", "link", "show"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        mtus = {
            line.split(":")[1].strip(): line.split(" mtu ")[1].split()[0]
            for line in links.splitlines()
        }
        assert {name: mtu for name, mtu in mtus.items() if name != "lo"} == {
            name: "9000" for name in mtus if name != "lo"
        }
    first, far = spec.node_list()[0], spec.node_list()[-1]
    # 8972 bytes of payload and 28 of headers: one 9000-byte packet, which the
    # sender may not fragment (Linux's IP_MTU_DISCOVER = 10, IP_PMTUDISC_DO = 2;
    # Python's socket module names neither).
    receive = (
        "import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
        f"s.bind(('{far.address}', 9000)); s.settimeout(10); print(len(s.recv(65536)))"
    )
    send = (
        "import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
        "s.setsockopt(socket.IPPROTO_IP, 10, 2); "
        f"s.sendto(bytes(8972), ('{far.address}', 9000))"
    )
    receiver = subprocess.Popen(
        platform.testbed.exec_argv(far, [sys.executable, "-c", receive]),
        stdout=subprocess.PIPE,
        text=True,
    )
    time.sleep(1)
    subprocess.run(platform.testbed.exec_argv(first, [sys.executable, "-c", send]), check=True)
    assert receiver.communicate(timeout=15)[0].strip() == "8972"


def test_spec_rejects_a_burst_that_cannot_hold_a_frame():
    testbed = {**platform_config()["testbed"], "burst_bytes": 3028, "mtu_bytes": 9000}
    with pytest.raises(
        TestbedError, match=r"burst_bytes \(3028\) .*mtu_bytes \(9000\).*at least 9014"
    ):
        TestbedSpec.from_config(testbed)


def test_spec_rejects_more_racks_than_nodes():
    with pytest.raises(TestbedError, match="must be at least"):
        TestbedSpec.from_config(platform_config(nodes=2, racks=3)["testbed"])


def test_non_root_gets_a_clear_hint(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    platform = TestbedPlatform(PlatformSettings.of(platform_config()))
    with pytest.raises(PlatformUnavailable, match=r"needs root.*platform.kind: localhost"):
        platform.check()


def test_a_run_refuses_a_testbed_another_run_holds_or_an_orphan_runs_in(make_platform):
    platform = make_platform()
    testbed = platform.testbed
    assert testbed.claim() == lifeline.owner()
    other = subprocess.Popen(["sleep", "60"])
    try:
        holder = lifeline.Owner.of(other.pid)
        testbed.claim_file.write_text(json.dumps(holder.as_dict()))
        with pytest.raises(PlatformUnavailable, match=rf"in use by another run \(pid {other.pid}"):
            platform.check()
        assert testbed.status()["claimed_by"]["alive"] is True
        # The run dies; its process inside the testbed lives on.
        orphan = subprocess.Popen(testbed.exec_argv(testbed.node(2), ["sleep", "60"]))
        other.kill()
        other.wait()
        deadline = time.monotonic() + 10
        while orphan.pid not in testbed.processes_inside():
            assert time.monotonic() < deadline
            time.sleep(0.05)
        with pytest.raises(
            PlatformUnavailable,
            match=rf"still runs 1 process\(es\) of a run that is gone \(pid {other.pid}\).*"
            r"testbed down",
        ):
            platform.check()
        status = testbed.status()
        assert status["up"] and status["processes_inside"] == 1
        assert status["claimed_by"]["pid"] == other.pid and not status["claimed_by"]["alive"]
        orphan.kill()
        orphan.wait()
        platform.check()  # nothing left of the dead run: the testbed is ours
        assert testbed.claim() == lifeline.owner()
    finally:
        for proc in (other, locals().get("orphan")):
            if proc is not None:
                proc.kill()
                proc.wait()


# Runs CLI commands (argv after "netnoise testbed") as user nobody, printing
# [exit status, stdout, stderr] of each. Everything they need is imported while
# still root (the interpreter may live where nobody cannot read); a traceback
# is caught and shown, with no exit status.
AS_NOBODY = """
import contextlib, io, json, os, sys, traceback
from netnoise import cli, config
commands = json.loads(sys.argv[1])
for argv in commands:
    config.load(argv[1])
cli.build_parser()
os.setgroups([])
os.setgid(65534)
os.setuid(65534)
results = []
for argv in commands:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(["testbed", *argv])
        except Exception:
            traceback.print_exc()
            code = None
    results.append([code, out.getvalue(), err.getvalue()])
print(json.dumps(results))
"""


def _as_nobody(*commands: list[str]) -> list[tuple[int | None, str, str]]:
    done = subprocess.run(
        [sys.executable, "-c", AS_NOBODY, json.dumps(commands)],
        capture_output=True,
        text=True,
        check=True,
    )
    return [tuple(result) for result in json.loads(done.stdout)]


@pytest.fixture
def public_dir():
    """A directory user nobody can read (pytest's temporary directories are root's)."""
    directory = Path(tempfile.mkdtemp(prefix="netnoise-test-"))
    directory.chmod(0o755)
    yield directory
    shutil.rmtree(directory)


def test_status_without_root_tells_the_truth_and_changes_refuse_cleanly(make_platform, public_dir):
    platform = make_platform()
    configs = {}
    for name, prefix in (("ours", PREFIX), ("never", f"{PREFIX}x")):
        configs[name] = str(public_dir / f"{name}.yaml")
        Path(configs[name]).write_text(json.dumps({"platform": platform_config(prefix=prefix)}))
        Path(configs[name]).chmod(0o644)
    ours, never = ["--config", configs["ours"]], ["--config", configs["never"]]

    status, record, down, up, nothing, absent = _as_nobody(
        [*ours, "status", "--check"],
        [*ours, "status", "--json"],
        [*ours, "down"],
        [*ours, "up"],
        [*never, "down"],
        [*never, "status", "--check"],
    )
    assert status[0] == 0, status
    assert status[1].startswith(f"testbed {PREFIX}: up; in use by pid {os.getpid()}")
    assert json.loads(record[1])["up"] is True
    assert json.loads(record[1])["processes_inside"] is None  # needs root
    for refused in (down, up):
        assert refused[0] == 2, refused
        assert refused[2].startswith("netnoise: ") and "needs root" in refused[2]
    assert platform.testbed.is_up()
    assert nothing[:2] == (0, "nothing to remove\n")
    assert absent[0] == 1 and absent[1].startswith(f"testbed {PREFIX}x: down")

    # A state file this user may not read: it says it cannot tell, never "down".
    platform.testbed.state_file.chmod(0o600)
    ((code, out, _),) = _as_nobody([*ours, "status", "--check"])
    assert code == 2
    assert out.startswith(f"testbed {PREFIX}: cannot tell whether it is up: ")
    assert "permission denied" in out
