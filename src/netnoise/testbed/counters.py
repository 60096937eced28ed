"""Counters of the emulated cluster: ip(8) link statistics and tc(8) qdisc statistics."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterable
from typing import Any

from netnoise.counters import now
from netnoise.testbed.fabric import TestbedSpec

LINK_COUNTERS = {
    ("rx", "bytes"): "rx_bytes",
    ("rx", "packets"): "rx_packets",
    ("rx", "dropped"): "rx_dropped",
    ("tx", "bytes"): "tx_bytes",
    ("tx", "packets"): "tx_packets",
    ("tx", "dropped"): "tx_dropped",
}
QDISC_COUNTERS = {
    "bytes": "qdisc_bytes",
    "packets": "qdisc_packets",
    "drops": "qdisc_drops",
    "overlimits": "qdisc_overlimits",
    "requeues": "qdisc_requeues",
    "backlog": "qdisc_backlog_bytes",
    "qlen": "qdisc_backlog_packets",
}


def _json(argv: list[str]) -> list[dict[str, Any]]:
    out = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=True)
    return json.loads(out.stdout or "[]")


def roles(spec: TestbedSpec) -> dict[tuple[str, str], str]:
    """(namespace, interface) → role of every shaped interface of the testbed."""
    mapping = {}
    for node in spec.node_list():
        mapping[(node.name, "eth0")] = "node_nic"
        mapping[(spec.fabric, node.port)] = "switch_port"
    if spec.racks > 1:
        for rack in range(1, spec.racks + 1):
            up, down = spec.uplink(rack)
            mapping[(spec.fabric, up)] = "uplink"
            mapping[(spec.fabric, down)] = "core_port"
    return mapping


def snapshot_rows(spec: TestbedSpec, nodes: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """One reading of every counter of every shaped interface.

    With ``nodes``, only those nodes' NICs and the fabric (every switch port and
    uplink) are read: a job's own view, in fewer ip/tc calls, so that sampling
    during a run costs less CPU than on every node.
    """
    wanted = roles(spec)
    namespaces = spec.namespaces()
    if nodes is not None:
        names = set(nodes)
        unknown = names - set(namespaces)
        if unknown:
            raise ValueError(f"not testbed nodes: {', '.join(sorted(unknown))}")
        namespaces = [ns for ns in namespaces if ns == spec.fabric or ns in names]
    rows = []
    for ns in namespaces:
        t = now()
        for link in _json(["ip", "-n", ns, "-s", "-j", "link", "show"]):
            role = wanted.get((ns, link["ifname"]))
            if role is None:
                continue
            stats = link.get("stats64", {})
            for (direction, field), counter in LINK_COUNTERS.items():
                value = stats.get(direction, {}).get(field)
                if value is not None:
                    rows.append(_row(t, ns, link["ifname"], role, counter, value))
        for qdisc in _json(["tc", "-n", ns, "-s", "-j", "qdisc", "show"]):
            role = wanted.get((ns, qdisc.get("dev")))
            if role is None or not qdisc.get("root"):
                continue
            for field, counter in QDISC_COUNTERS.items():
                if field in qdisc:
                    rows.append(_row(t, ns, qdisc["dev"], role, counter, qdisc[field]))
    return rows


def _row(t: float, device: str, port: str, role: str, counter: str, value: int) -> dict[str, Any]:
    return {
        "time_s": t,
        "device": device,
        "port": port,
        "role": role,
        "counter": counter,
        "value": value,
    }
