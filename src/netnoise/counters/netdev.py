"""Counters of this host's network interfaces: ``/sys/class/net/*/statistics``
(Ethernet, RoCE, IPoIB, the testbed's veths) and the statistics of each
interface's root queue over rtnetlink. Reading either needs no privileges.

On a cluster node this is the node's own view of its links; on the testbed's
Slurm cluster a node's ``/sys`` belongs to its network namespace, so its
``eth0`` (and its tbf queue) is what a job's sampler reads there.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from pathlib import Path
from typing import Any

from netnoise.counters import now
from netnoise.counters.netlink import NetlinkError, Reader

SYSFS = Path("/sys/class/net")
STATISTICS = (
    "rx_bytes",
    "rx_packets",
    "rx_dropped",
    "rx_errors",
    "tx_bytes",
    "tx_packets",
    "tx_dropped",
    "tx_errors",
)
# Root queue statistics under the names the testbed's counters use.
QDISC_COUNTERS = {
    "overlimits": "qdisc_overlimits",
    "drops": "qdisc_drops",
    "requeues": "qdisc_requeues",
    "backlog": "qdisc_backlog_bytes",
}
ARPHRD_LOOPBACK = "772"


def interfaces(root: str | os.PathLike[str] = SYSFS) -> list[str]:
    """Every interface of ``root`` but loopback, by name."""
    found = []
    for path in sorted(Path(root).iterdir()):
        try:
            kind = (path / "type").read_text().strip()
        except OSError:
            continue
        if kind != ARPHRD_LOOPBACK and (path / "statistics").is_dir():
            found.append(path.name)
    return found


def snapshot_rows(
    device: str,
    wanted: Collection[str] | None = None,
    root: str | os.PathLike[str] = SYSFS,
    queues: bool = True,
) -> list[dict[str, Any]]:
    """One reading of the ``wanted`` interfaces (every non-loopback one when None),
    as rows of role ``node_nic`` with ``device`` (the node's name) and the interface
    as ``port``; with ``queues``, the root queue's statistics of the interfaces too
    (read in this process's network namespace)."""
    names = [n for n in interfaces(root) if wanted is None or n in wanted]
    t = now()
    rows = []
    for name in names:
        for counter in STATISTICS:
            try:
                value = int((Path(root) / name / "statistics" / counter).read_text())
            except (OSError, ValueError):
                continue
            rows.append(_row(t, device, name, counter, value))
    if queues and names:
        try:
            with Reader([None]) as reader:
                _, qdiscs = reader.read()[None]
        except (NetlinkError, OSError):
            qdiscs = []
        for qdisc in qdiscs:
            if qdisc.ifname in names:
                for field, counter in QDISC_COUNTERS.items():
                    if field in qdisc.counters:
                        rows.append(_row(t, device, qdisc.ifname, counter, qdisc.counters[field]))
    return rows


def _row(t: float, device: str, port: str, counter: str, value: int) -> dict[str, Any]:
    return {
        "time_s": t,
        "device": device,
        "port": port,
        "role": "node_nic",
        "counter": counter,
        "value": value,
    }
