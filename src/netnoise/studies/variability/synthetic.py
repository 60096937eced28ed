"""Runs with Table III metrics whose runtime z-score truth is known (seed 002).

Not data: for tests and demonstrations of the variability model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd


def synthetic_table(
    *,
    runs_per_group: int = 40,
    applications: Mapping[str, Mapping[str, float]] | None = None,
    node_counts: Sequence[int] = (128, 256, 512),
    noise: float = 0.01,
    seed: int = 0,
) -> pd.DataFrame:
    """Runs with Table III metrics and runtimes whose z-score truth is known.

    Not data: for tests and demonstrations. Three latent conditions per run:
    congestion ``c`` (gamma), background traffic ``b`` and extreme events ``d``
    (uniform). Slowdown g = 0.6 c^1.5 + 1.5 sin(π b) + 0.5 d²; runtime =
    base × (1 + sens × g) × (1 + noise·N(0,1)). Informative features:
    ``stall_ratio_p75`` (from c, scaled by the application's ``stall_scale``),
    ``net_to_nic_ratio`` (b) and ``network_stalls_p95`` (d); ``injection_rate_mean``
    is an application constant with scatter; ``network_bytes_mean``,
    ``network_stalls_mean`` and ``nodes`` carry no information on z. The queue
    backlog ``network_backlog_bytes_mean`` (``_p95`` three times it) gauges ``c``
    with 10 % scatter. Columns ``c``, ``b``, ``d``, ``g`` hold the truth.

    The drawn run conditions a campaign records (the inputs of a conditions-only
    model) see ``b`` alone: ``generator`` (loadgen or compressionb, half each),
    loadgen's ``load`` = b, compressionb's ``messages`` = 1 + ⌊4b⌋; its
    ``sleep_cycles``, ``loaded_nodes`` and ``racks_spanned`` are drawn without
    effect. They come from a generator of their own, so the other columns do not
    depend on them.
    """
    apps = applications or {
        "alpha": {"base": 560.0, "sens": 0.15, "rate": 2.0e8, "stall_scale": 1.0},
        "beta": {"base": 1500.0, "sens": 0.08, "rate": 6.0e7, "stall_scale": 1.0},
        "gamma": {"base": 430.0, "sens": 0.04, "rate": 1.2e8, "stall_scale": 1.0},
        "delta": {"base": 680.0, "sens": 0.10, "rate": 3.0e8, "stall_scale": 1.0},
        "odd": {"base": 720.0, "sens": 0.06, "rate": 9.0e8, "stall_scale": 3.0},
    }
    rng = np.random.default_rng(seed)
    parts = []
    for app, p in apps.items():
        for nodes in node_counts:
            n = runs_per_group
            c = rng.gamma(2.0, 0.5, n)
            b = rng.uniform(0.0, 1.0, n)
            d = rng.uniform(0.0, 1.5, n)
            g = 0.6 * c**1.5 + 1.5 * np.sin(np.pi * b) + 0.5 * d**2
            runtime = p["base"] * (1 + p["sens"] * g) * (1 + noise * rng.standard_normal(n))
            jitter = 1 + 0.02 * rng.standard_normal((3, n))
            parts.append(
                pd.DataFrame(
                    {
                        "application": app,
                        "nodes": nodes,
                        "runtime_s": runtime,
                        "stall_ratio_p75": p["stall_scale"] * (0.02 + 0.05 * c) * jitter[0],
                        "net_to_nic_ratio": (1.0 + 3.0 * b) * jitter[1],
                        "network_stalls_p95": 1.0e5 * (0.2 + d) * jitter[2],
                        "injection_rate_mean": p["rate"] * rng.lognormal(0.0, 0.05, n),
                        "network_bytes_mean": 1.0e10 * rng.lognormal(0.0, 0.5, n),
                        "network_stalls_mean": 3.0e4 * rng.lognormal(0.0, 0.5, n),
                        "c": c,
                        "b": b,
                        "d": d,
                        "g": g,
                    }
                )
            )
    table = pd.concat(parts, ignore_index=True)
    draw = np.random.default_rng([seed, 1])
    loadgen = draw.random(len(table)) < 0.5
    table["generator"] = np.where(loadgen, "loadgen", "compressionb")
    table["loaded_nodes"] = 2 * draw.integers(1, 4, len(table))
    table["load"] = np.where(loadgen, table["b"], np.nan)
    table["messages"] = np.where(loadgen, np.nan, 1 + np.floor(4 * table["b"]))
    sleep = np.exp(draw.uniform(np.log(2.5e6), np.log(2.5e8), len(table)))
    table["sleep_cycles"] = np.where(loadgen, np.nan, sleep)
    table["racks_spanned"] = draw.integers(1, 3, len(table))
    gauge = np.random.default_rng([seed, 2])
    table["network_backlog_bytes_mean"] = 2.0e4 * table["c"] * gauge.lognormal(0.0, 0.1, len(table))
    table["network_backlog_bytes_p95"] = 3.0 * table["network_backlog_bytes_mean"]
    return table
