"""CPU load during a run.

On an emulated cluster every node shares this machine's cores, so the CPU,
not the network, may be the bottleneck; such a run must be repeated or
rejected rather than read as network interference. What matters is whether
more tasks wanted a core than there are cores, on average over the run: the
cores' busy share (``/proc/stat``) times the cores, plus the time every task
spent waiting for a core (the scheduler's ``run_delay`` in
``/proc/<pid>/task/<tid>/schedstat``) per second of the run. Where the kernel
has pressure-stall information, the share of the time in which some task
waited for a core (``/proc/pressure/cpu``) is recorded beside it.

The number of runnable tasks (``procs_running``) is also sampled every 20 ms
and recorded, but not judged: the sampling thread wakes from a timer, and on a
virtual machine its wake-ups coincide with other sleeping tasks' wake-ups, so
for programs that sleep often the samples read several times the runnable
tasks the scheduler accounts for (``netnoise bench cpu --sleepers``). Busy
polling reads the same either way.

A measurement on shared cores should also start on quiet ones:
:func:`wait_for_quiet_cores` waits until whatever ran before (another job's
ranks being killed, the kernel freeing the network namespaces of a testbed
just taken down) has let go of them.
"""

from __future__ import annotations

import dataclasses
import math
import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from netnoise.cpusets import JobCgroup, format_cpu_list

PRESSURE = "/proc/pressure/cpu"


def _stat(stat: Path) -> tuple[int, int, int]:
    """(busy jiffies, total jiffies, runnable tasks) from /proc/stat."""
    busy = total = runnable = 0
    for line in stat.read_text().splitlines():
        if line.startswith("cpu "):
            fields = [int(v) for v in line.split()[1:]]
            idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
            total = sum(fields[:8])  # user..steal; guest time is already in user
            busy = total - idle
        elif line.startswith("procs_running "):
            runnable = int(line.split()[1])
    return busy, total, runnable


@dataclasses.dataclass(frozen=True)
class Settling:
    """How a wait for quiet cores ended: after ``waited_s``, with ``busy_cores``
    busy in the last window; ``quiet`` is False when it gave up."""

    waited_s: float
    busy_cores: float
    quiet: bool


def wait_for_quiet_cores(
    most_busy_cores: float = 0.25,
    window_s: float = 0.5,
    windows: int = 2,
    timeout_s: float = 60.0,
    stat: str = "/proc/stat",
    sleep: Callable[[float], None] = time.sleep,
) -> Settling:
    """Wait until the cores were busy for at most ``most_busy_cores`` cores' worth
    of time in each of ``windows`` consecutive windows of ``window_s``, or give up
    after ``timeout_s``."""
    path = Path(stat)
    cores = os.cpu_count() or 1
    started = time.monotonic()
    quiet_windows, busy = 0, 0.0
    before = _stat(path)
    for _ in range(max(math.ceil(timeout_s / window_s), windows)):
        sleep(window_s)
        after = _stat(path)
        elapsed = after[1] - before[1]
        busy = cores * (after[0] - before[0]) / elapsed if elapsed > 0 else 0.0
        before = after
        quiet_windows = quiet_windows + 1 if busy <= most_busy_cores else 0
        if quiet_windows == windows:
            return Settling(round(time.monotonic() - started, 2), round(busy, 2), True)
    return Settling(round(time.monotonic() - started, 2), round(busy, 2), False)


def _task_delays(proc: Path, pids: Iterable[str] | None = None) -> dict[str, int]:
    """Nanoseconds each task has waited for a core since it started, by thread
    id, of the processes ``pids`` (default: every process); empty when the
    kernel keeps no scheduler statistics."""
    delays = {}
    for pid in _numbered(proc) if pids is None else pids:
        for tid in _numbered(proc / pid / "task"):
            try:
                fields = (proc / pid / "task" / tid / "schedstat").read_text().split()
            except OSError:  # the task has exited
                continue
            if len(fields) >= 2:
                delays[tid] = int(fields[1])
    return delays


class _Waits:
    """The time tasks waited for a core between :meth:`start` and the latest
    :meth:`read`, counting tasks that exit in between up to their last read: a
    thread id seen again with less wait is a new task, and the old one's wait
    is kept."""

    def __init__(self, proc: Path, pids: Callable[[], Iterable[str]] | None = None):
        self.proc = proc
        self.pids = pids

    def _delays(self) -> dict[str, int]:
        return _task_delays(self.proc, None if self.pids is None else self.pids())

    def start(self) -> bool:
        """Start counting; False when the kernel keeps no scheduler statistics."""
        self._start = self._delays()
        self._seen = dict(self._start)
        self._retired_ns = 0
        return bool(self._start)

    def read(self) -> None:
        for tid, delay in self._delays().items():
            if delay < self._seen.get(tid, 0):
                self._retired_ns += self._seen[tid] - self._start.pop(tid, 0)
            self._seen[tid] = delay

    def waited_ns(self) -> int:
        waited = self._retired_ns + sum(
            d - self._start.get(tid, 0) for tid, d in self._seen.items()
        )
        return max(waited, 0)


def _numbered(directory: Path) -> list[str]:
    """Names of the numbered entries of ``directory``; none once it is gone (a
    process that exited between listing /proc and reading its tasks)."""
    try:
        return [entry.name for entry in os.scandir(directory) if entry.name.isdigit()]
    except OSError:
        return []


def _stall_us(pressure: Path) -> int | None:
    """Microseconds in which some task waited for a core, or None without PSI."""
    try:
        first = pressure.read_text().splitlines()[0]
    except (OSError, IndexError):
        return None
    fields = dict(f.split("=", 1) for f in first.split()[1:] if "=" in f)
    return int(fields["total"]) if "total" in fields else None


def _softirq_by_core(stat: Path) -> list[tuple[int, int]]:
    """(softirq jiffies, total jiffies) of every core, core 0 first."""
    cores = []
    for line in stat.read_text().splitlines():
        if line.startswith("cpu") and line[3:4].isdigit():
            fields = [int(v) for v in line.split()[1:]]
            cores.append((fields[6] if len(fields) > 6 else 0, sum(fields[:8])))
    return cores


#: The softirqs of the kernel's packet work (/proc/softirqs), counted per core.
NET_SOFTIRQS = ("NET_RX", "NET_TX")


def _net_softirqs(softirqs: Path) -> list[int]:
    """Packet softirqs raised on every core so far, core 0 first; empty without
    /proc/softirqs."""
    counts: list[int] = []
    try:
        lines = softirqs.read_text().splitlines()
    except OSError:
        return counts
    for line in lines:
        name, _, values = line.partition(":")
        if name.strip() in NET_SOFTIRQS:
            row = [int(v) for v in values.split()]
            counts = [a + b for a, b in zip(counts, row, strict=True)] if counts else row
    return counts


class JobLoad:
    """One job's own CPU record over a timed region, from its cgroups
    (netnoise.cpusets.JobCgroup): the cores it was given and those its processes
    may run on as the kernel sees them, the CPU time it used on each core, its
    busy cores, its tasks waiting for a core, their sum (its runnable tasks on
    average) and the share of the time in which some task of it waited for a
    core (its group's ``cpu.pressure``)."""

    def __init__(self, name: str, role: str, cgroup: JobCgroup, proc: str = "/proc"):
        self.name = name
        self.role = role
        self.cgroup = cgroup
        self.waits = _Waits(Path(proc), lambda: [str(p) for p in cgroup.pids()])

    def start(self) -> None:
        self._start_s = time.monotonic()
        self._usage = self.cgroup.usage_by_core_ns()
        self._stall = self.cgroup.stall_us()
        self._allowed = self.cgroup.cpus_allowed()
        self._scheduler_stats = self.waits.start()

    def read(self) -> None:
        self.waits.read()

    def stop(self) -> None:
        self.waits.read()
        wall_s = time.monotonic() - self._start_s
        used = [b - a for a, b in zip(self._usage, self.cgroup.usage_by_core_ns(), strict=True)]
        stall = self.cgroup.stall_us()
        allowed = self.cgroup.cpus_allowed()
        for program, values in self._allowed.items():
            allowed[program] = sorted({*allowed.get(program, []), *values})
        busy = sum(used) / 1e9 / wall_s if wall_s > 0 else 0.0
        waiting = self.waits.waited_ns() / 1e9 / wall_s if wall_s > 0 else None
        self.result = {
            "name": self.name,
            "role": self.role,
            "cores": format_cpu_list(self.cgroup.cores),
            "cpus_allowed": dict(sorted(allowed.items())),
            "ran_on": format_cpu_list([core for core, ns in enumerate(used) if ns > 0]),
            "cpu_s_by_core": [round(ns / 1e9, 4) for ns in used],
            "busy_cores": round(busy, 3),
            "waiting_tasks": round(waiting, 3)
            if self._scheduler_stats and waiting is not None
            else None,
            "mean_runnable_tasks": round(busy + (waiting or 0.0), 2),
            "stall_fraction": None
            if stall is None or self._stall is None or wall_s <= 0
            else round(min((stall - self._stall) / (wall_s * 1e6), 1.0), 4),
        }

    def record(self) -> dict[str, Any]:
        return self.result


class CpuLoad:
    """Busy share, runnable tasks and CPU pressure between ``start`` and ``stop``
    (or enter and exit); ``max_runnable`` (default: the cores) is the most
    runnable tasks on average a run may have before it counts as saturated.

    Every task's wait is read at the start, every ``delay_interval_s`` and at
    the end, so a task that exits inside the run leaves at most one interval of
    its wait uncounted: an external tool's ranks end before its wrapper does,
    and read only at the end a Netgauge run on 8 polling ranks counted 0.03
    waiting tasks beside a pressure stall 91 % of the time. Without scheduler
    statistics the mean runnable tasks are the samples' mean.

    Beside the machine-wide figures it records each core's share of time in
    softirq and the packet softirqs raised on it (the kernel's own packet work
    of veth, bridge and shaper: on which core it lands), and ``jobs``' own
    records (:class:`JobLoad`), read over the same window."""

    def __init__(
        self,
        stat: str = "/proc/stat",
        interval_s: float = 0.02,
        delay_interval_s: float = 0.5,
        max_runnable: float | None = None,
        pressure: str = PRESSURE,
        proc: str = "/proc",
        jobs: Sequence[JobLoad] = (),
        softirqs: str = "/proc/softirqs",
    ):
        self.stat = Path(stat)
        self.proc = Path(proc)
        self.pressure = Path(pressure)
        self.softirqs = Path(softirqs)
        self.interval_s = interval_s
        self._samples_per_delay_read = max(round(delay_interval_s / interval_s), 1)
        self.cores = os.cpu_count() or 1
        self.max_runnable = float(max_runnable if max_runnable is not None else self.cores)
        self.jobs = list(jobs)
        self._waits = _Waits(self.proc)
        self._runnable: list[int] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.busy_fraction: float | None = None
        self.stall_fraction: float | None = None
        self.waiting: float | None = None
        self.softirq_share: list[float] = []
        self.net_softirqs: list[int] = []

    def _others_runnable(self) -> int:
        # The sampling thread is running while it reads.
        return max(_stat(self.stat)[2] - 1, 0)

    def _sample(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._runnable.append(self._others_runnable())
            if len(self._runnable) % self._samples_per_delay_read == 0:
                self._waits.read()
                for job in self.jobs:
                    job.read()

    def start(self) -> CpuLoad:
        self._start = _stat(self.stat)
        self._start_softirq = _softirq_by_core(self.stat)
        self._start_net = _net_softirqs(self.softirqs)
        self._start_stall = _stall_us(self.pressure)
        self._scheduler_stats = self._waits.start()
        for job in self.jobs:
            job.start()
        self._start_s = time.monotonic()
        self._runnable.append(max(self._start[2] - 1, 0))
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        self._thread = None
        busy0, total0, _ = self._start
        busy1, total1, _ = _stat(self.stat)
        elapsed = total1 - total0
        self.busy_fraction = (busy1 - busy0) / elapsed if elapsed > 0 else 0.0
        self.softirq_share = [
            (s1 - s0) / (t1 - t0) if t1 > t0 else 0.0
            for (s0, t0), (s1, t1) in zip(
                self._start_softirq, _softirq_by_core(self.stat), strict=True
            )
        ]
        net = _net_softirqs(self.softirqs)
        self.net_softirqs = [b - a for a, b in zip(self._start_net, net, strict=False)]
        stall = _stall_us(self.pressure)
        wall_us = (time.monotonic() - self._start_s) * 1e6
        if stall is not None and self._start_stall is not None and wall_us > 0:
            self.stall_fraction = min((stall - self._start_stall) / wall_us, 1.0)
        self._waits.read()
        if self._scheduler_stats and wall_us > 0:
            self.waiting = self._waits.waited_ns() / (wall_us * 1e3)
        for job in self.jobs:
            job.stop()

    def __enter__(self) -> CpuLoad:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def sampled_runnable(self) -> float:
        return sum(self._runnable) / len(self._runnable) if self._runnable else 0.0

    @property
    def mean_runnable(self) -> float:
        """Tasks running or waiting for a core, on average over the run."""
        if self.waiting is None or self.busy_fraction is None:
            return self.sampled_runnable
        return self.busy_fraction * self.cores + self.waiting

    @property
    def saturated(self) -> bool:
        return self.mean_runnable > self.max_runnable

    def record(self) -> dict[str, Any]:
        """Provenance entry of the run's CPU load."""
        ordered = sorted(self._runnable)
        p95 = ordered[min(int(0.95 * len(ordered)), len(ordered) - 1)] if ordered else 0
        return {
            "cores": self.cores,
            "busy_fraction": None if self.busy_fraction is None else round(self.busy_fraction, 4),
            "mean_runnable_tasks": round(self.mean_runnable, 2),
            "runnable_from": "samples" if self.waiting is None else "scheduler",
            "waiting_tasks": None if self.waiting is None else round(self.waiting, 3),
            "sampled_runnable_tasks": round(self.sampled_runnable, 2),
            "sampled_p95_runnable_tasks": p95,
            "stall_fraction": None
            if self.stall_fraction is None
            else round(self.stall_fraction, 4),
            "softirq_share_by_core": [round(v, 4) for v in self.softirq_share],
            "net_softirqs_by_core": self.net_softirqs,
            "max_runnable": self.max_runnable,
            "samples": len(self._runnable),
            "saturated": self.saturated,
            "jobs": [job.record() for job in self.jobs] if self.jobs else None,
        }


@dataclasses.dataclass(frozen=True)
class CpuLimits:
    """When a run counts as CPU-saturated (mean runnable tasks during its timed
    region above ``max_runnable``; None: the number of cores), how many times a
    co-run is tried before it is rejected, whether saturation is judged at
    all (otherwise it is only recorded), and the load up to which the last
    attempt is kept all the same, recorded as saturated (``tolerated_runnable``;
    None: never)."""

    max_runnable: float | None = None
    attempts: int = 3
    judged: bool = True
    tolerated_runnable: float | None = None

    def rejects(self, cpu: CpuLoad, attempt: int) -> bool:
        """Whether attempt number ``attempt`` with this CPU load is discarded."""
        if not self.judged:
            return False
        if attempt == self.attempts and self.tolerated_runnable is not None:
            return cpu.mean_runnable > self.tolerated_runnable
        return cpu.saturated
