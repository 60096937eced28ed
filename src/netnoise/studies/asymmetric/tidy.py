"""Seed 003's tidy tables: measured links and trials with their pattern's descriptors.

Measured link times come from ``p2p_concurrent`` (MPI level: mean over its
iterations, with a 95 % interval) and rates from concurrent ``iperf3``
transfers (TCP level).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats as st

from netnoise.io import read_benchmark


def tidy_mpi(
    paths: Sequence[str | os.PathLike[str]], trials: pd.DataFrame, family: str, congestion: str
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per link: mean time over the iterations, its 95 % interval and the rate; per trial:
    the pattern's completion time (slowest link of each iteration, mean over iterations).

    ``paths`` are the ``p2p_concurrent`` results of the trials in trial order."""
    ids = sorted(trials["trial"].unique())
    if len(ids) != len(paths):
        raise ValueError(f"{len(ids)} trials but {len(paths)} result files")
    link_frames, trial_rows = [], []
    for trial, path in zip(ids, paths, strict=True):
        data = read_benchmark(path).data
        links = trials[trials["trial"] == trial].sort_values("link").reset_index(drop=True)
        stats = data.groupby("link")["time_s"].agg(["mean", "std", "count"])
        if list(stats.index) != list(links["link"]):
            raise ValueError(f"{path}: links {list(stats.index)}, the pattern has {len(links)}")
        sizes = data.groupby("link")["size_bytes"].first().to_numpy()
        if (sizes != links["bytes"].to_numpy()).any():
            raise ValueError(f"{path}: message sizes differ from the pattern of trial {trial}")
        count = stats["count"].to_numpy()
        half = st.t.ppf(0.975, np.maximum(count - 1, 1)) * stats["std"].to_numpy() / np.sqrt(count)
        frame = links.assign(
            family=family,
            congestion=congestion,
            time_s=stats["mean"].to_numpy(),
            ci95_s=half,
            iterations=count,
        )
        frame["rate_mbit"] = 8 * frame["bytes"] / frame["time_s"] / 1e6
        link_frames.append(frame)
        makespan = data.groupby("iteration")["time_s"].max()
        trial_rows.append(
            {
                "family": family,
                "congestion": congestion,
                "trial": trial,
                "experiment": links["experiment"].iloc[0],
                "iterations": len(makespan),
                "makespan_s": makespan.mean(),
                "makespan_ci95_s": float(
                    st.t.ppf(0.975, max(len(makespan) - 1, 1))
                    * makespan.std()
                    / np.sqrt(len(makespan))
                ),
            }
        )
    return pd.concat(link_frames, ignore_index=True), pd.DataFrame(trial_rows)


def tidy_tcp(frames: Mapping[str, pd.DataFrame], trials: pd.DataFrame) -> pd.DataFrame:
    """iperf3 rows of every congestion control joined with their pattern's descriptors
    (none where the TCP level was not measured: on a cluster)."""
    if not frames:
        columns = [*trials.columns, "rate_mbit", "retransmits", "mean_rtt_us", "congestion"]
        return pd.DataFrame(columns=columns)
    out = []
    for congestion, frame in frames.items():
        joined = trials.merge(
            frame[["trial", "link", "mbit", "retransmits", "mean_rtt_us"]],
            on=["trial", "link"],
            how="inner",
            validate="one_to_one",
        )
        if len(joined) != len(trials):
            raise ValueError(f"iperf3 ({congestion}): {len(joined)} of {len(trials)} links")
        out.append(joined.rename(columns={"mbit": "rate_mbit"}).assign(congestion=congestion))
    return pd.concat(out, ignore_index=True)
