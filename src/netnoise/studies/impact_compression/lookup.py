"""Look-up-table predictions of pairwise slowdown (seed 000, Sec. IV-A and V-A).

To predict the slowdown of application A beside software B, each method picks
the CompressionB configuration C whose ImpactB latencies look most like B's
and returns the slowdown A suffered beside C:

- AverageLT: the closest mean latency;
- AverageStDevLT: the longest overlap of [µ−σ, µ+σ] intervals (ties, e.g. no
  overlap at all, fall back to the closest mean);
- PDFLT: the largest ∫ f_B f_C, densities as histograms on shared bins.

The paper's text says "the slowdown that application B suffers"; the method
predicts A's slowdown, so A's measurement beside C is what is looked up.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

METHODS = ("average", "average_stdev", "pdf")


def _stats(samples: dict[str, np.ndarray]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "mean": {c: v.mean() for c, v in samples.items()},
            "std": {c: v.std(ddof=1) for c, v in samples.items()},
        }
    )


def _choose_average(stats: pd.DataFrame, partner: str, configs: list[str]) -> str:
    distance = (stats.loc[configs, "mean"] - stats.loc[partner, "mean"]).abs()
    return str(distance.idxmin())


def _choose_average_stdev(stats: pd.DataFrame, partner: str, configs: list[str]) -> str:
    mu, sd = stats.loc[partner, "mean"], stats.loc[partner, "std"]
    lo = np.maximum(mu - sd, stats.loc[configs, "mean"] - stats.loc[configs, "std"])
    hi = np.minimum(mu + sd, stats.loc[configs, "mean"] + stats.loc[configs, "std"])
    overlap = (hi - lo).clip(lower=0)
    if overlap.max() <= 0:
        return _choose_average(stats, partner, configs)
    return str(overlap.idxmax())


def _choose_pdf(samples: dict[str, np.ndarray], partner: str, configs: list[str]) -> str:
    pooled = np.concatenate([samples[partner], *(samples[c] for c in configs)])
    # Latencies are heavy-tailed: bins of equal width in log space resolve both ends.
    edges = np.histogram_bin_edges(np.log(pooled), bins="fd")
    width = np.diff(edges)
    f_b, _ = np.histogram(np.log(samples[partner]), bins=edges, density=True)
    scores = {}
    for c in configs:
        f_c, _ = np.histogram(np.log(samples[c]), bins=edges, density=True)
        scores[c] = float(np.sum(f_b * f_c * width))
    return max(scores, key=scores.get)


def choose_configs(
    impact: pd.DataFrame, partners: list[str], configs: list[str], method: str
) -> dict[str, str]:
    """Per partner, the compression configuration whose impact most resembles its own."""
    if method not in METHODS:
        raise ValueError(f"method {method!r}: use one of {', '.join(METHODS)}")
    samples = {c: g.to_numpy(float) for c, g in impact.groupby("component")["latency_us"]}
    missing = [c for c in [*partners, *configs] if c not in samples]
    if missing:
        raise ValueError(f"no impact measurements of {missing}")
    if method == "pdf":
        return {p: _choose_pdf(samples, p, configs) for p in partners}
    stats = _stats(samples)
    choose = _choose_average if method == "average" else _choose_average_stdev
    return {p: choose(stats, p, configs) for p in partners}


def predict(
    impact: pd.DataFrame, degradation: pd.DataFrame, pairs: pd.DataFrame, method: str
) -> pd.DataFrame:
    """Predicted slowdown of each (application, partner) pair by one look-up method.

    ``impact``: ``component, latency_us`` (one row per ImpactB sample);
    ``degradation``: ``application, config, degradation`` from the compression
    experiments; ``pairs``: ``application, partner``.
    """
    table = degradation.groupby(["application", "config"])["degradation"].mean()
    configs = sorted(degradation["config"].unique())
    chosen = choose_configs(impact, list(pairs["partner"].unique()), configs, method)
    rows = []
    for app, partner in pairs[["application", "partner"]].itertuples(index=False):
        config = chosen[partner]
        if (app, config) not in table.index:
            raise ValueError(f"no compression measurement of {app!r} beside {config!r}")
        rows.append(
            {
                "application": app,
                "partner": partner,
                "method": method,
                "config": config,
                "predicted": float(table.loc[(app, config)]),
            }
        )
    return pd.DataFrame(rows)
