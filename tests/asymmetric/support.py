"""Shared by seed 003's tests: a resolved config and synthetic p2p_concurrent results."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from netnoise.config import validate
from netnoise.io import write_benchmark
from netnoise.studies.asymmetric import model as am
from netnoise.studies.asymmetric.tidy import tidy_mpi
from tests.conftest import REPO

REFERENCE = REPO / "resources" / "reference"


def resolved(**asymmetric) -> dict:
    """The config with the study's section ``asymmetric`` and every default filled in."""
    return validate({"platform": {"testbed": {"prefix": "na"}}, "asymmetric": asymmetric})


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
