"""The SVR + random-forest model of network-induced runtime variability (seed 002).

From the features of one run (:mod:`netnoise.studies.variability.features`) the model
estimates how many standard deviations that run's runtime lies from the
application's mean: the *Variability Estimate* z ± bound.

Model (Sec. IV-V)
-----------------

Seven features (:data:`FEATURES`, the paper's order of importance), RobustScaler
(median, IQR) + SVR with an RBF kernel, C and γ by ``GridSearchCV`` with 10-fold
CV on R²; target: runtime z-score per application and node count. A random
forest gives the error bound: the standard deviation of its trees' predictions
(Fig. 11, "the predicted standard deviation including all the estimators"). The
combined model (Sec. V-D) reports SVR ± RF bound when ``|SVR − RF| ≤ bound``
and no prediction otherwise.

Reading of garbled passages: Table III lists five metrics × five statistics
("twenty-five total statistics"); the feature list of Sec. IV-A is taken in the
printed order 1-7. The percentage "90% of the predicted SVR values fall within
the RF estimation intervals" and "9.8% ... not within" are the coverage this
module reports (``coverage``), and "96.1%" is ``containment``: the share of
covered runs whose true z lies within SVR ± bound.

Stored as data
--------------

A trained model keeps its estimators as numbers (:class:`RbfSvr`: the scaler's
medians and IQRs, the support vectors, their coefficients, the intercept and
γ; :class:`Forest`: every tree's nodes as arrays) and predicts from them as
scikit-learn does. :func:`save_model` writes them to an ``.npz`` archive of
plain arrays and one JSON record; :func:`load_model` reads it without
unpickling anything and checks every array, so a model file, e.g. in a
results bundle, cannot run code.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import zipfile
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import sklearn
from sklearn.ensemble import RandomForestRegressor
from sklearn.metrics import r2_score
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import RobustScaler
from sklearn.svm import SVR

from netnoise.atomic import atomic_path
from netnoise.studies.variability.features import FEATURES, dataset, features

# Small on purpose: 6 combinations × 10 folds train in seconds on a few hundred
# runs (C = 100 with small γ is the slowest to converge). The paper does not
# print its grid; pass ``grid=`` for a finer one.
DEFAULT_GRID: dict[str, list[float]] = {
    "C": [1.0, 10.0, 100.0],
    "gamma": [0.03, 0.3],
    "epsilon": [0.1],
}
MODEL_FORMAT = "netnoise-variability/2"
# A model file's arrays, unpacked, at most: 200 times a model of 100 trees on 5000 runs.
MAX_MODEL_BYTES = 1 << 30


def svr_pipeline(params: Mapping[str, float] | None = None) -> Pipeline:
    """RobustScaler (median, IQR) + SVR with an RBF kernel."""
    pipe = Pipeline([("scale", RobustScaler()), ("svr", SVR(kernel="rbf"))])
    if params:
        pipe.set_params(**{f"svr__{k}": v for k, v in params.items()})
    return pipe


def folds(cv: int, seed: int) -> KFold:
    return KFold(n_splits=cv, shuffle=True, random_state=seed)


def grid_search(
    X: pd.DataFrame,
    y: Sequence[float],
    *,
    grid: Mapping[str, Sequence[float]] | None = None,
    cv: int = 10,
    seed: int = 0,
    n_jobs: int = 1,
) -> tuple[dict[str, float], float]:
    """C, γ (and ε) of the SVR by GridSearchCV on R²; returns (params, best CV R²)."""
    grid = DEFAULT_GRID if grid is None else grid
    search = GridSearchCV(
        svr_pipeline(),
        {f"svr__{k}": list(v) for k, v in grid.items()},
        scoring="r2",
        cv=folds(cv, seed),
        n_jobs=n_jobs,
    )
    search.fit(X, np.asarray(y, float))
    params = {k.removeprefix("svr__"): float(v) for k, v in search.best_params_.items()}
    return params, float(search.best_score_)


def fit_forest(
    X: pd.DataFrame,
    y: Sequence[float],
    *,
    n_estimators: int = 100,
    seed: int = 0,
    n_jobs: int = 1,
) -> Forest:
    forest = RandomForestRegressor(n_estimators=n_estimators, random_state=seed, n_jobs=n_jobs)
    return Forest.from_estimator(forest.fit(X.to_numpy(float), np.asarray(y, float)))


def fit_svr(X: pd.DataFrame, y: Sequence[float], params: Mapping[str, float]) -> RbfSvr:
    return RbfSvr.from_pipeline(svr_pipeline(params).fit(X, np.asarray(y, float)))


@dataclasses.dataclass(frozen=True)
class RbfSvr:
    """A fitted RobustScaler + RBF SVR pipeline as its numbers; predicts as the
    pipeline does (to floating-point rounding)."""

    center: np.ndarray  # the scaler's medians, one per feature
    scale: np.ndarray  # ... and IQRs
    support_vectors: np.ndarray  # (vectors, features), scaled
    dual_coef: np.ndarray  # one per support vector
    intercept: float
    gamma: float

    @classmethod
    def from_pipeline(cls, pipe: Pipeline) -> RbfSvr:
        scaler, svr = pipe.named_steps["scale"], pipe.named_steps["svr"]
        return cls(
            center=np.asarray(scaler.center_, float),
            scale=np.asarray(scaler.scale_, float),
            support_vectors=np.asarray(svr.support_vectors_, float),
            dual_coef=np.asarray(svr.dual_coef_, float).ravel(),
            intercept=float(svr.intercept_[0]),
            gamma=float(svr._gamma),  # the γ it was fitted with ("scale" resolved)
        )

    def predict(self, X: np.ndarray) -> np.ndarray:
        scaled = (np.asarray(X, float) - self.center) / self.scale
        out = np.empty(len(scaled))
        for start in range(0, len(scaled), 1024):  # bounds the distance matrix
            part = scaled[start : start + 1024]
            squared = ((part[:, None, :] - self.support_vectors[None, :, :]) ** 2).sum(axis=2)
            out[start : start + len(part)] = np.exp(-self.gamma * squared) @ self.dual_coef
        return out + self.intercept


@dataclasses.dataclass(frozen=True)
class Forest:
    """A fitted random forest's trees as arrays. The nodes of every tree are one
    block of ``left``, ``right`` (node numbers, -1 at a leaf), ``feature``,
    ``threshold`` and ``value``; ``roots`` holds each tree's first node."""

    roots: np.ndarray
    left: np.ndarray
    right: np.ndarray
    feature: np.ndarray
    threshold: np.ndarray
    value: np.ndarray

    @classmethod
    def from_estimator(cls, forest: RandomForestRegressor) -> Forest:
        trees = [estimator.tree_ for estimator in forest.estimators_]
        offsets = np.cumsum([0] + [t.node_count for t in trees[:-1]])

        def joined(attribute: str, shift: bool = False) -> np.ndarray:
            parts = []
            for tree, offset in zip(trees, offsets, strict=True):
                part = np.asarray(getattr(tree, attribute)).astype(np.int64 if shift else None)
                parts.append(np.where(part >= 0, part + offset, -1) if shift else part)
            return np.concatenate(parts)

        leaf = joined("children_left") < 0
        return cls(
            roots=offsets.astype(np.int64),
            left=joined("children_left", shift=True),
            right=joined("children_right", shift=True),
            feature=np.where(leaf, 0, joined("feature")).astype(np.int64),
            threshold=np.where(leaf, 0.0, joined("threshold")).astype(float),
            value=np.concatenate([np.asarray(t.value, float).reshape(-1) for t in trees]),
        )

    def predict_trees(self, X: np.ndarray) -> np.ndarray:
        """Every tree's prediction of every row: (trees, rows)."""
        # The trees split float32 features, as scikit-learn's do.
        data = np.asarray(X, np.float32)
        node = np.repeat(self.roots[:, None], len(data), axis=1)
        rows = np.arange(len(data))[None, :]
        inner = self.left[node] >= 0
        while inner.any():
            below = data[rows, self.feature[node]] <= self.threshold[node]
            node = np.where(inner, np.where(below, self.left[node], self.right[node]), node)
            inner = self.left[node] >= 0
        return self.value[node]

    def interval(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Forest prediction and the spread (std) of its trees' predictions."""
        per_tree = self.predict_trees(X)
        return per_tree.mean(axis=0), per_tree.std(axis=0)


def combine(
    svr: np.ndarray, rf: np.ndarray, spread: np.ndarray, bound_scale: float = 1.0
) -> pd.DataFrame:
    """Sec. V-D: SVR ± RF bound where |SVR − RF| ≤ bound, else no prediction (NaN)."""
    bound = bound_scale * np.asarray(spread, float)
    accepted = np.abs(np.asarray(svr) - np.asarray(rf)) <= bound
    return pd.DataFrame(
        {
            "svr": svr,
            "rf": rf,
            "bound": bound,
            "accepted": accepted,
            "z": np.where(accepted, svr, np.nan),
        }
    )


def combined_evaluation(
    X: pd.DataFrame,
    y: Sequence[float],
    params: Mapping[str, float],
    *,
    cv: int = 10,
    seed: int = 0,
    n_estimators: int = 100,
    bound_scale: float = 1.0,
    n_jobs: int = 1,
) -> tuple[pd.DataFrame, dict[str, float]]:
    """Out-of-fold combined predictions of every run and their rates.

    ``coverage``: share of runs given a prediction (paper: 90.2%);
    ``containment``: share of those whose true z is within SVR ± bound (96.1%).
    """
    y = np.asarray(y, float)
    parts = []
    for train, test in folds(cv, seed).split(X):
        svr = fit_svr(X.iloc[train], y[train], params)
        forest = fit_forest(
            X.iloc[train], y[train], n_estimators=n_estimators, seed=seed, n_jobs=n_jobs
        )
        held_out = X.iloc[test].to_numpy(float)
        rf, spread = forest.interval(held_out)
        part = combine(svr.predict(held_out), rf, spread, bound_scale)
        part.index = X.index[test]
        part["z_true"] = y[test]
        parts.append(part)
    table = pd.concat(parts).loc[X.index]
    return table, rates(table)


def rates(table: pd.DataFrame) -> dict[str, float]:
    """Coverage, containment and R² of the predictions given, from a combined table with z_true."""
    given = table[table["accepted"]]
    inside = (given["z_true"] - given["svr"]).abs() <= given["bound"]
    return {
        "n": len(table),
        "coverage": float(table["accepted"].mean()),
        "containment": float(inside.mean()) if len(given) else math.nan,
        "r2_given": float(r2_score(given["z_true"], given["svr"])) if len(given) > 1 else math.nan,
        "r2_svr": float(r2_score(table["z_true"], table["svr"])),
    }


@dataclasses.dataclass
class VariabilityModel:
    """SVR + random forest trained on all runs, with the rates measured out of fold."""

    svr: RbfSvr
    forest: Forest
    params: dict[str, float]
    bound_scale: float
    cv_r2: float  # mean k-fold R² of the SVR with ``params`` (the grid's best score)
    coverage: float
    containment: float
    # Out-of-fold svr, rf, bound, accepted, z, z_true of every training run (Fig. 11).
    evaluation: pd.DataFrame = dataclasses.field(default_factory=pd.DataFrame)
    features: tuple[str, ...] = FEATURES
    applications: dict[str, int] = dataclasses.field(default_factory=dict)
    seed: int = 0
    sklearn_version: str = sklearn.__version__

    def predict(self, X: pd.DataFrame) -> pd.DataFrame:
        data = X.loc[:, list(self.features)].to_numpy(float)
        if not np.isfinite(data).all():
            raise ValueError("the model predicts from finite features only")
        rf, spread = self.forest.interval(data)
        out = combine(self.svr.predict(data), rf, spread, self.bound_scale)
        out.index = X.index
        return out


def train(
    table: pd.DataFrame,
    *,
    grid: Mapping[str, Sequence[float]] | None = None,
    cv: int = 10,
    seed: int = 0,
    n_estimators: int = 100,
    bound_scale: float = 1.0,
    n_jobs: int = 1,
) -> VariabilityModel:
    """Grid search, then SVR and forest on all runs; coverage and containment out of fold.

    Runs whose features or z-score are undefined (a counter missing, a single
    run of its application and node count) are left out; ``applications``
    counts the runs used.
    """
    X, y = dataset(table)
    if len(y) < 2 * cv:
        raise ValueError(f"{len(y)} usable runs: too few for {cv}-fold cross-validation")
    # The grid's best score is the k-fold R² of the chosen parameters (same folds).
    params, best = grid_search(X, y, grid=grid, cv=cv, seed=seed, n_jobs=n_jobs)
    evaluation, oof = combined_evaluation(
        X,
        y,
        params,
        cv=cv,
        seed=seed,
        n_estimators=n_estimators,
        bound_scale=bound_scale,
        n_jobs=n_jobs,
    )
    apps = table.loc[X.index, "application"].value_counts().sort_index()
    return VariabilityModel(
        svr=fit_svr(X, y.to_numpy(), params),
        forest=fit_forest(X, y, n_estimators=n_estimators, seed=seed, n_jobs=n_jobs),
        params=params,
        bound_scale=bound_scale,
        cv_r2=best,
        coverage=oof["coverage"],
        containment=oof["containment"],
        evaluation=evaluation,
        applications={str(k): int(v) for k, v in apps.items()},
        seed=seed,
    )


def verdict(z: float, bound: float) -> str:
    """Run conditions read from z ± bound (Sec. VI): the interval's side of 0."""
    if z - bound > 0:
        return "congested"
    if z + bound < 0:
        return "favourable"
    return "typical"


def estimate(model: VariabilityModel, run_metrics: Mapping[str, Any]) -> dict[str, Any]:
    """Variability estimate of one run: ``z`` ± ``bound``, or ``z = None`` and ``reason``."""
    X = features(run_metrics)
    out: dict[str, Any] = {
        "z": None,
        "bound": None,
        "verdict": None,
        "svr": None,
        "rf": None,
        "rf_bound": None,
        "reason": None,
        "coverage": model.coverage,
        "containment": model.containment,
    }
    bad = [f for f in model.features if not np.isfinite(X.iloc[0][f])]
    if bad:
        out["reason"] = f"feature(s) not measurable from these counters: {', '.join(bad)}"
        return out
    row = model.predict(X).iloc[0]
    out.update(svr=float(row["svr"]), rf=float(row["rf"]), rf_bound=float(row["bound"]))
    if not row["accepted"]:
        out["reason"] = (
            f"SVR prediction {row['svr']:+.2f} lies outside the random-forest interval "
            f"{row['rf']:+.2f} ± {row['bound']:.2f}: too little training data like this run"
        )
        return out
    out.update(z=float(row["svr"]), bound=float(row["bound"]))
    out["verdict"] = verdict(out["z"], out["bound"])
    return out


_SVR_ARRAYS = ("center", "scale", "support_vectors", "dual_coef")
_FOREST_ARRAYS = ("roots", "left", "right", "feature", "threshold", "value")
_FOREST_FLOATS = ("threshold", "value")
_EVALUATION = {"svr": "f", "rf": "f", "bound": "f", "accepted": "b", "z": "f", "z_true": "f"}


def save_model(path: str | os.PathLike[str], model: VariabilityModel) -> None:
    """Write the model atomically as data: an ``.npz`` archive of plain arrays."""
    record = {
        "format": MODEL_FORMAT,
        "params": model.params,
        "bound_scale": model.bound_scale,
        "cv_r2": model.cv_r2,
        "coverage": model.coverage,
        "containment": model.containment,
        "features": list(model.features),
        "applications": model.applications,
        "seed": model.seed,
        "sklearn_version": model.sklearn_version,
        "svr_intercept": model.svr.intercept,
        "svr_gamma": model.svr.gamma,
    }
    arrays = {f"svr_{k}": getattr(model.svr, k) for k in _SVR_ARRAYS}
    arrays |= {f"forest_{k}": getattr(model.forest, k) for k in _FOREST_ARRAYS}
    evaluation = model.evaluation
    arrays["evaluation_index"] = evaluation.index.to_numpy(np.int64)
    arrays |= {f"evaluation_{k}": evaluation[k].to_numpy() for k in _EVALUATION}
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        np.savez_compressed(fh, record=np.array(json.dumps(record)), **arrays)


def _checked(
    name: str, array: np.ndarray, kind: str, ndim: int, *, missing: bool = False
) -> np.ndarray:
    """``array`` if it has the dtype kind and dimensions, and finite numbers (or NaN
    where values may be ``missing``)."""
    if array.dtype.kind != kind or array.ndim != ndim:
        raise ValueError(f"{name}: {array.dtype} array of {array.ndim} dimension(s)")
    if kind == "f" and not (np.isfinite(array) | (missing & np.isnan(array))).all():
        raise ValueError(f"{name}: not finite")
    return array


def _forest_problem(forest: Forest, features: int) -> str | None:
    """Why ``forest`` is not a forest of well-formed trees over ``features`` features."""
    n = len(forest.left)
    if any(len(getattr(forest, k)) != n for k in _FOREST_ARRAYS[1:]):
        return "its node arrays differ in length"
    ends = np.append(forest.roots[1:], n)
    if len(forest.roots) == 0 or forest.roots[0] != 0 or (ends <= forest.roots).any():
        return "its trees are not consecutive blocks of nodes"
    tree_end = np.repeat(ends, ends - forest.roots)
    node = np.arange(n)
    inner = forest.left >= 0
    if ((forest.right >= 0) != inner).any():
        return "a node has one child"
    # Children follow their parent inside its tree: every descent ends at a leaf.
    for child in (forest.left, forest.right):
        if ((child[inner] <= node[inner]) | (child[inner] >= tree_end[inner])).any():
            return "a node's child lies outside its tree or before it"
    if ((forest.feature[inner] < 0) | (forest.feature[inner] >= features)).any():
        return f"a split names a feature beyond the {features} features"
    return None


def load_model(path: str | os.PathLike[str]) -> VariabilityModel:
    """Read a model written by :func:`save_model`, checking every array; a file that
    is not one is a ValueError. Nothing in the file is executed."""
    try:
        with zipfile.ZipFile(path) as archive:
            unpacked = sum(info.file_size for info in archive.infolist())
        if unpacked > MAX_MODEL_BYTES:
            raise ValueError(f"{unpacked} bytes unpacked, more than {MAX_MODEL_BYTES}")
        with np.load(path, allow_pickle=False) as data:
            arrays = {name: data[name] for name in data.files}
        record = json.loads(str(arrays.pop("record")))
        if not isinstance(record, dict) or record.get("format") != MODEL_FORMAT:
            raise ValueError(f"not a {MODEL_FORMAT} model")
        features = tuple(record["features"])
        if not set(features) <= set(FEATURES) or len(set(features)) != len(features):
            raise ValueError(f"features {features} are not among {FEATURES}")
        svr_arrays = {
            k: _checked(k, arrays[f"svr_{k}"], "f", 2 if k == "support_vectors" else 1)
            for k in _SVR_ARRAYS
        }
        svr = RbfSvr(
            **svr_arrays,
            intercept=float(record["svr_intercept"]),
            gamma=float(record["svr_gamma"]),
        )
        width = len(features)
        vectors = len(svr.dual_coef)
        if svr.center.shape != (width,) or svr.scale.shape != (width,) or (svr.scale <= 0).any():
            raise ValueError("the scaler does not match the features")
        if svr.support_vectors.shape != (vectors, width) or not math.isfinite(svr.gamma):
            raise ValueError("the support vectors do not match their coefficients")
        forest = Forest(
            **{
                k: _checked(k, arrays[f"forest_{k}"], "f" if k in _FOREST_FLOATS else "i", 1)
                for k in _FOREST_ARRAYS
            }
        )
        problem = _forest_problem(forest, width)
        if problem:
            raise ValueError(f"the forest is malformed: {problem}")
        index = _checked("evaluation_index", arrays["evaluation_index"], "i", 1)
        evaluation = pd.DataFrame(
            {
                k: _checked(k, arrays[f"evaluation_{k}"], kind, 1, missing=k == "z")
                for k, kind in _EVALUATION.items()
            },
            index=pd.Index(index),
        )
        return VariabilityModel(
            svr=svr,
            forest=forest,
            params={str(k): float(v) for k, v in record["params"].items()},
            bound_scale=float(record["bound_scale"]),
            cv_r2=float(record["cv_r2"]),
            coverage=float(record["coverage"]),
            containment=float(record["containment"]),
            evaluation=evaluation,
            features=features,
            applications={str(k): int(v) for k, v in record["applications"].items()},
            seed=int(record["seed"]),
            sklearn_version=str(record["sklearn_version"]),
        )
    except FileNotFoundError:
        raise
    except (ValueError, KeyError, TypeError, OSError, zipfile.BadZipFile, EOFError) as err:
        raise ValueError(f"{path}: not a variability model ({err})") from None
