"""InfiniBand port counters from sysfs (``/sys/class/infiniband/*/ports/*/counters``)."""

from __future__ import annotations

import os
from collections.abc import Collection
from pathlib import Path
from typing import Any

from netnoise.counters import now

SYSFS = Path("/sys/class/infiniband")
# port_xmit_data and port_rcv_data count 4-byte words (IBA spec, PortCounters).
WORD_COUNTERS = {"port_xmit_data": "tx_bytes", "port_rcv_data": "rx_bytes"}
RENAMED = {
    "port_xmit_packets": "tx_packets",
    "port_rcv_packets": "rx_packets",
    "port_xmit_wait": "xmit_wait_ticks",
    "port_xmit_discards": "tx_dropped",
    "port_rcv_errors": "rx_errors",
}


def snapshot_rows(
    root: str | os.PathLike[str] = SYSFS,
    node: str | None = None,
    wanted: Collection[str] | None = None,
) -> list[dict[str, Any]]:
    """One reading of every port of the ``wanted`` HCAs (all when None); the device
    is the HCA's name, ``NODE:HCA`` when ``node`` names the host read."""
    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: no InfiniBand devices (is the driver loaded?)")
    rows = []
    t = now()
    for counters in sorted(root.glob("*/ports/*/counters")):
        hca = counters.parents[2].name
        if wanted is not None and hca not in wanted:
            continue
        device = f"{node}:{hca}" if node else hca
        port = counters.parent.name
        for path in sorted(counters.iterdir()):
            try:
                raw = int(path.read_text().strip())
            except (OSError, ValueError):
                continue
            name = path.name
            if name in WORD_COUNTERS:
                name, raw = WORD_COUNTERS[name], raw * 4
            else:
                name = RENAMED.get(name, name)
            rows.append(
                {
                    "time_s": t,
                    "device": device,
                    "port": port,
                    "role": "node_nic",
                    "counter": name,
                    "value": raw,
                }
            )
    return rows
