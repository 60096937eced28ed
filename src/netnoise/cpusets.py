"""Each job of a run on cores of its own, in cgroups of its own.

On a cluster two jobs never share a core, so what one does to the other passes
through the network. On one machine that emulates a cluster, every rank of every
job shares the same cores unless told otherwise; then a background that only
computes slows the measured job as much as one that floods the links. A
:class:`JobCgroup` holds one job: a cgroup v1 ``cpuset`` (the cores the job may
use), ``cpu`` and ``cpuacct`` (the CPU time it used, per core), and a group of the
unified hierarchy (its own CPU pressure). Every process of the job (launcher,
remote daemons, ranks) starts inside, as the wrapper of :meth:`JobCgroup.wrap`
enters the groups before it starts the launcher.

The groups carry a name of their own (``netnoise-<runner pid>-<job>``) and are
removed when the job ends; groups left by a runner that died are removed by the
next one (:func:`remove_stale`).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
#: The cgroup v1 hierarchies a job's group is made in, and the unified one.
V1_CONTROLLERS = ("cpuset", "cpu", "cpuacct")
UNIFIED = "unified"
NAME_PREFIX = "netnoise-"
_NAME = re.compile(rf"^{NAME_PREFIX}(\d+)-\d+$")

#: Values of platform.testbed.cores.
CORE_MODES = ("shared", "per_job")


class CpusetError(RuntimeError):
    """A job's cgroups cannot be made or used here; the message says why."""


def parse_cpu_list(text: str) -> list[int]:
    """The cores of a kernel CPU list such as ``0-3,6``."""
    cores: set[int] = set()
    for part in text.strip().split(","):
        if not part:
            continue
        first, _, last = part.partition("-")
        cores.update(range(int(first), int(last or first) + 1))
    return sorted(cores)


def format_cpu_list(cores: Sequence[int]) -> str:
    """``cores`` as the kernel writes a CPU list (``0-3,6``)."""
    ranges: list[str] = []
    ordered = sorted(set(cores))
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        ranges.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(ranges)


@dataclass(frozen=True)
class CoreSets:
    """The cores of the measured job and those of everything else of a run."""

    measured: tuple[int, ...]
    others: tuple[int, ...]

    @property
    def disjoint(self) -> bool:
        return not set(self.measured) & set(self.others)


def core_sets(mode: str, cores: Sequence[int] | None = None) -> CoreSets:
    """The core sets of ``mode`` (platform.testbed.cores) over ``cores`` (default:
    the cores this process may use): ``per_job`` gives the measured job the first
    half (at least one core) and everything else the rest; ``shared`` gives every
    job all of them."""
    cores = sorted(cores if cores is not None else os.sched_getaffinity(0))
    if mode == "shared":
        return CoreSets(tuple(cores), tuple(cores))
    if mode != "per_job":
        raise CpusetError(f"platform.testbed.cores: {mode!r} is not one of {', '.join(CORE_MODES)}")
    if len(cores) < 2:
        raise CpusetError(
            f"platform.testbed.cores is per_job but this machine offers {len(cores)} core "
            f"({format_cpu_list(cores)}); two jobs need at least two: set it to shared"
        )
    half = len(cores) // 2
    return CoreSets(tuple(cores[:half]), tuple(cores[half:]))


def cgroups_available(root: Path = CGROUP_ROOT) -> str | None:
    """Why a job's cgroups cannot be made here, or None when they can."""
    if os.geteuid() != 0:
        return "making a job's cgroups needs root"
    missing = [c for c in (*V1_CONTROLLERS, UNIFIED) if not (root / c / "cgroup.procs").exists()]
    if missing:
        return (
            f"no cgroup hierarchy at {', '.join(str(root / c) for c in missing)} (the job "
            "cgroups need cgroup v1 cpuset, cpu and cpuacct and a unified hierarchy); "
            "set platform.testbed.cores: shared"
        )
    return None


def _read(path: Path) -> str:
    return path.read_text().strip()


def _write(path: Path, value: str) -> None:
    with open(path, "w") as fh:
        fh.write(value)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class JobCgroup:
    """The cgroups of one job on ``cores``; ``name`` is unique to the runner and job."""

    def __init__(self, name: str, cores: Sequence[int], root: Path = CGROUP_ROOT):
        if not _NAME.match(name):
            raise ValueError(f"job cgroup name {name!r} is not {NAME_PREFIX}<pid>-<job>")
        self.name = name
        self.cores = tuple(sorted(cores))
        self.root = root
        self.paths = {c: root / c / name for c in (*V1_CONTROLLERS, UNIFIED)}

    @classmethod
    def for_job(cls, index: int, cores: Sequence[int], root: Path = CGROUP_ROOT) -> JobCgroup:
        return cls(f"{NAME_PREFIX}{os.getpid()}-{index}", cores, root)

    def create(self) -> JobCgroup:
        why = cgroups_available(self.root)
        if why:
            raise CpusetError(why)
        try:
            for path in self.paths.values():
                path.mkdir(exist_ok=True)
            cpuset = self.paths["cpuset"]
            # A task may enter a cpuset only once it has cores and memory nodes.
            _write(cpuset / "cpuset.mems", _read(self.root / "cpuset" / "cpuset.mems"))
            _write(cpuset / "cpuset.cpus", format_cpu_list(self.cores))
        except OSError as err:
            self.remove()
            raise CpusetError(f"cannot make cgroup {self.name}: {err}") from err
        return self

    def wrap(self, argv: Sequence[str]) -> list[str]:
        """``argv`` started inside this job's groups: a shell enters every group, then
        becomes ``argv``, so every process the job starts is inside from its start."""
        enter = 'while [ "$1" != -- ]; do echo $$ > "$1/cgroup.procs" || exit 125; shift; done'
        groups = [str(p) for p in self.paths.values()]
        return ["sh", "-c", f'{enter}; shift; exec "$@"', "netnoise-cgroup", *groups, "--", *argv]

    def pids(self) -> list[int]:
        """Every process of the job."""
        try:
            return [int(p) for p in _read(self.paths["cpuacct"] / "cgroup.procs").split()]
        except OSError:
            return []

    def usage_ns(self) -> int:
        """CPU time the job has used (ns), every core together."""
        return int(_read(self.paths["cpuacct"] / "cpuacct.usage"))

    def usage_by_core_ns(self) -> list[int]:
        """CPU time the job has used on each core (ns), core 0 first."""
        return [int(v) for v in _read(self.paths["cpuacct"] / "cpuacct.usage_percpu").split()]

    def stall_us(self) -> int | None:
        """Microseconds in which some task of the job waited for a core (its group's
        ``cpu.pressure``), or None without pressure-stall information."""
        try:
            first = _read(self.paths[UNIFIED] / "cpu.pressure").splitlines()[0]
        except (OSError, IndexError):
            return None
        fields = dict(f.split("=", 1) for f in first.split()[1:] if "=" in f)
        return int(fields["total"]) if "total" in fields else None

    def cpus_allowed(self) -> dict[str, list[str]]:
        """The cores each of the job's programs may run on as the kernel sees them
        (``Cpus_allowed_list`` of every process, by command name; a program whose
        processes differ lists each value)."""
        seen: dict[str, set[str]] = {}
        for pid in self.pids():
            with contextlib.suppress(OSError):
                status = dict(
                    line.split(":\t", 1)
                    for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                    if ":\t" in line
                )
                seen.setdefault(status["Name"].strip(), set()).add(
                    status["Cpus_allowed_list"].strip()
                )
        return {name: sorted(values) for name, values in sorted(seen.items())}

    def kill(self) -> None:
        """SIGKILL whatever of the job is still inside (a daemon that left the
        launcher's session is still in the job's group)."""
        for pid in self.pids():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    def remove(self, timeout_s: float = 5.0) -> None:
        """Kill what is left inside and remove every group of the job."""
        deadline = time.monotonic() + timeout_s
        for path in self.paths.values():
            while path.exists():
                self.kill()
                try:
                    path.rmdir()
                except FileNotFoundError:
                    break
                except OSError as err:
                    # Killed tasks leave the group once they are reaped.
                    if time.monotonic() > deadline:
                        raise CpusetError(f"cannot remove cgroup {path}: {err}") from err
                    time.sleep(0.02)


def remove_stale(root: Path = CGROUP_ROOT) -> list[str]:
    """Remove the job groups of runners that are gone; return their names."""
    stale = set()
    for controller in (*V1_CONTROLLERS, UNIFIED):
        with contextlib.suppress(OSError):
            for entry in os.scandir(root / controller):
                found = _NAME.match(entry.name)
                if found and entry.is_dir() and not _alive(int(found.group(1))):
                    stale.add(entry.name)
    for name in sorted(stale):
        JobCgroup(name, (), root).remove()
    return sorted(stale)
