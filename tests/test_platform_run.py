from __future__ import annotations

import os

import pytest

from netnoise.io import read_benchmark
from netnoise.platform import PlatformUnavailable, from_config
from netnoise.provenance import read_sidecar
from netnoise.run import RunFailed, run_benchmark


def test_localhost_launch_command():
    platform = from_config(
        {"kind": "localhost", "mpirun": "mpirun", "mpirun_args": ["--mca", "btl", "self,tcp"]}
    )
    launch = platform.mpi_launch(["./pingpong", "--size", "8"], 4)
    assert launch.argv[:3] == ["mpirun", "-n", "4"]
    assert launch.argv[-6:] == ["--mca", "btl", "self,tcp", "./pingpong", "--size", "8"]
    assert "--bind-to" in launch.argv
    if os.geteuid() == 0:
        assert launch.env["OMPI_ALLOW_RUN_AS_ROOT"] == "1"


def test_slurm_launch_command():
    platform = from_config({"kind": "slurm", "slurm": {"launcher": "srun --mpi=pmix"}})
    assert platform.mpi_launch(["./noise"], 8).argv == ["srun", "--mpi=pmix", "-n", "8", "./noise"]
    assert platform.describe()["kind"] == "slurm"


def test_missing_launcher_is_a_clear_error():
    platform = from_config({"kind": "localhost", "mpirun": "no-such-mpirun", "mpirun_args": []})
    with pytest.raises(PlatformUnavailable, match="'no-such-mpirun' is not on PATH"):
        platform.check()


def test_unknown_kind():
    with pytest.raises(PlatformUnavailable, match="known kinds: testbed, localhost, slurm"):
        from_config({"kind": "cloud"})


@pytest.mark.mpi
def test_run_benchmark_writes_result_and_provenance(tmp_path, built_programs, localhost_platform):
    out = tmp_path / "pp.csv"
    run_benchmark(
        localhost_platform,
        [str(built_programs / "pingpong"), "--iterations", "20", "--size", "64"],
        ranks=2,
        output=out,
        log=tmp_path / "pp.log",
        timeout_s=60,
        config={"baseline": {"iterations": 20}},
        inputs={"program": built_programs / "pingpong"},
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
def test_failed_run_leaves_no_result(tmp_path, built_programs, localhost_platform):
    out = tmp_path / "pp.csv"
    with pytest.raises(RunFailed, match="exited with status 2"):
        run_benchmark(
            localhost_platform,
            [str(built_programs / "pingpong"), "--size", "3X"],
            ranks=2,
            output=out,
            log=tmp_path / "pp.log",
            timeout_s=60,
        )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pp.log"]
    assert "--size: invalid value '3X'" in (tmp_path / "pp.log").read_text()


@pytest.mark.mpi
def test_run_past_its_timeout_is_killed_and_leaves_no_result(
    tmp_path, built_programs, localhost_platform
):
    out = tmp_path / "pp.csv"
    with pytest.raises(RunFailed, match="did not finish within 3 s"):
        run_benchmark(
            localhost_platform,
            [str(built_programs / "pingpong"), "--iterations", "0", "--duration", "600"],
            ranks=2,
            output=out,
            log=tmp_path / "pp.log",
            timeout_s=3,
        )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pp.log"]
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
