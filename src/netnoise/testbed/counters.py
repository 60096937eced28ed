"""Counters of the emulated cluster: link and root-qdisc statistics of every
shaped interface (node NICs, switch ports, rack uplinks), read over netlink,
and, when a :class:`~netnoise.testbed.queue_time.QueueTime` tracer of the
fabric is given, the time its queues held packets."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from netnoise.counters import now
from netnoise.counters.netlink import Reader
from netnoise.testbed.fabric import TestbedSpec
from netnoise.testbed.queue_time import QueueTime

LINK_COUNTERS = {
    "rx_bytes": "rx_bytes",
    "rx_packets": "rx_packets",
    "rx_dropped": "rx_dropped",
    "tx_bytes": "tx_bytes",
    "tx_packets": "tx_packets",
    "tx_dropped": "tx_dropped",
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


def job_namespaces(spec: TestbedSpec, nodes: Iterable[str] | None = None) -> list[str]:
    """The namespaces a job's view reads: its nodes' (every node's by default) and
    the fabric's, where every switch port and uplink is."""
    namespaces = spec.namespaces()
    if nodes is None:
        return namespaces
    names = set(nodes)
    unknown = names - set(namespaces)
    if unknown:
        raise ValueError(f"not testbed nodes: {', '.join(sorted(unknown))}")
    return [ns for ns in namespaces if ns == spec.fabric or ns in names]


class Counters:
    """A snapshot function (call it) over long-lived netlink sockets; close it
    (or use it as a context manager) when the run is over. With ``queue_time``
    (a running tracer of ``spec.fabric``) every snapshot also reads the fabric
    ports' queue-time counters."""

    def __init__(
        self,
        spec: TestbedSpec,
        nodes: Iterable[str] | None = None,
        queue_time: QueueTime | None = None,
    ):
        self.wanted = roles(spec)
        self.reader = Reader(job_namespaces(spec, nodes))
        if queue_time is not None and queue_time.namespace != spec.fabric:
            raise ValueError(
                f"the queue-time tracer reads {queue_time.namespace}, not the fabric {spec.fabric}"
            )
        self.queue_time = queue_time
        self.fabric_ports = {
            port: role for (ns, port), role in self.wanted.items() if ns == spec.fabric
        }

    def __call__(self) -> list[dict[str, Any]]:
        rows = []
        for ns, (links, qdiscs) in self.reader.read().items():
            t = now()
            for link in links.values():
                role = self.wanted.get((ns, link.ifname))
                if role is not None:
                    for field, counter in LINK_COUNTERS.items():
                        rows.append(_row(t, ns, link.ifname, role, counter, link.counters[field]))
            for qdisc in qdiscs:
                role = self.wanted.get((ns, qdisc.ifname))
                if role is not None:
                    for field, counter in QDISC_COUNTERS.items():
                        if field in qdisc.counters:
                            value = qdisc.counters[field]
                            rows.append(_row(t, ns, qdisc.ifname, role, counter, value))
            if self.queue_time is not None and ns == self.queue_time.namespace:
                rows.extend(self.queue_time.rows(self.fabric_ports, t))
        return rows

    def close(self) -> None:
        self.reader.close()

    def __enter__(self) -> Counters:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def snapshot_rows(spec: TestbedSpec, nodes: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """One reading of every counter of the shaped interfaces a job sees (its
    nodes' NICs and the whole fabric; every node's with ``nodes`` None)."""
    with Counters(spec, nodes) as counters:
        return counters()


def _row(t: float, device: str, port: str, role: str, counter: str, value: int) -> dict[str, Any]:
    return {
        "time_s": t,
        "device": device,
        "port": port,
        "role": role,
        "counter": counter,
        "value": value,
    }
