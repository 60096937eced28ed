"""Checks that the emulated cluster behaves like the network it stands for."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Sequence
from typing import Any

import pandas as pd

from netnoise import lifeline
from netnoise.testbed.fabric import Testbed

# iperf3 payload over a shaped link: TCP/IP/Ethernet headers take ~4.4 %
# (1448 payload bytes per 1514-byte frame: at most 95.6 %).
MIN_SHARE = 0.95
# Below this share the testbed is misconfigured, not merely perturbed by the
# shared CPU: the workflow stops rather than measure on it.
BROKEN_SHARE = 0.90
# Link capacity is checked with a loss-based congestion control that keeps the
# queue full; BBR keeps it nearly empty and its probing costs a few percent.
CAPACITY_CONGESTION = "cubic"


# First port of the iperf3 servers; link i of a concurrent run uses BASE_PORT + i.
BASE_PORT = 5201


def iperf3_links(
    testbed: Testbed,
    links: Sequence[tuple[int | str, int | str]],
    seconds: float = 3,
    congestion: str | None = None,
    omit_s: int = 1,
    socket_buffer_bytes: int | None = None,
) -> list[dict[str, Any]]:
    """Concurrent TCP transfers, one iperf3 client and server per link ``(src, dst)``.

    Every server listens on its node before any client starts, so the transfers
    start together; each then runs ``omit_s`` unrecorded seconds (slow start)
    and ``seconds`` recorded ones; ``socket_buffer_bytes`` fixes every socket's
    buffers, as iperf3's ``--window`` does (none: the kernel's autotuning). Per
    link: goodput at the receiver (``mbit``), retransmitted segments and the
    sender's mean smoothed RTT (µs).
    """
    servers: list[subprocess.Popen] = []
    clients: list[subprocess.Popen] = []
    try:
        for i, (_, dst) in enumerate(links):
            node = testbed.node(dst)
            argv = ["iperf3", "--server", "--one-off", "--forceflush", "--bind", node.address]
            proc = lifeline.spawn(
                testbed.exec_argv(node, [*argv, "--port", str(BASE_PORT + i)]),
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            servers.append(proc)
            _wait_listening(proc, node.name)
        for i, (src, dst) in enumerate(links):
            argv = ["iperf3", "-c", testbed.node(dst).address, "--port", str(BASE_PORT + i)]
            argv += ["-t", f"{seconds:g}", "-O", str(omit_s), "--json"]
            if congestion:
                argv += ["-C", congestion]
            if socket_buffer_bytes is not None:
                argv += ["--window", str(socket_buffer_bytes)]
            clients.append(
                lifeline.spawn(
                    testbed.exec_argv(testbed.node(src), argv),
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
            )
        results = []
        for (src, dst), client in zip(links, clients, strict=True):
            out, err = client.communicate(timeout=seconds + omit_s + 60)
            try:
                report = json.loads(out)
            except ValueError:
                report = {"error": err.strip()}
            if client.returncode != 0 or "error" in report:
                raise RuntimeError(
                    f"iperf3 client {src} -> {dst} failed: {report.get('error') or out[-500:]}"
                )
            sender = report["end"]["streams"][0]["sender"]
            results.append(
                {
                    "mbit": report["end"]["sum_received"]["bits_per_second"] / 1e6,
                    "retransmits": sender.get("retransmits"),
                    "mean_rtt_us": sender.get("mean_rtt"),
                }
            )
        return results
    finally:
        for proc in [*clients, *servers]:
            lifeline.stop(proc, grace_s=0)


def _wait_listening(server: subprocess.Popen, node: str, timeout_s: float = 10) -> None:
    deadline = time.monotonic() + timeout_s
    for line in server.stdout:
        if "listening" in line:
            return
        if time.monotonic() > deadline:
            break
    raise RuntimeError(f"iperf3 server on {node} did not start listening")


def iperf3_mbit(
    testbed: Testbed, server: int, client: int, seconds: float = 3, congestion: str | None = None
) -> float:
    """TCP goodput (Mbit/s) from node ``client`` to node ``server``, first second omitted."""
    return iperf3_links(testbed, [(client, server)], seconds, congestion)[0]["mbit"]


def link_checks(testbed: Testbed, seconds: float = 5, attempts: int = 3) -> pd.DataFrame:
    """iperf3 over a NIC link and, with several racks, across the backbone.

    A link passes when one of ``attempts`` runs reaches MIN_SHARE of its rate:
    the check asks what the link can carry, and a run slowed by the shared
    CPU says nothing about that."""
    spec = testbed.spec
    nodes = spec.node_list()
    rows: list[dict[str, Any]] = []

    def check(path: str, client: int, server: int, configured: float) -> None:
        runs = []
        for _ in range(attempts):
            runs.append(iperf3_mbit(testbed, server, client, seconds, CAPACITY_CONGESTION))
            if runs[-1] >= MIN_SHARE * configured:
                break
        measured = max(runs)
        rows.append(
            {
                "path": path,
                "client": testbed.node(client).name,
                "server": testbed.node(server).name,
                "configured_mbit": configured,
                "congestion_control": CAPACITY_CONGESTION,
                "runs_mbit": " ".join(f"{r:.3f}" for r in runs),
                "measured_mbit": round(measured, 3),
                "share": round(measured / configured, 4),
                "passed": measured >= MIN_SHARE * configured,
            }
        )

    same_rack = [n for n in nodes if n.rack == nodes[0].rack]
    check("nic (same rack)", same_rack[0].index, same_rack[1].index, spec.nic_mbit)
    if spec.racks > 1:
        other = next(n for n in nodes if n.rack != nodes[0].rack)
        check(
            "backbone (cross rack)",
            nodes[0].index,
            other.index,
            min(spec.nic_mbit, spec.backbone_mbit),
        )
    return pd.DataFrame(rows)
