"""What seed 002's counters and runs allow at best: the R² of a feature set
(which congestion counters carry the runtime) and the noise floor that
repeated identical runs leave, the R² ceiling of any model.

:func:`noise_floor` estimates from repeated identical runs (the controlled
campaigns) the share of runtime variance that is run-to-run noise, which no
model can predict: R² ≤ 1 − noise share. The target z is standardised with the
mean and spread of all runs of its group, test folds included (the paper's
definition); with tens of runs per group that moves z by a few hundredths.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import joblib
import numpy as np
import pandas as pd
from scipy import stats
from sklearn.ensemble import RandomForestRegressor
from sklearn.metrics import r2_score

from netnoise.studies.variability.campaign import CONTROLLED_CAMPAIGNS
from netnoise.studies.variability.features import zscore_target
from netnoise.studies.variability.model import (
    Fitting,
    folds,
)
from netnoise.studies.variability.nested_cv import sample_sd


def _pooled_forest_r2(X: np.ndarray, y: np.ndarray, fitting: Fitting, repeat: int) -> float:
    predicted = np.empty_like(y)
    for train, test in folds(fitting.cv, fitting.seed + repeat).split(X):
        forest = RandomForestRegressor(
            n_estimators=fitting.n_estimators, random_state=fitting.seed + repeat
        )
        predicted[test] = forest.fit(X[train], y[train]).predict(X[test])
    return float(r2_score(y, predicted))


def feature_set_r2(
    runs: pd.DataFrame,
    feature_sets: Mapping[str, Sequence[str]],
    fitting: Fitting,
    *,
    repeats: int = 10,
    n_jobs: int = 1,
) -> pd.DataFrame:
    """Which counters carry a run's runtime z: the pooled out-of-fold R² of a random
    forest on each named set of a run's metrics, ``repeats`` seeded ``fitting.cv``-fold
    CVs (repeat r splits with seed ``fitting.seed + r``, the same folds for every set
    of the same runs). A set is scored on the runs where all its metrics are defined
    (``runs``); mean and SD over the repeats."""
    z = zscore_target(runs)
    rows = []
    for name, columns in feature_sets.items():
        missing = [c for c in columns if c not in runs.columns]
        if missing:
            raise ValueError(f"feature set {name!r}: runs lack {', '.join(missing)}")
        X = runs.loc[:, list(columns)].apply(pd.to_numeric, errors="coerce")
        ok = X.notna().all(axis=1) & z.notna()
        values, target = X[ok].to_numpy(float), z[ok].to_numpy(float)
        scores = (
            joblib.Parallel(n_jobs=n_jobs)(
                joblib.delayed(_pooled_forest_r2)(values, target, fitting, repeat)
                for repeat in range(repeats)
            )
            if len(target) >= 2 * fitting.cv
            else []
        )
        rows.append(
            {
                "feature_set": name,
                "features": ", ".join(columns),
                "runs": int(ok.sum()),
                "repeats": len(scores),
                "folds": fitting.cv,
                "r2_pooled": float(np.mean(scores)) if scores else math.nan,
                "r2_pooled_sd": sample_sd(scores),
            }
        )
    return pd.DataFrame(rows)


def noise_floor(
    table: pd.DataFrame,
    conditions: Sequence[str],
    *,
    production: str = "production",
    confidence: float = 0.95,
) -> pd.DataFrame:
    """The share of runtime variance that is run-to-run noise, from repeated identical runs.

    Identical runs: the runs of a controlled campaign (``CONTROLLED_CAMPAIGNS``)
    of one application and node count, which repeat one fixed condition
    (``conditions`` must not differ among them, else ValueError). For each such
    group: the variance of their runtimes over the variance of the runs of the
    ``production`` campaign of that application and node count, ``noise_share``, and the
    R² ceiling it implies for a model of z: ``ceiling_r2`` = 1 − noise_share (noise
    no input can predict). Per campaign (``application`` "all"): the share pooled
    over its groups, weighted by their degrees of freedom, as if one share held
    for every group, with a chi-square ``confidence`` interval (normal noise).

    Noise may grow with the background: a campaign without background gives a
    lower bound of the production runs' noise, hence an upper bound of the R²
    they allow; a campaign under maximal background one nearer the loaded runs.
    """
    reference = table[table["campaign"] == production].groupby(["application", "nodes"])[
        "runtime_s"
    ]
    spread = pd.DataFrame({"runs": reference.size(), "var": reference.var(ddof=1)})
    fixed = [c for c in conditions if c not in ("application", "nodes")]
    missing = [c for c in fixed if c not in table.columns]
    if missing:
        raise ValueError(f"runs lack the condition column(s) {', '.join(missing)}")
    rows = []
    controlled = table[table["campaign"].isin(CONTROLLED_CAMPAIGNS)]
    for (campaign, app, nodes), runs in controlled.groupby(["campaign", "application", "nodes"]):
        varying = [c for c in fixed if runs[c].nunique(dropna=False) > 1]
        if varying:
            raise ValueError(
                f"campaign {campaign!r}: the runs of {app} on {nodes} nodes differ in "
                f"{', '.join(varying)}; they are not repeated identical runs"
            )
        if len(runs) < 2 or (app, nodes) not in spread.index or spread.at[(app, nodes), "runs"] < 2:
            continue
        noise_var = float(runs["runtime_s"].var(ddof=1))
        total_var = float(spread.at[(app, nodes), "var"])
        rows.append(
            {
                "campaign": campaign,
                "application": app,
                "nodes": nodes,
                "identical_runs": len(runs),
                "mean_s": float(runs["runtime_s"].mean()),
                "noise_sd_s": math.sqrt(noise_var),
                "noise_cv": math.sqrt(noise_var) / float(runs["runtime_s"].mean()),
                "production_runs": int(spread.at[(app, nodes), "runs"]),
                "production_sd_s": math.sqrt(total_var),
                "noise_share": noise_var / total_var if total_var > 0 else math.nan,
            }
        )
    columns = [
        "campaign",
        "application",
        "nodes",
        "identical_runs",
        "mean_s",
        "noise_sd_s",
        "noise_cv",
        "production_runs",
        "production_sd_s",
        "noise_share",
        "share_low",
        "share_high",
        "ceiling_r2",
        "ceiling_low",
        "ceiling_high",
    ]
    groups = pd.DataFrame(rows, columns=columns[:10])
    pooled = []
    for campaign, part in groups.dropna(subset=["noise_share"]).groupby("campaign"):
        df = (part["identical_runs"] - 1).to_numpy(float)
        share = float(np.sum(df * part["noise_share"]) / df.sum())
        tail = (1 - confidence) / 2
        low = share * df.sum() / stats.chi2.ppf(1 - tail, df.sum())
        high = share * df.sum() / stats.chi2.ppf(tail, df.sum())
        pooled.append(
            {
                "campaign": campaign,
                "application": "all",
                "identical_runs": int(part["identical_runs"].sum()),
                "mean_s": math.nan,
                "noise_sd_s": math.nan,
                "noise_cv": math.sqrt(float(np.sum(df * part["noise_cv"] ** 2) / df.sum())),
                "production_runs": int(part["production_runs"].sum()),
                "production_sd_s": math.nan,
                "noise_share": share,
                "share_low": low,
                "share_high": high,
            }
        )
    out = pd.concat([groups, pd.DataFrame(pooled)], ignore_index=True).reindex(columns=columns)
    out["nodes"] = out["nodes"].astype("Int64")
    out["ceiling_r2"] = 1 - out["noise_share"]
    out["ceiling_low"] = 1 - out["share_high"]
    out["ceiling_high"] = 1 - out["share_low"]
    return out
