"""Summary statistics of per-sample measurements."""

from __future__ import annotations

import pandas as pd

QUANTILES = {"p05": 0.05, "median": 0.5, "p95": 0.95, "p99": 0.99}


def describe(frame: pd.DataFrame, by: list[str], value: str) -> pd.DataFrame:
    """Count, mean, std, min, quantiles and max of ``value`` per group of ``by``."""
    if frame.empty:
        raise ValueError(f"no samples to summarise for {value}")
    grouped = frame.groupby(by, sort=True)[value]
    table = grouped.agg(samples="count", mean="mean", std="std", min="min", max="max")
    for name, q in QUANTILES.items():
        table[name] = grouped.quantile(q)
    columns = ["samples", "mean", "std", "min", *QUANTILES, "max"]
    return table[columns].reset_index()
