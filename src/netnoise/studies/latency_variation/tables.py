"""The injector's distribution tables of seed 004: equally likely delays of a
distribution (its bin means, or midpoints), rounded to the injector's unit
without losing the distribution's mean (netnoise.studies.latency_variation.fits
fits the distributions)."""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np
from scipy import special

from netnoise.studies.latency_variation import injector
from netnoise.studies.latency_variation.fits import Lognormal
from netnoise.studies.latency_variation.injector import MAX_DELAY_NS, TABLE_SIZE

TABLE_METHODS = ("bin_mean", "midpoint")


#: A table's mean may move by this share of the distribution's when its values are
#: rounded to the injector's unit: the design of Sec. 6–7 compares equal means.
MAX_ROUNDING_MEAN_ERROR = 0.01


def _frozen(dist: Any):
    return dist.dist() if isinstance(dist, Lognormal) else dist


def _family(frozen: Any) -> str:
    return getattr(getattr(frozen, "dist", frozen), "name", "")


def _lognorm_bin_means(frozen: Any, n: int) -> np.ndarray:
    """Exact means of a log-normal over its ``n`` equal-probability bins.

    With ``X = loc + scale e^{sZ}``, ``E[X; a < Z < b] = loc (Φ(b) − Φ(a)) +
    scale e^{s²/2} (Φ(b − s) − Φ(a − s))``; every bin has probability ``1/n``.
    """
    args, kwds = frozen.args, frozen.kwds
    shape = float(args[0] if args else kwds["s"])
    loc = float(args[1] if len(args) > 1 else kwds.get("loc", 0.0))
    scale = float(args[2] if len(args) > 2 else kwds.get("scale", 1.0))
    z = special.ndtri(np.arange(n + 1) / n)  # −inf … +inf
    a, b = z[:-1] - shape, z[1:] - shape
    # Φ(b) − Φ(a), from whichever tail keeps the difference accurate.
    mass = np.where(a > 0, special.ndtr(-a) - special.ndtr(-b), special.ndtr(b) - special.ndtr(a))
    return loc + scale * math.exp(shape**2 / 2) * n * mass


def _generic_bin_means(frozen: Any, n: int, nodes: int = 16) -> np.ndarray:
    """Bin means of any distribution: Gauss–Legendre on its quantile function.

    The last bin, where an unbounded tail makes quadrature inaccurate, gets
    whatever keeps the total equal to the distribution's mean.
    """
    t, w = np.polynomial.legendre.leggauss(nodes)
    lo = np.arange(n) / n
    u = lo[:, None] + (t[None, :] + 1) / (2 * n)
    means = frozen.ppf(u) @ (w / 2)
    mean = float(frozen.mean())
    if math.isfinite(mean):
        means[-1] = n * mean - means[:-1].sum()
    return means


def quantile_values(dist: Any, n: int = TABLE_SIZE, method: str = "bin_mean") -> np.ndarray:
    """``n`` deterministic values, in increasing order, that represent ``dist``.

    ``"midpoint"``: the quantiles at ``(i + 0.5)/n``. ``"bin_mean"`` (default):
    the mean of ``dist`` over each bin ``[i/n, (i+1)/n)`` of probability.
    Both are deterministic and follow the distribution's shape bin by bin;
    random draws would give every table its own mean and spread (a sample of
    4096 from a heavy-tailed log-normal misses its mean by percents) and make
    tables differ between runs of the workflow. Midpoint quantiles stop at the
    ``1 − 1/(2n)`` quantile and lose the tail's mass above it: for the widest
    mean-preserving log-normals (shape 1.7–2, location 0) the table mean
    falls 1–2 % below the distribution's, and the equal means that the
    design of Sec. 6–7 rests on are lost. Bin means keep the mean exactly (before rounding), remain
    monotone and differ from the midpoints only in the tails.
    """
    if method not in TABLE_METHODS:
        raise ValueError(f"method {method!r}: use one of {', '.join(TABLE_METHODS)}")
    if n < 1:
        raise ValueError("n must be positive")
    frozen = _frozen(dist)
    if method == "midpoint" or _family(frozen) in ("uniform", "constant"):
        # A uniform's quantile function is linear, so its midpoints are its bin means.
        return np.asarray(frozen.ppf((np.arange(n) + 0.5) / n), dtype=float)
    if _family(frozen) == "lognorm":
        return _lognorm_bin_means(frozen, n)
    return _generic_bin_means(frozen, n)


def _check_rounding(values: np.ndarray, table: np.ndarray, unit: float, max_mean_error: float):
    """Refuse a table that rounding to the injector's unit emptied or shifted.

    ``values`` are the exact delays in table units, ``table`` the rounded ones.
    """
    lost = (values > 0) & (table == 0)
    if lost.sum() > 0.5 * (values > 0).sum():
        raise ValueError(
            f"rounding to {unit:g} ns makes {int(lost.sum())} of {len(values)} delays 0 "
            f"(largest exact delay {values.max() * unit:.6g} ns): use a finer table unit"
        )
    exact, rounded = float(values.mean()), float(table.mean())
    if exact > 0 and abs(rounded - exact) > max_mean_error * exact:
        raise ValueError(
            f"rounding to {unit:g} ns moves the table's mean from {exact * unit:.6g} ns to "
            f"{rounded * unit:.6g} ns ({100 * (rounded / exact - 1):+.3g} %, more than "
            f"{100 * max_mean_error:g} %): use a finer table unit"
        )


def distribution_table(
    dist: Any,
    unit_ns: str | float = 1,
    n: int = TABLE_SIZE,
    seed: int | None = None,
    *,
    method: str = "bin_mean",
    dist_unit_ns: float = 1000.0,
    max_mean_error: float = MAX_ROUNDING_MEAN_ERROR,
) -> np.ndarray:
    """The ``n`` delays of an injector table, as integers in the table's unit.

    ``dist`` is a frozen SciPy distribution or a :class:`Lognormal` whose
    values are in units of ``dist_unit_ns`` nanoseconds (µs by default, like
    ``latency_us``); ``unit_ns`` is the table's unit (1 for ns, 1000 for µs,
    or "ns"/"us"). Values come from :func:`quantile_values` and are rounded to
    the nearest integer, so the table's mean is the distribution's within half
    a unit. ``seed=None`` keeps them sorted; an integer shuffles them with
    ``numpy.random.default_rng(seed)``: the injector draws indices uniformly,
    so the order changes nothing for it, but a shuffled table does not depend
    on the index generator covering the table evenly in the short run (the
    paper's "lower 12 bits" of an LCG walk a fixed cycle).

    A unit too coarse for the distribution is refused: rounding that turns
    most positive delays into 0, or moves the table's mean by more than
    ``max_mean_error`` of it (1 % by default), raises ``ValueError``.

    The injector cannot wait a negative time, and a three-parameter
    log-normal fit near its normal limit (location far below the data) puts
    a little mass below 0 when the sample is small or wide. Those delays
    become 0 when that moves the mean by at most ``max_mean_error``; more is
    refused with ``ValueError``.
    """
    unit = float(injector.unit_ns(unit_ns))
    values = quantile_values(dist, n, method) * (float(dist_unit_ns) / unit)
    if not np.all(np.isfinite(values)):
        bad = values[~np.isfinite(values)]
        raise ValueError(f"the distribution gives non-finite delays, e.g. {bad[0]:g}")
    if values.min() < 0:
        exact, clipped = float(values.mean()), np.maximum(values, 0.0)
        if not (exact > 0 and clipped.mean() - exact <= max_mean_error * exact):
            raise ValueError(
                f"the distribution gives {int((values < 0).sum())} of {len(values)} delays "
                f"below 0 (lowest {values.min() * unit:.6g} ns, mean {exact * unit:.6g} ns): "
                f"as 0 they would move the mean more than {100 * max_mean_error:g} %; "
                "inject the excess over the baseline or refit"
            )
        values = clipped
    table = np.rint(values)
    if table.max() * unit > MAX_DELAY_NS:
        raise ValueError(f"a delay of {table.max() * unit:.6g} ns exceeds the injector's 60 s")
    _check_rounding(values, table, unit, max_mean_error)
    table = table.astype(np.int64)
    if seed is not None:
        table = np.random.default_rng(seed).permutation(table)
    return table


def write_distribution(
    dist: Any,
    table_path: str | os.PathLike[str],
    seed_path: str | os.PathLike[str],
    unit: str = "ns",
    *,
    seed: int = 0,
    shuffle_seed: int | None = None,
    method: str = "bin_mean",
    dist_unit_ns: float = 1000.0,
) -> dict[str, float]:
    """Write ``dist`` as the injector's table (512 × 8 integers) and its seed file.

    ``unit`` is the table's unit, as ``NN_LATENCY_UNIT`` ("ns" or "us");
    ``seed`` goes to the seed file (the injector's LCG), ``shuffle_seed`` to
    :func:`distribution_table`. Both files are written atomically by
    :mod:`netnoise.studies.latency_variation.injector`. Returns a summary of the table against the
    distribution, in the distribution's units.
    """
    if unit not in injector.UNITS:
        raise ValueError(f"unit {unit!r}: the injector knows {', '.join(injector.UNITS)}")
    table = distribution_table(
        dist, unit, TABLE_SIZE, shuffle_seed, method=method, dist_unit_ns=dist_unit_ns
    )
    injector.write_table(table.tolist(), table_path, unit=unit)
    injector.write_seed(seed_path, seed)
    to_dist = injector.unit_ns(unit) / float(dist_unit_ns)
    dist_mean, dist_std = moments(dist)
    return {
        "table_mean": float(table.mean()) * to_dist,
        "table_std": float(table.std()) * to_dist,
        "table_min": float(table.min()) * to_dist,
        "table_max": float(table.max()) * to_dist,
        "dist_mean": dist_mean,
        "dist_std": dist_std,
    }


def moments(dist: Any) -> tuple[float, float]:
    """Mean and standard deviation of a distribution; a constant's spread is exactly 0.

    SciPy computes a one-point distribution's variance as ``E[X²] − E[X]²``,
    which is NaN once ``E[X²]`` overflows; a constant has no spread by
    definition. A non-finite moment of any other distribution raises
    ``ValueError`` naming it.
    """
    frozen = _frozen(dist)
    mean = float(frozen.mean())
    std = 0.0 if _family(frozen) == "constant" else float(frozen.std())
    if not (math.isfinite(mean) and math.isfinite(std)):
        raise ValueError(f"distribution with mean {mean!r} and std {std!r}: both must be finite")
    return mean, std
