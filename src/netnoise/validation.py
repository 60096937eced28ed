"""Checks that the emulated cluster behaves like the network it stands for."""

from __future__ import annotations

import json
import subprocess
import time
from typing import Any

import pandas as pd

from netnoise.testbed import Testbed

# iperf3 payload over a shaped link: TCP/IP/Ethernet headers take ~4.4 %
# (1448 payload bytes per 1514-byte frame: at most 95.6 %).
MIN_SHARE = 0.95
# Below this share the testbed is misconfigured, not merely perturbed by the
# shared CPU: the workflow stops rather than measure on it.
BROKEN_SHARE = 0.90
# Link capacity is checked with a loss-based congestion control that keeps the
# queue full; BBR keeps it nearly empty and its probing costs a few percent.
CAPACITY_CONGESTION = "cubic"


def iperf3_mbit(
    testbed: Testbed, server: int, client: int, seconds: float = 3, congestion: str | None = None
) -> float:
    """TCP goodput (Mbit/s) from node ``client`` to node ``server``, first second omitted."""
    srv = testbed.node(server)
    server_proc = subprocess.Popen(
        testbed.exec_argv(srv, ["iperf3", "--server", "--one-off", "--bind", srv.address]),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    argv = ["iperf3", "-c", srv.address, "-t", f"{seconds:g}", "-O", "1", "--json"]
    if congestion:
        argv += ["-C", congestion]
    try:
        for _ in range(50):  # the server needs a moment to listen
            out = subprocess.run(
                testbed.exec_argv(testbed.node(client), argv),
                capture_output=True,
                text=True,
                timeout=seconds + 30,
            )
            try:
                result = json.loads(out.stdout)
            except ValueError:
                result = {"error": out.stderr.strip()}
            if out.returncode == 0 and "error" not in result:
                return result["end"]["sum_received"]["bits_per_second"] / 1e6
            time.sleep(0.1)
        raise RuntimeError(f"iperf3 client failed: {out.stdout[-500:]} {out.stderr[-500:]}")
    finally:
        server_proc.kill()
        server_proc.wait()


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
