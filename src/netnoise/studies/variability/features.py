"""The model's seven features and its target (seed 002, Sec. IV-A).

Features are Table III metrics of a run (:mod:`netnoise.studies.variability.metrics`)
in the paper's order of importance; the target is the run's runtime z-score within
its application and node count.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from sklearn.ensemble import RandomForestRegressor

# Sec. IV-A, most important first (the order the paper's random forest gave).
FEATURES = (
    "net_to_nic_ratio",  # 1) ratio of average networktile flits to average proctile flits
    "injection_rate_mean",  # 2) average proctile flits per second
    "stall_ratio_p75",  # 3) 75th percentile of ratio of networktile stalls to flits
    "network_stalls_p95",  # 4) 95th percentile of networktile stalls
    "network_bytes_mean",  # 5) average networktile flits
    "network_stalls_mean",  # 6) average networktile stalls
    "nodes",  # 7) number of nodes
)
RUN_COLUMNS = ("application", "nodes", "runtime_s")


def features(metrics_table: pd.DataFrame | Mapping[str, Any]) -> pd.DataFrame:
    """The seven features of Sec. IV-A, in the paper's order, one row per run."""
    table = pd.DataFrame([metrics_table]) if isinstance(metrics_table, Mapping) else metrics_table
    missing = [f for f in FEATURES if f not in table.columns]
    if missing:
        raise ValueError(f"metrics lack feature column(s): {', '.join(missing)}")
    return table.loc[:, list(FEATURES)].apply(pd.to_numeric, errors="coerce").astype(float)


def zscore_target(runs: pd.DataFrame) -> pd.Series:
    """Runtime z-score within each (application, node count): (t − mean) / std.

    Population std, as the paper's "removing the mean and scaling to unit
    variance" (StandardScaler) does; a group with one run or no spread gives NaN.
    """
    missing = [c for c in RUN_COLUMNS if c not in runs.columns]
    if missing:
        raise ValueError(f"runs lack column(s): {', '.join(missing)}")
    grouped = runs.groupby(["application", "nodes"], sort=False)["runtime_s"]
    mean = grouped.transform("mean")
    std = grouped.transform(lambda s: s.std(ddof=0))
    z = (runs["runtime_s"] - mean) / std.where(std > 0)
    return z.rename("z")


def dataset(table: pd.DataFrame) -> tuple[pd.DataFrame, pd.Series]:
    """Features and z-score target of the runs where both are defined."""
    X, y = features(table), zscore_target(table)
    ok = X.notna().all(axis=1) & y.notna()
    return X[ok], y[ok]


def rank_features(
    X: pd.DataFrame, y: Sequence[float], *, seed: int = 0, n_estimators: int = 200, n_jobs: int = 1
) -> pd.Series:
    """Random-forest impurity-reduction importance (Sec. IV-A), highest first."""
    forest = RandomForestRegressor(n_estimators=n_estimators, random_state=seed, n_jobs=n_jobs)
    forest.fit(X.to_numpy(float), np.asarray(y, float))
    importance = pd.Series(forest.feature_importances_, index=list(X.columns), name="importance")
    return importance.sort_values(ascending=False, kind="stable")


def importance_resamples(
    X: pd.DataFrame,
    y: Sequence[float],
    *,
    resamples: int = 100,
    seed: int = 0,
    n_estimators: int = 100,
    n_jobs: int = 1,
) -> pd.DataFrame:
    """:func:`rank_features`'s importances on ``resamples`` bootstrap resamples of
    the runs (the paper's unit), so that a claim about which features dominate
    has an interval over runs: ``resample, feature, importance``."""
    rng = np.random.default_rng(seed)
    target = np.asarray(y, float)
    frames = []
    for resample in range(resamples):
        drawn = rng.integers(0, len(X), len(X))
        importance = rank_features(
            X.iloc[drawn],
            target[drawn],
            seed=seed + resample,
            n_estimators=n_estimators,
            n_jobs=n_jobs,
        )
        frames.append(importance.rename_axis("feature").reset_index().assign(resample=resample))
    return pd.concat(frames, ignore_index=True)[["resample", "feature", "importance"]]
