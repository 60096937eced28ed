"""How well the variability model predicts (seed 002, Sec. IV-VI): as the paper
evaluates it, and as a statistician would.

As the paper: cross-validated R², learning curve and train fractions (Fig. 8,
Sec. V-A), predicted against true z with a random split or an application held
out (Fig. 7, 9, 10, Table V), the t-SNE map of the feature space (Fig. 5) and the
use cases of Table VI.

How a statistician would: :mod:`netnoise.studies.variability.nested_cv`; what
the counters and repeated runs allow at best:
:mod:`netnoise.studies.variability.ceilings`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import joblib
import numpy as np
import pandas as pd
from sklearn.manifold import TSNE
from sklearn.metrics import r2_score
from sklearn.model_selection import cross_val_score, learning_curve
from sklearn.preprocessing import RobustScaler
from threadpoolctl import threadpool_limits

from netnoise.studies.variability.features import dataset, features, zscore_target
from netnoise.studies.variability.model import (
    VariabilityModel,
    folds,
    select_svr,
    svr_pipeline,
    verdict,
)


def cv_r2(
    X: pd.DataFrame,
    y: Sequence[float],
    params: Mapping[str, float],
    *,
    cv: int = 10,
    seed: int = 0,
    n_jobs: int = 1,
) -> np.ndarray:
    """R² of each of the ``cv`` folds with fixed hyperparameters (paper: 0.91 for 10 folds)."""
    return cross_val_score(
        svr_pipeline(params),
        X,
        np.asarray(y, float),
        scoring="r2",
        cv=folds(cv, seed),
        n_jobs=n_jobs,
    )


def learning_curve_table(
    X: pd.DataFrame,
    y: Sequence[float],
    params: Mapping[str, float],
    *,
    train_sizes: Sequence[float] = (0.1, 0.25, 0.5, 0.75, 1.0),
    cv: int = 10,
    seed: int = 0,
    n_jobs: int = 1,
) -> pd.DataFrame:
    """Training and cross-validation R² against the number of training runs (Fig. 8)."""
    sizes, train, test = learning_curve(
        svr_pipeline(params),
        X,
        np.asarray(y, float),
        train_sizes=np.asarray(train_sizes),
        cv=folds(cv, seed),
        scoring="r2",
        shuffle=True,  # else the smallest subsets hold the first applications only
        random_state=seed,
        n_jobs=n_jobs,
    )
    return pd.DataFrame(
        {
            "n_train": sizes,
            "train_r2": train.mean(axis=1),
            "train_r2_std": train.std(axis=1),
            "cv_r2": test.mean(axis=1),
            "cv_r2_std": test.std(axis=1),
        }
    )


def _split(n: int, train_fraction: float, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    order = rng.permutation(n)
    cut = max(2, min(n - 2, round(train_fraction * n)))
    return np.sort(order[:cut]), np.sort(order[cut:])


def train_fraction_r2(
    X: pd.DataFrame,
    y: Sequence[float],
    params: Mapping[str, float],
    *,
    fractions: Sequence[float] = (0.75, 0.5, 0.25, 0.10),
    repeats: int = 5,
    seed: int = 0,
) -> pd.DataFrame:
    """Test R² when a fraction of the runs trains the model (Sec. V-A: 0.91/0.83/0.79/0.62).

    The paper reports one split per fraction; ``r2`` here is the mean over
    ``repeats`` seeded random splits (``r2_std`` their spread).
    """
    y = np.asarray(y, float)
    rows = []
    for fraction in fractions:
        rng = np.random.default_rng([seed, round(fraction * 1000)])
        scores = []
        for _ in range(repeats):
            train, test = _split(len(y), fraction, rng)
            model = svr_pipeline(params).fit(X.iloc[train], y[train])
            scores.append(r2_score(y[test], model.predict(X.iloc[test])))
        rows.append(
            {
                "train_fraction": fraction,
                "n_train": len(train),
                "n_test": len(test),
                "r2": float(np.mean(scores)),
                "r2_std": float(np.std(scores)),
            }
        )
    return pd.DataFrame(rows)


def predicted_vs_true(
    table: pd.DataFrame,
    params: Mapping[str, float],
    *,
    test_application: str | None = None,
    added: int = 0,
    train_fraction: float = 0.75,
    seed: int = 0,
    draw: int = 0,
) -> pd.DataFrame:
    """Predicted against true z of test runs (Fig. 7: random split; Fig. 9/10: one
    application held out, ``added`` of its runs, drawn at random with ``draw``,
    moved into the training set).

    ``region`` is Fig. 7's shading: ``light`` (both below the mean), ``heavy``
    (both above) or ``mismatch``. ``attrs["r2"]`` holds the test R².
    """
    X, y = dataset(table)
    meta = table.loc[X.index]
    rng = np.random.default_rng([seed, added, draw])
    if test_application is None:
        train_i, test_i = _split(len(y), train_fraction, rng)
        train, test = X.index[train_i], X.index[test_i]
    else:
        target = meta.index[meta["application"] == test_application]
        if len(target) == 0:
            raise ValueError(f"no usable runs of application {test_application!r}")
        if added >= len(target) - 1:
            raise ValueError(
                f"{test_application}: {len(target)} runs, cannot add {added} and still test"
            )
        moved = target[np.sort(rng.choice(len(target), size=added, replace=False))]
        test = target.difference(moved)
        train = meta.index[meta["application"] != test_application].union(moved)
    model = svr_pipeline(params).fit(X.loc[train], y.loc[train])
    pred = model.predict(X.loc[test])
    out = pd.DataFrame(
        {
            "application": meta.loc[test, "application"].to_numpy(),
            "nodes": meta.loc[test, "nodes"].to_numpy(),
            "runtime_s": meta.loc[test, "runtime_s"].to_numpy(),
            "z_true": y.loc[test].to_numpy(),
            "z_pred": pred,
        },
        index=test,
    )
    out["region"] = np.select(
        [(out.z_true < 0) & (out.z_pred < 0), (out.z_true > 0) & (out.z_pred > 0)],
        ["light", "heavy"],
        "mismatch",
    )
    out.attrs["r2"] = float(r2_score(out["z_true"], out["z_pred"]))
    out.attrs["n_train"] = len(train)
    return out


def _unseen_application(
    table: pd.DataFrame,
    application: str,
    *,
    grid: Mapping[str, Sequence[float]] | None,
    cv: int,
    added: Sequence[int],
    draws: int,
    seed: int,
) -> list[dict[str, Any]]:
    X, y = dataset(table)
    others = table.loc[X.index, "application"] != application
    choice = select_svr(X[others], y[others], grid=grid, cv=cv, seed=seed)
    rows = []
    for k in added:
        results = [
            predicted_vs_true(
                table, choice.params, test_application=application, added=k, seed=seed, draw=d
            )
            for d in range(draws if k else 1)
        ]
        scores = [result.attrs["r2"] for result in results]
        rows.append(
            {
                "application": application,
                "added": k,
                "draws": len(scores),
                "n_train": results[0].attrs["n_train"],
                "n_test": len(results[0]),
                "r2": float(np.mean(scores)),
                "r2_sd": float(np.std(scores, ddof=1)) if len(scores) > 1 else math.nan,
                **choice.params,
            }
        )
    return rows


def leave_one_application_out(
    table: pd.DataFrame,
    *,
    grid: Mapping[str, Sequence[float]] | None = None,
    cv: int = 5,
    added: Sequence[int] = (0, 20, 40),
    draws: int = 10,
    applications: Sequence[str] | None = None,
    seed: int = 0,
    n_jobs: int = 1,
) -> pd.DataFrame:
    """Table V: R² on an application left out of training, with 0/20/40 of its runs added.

    The SVR's grid is chosen by ``cv``-fold CV on the other applications' runs
    alone (the paper chose it on all seven). Which runs are added is drawn
    ``draws`` times: ``r2`` is the mean test R² over the draws, ``r2_sd`` their
    spread; ``C``, ``gamma``, ``epsilon`` are the grid's choice (Fig. 9, 10).
    """
    apps = applications or sorted(table["application"].unique())
    per_app = joblib.Parallel(n_jobs=n_jobs)(
        joblib.delayed(_unseen_application)(
            table, app, grid=grid, cv=cv, added=added, draws=draws, seed=seed
        )
        for app in apps
    )
    return pd.DataFrame([row for rows in per_app for row in rows])


def tsne_coordinates(
    X: pd.DataFrame,
    applications: Sequence[str],
    *,
    seed: int = 0,
    perplexity: float = 30.0,
    max_iter: int = 1000,
    n_jobs: int = 1,
) -> pd.DataFrame:
    """2-D t-SNE embedding of the robust-scaled feature space (Fig. 5)."""
    scaled = RobustScaler().fit_transform(X.to_numpy(float))
    perplexity = min(perplexity, (len(scaled) - 1) / 3)
    tsne = TSNE(
        n_components=2,
        perplexity=perplexity,
        init="pca",
        max_iter=max_iter,
        random_state=seed,
        n_jobs=n_jobs,
    )
    # The Barnes-Hut gradient runs OpenMP threads on every core regardless of
    # n_jobs; on a busy machine their spinning costs 10x. Hold them to n_jobs.
    with threadpool_limits(limits=n_jobs, user_api="openmp"):
        xy = tsne.fit_transform(scaled)
    return pd.DataFrame(
        {"x": xy[:, 0], "y": xy[:, 1], "application": list(applications)}, index=X.index
    )


def use_case_table(
    model: VariabilityModel,
    table: pd.DataFrame,
    applications: Sequence[str],
    *,
    nodes: int | None = None,
    predictions: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Table VI: three runs per application with their variability estimates.

    Among the runs given an estimate: A has the runtime nearest the mean, B and
    C are the fastest and the slowest, swapped for every second application, so
    that (as MILC vs. MILC Reorder in the paper) run B of the second application
    is a slow one while run B of the first is a fast one.

    ``predictions`` (columns ``accepted``, ``z``, ``bound``, indexed as ``table``),
    e.g. the model's out-of-fold ``evaluation``, replace the model's own
    predictions: runs it was trained on are then judged as new runs.
    """
    z_true = zscore_target(table)
    rows = []
    for i, app in enumerate(applications):
        runs = table[table["application"] == app]
        if nodes is not None:
            runs = runs[runs["nodes"] == nodes]
        if predictions is None:
            X = features(runs)
            ok = X.notna().all(axis=1)
            pred = model.predict(X[ok])
        else:
            pred = predictions.loc[predictions.index.intersection(runs.index)]
        given = pred[pred["accepted"]]
        if len(given) < 3:
            raise ValueError(f"{app}: fewer than 3 runs with an estimate")
        t = runs.loc[given.index, "runtime_s"]
        fast, slow = t.idxmin(), t.idxmax()
        picks = {
            "A": (t - t.mean()).abs().idxmin(),
            "B": fast if i % 2 == 0 else slow,
            "C": slow if i % 2 == 0 else fast,
        }
        for label, idx in picks.items():
            z, bound = float(given.at[idx, "z"]), float(given.at[idx, "bound"])
            rows.append(
                {
                    "run": label,
                    "application": app,
                    "nodes": runs.at[idx, "nodes"],
                    "runtime_s": float(t[idx]),
                    "z_true": float(z_true[idx]),
                    "z": z,
                    "bound": bound,
                    "verdict": verdict(z, bound),
                }
            )
    return pd.DataFrame(rows)
