"""Seed 003's measurements of a pattern's links on the study's testbed.

MPI level: ``p2p_concurrent`` runs every trial once, one process per link end
(link i's sender is rank 2i on its source node, its receiver rank 2i+1 on its
destination node), and repeats the pattern until its stopping rule holds.
TCP level: every trial's links as concurrent ``iperf3`` transfers.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from netnoise.platform import Platform
from netnoise.run import run_benchmark
from netnoise.testbed.fabric import Testbed
from netnoise.testbed.validation import iperf3_links


def rank_layout(links: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Link i's sender is rank 2i on its src node, its receiver rank 2i+1 on its dst node.

    Returns the ``p2p_concurrent`` pattern (ranks) and the node of every rank."""
    n = len(links)
    ranks = pd.DataFrame(
        {"src": 2 * np.arange(n), "dst": 2 * np.arange(n) + 1, "bytes": links["bytes"].to_numpy()}
    )
    nodes = [node for pair in zip(links["src"], links["dst"], strict=True) for node in pair]
    return ranks, nodes


def measure_mpi(
    platform: Platform,
    program: str | os.PathLike[str],
    trials: pd.DataFrame,
    outputs: Sequence[str | os.PathLike[str]],
    *,
    log: str | os.PathLike[str],
    timeout_s: float,
    iterations: Mapping[str, Any],
    config: dict[str, Any],
    inputs: dict[str, str | os.PathLike[str]],
) -> None:
    """Run ``p2p_concurrent`` once per trial (in trial order) into ``outputs``."""
    ids = sorted(trials["trial"].unique())
    if len(ids) != len(outputs):
        raise ValueError(f"{len(ids)} trials but {len(outputs)} outputs")
    # Beside the log, on the file system every rank's node shares (a node's /tmp
    # is its own on a cluster).
    with tempfile.TemporaryDirectory(prefix=".netnoise-patterns-", dir=Path(log).parent) as scratch:
        for trial, output in zip(ids, outputs, strict=True):
            links = trials[trials["trial"] == trial].sort_values("link")
            ranks, nodes = rank_layout(links)
            pattern_file = Path(scratch) / f"trial{trial}.csv"
            ranks.to_csv(pattern_file, index=False)
            argv = [
                str(program),
                "--pattern",
                str(pattern_file),
                "--min-iterations",
                str(iterations["min"]),
                "--max-iterations",
                str(iterations["max"]),
                "--ci-width",
                str(iterations["ci_width"]),
            ]
            run_benchmark(
                platform,
                argv,
                ranks=len(nodes),
                output=output,
                log=log,
                timeout_s=timeout_s,
                config={**config, "trial": int(trial)},
                inputs=inputs,
                nodes=nodes,
            )


def measure_tcp(
    testbed: Testbed, trials: pd.DataFrame, seconds: float, congestion: str
) -> pd.DataFrame:
    """Every trial's links as concurrent iperf3 transfers: one row per link."""
    rows = []
    for trial, links in trials.groupby("trial", sort=True):
        links = links.sort_values("link")
        pairs = list(zip(links["src"], links["dst"], strict=True))
        results = iperf3_links(
            testbed,
            pairs,
            seconds,
            congestion,
            socket_buffer_bytes=testbed.spec.socket_buffer_bytes,
        )
        for (link, src, dst), result in zip(
            links[["link", "src", "dst"]].itertuples(index=False), results, strict=True
        ):
            rows.append({"trial": trial, "link": link, "src": src, "dst": dst, **result})
    return pd.DataFrame(rows)
