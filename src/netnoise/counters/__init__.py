"""Network counters in one tidy long format, whatever their source.

Every backend returns rows ``time_s, device, port, role, counter, value``:

- ``testbed``: per-interface bytes/packets/drops of node NICs, switch ports and
  uplinks, plus their qdisc statistics (sent, drops, overlimits, requeues,
  backlog): the analogues of the processor-tile (node NIC) and network-tile
  (switch port, backbone) flit and stall counters of seed 002.
- ``infiniband``: the port counters of ``/sys/class/infiniband``.
- ``csv``: counters a site already collects, imported from a CSV file.

Cumulative counters become per-run amounts with :func:`deltas`; gauges
(queue backlog) are summarised over the samples taken during the run.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pandas as pd

COLUMNS = ["time_s", "device", "port", "role", "counter", "value"]
# Instantaneous values: their difference over a run means nothing.
GAUGES = {"qdisc_backlog_bytes", "qdisc_backlog_packets"}

Snapshot = Callable[[], list[dict[str, Any]]]


def frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=COLUMNS)


class Sampler:
    """Snapshots at start, every ``interval_s`` (if > 0) and at stop, in a background thread."""

    def __init__(self, snapshot: Snapshot, interval_s: float = 0.0):
        self.snapshot = snapshot
        self.interval_s = interval_s
        self._rows: list[dict[str, Any]] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None

    def _take(self) -> None:
        self._rows.extend(self.snapshot())

    def _loop(self) -> None:
        try:
            while not self._stop.wait(self.interval_s):
                self._take()
        except BaseException as err:  # reported by stop()
            self._error = err

    def __enter__(self) -> Sampler:
        self._take()
        if self.interval_s > 0:
            self._thread = threading.Thread(target=self._loop, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self._error is not None:
            raise self._error
        self._take()

    def result(self) -> pd.DataFrame:
        return frame(self._rows)


def deltas(samples: pd.DataFrame) -> pd.DataFrame:
    """Per device/port/counter: last minus first sample of cumulative counters."""
    cumulative = samples[~samples["counter"].isin(GAUGES)]
    ordered = cumulative.sort_values("time_s")
    keys = ["device", "port", "role", "counter"]
    grouped = ordered.groupby(keys, sort=True)["value"]
    return (grouped.last() - grouped.first()).reset_index()


def gauge_summary(samples: pd.DataFrame) -> pd.DataFrame:
    """Mean, variance and 75th/95th/99th percentile of each gauge over the run."""
    gauges = samples[samples["counter"].isin(GAUGES)]
    grouped = gauges.groupby(["device", "port", "role", "counter"], sort=True)["value"]
    table = grouped.agg(mean="mean", var="var")
    for q in (75, 95, 99):
        table[f"p{q}"] = grouped.quantile(q / 100)
    return table.reset_index()


def now() -> float:
    return time.monotonic()
