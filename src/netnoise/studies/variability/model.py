"""The SVR + random-forest model of network-induced runtime variability (seed 002).

From the features of one run (:mod:`netnoise.studies.variability.features`) the model
estimates how many standard deviations that run's runtime lies from the
application's mean: the *Variability Estimate* z ± bound.

Model (Sec. IV-V)
-----------------

Seven features (:data:`FEATURES`, the paper's order of importance), RobustScaler
(median, IQR) + SVR with an RBF kernel, C and γ by grid search with 10-fold CV
on R² (:func:`select_svr`, as ``GridSearchCV``); target: runtime z-score per
application and node count. A random forest gives the error bound from the
standard deviation of its trees' predictions (Fig. 11, "the predicted standard
deviation including all the estimators"). The combined model (Sec. V-D) reports
SVR ± bound when ``|SVR − RF| ≤ bound`` and no prediction otherwise.

The paper does not state the bound's width, and one standard deviation of the
trees is not calibrated: how often it holds the true z depends on the data. Here
the bound is a multiple of that spread chosen on the training runs alone so that
it holds the true z of a chosen share of new runs (``level``, default 90 %):
conformal calibration as in split-conformal regression, the out-of-fold SVR
residuals and out-of-bag tree spreads of the training runs standing in for a
held-out calibration split (:func:`calibrated_bound_scale`). The model's stated
rates are out of fold: every fold's grid choice, forest and bound multiple come
from the other folds (:func:`combined_evaluation`).

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
scikit-learn does. :mod:`.model_file` writes them to an ``.npz`` archive of
plain arrays and one JSON record and reads them back without
unpickling anything and checks every array, so a model file, e.g. in a
results bundle, cannot run code.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import joblib
import numpy as np
import pandas as pd
import sklearn
from sklearn.ensemble import RandomForestRegressor
from sklearn.metrics import r2_score
from sklearn.model_selection import KFold, ParameterGrid
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import RobustScaler
from sklearn.svm import SVR

from netnoise.studies.variability.config import calibration_rank, minimum_runs
from netnoise.studies.variability.features import FEATURES, dataset, features

# Small on purpose: 6 combinations × 10 folds train in seconds on a few hundred
# runs (C = 100 with small γ is the slowest to converge). The paper does not
# print its grid; pass ``grid=`` for a finer one.
DEFAULT_GRID: dict[str, list[float]] = {
    "C": [1.0, 10.0, 100.0],
    "gamma": [0.03, 0.3],
    "epsilon": [0.1],
}


def svr_pipeline(params: Mapping[str, float] | None = None) -> Pipeline:
    """RobustScaler (median, IQR) + SVR with an RBF kernel."""
    pipe = Pipeline([("scale", RobustScaler()), ("svr", SVR(kernel="rbf"))])
    if params:
        pipe.set_params(**{f"svr__{k}": v for k, v in params.items()})
    return pipe


def folds(cv: int, seed: int) -> KFold:
    return KFold(n_splits=cv, shuffle=True, random_state=seed)


@dataclasses.dataclass(frozen=True)
class Fitting:
    """How the combined model is fitted: the SVR's ``grid`` (None:
    :data:`DEFAULT_GRID`) chosen by ``cv``-fold CV, the forest's ``n_estimators``
    trees, the bound calibrated to hold the true z of a share ``level`` of new
    runs; ``seed`` draws every split and the forest. ``inner_cv``: the folds that
    choose the grid inside each training fold when the model is judged out of fold
    (:meth:`in_training_folds`)."""

    grid: Mapping[str, Sequence[float]] | None = None
    cv: int = 10
    inner_cv: int = 5
    seed: int = 0
    n_estimators: int = 100
    level: float = 0.9

    def in_training_folds(self, seed: int | None = None) -> Fitting:
        """The fitting of each training fold's model: the grid by ``inner_cv``-fold
        CV, with ``seed`` if given."""
        return dataclasses.replace(self, cv=self.inner_cv, seed=self.seed if seed is None else seed)


@dataclasses.dataclass(frozen=True)
class Selection:
    """The grid's choice of SVR hyperparameters on some runs."""

    params: dict[str, float]
    score: float  # mean fold R² of ``params`` (GridSearchCV's best_score_)
    fold_scores: np.ndarray
    # Each run predicted with ``params`` by the fold model that did not train on it.
    out_of_fold: np.ndarray


def select_svr(
    X: pd.DataFrame,
    y: Sequence[float],
    *,
    grid: Mapping[str, Sequence[float]] | None = None,
    cv: int = 10,
    seed: int = 0,
) -> Selection:
    """C, γ (and ε) of the SVR by the best mean k-fold R², as GridSearchCV chooses them
    (same candidate order, first of equal scores), keeping the winner's out-of-fold
    predictions: they calibrate the bound without another round of fits."""
    grid = DEFAULT_GRID if grid is None else grid
    y = np.asarray(y, float)
    data = X.to_numpy(float)
    # The scaler does not depend on the SVR's parameters: scaling each fold once
    # gives what svr_pipeline(params) gives, at a fraction of the cost.
    scaled = []
    for train, test in folds(cv, seed).split(data):
        scaler = RobustScaler().fit(data[train])
        scaled.append((train, test, scaler.transform(data[train]), scaler.transform(data[test])))
    best: Selection | None = None
    for params in ParameterGrid({k: list(v) for k, v in grid.items()}):
        predicted = np.empty(len(y))
        scores = []
        for train, test, fit_on, judged in scaled:
            predicted[test] = SVR(kernel="rbf", **params).fit(fit_on, y[train]).predict(judged)
            scores.append(r2_score(y[test], predicted[test]))
        if best is None or np.mean(scores) > best.score:
            chosen = {k: float(v) for k, v in params.items()}
            best = Selection(chosen, float(np.mean(scores)), np.asarray(scores), predicted)
    if best is None:
        raise ValueError("the SVR grid is empty")
    return best


def random_forest(
    X: pd.DataFrame, y: Sequence[float], *, n_estimators: int = 100, seed: int = 0
) -> RandomForestRegressor:
    forest = RandomForestRegressor(n_estimators=n_estimators, random_state=seed)
    return forest.fit(X.to_numpy(float), np.asarray(y, float))


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


def out_of_bag_spread(forest: RandomForestRegressor, X: pd.DataFrame) -> np.ndarray:
    """The spread of the predictions of the trees that did not draw each training run.

    None of a forest's trees has seen a new run, so the trees that left a
    training run out of their bootstrap sample spread over it as the whole forest
    spreads over a new run: this spread calibrates the bound on the training runs
    alone. NaN for a run every tree drew (with 100 trees: about never).
    """
    data = X.to_numpy(np.float32)
    per_tree = np.full((len(forest.estimators_), len(data)), np.nan)
    for i, (tree, drawn) in enumerate(
        zip(forest.estimators_, forest.estimators_samples_, strict=True)
    ):
        left_out = np.ones(len(data), bool)
        left_out[drawn] = False
        if left_out.any():  # with few runs a tree may draw every one of them
            per_tree[i, left_out] = tree.predict(data[left_out])
    counted = np.isfinite(per_tree).sum(axis=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a run no tree left out
        spread = np.nanstd(per_tree, axis=0)
    return np.where(counted >= 2, spread, np.nan)


def calibrated_bound_scale(
    z: Sequence[float], svr: Sequence[float], spread: Sequence[float], level: float
) -> float:
    """The multiple k of the trees' spread for which SVR ± k·spread holds the true z of
    a share ``level`` of new runs (normalised conformal regression, Lei et al. 2018).

    ``svr`` and ``spread`` must be predictions of each run by models that did
    not train on it (out of fold, out of bag). k is the ⌈(n+1)·level⌉-th smallest
    of |z − svr| / spread: for runs exchangeable with these n, SVR ± k·spread
    contains the truth with probability at least ``level``. A zero spread with a
    nonzero residual counts as never contained; runs without a spread are left out.
    """
    if not 0 < level < 1:
        raise ValueError(f"bound level must lie strictly between 0 and 1, not {level}")
    residual = np.abs(np.asarray(z, float) - np.asarray(svr, float))
    spread = np.asarray(spread, float)
    usable = np.isfinite(residual) & np.isfinite(spread)
    residual, spread = residual[usable], spread[usable]
    with np.errstate(divide="ignore", invalid="ignore"):
        scores = np.where(spread > 0, residual / spread, np.where(residual > 0, np.inf, 0.0))
    rank = calibration_rank(len(scores), level)
    if rank > len(scores):
        raise ValueError(
            f"{len(scores)} runs are too few to calibrate a bound that holds for "
            f"{level:.0%} of new runs"
        )
    return float(np.sort(scores)[rank - 1])


def combine(
    svr: np.ndarray, rf: np.ndarray, spread: np.ndarray, bound_scale: float = 1.0
) -> pd.DataFrame:
    """Sec. V-D: SVR ± bound where |SVR − RF| ≤ bound, else no prediction (NaN);
    bound = ``bound_scale`` × the spread of the trees."""
    bound = bound_scale * np.asarray(spread, float)
    accepted = np.abs(np.asarray(svr) - np.asarray(rf)) <= bound
    return pd.DataFrame(
        {
            "svr": svr,
            "rf": rf,
            "spread": spread,
            "bound": bound,
            "accepted": accepted,
            "z": np.where(accepted, svr, np.nan),
        }
    )


def combined_prediction(
    svr: RbfSvr, forest: Forest, bound_scale: float, X: pd.DataFrame
) -> pd.DataFrame:
    """The combined model's estimate of each run of ``X``, indexed as ``X``."""
    data = X.to_numpy(float)
    rf, spread = forest.interval(data)
    out = combine(svr.predict(data), rf, spread, bound_scale)
    out.index = X.index
    return out


@dataclasses.dataclass
class CombinedFit:
    """SVR (grid chosen on the training runs), forest and the bound calibrated on them."""

    svr: RbfSvr
    forest: Forest
    selection: Selection
    bound_scale: float

    def predict(self, X: pd.DataFrame) -> pd.DataFrame:
        return combined_prediction(self.svr, self.forest, self.bound_scale, X)


def fit_combined(X: pd.DataFrame, y: Sequence[float], fitting: Fitting = Fitting()) -> CombinedFit:
    """Everything the combined model learns, from these runs only: the grid's choice
    by ``fitting.cv``-fold CV, the SVR and forest on all of them, and the bound's
    multiple of the trees' spread from the choice's out-of-fold residuals and the
    forest's out-of-bag spread (:func:`calibrated_bound_scale` at ``fitting.level``)."""
    y = np.asarray(y, float)
    selection = select_svr(X, y, grid=fitting.grid, cv=fitting.cv, seed=fitting.seed)
    forest = random_forest(X, y, n_estimators=fitting.n_estimators, seed=fitting.seed)
    spread = out_of_bag_spread(forest, X)
    scale = calibrated_bound_scale(y, selection.out_of_fold, spread, fitting.level)
    return CombinedFit(
        fit_svr(X, y, selection.params), Forest.from_estimator(forest), selection, scale
    )


def fold_estimates(
    X: pd.DataFrame,
    y: np.ndarray,
    fold: int,
    train: np.ndarray,
    test: np.ndarray,
    fitting: Fitting,
) -> pd.DataFrame:
    """Combined estimates of the ``test`` runs by :func:`fit_combined` on the ``train``
    runs with ``fitting``, with their true z, the fold, the bound's multiple and the
    chosen hyperparameters."""
    fitted = fit_combined(X.iloc[train], y[train], fitting)
    part = fitted.predict(X.iloc[test])
    part["z_true"] = y[test]
    part["fold"] = fold
    part["bound_scale"] = fitted.bound_scale
    for name, value in fitted.selection.params.items():
        part[name] = value
    return part


def combined_evaluation(
    X: pd.DataFrame, y: Sequence[float], fitting: Fitting = Fitting(), *, n_jobs: int = 1
) -> tuple[pd.DataFrame, dict[str, float]]:
    """Out-of-fold combined estimates of every run, and their rates.

    Each of the ``fitting.cv`` folds is estimated by a model that never saw it: its
    grid choice (``fitting.inner_cv``-fold CV), SVR, forest and bound multiple come
    from the other folds alone (:func:`fit_combined`). Folds run ``n_jobs`` at a
    time; the result does not depend on it. Rates: see :func:`rates`.
    """
    y = np.asarray(y, float)
    inner = fitting.in_training_folds()
    parts = joblib.Parallel(n_jobs=n_jobs)(
        joblib.delayed(fold_estimates)(X, y, fold, train, test, inner)
        for fold, (train, test) in enumerate(folds(fitting.cv, fitting.seed).split(X))
    )
    table = pd.concat(parts).loc[X.index]
    return table, rates(table)


def rates(table: pd.DataFrame) -> dict[str, float]:
    """The rates of combined estimates with their true z (``z_true``).

    ``coverage``: share of runs given an estimate (paper: 90.2%);
    ``containment``: share of those whose true z is within SVR ± bound (96.1%);
    ``interval_coverage``: share of all runs whose true z is within SVR ± bound
    (what the bound's calibration level promises); R² of the SVR on the runs given
    an estimate and on all.
    """
    inside = (table["z_true"] - table["svr"]).abs() <= table["bound"]
    given = table["accepted"].astype(bool)
    return {
        "n": len(table),
        "coverage": float(given.mean()),
        "containment": float(inside[given].mean()) if given.any() else math.nan,
        "interval_coverage": float(inside.mean()),
        "r2_given": (
            float(r2_score(table.loc[given, "z_true"], table.loc[given, "svr"]))
            if given.sum() > 1
            else math.nan
        ),
        "r2_svr": float(r2_score(table["z_true"], table["svr"])),
    }


@dataclasses.dataclass
class VariabilityModel:
    """SVR + random forest trained on all runs, with the rates measured out of fold."""

    svr: RbfSvr
    forest: Forest
    params: dict[str, float]
    bound_scale: float  # the bound is this multiple of the trees' spread
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
        data = X.loc[:, list(self.features)]
        if not np.isfinite(data.to_numpy(float)).all():
            raise ValueError("the model predicts from finite features only")
        return combined_prediction(self.svr, self.forest, self.bound_scale, data)


def train(
    table: pd.DataFrame, fitting: Fitting = Fitting(), *, n_jobs: int = 1
) -> VariabilityModel:
    """The combined model on all runs (:func:`fit_combined`, the grid chosen by
    ``fitting.cv``-fold CV as the paper's), with its coverage and containment out of
    fold (:func:`combined_evaluation`: every fold's model chosen and calibrated
    without it).

    Runs whose features or z-score are undefined (a counter missing, a single
    run of its application and node count) are left out; ``applications``
    counts the runs used.
    """
    X, y = dataset(table)
    need = minimum_runs(fitting.cv, fitting.inner_cv, fitting.level)
    if len(y) < need:
        raise ValueError(
            f"{len(y)} usable runs: too few for {fitting.cv}-fold cross-validation with "
            f"{fitting.inner_cv}-fold CV inside each training fold and a bound for "
            f"{fitting.level:.0%} of new runs (need {need})"
        )
    fitted = fit_combined(X, y, fitting)
    evaluation, oof = combined_evaluation(X, y, fitting, n_jobs=n_jobs)
    apps = table.loc[X.index, "application"].value_counts().sort_index()
    return VariabilityModel(
        svr=fitted.svr,
        forest=fitted.forest,
        params=fitted.selection.params,
        bound_scale=fitted.bound_scale,
        cv_r2=fitted.selection.score,
        coverage=oof["coverage"],
        containment=oof["containment"],
        evaluation=evaluation,
        applications={str(k): int(v) for k, v in apps.items()},
        seed=fitting.seed,
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
