"""The platform's baseline ping-pong latency, the reference every study compares against."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd


def latency_by_size(samples: pd.DataFrame, platform: str) -> plt.Figure:
    """Box plot of one-way latency (half the round trip) per message size, log scale."""
    fig, ax = plt.subplots()
    sizes = sorted(samples["size_bytes"].unique())
    data = [samples.loc[samples["size_bytes"] == s, "rtt_us"].to_numpy() / 2 for s in sizes]
    ax.boxplot(data, whis=(5, 95), showfliers=False)
    medians = [float(pd.Series(d).median()) for d in data]
    ax.plot(range(1, len(sizes) + 1), medians, marker="o", label="median")
    ax.set_xticks(range(1, len(sizes) + 1), [_size_label(s) for s in sizes])
    ax.set_yscale("log")
    ax.set_xlabel("message size")
    ax.set_ylabel("one-way latency (µs)")
    ax.set_title(f"Ping-pong latency, {platform} platform (whiskers: 5th-95th pct.)")
    ax.legend()
    return fig


def _size_label(size: int) -> str:
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} B"
