from __future__ import annotations

import os

import pytest

from netnoise.cpu import CpuLimits
from netnoise.io import read_benchmark
from netnoise.platform import PlatformUnavailable, from_config
from netnoise.provenance import read_sidecar
from netnoise.run import RunFailed, run_benchmark
from tests.conftest import full_platform, platform_of, run_pingpong, slurm_platform


def test_localhost_launch_command():
    platform = from_config(
        full_platform({"kind": "localhost", "mpirun_args": ["--mca", "btl", "self,tcp"]})
    )
    launch = platform.mpi_launch(["./pingpong", "--size", "8"], 4)
    assert launch.argv[:3] == ["mpirun", "-n", "4"]
    assert launch.argv[-6:] == ["--mca", "btl", "self,tcp", "./pingpong", "--size", "8"]
    assert "--bind-to" in launch.argv
    if os.geteuid() == 0:
        assert launch.env["OMPI_ALLOW_RUN_AS_ROOT"] == "1"
    with pytest.raises(PlatformUnavailable, match=r"named nodes .* localhost has one node"):
        platform.mpi_launch(["./pingpong"], 2, ["n1", "n2"])


def test_slurm_launch_command():
    platform = slurm_platform("srun --mpi=pmix")
    assert platform.mpi_launch(["./noise"], 8).argv == ["srun", "--mpi=pmix", "-n", "8", "./noise"]
    assert platform.describe()["kind"] == "slurm"


RANK_ENV = {"LD_PRELOAD": "/lib/libnnlatency.so", "NN_LATENCY_LEVEL": "tcp"}


def test_rank_environment_goes_to_the_ranks_not_the_launcher():
    """The injector's LD_PRELOAD must reach the ranks only: mpirun -x, srun --export."""
    localhost = from_config(full_platform({"kind": "localhost"}))
    launch = localhost.mpi_launch(["./pingpong"], 2, env=RANK_ENV)
    assert launch.argv[-5:] == [
        "-x",
        "LD_PRELOAD=/lib/libnnlatency.so",
        "-x",
        "NN_LATENCY_LEVEL=tcp",
        "./pingpong",
    ]
    assert "LD_PRELOAD" not in launch.env

    srun = slurm_platform("srun --mpi=pmix")
    assert srun.mpi_launch(["./pingpong"], 2, env=RANK_ENV).argv == [
        "srun",
        "--mpi=pmix",
        "-n",
        "2",
        "--export=ALL,LD_PRELOAD=/lib/libnnlatency.so,NN_LATENCY_LEVEL=tcp",
        "./pingpong",
    ]
    with pytest.raises(ValueError, match="cannot carry a comma: A=1,2"):
        srun.mpi_launch(["./pingpong"], 2, env={"A": "1,2"})
    inside = slurm_platform("mpirun")
    argv = inside.mpi_launch(["./pingpong"], 2, env={"A": "1,2"}).argv
    assert argv[-3:] == ["-x", "A=1,2", "./pingpong"]


def test_testbed_joins_the_injector_and_the_congestion_shim(tmp_path):
    from netnoise.platform.base import TCP_SHIM
    from netnoise.platform.testbed import TestbedPlatform
    from netnoise.settings import PlatformSettings

    (tmp_path / TCP_SHIM).touch()
    testbed = {
        "prefix": "nnu",
        "nodes": 2,
        "racks": 1,
        "nic_mbit": 50,
        "backbone_mbit": 500,
        "burst_bytes": 16000,
        "queue_bytes": 100000,
        "tcp_congestion": "reno",
        "btl_tcp_links": 2,
    }
    platform = TestbedPlatform(PlatformSettings.of(full_platform({"testbed": testbed})))
    argv = platform.mpi_launch([str(tmp_path / "pingpong")], 2, env=RANK_ENV).argv
    exports = [argv[i + 1] for i, word in enumerate(argv) if word == "-x"]
    assert exports == [
        f"LD_PRELOAD=/lib/libnnlatency.so:{tmp_path / TCP_SHIM}",
        "NN_LATENCY_LEVEL=tcp",
        "NN_TCP_CONGESTION=reno",
    ]
    assert argv[-1] == str(tmp_path / "pingpong")
    assert "btl_tcp_sndbuf" not in argv  # the kernel's autotuning

    fixed_buffers = full_platform({"testbed": {**testbed, "socket_buffer_bytes": 65536}})
    fixed = TestbedPlatform(PlatformSettings.of(fixed_buffers))
    argv = fixed.mpi_launch([str(tmp_path / "pingpong")], 2, env=RANK_ENV).argv
    mca = {argv[i + 1]: argv[i + 2] for i, word in enumerate(argv) if word == "--mca"}
    assert mca["btl_tcp_sndbuf"] == mca["btl_tcp_rcvbuf"] == "65536"


def test_missing_launcher_is_a_clear_error():
    platform = from_config(full_platform({"kind": "localhost", "mpirun": "no-such-mpirun"}))
    with pytest.raises(PlatformUnavailable, match="'no-such-mpirun' is not on PATH"):
        platform.check()


def test_unknown_kind():
    with pytest.raises(PlatformUnavailable, match="known kinds: testbed, localhost, slurm"):
        from_config(full_platform({"kind": "cloud"}))


@pytest.mark.mpi
def test_run_benchmark_writes_result_and_provenance(tmp_path, built_programs, localhost_platform):
    config, inputs = {"baseline": {"iterations": 20}}, {"program": built_programs / "pingpong"}
    args = ("--iterations", "20", "--size", "64")
    out = run_pingpong(
        localhost_platform, built_programs, tmp_path, *args, config=config, inputs=inputs
    )
    result = read_benchmark(out)
    assert len(result.data) == 20
    assert (result.data["size_bytes"] == 64).all()
    assert (result.data["rtt_us"] > 0).all()
    record = read_sidecar(out)
    assert record["exit_status"] == 0
    assert record["platform"]["kind"] == "localhost"
    assert record["command"][0] == "mpirun"


@pytest.mark.mpi
def test_the_platform_wait_policies_reach_every_rank(tmp_path, built_programs):
    platform = from_config(
        full_platform({"kind": "localhost", "wait": {"mpi": "sleep:0:30", "probe": "spin"}})
    )
    out = run_pingpong(platform, built_programs, tmp_path, "--iterations", "5", "--size", "8")
    meta = read_benchmark(out).meta
    # The fields a policy leaves out keep the programs' default (hybrid:50:20:1000).
    assert meta["mpi_wait"] == "sleep spin=0us sleep=30-1000us"
    assert meta["probe_wait"] == "spin spin=200us sleep=10-100us"


@pytest.mark.mpi
def test_failed_run_leaves_no_result(tmp_path, built_programs, localhost_platform):
    with pytest.raises(RunFailed, match="exited with status 2"):
        run_pingpong(localhost_platform, built_programs, tmp_path, "--size", "3X")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pingpong.log"]
    assert "--size: invalid value '3X'" in (tmp_path / "pingpong.log").read_text()


@pytest.mark.mpi
def test_run_past_its_timeout_is_killed_and_leaves_no_result(
    tmp_path, built_programs, localhost_platform
):
    forever = ("--iterations", "0", "--duration", "600")
    with pytest.raises(RunFailed, match="did not finish within 3 s"):
        run_pingpong(localhost_platform, built_programs, tmp_path, *forever, timeout_s=3)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pingpong.log"]
    # Every process of the launch is gone: none holds the binary open.
    assert _processes_running(built_programs / "pingpong") == []


def _processes_running(binary) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.readlink(f"/proc/{entry}/exe") == str(binary):
                pids.append(int(entry))
        except OSError:
            continue
    return pids


class _Busy:
    """A CPU sampler that saw more runnable tasks than cores the first ``busy`` times."""

    calls = 0

    def __init__(self, max_runnable=None, busy=2, jobs=()):
        type(self).calls += 1
        self.saturated = type(self).calls <= busy
        self.mean_runnable = 3.0 if self.saturated else 1.0
        self.max_runnable = max_runnable or 2

    def start(self):
        return self

    def stop(self):
        pass

    def record(self):
        return {"mean_runnable_tasks": self.mean_runnable, "saturated": self.saturated,
                "max_runnable": self.max_runnable}  # fmt: skip


@pytest.fixture
def busy_cpu(monkeypatch) -> None:
    """The runner's CPU sampler replaced by :class:`_Busy`, counting afresh: the
    first two timed regions look saturated (3 runnable tasks), the later ones not (1)."""
    from netnoise import run

    _Busy.calls = 0
    monkeypatch.setattr(run, "CpuLoad", _Busy)


@pytest.mark.mpi
@pytest.mark.usefixtures("busy_cpu")
@pytest.mark.parametrize(
    ("limits", "attempts", "saturated"),
    [
        # Run again until a timed region is not saturated.
        (CpuLimits(attempts=3), 3, False),
        # The last attempt, within the tolerance, is kept and said to be saturated.
        (CpuLimits(attempts=2, tolerated_runnable=3.5), 2, True),
    ],
)
def test_a_saturated_timed_region_is_run_again_and_the_last_is_kept_if_tolerated(
    tmp_path, built_programs, localhost_platform, limits, attempts, saturated
):
    out = run_pingpong(
        localhost_platform, built_programs, tmp_path, "--iterations", "20", cpu=limits
    )
    record = read_sidecar(out)["cpu"]
    rejected = attempts - 1
    assert record["attempts"] == attempts and len(record["rejected"]) == rejected
    assert record["saturated"] is saturated and record["judged"] is True
    assert record["mean_runnable_tasks"] == (3.0 if saturated else 1.0)
    log = (tmp_path / "pingpong.log").read_text()
    assert log.count("CPU-saturated timed region") == rejected


@pytest.mark.mpi
@pytest.mark.usefixtures("busy_cpu")
@pytest.mark.parametrize(
    "limits",
    [
        CpuLimits(attempts=2),
        # Above the tolerance even the last attempt is discarded.
        CpuLimits(attempts=2, tolerated_runnable=2.5),
    ],
)
def test_a_run_saturated_every_time_leaves_no_result(
    tmp_path, built_programs, localhost_platform, limits
):
    with pytest.raises(RunFailed, match="every one of 2 attempts was CPU-saturated"):
        run_pingpong(localhost_platform, built_programs, tmp_path, "--iterations", "20", cpu=limits)
    assert not (tmp_path / "pingpong.csv").exists() and not list(tmp_path.glob("*.prov.json"))


@pytest.mark.mpi
def test_a_job_that_fails_to_start_is_tried_again(tmp_path, built_programs, localhost_platform):
    # As when two mpiruns race to create a node's session directory: one launch
    # dies before its warm-up ends, nothing was measured, the next attempt runs.

    marker = tmp_path / "failed-once"
    flaky = tmp_path / "flaky"
    flaky.write_text(
        f'#!/bin/sh\nmkdir "{marker}" 2>/dev/null && exit 213\n'
        f'exec "{built_programs / "pingpong"}" "$@"\n'
    )
    flaky.chmod(0o755)
    out = tmp_path / "pp.csv"
    log = tmp_path / "log"
    # A lost launch is no CPU attempt: one attempt allowed, the run still succeeds.
    # Its two ranks poll and fill both cores, so no load limit applies here.
    once = CpuLimits(max_runnable=1e9, attempts=1)
    run_benchmark(localhost_platform, [str(flaky), "--iterations", "20"], 2, out, log, 60, cpu=once)
    assert read_sidecar(out)["cpu"]["attempts"] == 1
    assert "launch 1 of 3: a job did not start; again" in log.read_text()
    assert len(read_benchmark(out).data) == 20


def test_saturation_is_judged_on_the_testbed_only():
    testbed = platform_of("testbed", cpu={"attempts": 5, "tolerated_runnable": None})
    assert testbed.cpu_limits() == CpuLimits(None, 5, True, None)
    tolerant = platform_of("testbed", cpu={"tolerated_runnable": 4.5})
    assert tolerant.cpu_limits().tolerated_runnable == 4.5
    assert not platform_of("localhost").cpu_limits().judged
    assert not platform_of("slurm", cpu={"max_runnable": 4}).cpu_limits().judged
    assert not platform_of("simgrid").cpu_limits().judged


@pytest.mark.mpi
def test_the_handshake_brackets_the_timed_part(tmp_path, built_programs, localhost_platform):
    """The runner's windows open after the warm-up and close before the results
    are written: the timed region it measures is the program's own."""
    args = ("--warmup", "2000", "--iterations", "200")
    out = run_pingpong(localhost_platform, built_programs, tmp_path, *args)
    timed = read_sidecar(out)["timed_region_s"]
    rtt_s = read_benchmark(out).data["rtt_us"].sum() / 1e6
    # 200 timed round trips, not the 2,200 of the whole run.
    assert rtt_s <= timed < 5 * rtt_s + 0.05
