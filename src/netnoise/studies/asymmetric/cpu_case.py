"""The study's heaviest co-run for ``netnoise bench cpu``: a pattern of links
between the two racks on every node, each way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from netnoise.platform.testbed import TestbedPlatform
from netnoise.run import Job
from netnoise.settings import Settings
from netnoise.study import CpuCase, node_names


def two_racks(settings: Settings) -> dict[str, Any]:
    return {"nodes": 16, "racks": 2, "backbone_mbit": settings.platform.testbed.nic_mbit * 2}


def pattern_across_racks(
    bin_dir: Path, out: Path, settings: Settings, platform: TestbedPlatform
) -> tuple[Job, list[Job]]:
    nodes = node_names(platform)
    # 8 links, each a node of rack 1 sending to a node of rack 2 and back:
    # every NIC and the backbone carry traffic both ways.
    half = len(nodes) // 2
    pattern = out / "pattern.csv"
    rows = [(i, half + i, 262144) for i in range(half)]
    rows += [(half + i, (i + 1) % half, 262144) for i in range(half)]
    pd.DataFrame(rows, columns=["src", "dst", "bytes"]).to_csv(pattern, index=False)
    argv = [str(bin_dir / "p2p_concurrent"), "--pattern", str(pattern)]
    argv += ["--min-iterations", "10", "--max-iterations", "10", "--warmup", "1"]
    return Job("p2p_concurrent", argv, len(nodes), out / "measured.csv", list(nodes)), []


def link_times(data: pd.DataFrame) -> pd.Series:
    # One iteration's time: its slowest link.
    return data.groupby("iteration")["time_s"].max()


CASES = (CpuCase("16-node pattern across two racks", two_racks, pattern_across_racks, link_times),)
