"""Shared by seed 003's tests: a resolved config, synthetic p2p_concurrent results
and a small ns-3 tree to simulate on."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from netnoise.config import validate
from netnoise.io import write_benchmark
from netnoise.settings import PlatformSettings, Settings, section
from netnoise.studies.asymmetric import model as am
from netnoise.studies.asymmetric import ns3
from netnoise.studies.asymmetric.settings import AsymmetricSettings
from netnoise.studies.asymmetric.tidy import tidy_mpi
from tests.conftest import REPO

REFERENCE = REPO / "resources" / "reference"


def resolved(**asymmetric) -> dict:
    """The config with the study's section ``asymmetric`` and every default filled in."""
    return validate({"platform": {"testbed": {"prefix": "na"}}, "asymmetric": asymmetric})


def typed(study: dict) -> AsymmetricSettings:
    """A whole ``asymmetric`` section (validated), typed."""
    return section(AsymmetricSettings, study, "asymmetric")


def study_platform(config: dict, congestion: str | None = None) -> PlatformSettings:
    """The platform the study's runs see in the validated ``config`` (with the TCP
    congestion control of one run)."""
    settings = Settings.of(config)
    study = settings.study(AsymmetricSettings)
    return settings.effective(study, **({"congestion": congestion} if congestion else {}))


def write_p2p_result(path: Path, links: pd.DataFrame, times: np.ndarray) -> None:
    """A p2p_concurrent result file: times[iteration, link]."""
    meta = {
        "tool": "p2p_concurrent",
        "version": "test",
        "git_sha": "test",
        "argv": "p2p_concurrent",
        "seed": 1,
        "ranks": 2 * len(links),
        "hosts": "test",
        "date": "today",
    }
    rows = [
        [link, 2 * link, 2 * link + 1, size, it, f"{times[it, link]:.9f}"]
        for link, size in enumerate(links["bytes"])
        for it in range(times.shape[0])
    ]
    columns = ["link", "src", "dst", "size_bytes", "iteration", "time_s"]
    write_benchmark(path, meta, pd.DataFrame(rows, columns=columns))


def synthetic_runs(tmp_path, trials, platform, model, family, congestion):
    """Tidied result files whose every iteration takes the model's time."""
    paths = []
    predicted = am.predict(platform, trials, model)
    for trial, group in predicted.groupby("trial", sort=True):
        times = np.tile(group["time_s"].to_numpy(), (5, 1))
        path = tmp_path / f"{family}_{congestion}_{trial}.csv"
        write_p2p_result(path, group, times)
        paths.append(path)
    return tidy_mpi(paths, trials, family, congestion)


MB = 1_000_000
# A small tree: 100 Mbit/s NICs, a 300 Mbit/s backbone that four NICs overfill, and
# queues deeper than a transfer (690 segments), so no loss stretches the times.
TREE = {
    "nodes": 8,
    "racks": 2,
    "nic_mbit": 100,
    "backbone_mbit": 300,
    "delay_us": 5,
    "queue_disc": "fifo",
    "queue": "1000p",
    "segment_bytes": 1448,
    "min_rto_ms": 200,
    "jitter_us": 20,
    "seed": 1,
    "socket_buffer_bytes": None,
}


def wire_seconds(payload: int, mbit: float) -> float:
    """Seconds ``payload`` bytes of TCP take on a link of ``mbit``: every 1448-byte
    segment carries 20 bytes of IPv4, 32 of TCP with timestamps, 2 of PPP."""
    segments = math.ceil(payload / 1448)
    return 8 * (payload + 54 * segments) / (mbit * 1e6)


def simulate_cubic(
    program,
    trials: pd.DataFrame,
    outputs: list[Path],
    tree: dict,
    *,
    log: Path,
    iterations: tuple[int, int] = (3, 6),
    timeout_s: int = 120,
) -> None:
    """``trials`` simulated with CUBIC on ``tree``, each for ``iterations`` (least,
    most) towards a 2 % interval; its results ``outputs``, its log ``log``."""
    least, most = iterations
    ns3.simulate(
        program,
        trials,
        outputs,
        ns3=tree,
        congestion="cubic",
        iterations={"min": least, "max": most, "ci_width": 0.02},
        log=log,
        timeout_s=timeout_s,
        config={},
        inputs={},
    )
