"""A trained variability model on disk (seed 002): one .npz of plain arrays and a
JSON header, written atomically and read back strictly, nothing executed on
reading (no pickle)."""

from __future__ import annotations

import json
import math
import os
import zipfile
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from netnoise import inputs
from netnoise.atomic import atomic_path
from netnoise.studies.variability.features import FEATURES
from netnoise.studies.variability.model import Forest, RbfSvr, VariabilityModel

MODEL_FORMAT = "netnoise-variability/2"


# A model file's arrays, unpacked, at most: 200 times a model of 100 trees on 5000 runs.
MAX_MODEL_BYTES = 1 << 30


_SVR_ARRAYS = ("center", "scale", "support_vectors", "dual_coef")


_FOREST_ARRAYS = ("roots", "left", "right", "feature", "threshold", "value")


_FOREST_FLOATS = ("threshold", "value")


#: Columns of the out-of-fold evaluation, with their dtype kinds (besides one float
#: column per SVR hyperparameter, the fold's choice); "z" is NaN where no estimate.
_EVALUATION = {
    "svr": "f", "rf": "f", "spread": "f", "bound": "f", "accepted": "b", "z": "f",
    "z_true": "f", "fold": "i", "bound_scale": "f",
}  # fmt: skip


def _evaluation_kinds(columns: Sequence[str], params: Mapping[str, Any]) -> dict[str, str]:
    """The dtype kind of each evaluation column; ValueError for one not known."""
    unknown = [c for c in columns if c not in _EVALUATION and c not in params]
    if unknown:
        raise ValueError(f"unknown evaluation columns {unknown}")
    return {c: _EVALUATION.get(c, "f") for c in columns}


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
        "evaluation_columns": list(model.evaluation.columns),
    }
    arrays = {f"svr_{k}": getattr(model.svr, k) for k in _SVR_ARRAYS}
    arrays |= {f"forest_{k}": getattr(model.forest, k) for k in _FOREST_ARRAYS}
    evaluation = model.evaluation
    arrays["evaluation_index"] = evaluation.index.to_numpy(np.int64)
    _evaluation_kinds(evaluation.columns, model.params)
    arrays |= {f"evaluation_{k}": evaluation[k].to_numpy() for k in evaluation.columns}
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
        inputs.check_file(path, MAX_MODEL_BYTES, "model file (.npz)")
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
                for k, kind in _evaluation_kinds(
                    [str(c) for c in record["evaluation_columns"]], record["params"]
                ).items()
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
