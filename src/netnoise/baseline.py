"""The platform's baseline ping-pong latency."""

from __future__ import annotations

import os

import pandas as pd

from netnoise.summary import describe


def load_samples(tidy_csv: str | os.PathLike[str]) -> pd.DataFrame:
    """Tidy ping-pong samples with the one-way latency (half the round trip) added."""
    samples = pd.read_csv(tidy_csv)
    samples["latency_us"] = samples["rtt_us"] / 2
    return samples


def summary_table(samples: pd.DataFrame) -> pd.DataFrame:
    """One row per message size: sample count, mean, spread and quantiles of latency_us."""
    return describe(samples, ["size_bytes"], "latency_us")
