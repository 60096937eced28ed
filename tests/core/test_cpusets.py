"""Each job on cores of its own: core sets, CPU lists and a job's own CPU record."""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest

from netnoise import cpu as cpu_module
from netnoise.cpu import JobLoad
from netnoise.cpusets import (
    CpusetError,
    JobCgroup,
    core_sets,
    format_cpu_list,
    parse_cpu_list,
)
from netnoise.platform import PlatformUnavailable


@pytest.mark.parametrize(
    ("text", "cores"), [("0", [0]), ("0-3,6", [0, 1, 2, 3, 6]), ("1,3-4,8-9", [1, 3, 4, 8, 9])]
)
def test_cpu_lists_read_and_write_as_the_kernel_writes_them(text, cores):
    assert parse_cpu_list(text) == cores
    assert format_cpu_list(cores) == text


def test_per_job_gives_the_measured_job_half_the_cores_and_the_rest_the_others():
    two = core_sets("per_job", [0, 1])
    assert (two.measured, two.others, two.disjoint) == ((0,), (1,), True)
    # A bigger machine needs no setting of its own: each side grows with it.
    sixteen = core_sets("per_job", range(16))
    assert sixteen.measured == tuple(range(8)) and sixteen.others == tuple(range(8, 16))
    odd = core_sets("per_job", [0, 1, 2])
    assert (odd.measured, odd.others) == ((0,), (1, 2))


def test_shared_gives_every_job_every_core():
    sets = core_sets("shared", [0, 1])
    assert sets.measured == sets.others == (0, 1) and not sets.disjoint


def test_per_job_on_one_core_says_what_to_set():
    with pytest.raises(
        CpusetError, match=r"per_job but this machine offers 1 core .*set it to shared$"
    ):
        core_sets("per_job", [0])


def test_the_testbed_platform_refuses_per_job_on_one_core(monkeypatch):
    from netnoise.platform.testbed import TestbedPlatform
    from netnoise.settings import PlatformSettings
    from tests.conftest import full_platform

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    testbed = {"prefix": "nnu", "nodes": 2, "racks": 1, "nic_mbit": 50, "backbone_mbit": 500,
               "burst_bytes": 16000, "queue_bytes": 100000, "tcp_congestion": "default",
               "btl_tcp_links": 2, "cores": "per_job"}  # fmt: skip
    with pytest.raises(PlatformUnavailable, match=r"platform\.testbed\.cores is per_job"):
        TestbedPlatform(PlatformSettings.of(full_platform({"testbed": testbed}))).core_sets()
    shared = PlatformSettings.of(full_platform({"testbed": {**testbed, "cores": "shared"}}))
    assert TestbedPlatform(shared).core_sets().measured == (0,)


def test_job_cgroup_names_are_our_own():
    with pytest.raises(ValueError, match="is not netnoise-<pid>-<job>"):
        JobCgroup("user.slice", [0])
    group = JobCgroup.for_job(2, [1])
    assert group.name == f"netnoise-{os.getpid()}-2"
    assert {p.name for p in group.paths.values()} == {group.name}
    argv = group.wrap(["mpirun", "-n", "2", "prog"])
    assert argv[:2] == ["sh", "-c"] and argv[-5:] == ["--", "mpirun", "-n", "2", "prog"]


class _Group:
    """A job's cgroups as JobLoad reads them: two processes, CPU time on core 1."""

    cores = (1,)

    def __init__(self):
        self.usage = [5_000, 1_000_000_000]
        self.stall = 1_000

    def pids(self):
        return [100]

    def usage_by_core_ns(self):
        return list(self.usage)

    def stall_us(self):
        return self.stall

    def cpus_allowed(self):
        return {"noise": ["1"]} if self.usage[1] == 1_000_000_000 else {"noise": ["0"]}


def test_a_jobs_own_record_is_its_cgroups_cpu_time_waits_and_pressure(tmp_path, monkeypatch):
    proc = tmp_path / "proc"
    schedstat = proc / "100" / "task" / "100" / "schedstat"
    schedstat.parent.mkdir(parents=True)
    schedstat.write_text("1 0 1\n")
    clock = iter([10.0, 12.0])
    monkeypatch.setattr(cpu_module, "time", SimpleNamespace(monotonic=lambda: next(clock)))
    group = _Group()
    load = JobLoad("noise", "measured", group, proc=str(proc))
    load.start()
    # 2 s: 3 s of CPU on core 1, 1 s of waiting for a core, 0.5 s of pressure.
    group.usage = [5_000, 4_000_000_000]
    group.stall = 501_000
    schedstat.write_text("1 1000000000 1\n")
    load.stop()
    record = load.record()
    assert record["cores"] == "1" and record["ran_on"] == "1"
    assert record["cpu_s_by_core"] == [0.0, 3.0]
    assert record["busy_cores"] == pytest.approx(1.5)
    assert record["waiting_tasks"] == pytest.approx(0.5)
    assert record["mean_runnable_tasks"] == pytest.approx(2.0)
    assert record["stall_fraction"] == pytest.approx(0.25)
    # What the kernel allowed at the start and at the end, both kept.
    assert record["cpus_allowed"] == {"noise": ["0", "1"]}


def test_provenance_says_whether_the_measured_job_ran_apart_from_the_rest():
    from netnoise.provenance import cores_apart, measured_job_cpu

    def job(role, ran_on):
        return {"role": role, "ran_on": ran_on, "cores": ran_on, "mean_runnable_tasks": 1.0}

    apart = {"jobs": [job("background", "1"), job("background", "1"), job("measured", "0")]}
    assert cores_apart(apart) is True and measured_job_cpu(apart)["cores"] == "0"
    shared = {"jobs": [job("background", "0-1"), job("measured", "0-1")]}
    assert cores_apart(shared) is False
    alone = {"jobs": [job("measured", "0")]}
    assert cores_apart(alone) is None and cores_apart({"jobs": None}) is None
    assert measured_job_cpu({}) == {}


def test_a_host_without_the_hierarchies_is_told_to_share_the_cores(tmp_path):
    from netnoise.cpusets import cgroups_available

    why = cgroups_available(tmp_path)
    if os.geteuid() == 0:
        assert why.startswith(f"no cgroup hierarchy at {tmp_path / 'cpuset'}")
        assert why.endswith("set platform.testbed.cores: shared")
    else:
        assert why == "making a job's cgroups needs root"
