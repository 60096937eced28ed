from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from netnoise import cpu as cpu_module
from netnoise.counters import GAUGES, Sampler, csvimport, deltas, gauge_summary, infiniband
from netnoise.cpu import CpuLoad, wait_for_quiet_cores
from netnoise.testbed import counters as testbed_counters
from netnoise.testbed.fabric import TestbedSpec
from tests.conftest import fake_ib_tree

SPEC = TestbedSpec("nv", 8, 2, 50.0, 100.0, 16000, 100000, "default", 2)


def test_infiniband_reads_sysfs_and_converts_words_to_bytes(tmp_path):
    fake_ib_tree(tmp_path, xmit_words=1000, rcv_words=500, wait=7)
    rows = pd.DataFrame(infiniband.snapshot_rows(tmp_path))
    values = dict(zip(rows["counter"], rows["value"], strict=True))
    assert values["tx_bytes"] == 4000
    assert values["rx_bytes"] == 2000
    assert values["xmit_wait_ticks"] == 7
    assert values["symbol_error"] == 0
    assert "unreadable" not in values
    assert set(rows["device"]) == {"mlx5_0"} and set(rows["port"]) == {"1"}


def test_infiniband_sampler_gives_per_run_deltas(tmp_path):
    fake_ib_tree(tmp_path, xmit_words=1000, rcv_words=500, wait=7)
    sampler = Sampler(lambda: infiniband.snapshot_rows(tmp_path))
    with sampler:
        fake_ib_tree(tmp_path, xmit_words=3000, rcv_words=900, wait=17)
    moved = deltas(sampler.result()).set_index("counter")["value"]
    assert moved["tx_bytes"] == 8000
    assert moved["rx_bytes"] == 1600
    assert moved["xmit_wait_ticks"] == 10


def test_infiniband_without_devices_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="no InfiniBand devices"):
        infiniband.snapshot_rows(tmp_path / "absent")


def test_gauges_are_summarised_not_differenced():
    nic = {"device": "n1", "port": "eth0", "role": "node_nic"}
    samples = pd.DataFrame(
        [
            {"time_s": t, **nic, "counter": counter, "value": value}
            for t, backlog in enumerate([0, 10, 20, 30, 40])
            for counter, value in (("qdisc_backlog_bytes", backlog), ("tx_bytes", 100 * t))
        ]
    )
    assert "qdisc_backlog_bytes" in GAUGES
    assert deltas(samples).set_index("counter")["value"].to_dict() == {"tx_bytes": 400}
    summary = gauge_summary(samples).iloc[0]
    assert summary["mean"] == 20 and summary["p99"] == pytest.approx(39.6)


def test_csv_import_checks_columns_and_numbers(tmp_path):
    good = tmp_path / "c.csv"
    good.write_text("time_s,device,port,counter,value\n0,n1,p1,tx_bytes,10\n1,n1,p1,tx_bytes,30\n")
    table = csvimport.read(good)
    assert deltas(table)["value"].tolist() == [20]
    assert table["role"].unique().tolist() == ["node_nic"]
    (tmp_path / "bad.csv").write_text("time_s,device,port,value\n0,n1,p1,1\n")
    with pytest.raises(ValueError, match="missing column"):
        csvimport.read(tmp_path / "bad.csv")
    (tmp_path / "bad2.csv").write_text(
        "time_s,device,port,counter,value\n0,n1,p1,x,10\n1,n1,p1,x,lots\n"
    )
    with pytest.raises(ValueError, match=r"bad2.csv:3: value is not a number: 'lots'"):
        csvimport.read(tmp_path / "bad2.csv")


def test_cpu_load_from_proc_stat(tmp_path):
    stat, pressure = tmp_path / "stat", tmp_path / "pressure"
    stat.write_text("cpu  100 0 100 800 0 0 0 0 0 0\nprocs_running 1\n")
    pressure.write_text("some avg10=0.00 avg60=0.00 avg300=0.00 total=1000\n")
    load = CpuLoad(
        str(stat), interval_s=0.01, max_runnable=2, pressure=str(pressure), proc=str(tmp_path)
    )
    with load:
        stat.write_text("cpu  400 0 200 900 0 0 0 0 0 0\nprocs_running 9\n")
        pressure.write_text("some avg10=0.00 avg60=0.00 avg300=0.00 total=51000\n")
        time.sleep(0.2)
    record = load.record()
    assert record["busy_fraction"] == pytest.approx(0.8)
    # The sampling thread is not counted: 9 running is 8 others.
    assert record["sampled_p95_runnable_tasks"] == 8
    assert 0 < record["stall_fraction"] <= 0.25
    # Without scheduler statistics the samples are all there is.
    assert record["runnable_from"] == "samples" and record["waiting_tasks"] is None
    assert record["saturated"] is True


def _stat_of_windows(stat, busy_jiffies):
    """A fake sleep that, each window, adds 100 jiffies to ``stat``, the next of
    ``busy_jiffies`` of them busy; and the list of windows slept."""
    state = {"busy": 0, "total": 0}
    slept = []

    def write():
        idle = state["total"] - state["busy"]
        stat.write_text(f"cpu  {state['busy']} 0 0 {idle} 0 0 0 0 0 0\nprocs_running 1\n")

    def sleep(window_s):
        slept.append(window_s)
        state["busy"] += next(busy_jiffies)
        state["total"] += 100
        write()

    write()
    return sleep, slept


def test_quiet_cores_need_consecutive_quiet_windows(tmp_path, monkeypatch):
    monkeypatch.setattr(cpu_module.os, "cpu_count", lambda: 2)
    stat = tmp_path / "stat"
    # 2 cores busy 80 % of the time are 1.6 cores: one quiet window between busy
    # ones does not count.
    sleep, slept = _stat_of_windows(stat, iter([80, 10, 90, 10, 10, 90]))
    settling = wait_for_quiet_cores(0.25, window_s=0.5, windows=2, stat=str(stat), sleep=sleep)
    assert settling.quiet and settling.busy_cores == pytest.approx(0.2)
    assert slept == [0.5] * 5


def test_waiting_for_quiet_cores_gives_up_after_its_timeout(tmp_path, monkeypatch):
    monkeypatch.setattr(cpu_module.os, "cpu_count", lambda: 2)
    stat = tmp_path / "stat"
    sleep, slept = _stat_of_windows(stat, iter([80] * 100))
    settling = wait_for_quiet_cores(0.25, window_s=0.5, timeout_s=2, stat=str(stat), sleep=sleep)
    assert not settling.quiet and settling.busy_cores == pytest.approx(1.6)
    assert len(slept) == 4


def _schedstat(proc, tid, waited_ns):
    path = proc / str(tid) / "task" / str(tid) / "schedstat"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"123456 {waited_ns} 7\n")


def test_a_process_gone_while_its_tasks_are_listed_is_skipped(tmp_path, monkeypatch):
    proc = tmp_path / "proc"
    _schedstat(proc, 100, 1_000)
    _schedstat(proc, 300, 5)
    # Process 300 exits after /proc was listed, before its task/ is read. This
    # once killed the sampling thread, and the run kept a partial CPU record.
    gone = proc / "300" / "task"
    scandir = os.scandir

    def listing(path):
        if Path(path) == gone:
            raise FileNotFoundError(2, "No such file or directory", str(path))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", listing)
    assert cpu_module._task_delays(proc) == {"100": 1_000}


def test_runnable_tasks_are_the_busy_cores_plus_the_time_tasks_waited(tmp_path, monkeypatch):
    stat, proc = tmp_path / "stat", tmp_path / "proc"
    stat.write_text("cpu  100 0 100 800 0 0 0 0 0 0\nprocs_running 1\n")
    _schedstat(proc, 100, 1_000)
    _schedstat(proc, 101, 0)
    clock = iter([10.0, 12.0])
    monkeypatch.setattr(cpu_module, "time", SimpleNamespace(monotonic=lambda: next(clock)))
    load = CpuLoad(str(stat), interval_s=0.01, max_runnable=2, pressure="/nonexistent",
                   proc=str(proc))  # fmt: skip
    load.cores = 2
    with load:
        stat.write_text("cpu  400 0 200 900 0 0 0 0 0 0\nprocs_running 1\n")
        _schedstat(proc, 100, 1_000 + 1_000_000_000)
        _schedstat(proc, 200, 500_000_000)  # started inside the run
        time.sleep(0.05)
    record = load.record()
    # 2 s of run: 1.5 s of waiting is 0.75 tasks, beside 0.8 of 2 cores busy.
    assert record["waiting_tasks"] == pytest.approx(0.75)
    assert record["mean_runnable_tasks"] == pytest.approx(2.35)
    assert record["runnable_from"] == "scheduler" and record["saturated"] is True
    assert record["sampled_runnable_tasks"] == 0


def _read_within(load, tid, waited_ns, timeout_s=5.0):
    """Wait until the sampling thread has read ``waited_ns`` for ``tid``."""
    deadline = time.monotonic() + timeout_s
    while load._waits._seen.get(tid) != waited_ns:
        assert time.monotonic() < deadline, f"task {tid}'s wait was not read"
        time.sleep(0.01)


def test_tasks_that_exit_inside_the_run_keep_the_wait_last_read(tmp_path, monkeypatch):
    stat, proc = tmp_path / "stat", tmp_path / "proc"
    stat.write_text("cpu  100 0 100 800 0 0 0 0 0 0\nprocs_running 1\n")
    _schedstat(proc, 100, 0)
    clock = iter([10.0, 12.0])
    monkeypatch.setattr(cpu_module, "time", SimpleNamespace(monotonic=lambda: next(clock)))
    load = CpuLoad(str(stat), interval_s=0.01, delay_interval_s=0.01, max_runnable=2,
                   pressure="/nonexistent", proc=str(proc))  # fmt: skip
    load.cores = 2
    with load:
        stat.write_text("cpu  150 0 150 900 0 0 0 0 0 0\nprocs_running 1\n")
        _schedstat(proc, 300, 1_200_000_000)  # a rank that waited 1.2 s, then exits
        _schedstat(proc, 301, 900_000_000)  # its thread id, taken again by a new task...
        _read_within(load, "301", 900_000_000)
        _schedstat(proc, 301, 100_000_000)  # ...which waited 0.1 s
        _read_within(load, "301", 100_000_000)
        shutil.rmtree(proc / "300")
        shutil.rmtree(proc / "301")
    record = load.record()
    # 2 s of run: 1.2 + 0.9 + 0.1 s of waiting is 1.1 tasks, beside 0.5 of 2 cores busy.
    assert record["waiting_tasks"] == pytest.approx(1.1)
    assert record["mean_runnable_tasks"] == pytest.approx(2.1)
    assert record["saturated"] is True


def test_an_idle_machine_is_not_saturated(tmp_path):
    stat = tmp_path / "stat"
    stat.write_text("cpu  100 0 100 800 0 0 0 0 0 0\nprocs_running 3\n")
    with CpuLoad(str(stat), interval_s=0.01, max_runnable=2, pressure="/nonexistent",
                 proc=str(tmp_path)) as load:  # fmt: skip
        time.sleep(0.05)
    record = load.record()
    assert record["mean_runnable_tasks"] == 2 and record["saturated"] is False
    assert record["stall_fraction"] is None


def test_counter_snapshots_of_a_job_read_its_nodes_and_the_fabric_only():
    assert sorted(testbed_counters.job_namespaces(SPEC, ["nv-n02", "nv-n07"])) == [
        "nv-fabric",
        "nv-n02",
        "nv-n07",
    ]
    assert len(testbed_counters.job_namespaces(SPEC)) == 9
    with pytest.raises(ValueError, match="not testbed nodes: nv-n09"):
        testbed_counters.job_namespaces(SPEC, ["nv-n09"])
