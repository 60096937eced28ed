"""Every level's distributions of seed 004 (Sec. 5.3): the log-normal fitted to its
latency, the constant delay of its mean, the log-normals of smaller scale at the
same mean and, where asked, those of a given spread; one row each, and the
distribution of a row."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from netnoise.studies.latency_variation.fits import (
    FRACTIONS,
    Lognormal,
    fit_lognormal,
    mean_preserving_lognormals,
    uniform_same_mean,
)
from netnoise.studies.latency_variation.names import std_name


def _tag(fraction: float) -> str:
    return f"scale{100 * fraction:g}"


def fit_levels(
    samples: pd.DataFrame,
    fractions: Sequence[float] = FRACTIONS,
    mean_from: str = "observed",
) -> pd.DataFrame:
    """Sec. 5.3 for every congestion level: one row per ``level``.

    ``samples`` has one row per latency sample: ``level``, ``latency_us``.
    Columns: the sample's ``n, mean_us, std_us, median_us, min_us, max_us``;
    the fit's ``shape, loc_us, scale_us, loglik, fit_candidate, fit_mean_us,
    fit_std_us``; ``target_mean_us`` (the mean the constant delay and the
    derived log-normals share: the observations' mean as in the paper, or the
    fit's with ``mean_from="fit"``); and for every scale fraction ``f``
    (tag ``scale25`` …) ``shape_scale25, scale_us_scale25, std_us_scale25``.
    :func:`distributions` turns a row into the five distributions. A level
    with a sample that is not a positive finite latency raises ``ValueError``.
    """
    if mean_from not in ("observed", "fit"):
        raise ValueError("mean_from must be 'observed' or 'fit'")
    missing = {"level", "latency_us"} - set(samples.columns)
    if missing:
        raise ValueError(f"samples lack column(s) {', '.join(sorted(missing))}")
    rows = []
    for level, group in samples.groupby("level", sort=True):
        x = group["latency_us"].to_numpy(float)
        try:
            fit = fit_lognormal(x, fractions, mean_from)
        except ValueError as err:
            raise ValueError(f"level {level}: {err}") from err
        target = fit.sample_mean if mean_from == "observed" else fit.mean
        row: dict[str, Any] = {
            "level": level,
            "n": len(x),
            "mean_us": float(x.mean()),
            "std_us": float(x.std(ddof=1)),
            "median_us": float(np.median(x)),
            "min_us": float(x.min()),
            "max_us": float(x.max()),
            "shape": fit.shape,
            "loc_us": fit.loc,
            "scale_us": fit.scale,
            "loglik": fit.loglik,
            "fit_candidate": fit.candidate,
            "fit_mean_us": fit.mean,
            "fit_std_us": fit.std,
            "target_mean_us": target,
        }
        for derived in mean_preserving_lognormals(fit, fractions, target_mean=target):
            tag = _tag(derived.fraction)
            row[f"shape_{tag}"] = derived.shape
            row[f"scale_us_{tag}"] = derived.scale
            row[f"std_us_{tag}"] = derived.std
        rows.append(row)
    return pd.DataFrame(rows)


def with_mean_and_std(loc: float, mean: float, std: float) -> Lognormal:
    """The log-normal with location ``loc``, ``mean`` and standard deviation ``std``
    (``std`` 0: no spread, a constant at ``mean``)."""
    above = mean - loc
    if not above > 0:
        raise ValueError(f"mean {mean} µs must lie above the location {loc} µs")
    if std < 0 or not math.isfinite(std):
        raise ValueError(f"standard deviation {std} µs: expected a finite value >= 0")
    sigma2 = math.log1p((std / above) ** 2)
    return Lognormal(math.sqrt(sigma2), loc, above * math.exp(-sigma2 / 2))


def distributions(levels: pd.DataFrame, stds_us: Sequence[float] = ()) -> pd.DataFrame:
    """The five distributions of every level, then (``stds_us``) the grid: one
    log-normal per standard deviation with the level's target mean; one row each (tidy).

    Columns ``level, distribution, family, shape, loc_us, scale_us, mean_us,
    std_us``; ``distribution`` is ``lognorm`` (the fit), ``uniform`` (the
    constant delay at the target mean) or ``lognorm_scale25`` …; ``family``
    is ``lognorm`` or ``constant``. :func:`frozen_distribution` rebuilds one.
    """
    rows = []
    for rec in levels.to_dict("records"):
        fit = Lognormal(rec["shape"], rec["loc_us"], rec["scale_us"])
        rows.append(_dist_row(rec["level"], "lognorm", fit))
        m = rec["target_mean_us"]
        rows.append(
            {
                "level": rec["level"],
                "distribution": "uniform",
                "family": "constant",
                "shape": 0.0,
                "loc_us": m,
                "scale_us": 0.0,
                "mean_us": m,
                "std_us": 0.0,
            }
        )
        tags = sorted(
            (c.removeprefix("shape_") for c in rec if c.startswith("shape_scale")),
            key=lambda t: -float(t.removeprefix("scale")),
        )
        for tag in tags:
            derived = Lognormal(rec[f"shape_{tag}"], rec["loc_us"], rec[f"scale_us_{tag}"])
            rows.append(_dist_row(rec["level"], f"lognorm_{tag}", derived))
        for std in sorted(stds_us):
            # The grid's location: the fit's, unless it is not below the mean.
            loc = min(rec["loc_us"], 0.5 * m)
            grid = with_mean_and_std(loc, m, std)
            row = _dist_row(rec["level"], std_name(std), grid)
            if std == 0:
                row |= {"family": "constant", "shape": 0.0, "loc_us": m, "scale_us": 0.0}
            rows.append(row)
    return pd.DataFrame(rows)


def _dist_row(level: Any, name: str, d: Lognormal) -> dict[str, Any]:
    return {
        "level": level,
        "distribution": name,
        "family": "lognorm",
        "shape": d.shape,
        "loc_us": d.loc,
        "scale_us": d.scale,
        "mean_us": d.mean,
        "std_us": d.std,
    }


def frozen_distribution(row: dict[str, Any] | pd.Series):
    """The SciPy distribution of one row of :func:`distributions`."""
    if row["family"] == "constant":
        return uniform_same_mean(float(row["mean_us"]))
    if row["family"] == "lognorm":
        return Lognormal(float(row["shape"]), float(row["loc_us"]), float(row["scale_us"])).dist()
    raise ValueError(f"family {row['family']!r}: expected lognorm or constant")
