"""CPU load during a run.

On an emulated cluster every node shares this machine's cores, so the CPU,
not the network, may be the bottleneck; such a run must be flagged rather
than read as network interference. MPI ranks busy-poll, so the busy share
is ~100 % whenever a rank waits; what matters is whether more tasks want a
core than there are cores, so the mean number of runnable tasks is sampled.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any


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


class CpuLoad:
    """Busy share of all cores and mean runnable tasks between enter and exit."""

    def __init__(self, stat: str = "/proc/stat", interval_s: float = 0.05):
        self.stat = Path(stat)
        self.interval_s = interval_s
        self.cores = os.cpu_count() or 1
        self._runnable: list[int] = []
        self._stop = threading.Event()
        self.busy_fraction: float | None = None

    def _sample(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._runnable.append(_stat(self.stat)[2])

    def __enter__(self) -> CpuLoad:
        self._start = _stat(self.stat)
        self._runnable.append(self._start[2])
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        busy0, total0, _ = self._start
        busy1, total1, _ = _stat(self.stat)
        elapsed = total1 - total0
        self.busy_fraction = (busy1 - busy0) / elapsed if elapsed > 0 else 0.0

    @property
    def mean_runnable(self) -> float:
        return sum(self._runnable) / len(self._runnable) if self._runnable else 0.0

    def record(self) -> dict[str, Any]:
        """Provenance entry; ``saturated`` when more tasks wanted a core than there are."""
        return {
            "cores": self.cores,
            "busy_fraction": None if self.busy_fraction is None else round(self.busy_fraction, 4),
            "mean_runnable_tasks": round(self.mean_runnable, 2),
            "saturated": self.mean_runnable > self.cores,
        }
