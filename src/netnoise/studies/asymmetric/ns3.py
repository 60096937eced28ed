"""Seed 003 in ns-3: the study's trials on a packet-level two-level tree.

``asymmetric.network: ns3`` runs the property trials and the random patterns
(and the Alltoallv) in ``asymmetric_ns3`` (csrc/ns3) instead of on the
platform's nodes: hosts under top-of-rack switches, every ToR joined to a core
switch by a backbone uplink, rates, delay, queue discipline and depth, TCP
variant, segment size and RTO floor from ``asymmetric.ns3``. The program writes
``p2p_concurrent``'s result format, so the study's tidy tables, fitted models
and tables read its results unchanged; every trial stops on the same
precision rule (``asymmetric.iterations``).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from netnoise import provenance
from netnoise.run import NOT_APPLICABLE

PROGRAM = "asymmetric_ns3"
#: A segment's bytes on the wire beyond its payload: IPv4 (20), TCP with
#: timestamps (32) and the point-to-point header (2).
WIRE_OVERHEAD_BYTES = 54


def racks(ns3: Mapping[str, Any]) -> dict[str, list[str]]:
    """Rack number (as text) -> host names of the simulated tree, rack by rack."""
    per_rack = ns3["nodes"] // ns3["racks"]
    return {
        str(r): [f"ns3-r{r}n{i:02d}" for i in range(1, per_rack + 1)]
        for r in range(1, ns3["racks"] + 1)
    }


def queue_link(ns3: Mapping[str, Any]) -> dict[str, Any]:
    """The NIC rate and queue depth in bytes (a packet: a full segment with its headers)
    of the tree, as the precision table reads them from a testbed's config."""
    depth, unit = int(ns3["queue"][:-1]), ns3["queue"][-1]
    packet = ns3["segment_bytes"] + WIRE_OVERHEAD_BYTES
    return {"nic_mbit": ns3["nic_mbit"], "queue_bytes": depth * packet if unit == "p" else depth}


def host_numbers(ns3: Mapping[str, Any]) -> dict[str, int]:
    """Host name -> the program's host number (hosts numbered rack by rack)."""
    names = [name for nodes in racks(ns3).values() for name in nodes]
    return {name: i for i, name in enumerate(names)}


def command(
    program: str | os.PathLike[str],
    ns3: Mapping[str, Any],
    congestion: str,
    iterations: Mapping[str, Any],
    pattern: str | os.PathLike[str],
    output: str | os.PathLike[str],
    seed: int,
) -> list[str]:
    """The ``asymmetric_ns3`` command of one trial."""
    if congestion not in ("cubic", "bbr", "reno"):
        raise ValueError(
            f"asymmetric.congestion_controls: ns-3 runs cubic, bbr or reno, not {congestion!r}"
        )
    options = {
        "pattern": pattern,
        "output": output,
        "nodes": ns3["nodes"],
        "racks": ns3["racks"],
        "nic-mbit": ns3["nic_mbit"],
        "backbone-mbit": ns3["backbone_mbit"],
        "delay-us": ns3["delay_us"],
        "congestion": congestion,
        "queue-disc": ns3["queue_disc"],
        "queue": ns3["queue"],
        "segment-bytes": ns3["segment_bytes"],
        "min-rto-ms": ns3["min_rto_ms"],
        "jitter-us": ns3["jitter_us"],
        "seed": seed,
        "socket-buffer-bytes": ns3["socket_buffer_bytes"] or 0,
        "min-iterations": iterations["min"],
        "max-iterations": iterations["max"],
        "ci-width": iterations["ci_width"],
    }
    return [str(program), *(f"--{key}={value}" for key, value in options.items())]


def simulate(
    program: str | os.PathLike[str],
    trials: pd.DataFrame,
    outputs: Sequence[str | os.PathLike[str]],
    *,
    ns3: Mapping[str, Any],
    congestion: str,
    iterations: Mapping[str, Any],
    log: str | os.PathLike[str],
    timeout_s: float,
    config: dict[str, Any],
    inputs: dict[str, str | os.PathLike[str]],
) -> None:
    """Run every trial (in trial order) in ns-3 into ``outputs``, each with its
    provenance sidecar; trial ``t`` seeds its start jitter with ``ns3.seed + t``."""
    ids = sorted(trials["trial"].unique())
    if len(ids) != len(outputs):
        raise ValueError(f"{len(ids)} trials but {len(outputs)} outputs")
    numbers = host_numbers(ns3)
    with tempfile.TemporaryDirectory(prefix=".netnoise-ns3-", dir=Path(log).parent) as scratch:
        for trial, output in zip(ids, outputs, strict=True):
            links = trials[trials["trial"] == trial].sort_values("link")
            unknown = sorted(set(links["src"]).union(links["dst"]) - numbers.keys())
            if unknown:
                raise ValueError(
                    f"trial {trial}: nodes {', '.join(unknown)} are not hosts of the ns-3 tree "
                    "(the patterns were drawn for another network)"
                )
            pattern = Path(scratch) / f"trial{trial}.csv"
            pd.DataFrame(
                {
                    "src": links["src"].map(numbers),
                    "dst": links["dst"].map(numbers),
                    "bytes": links["bytes"],
                }
            ).to_csv(pattern, index=False)
            Path(output).parent.mkdir(parents=True, exist_ok=True)
            argv = command(
                program, ns3, congestion, iterations, pattern, output, ns3["seed"] + int(trial)
            )
            start = provenance.now()
            with open(log, "a") as fh:
                fh.write(f"$ {' '.join(argv)}\n")
                fh.flush()
                try:
                    result = subprocess.run(
                        argv, stdout=fh, stderr=subprocess.STDOUT, timeout=timeout_s
                    )
                except subprocess.TimeoutExpired:
                    raise RuntimeError(
                        f"{PROGRAM} (trial {trial}) ran longer than {timeout_s} s; see {log}"
                    ) from None
            if result.returncode != 0:
                raise RuntimeError(
                    f"{PROGRAM} (trial {trial}) exited with status {result.returncode}; see {log}"
                )
            provenance.write_sidecar(
                output,
                inputs=inputs,
                config={**config, "trial": int(trial)},
                # "nodes" names the hosts, as every platform's record does.
                platform={"kind": "ns3", **ns3, "nodes": list(numbers)},
                command=argv,
                start=start,
                end=provenance.now(),
                exit_status=0,
                extra={"cpu": dict(NOT_APPLICABLE)},
            )
