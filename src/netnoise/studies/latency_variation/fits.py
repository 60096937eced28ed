"""Latency distributions of seed 004 (Sec. 5.3), fitted and derived.

For every level of background congestion the paper fits five distributions to
the measured latency (Sec. 5.3):

- a log-normal with shape ``s``, location ``loc`` and scale (SciPy's
  ``lognorm.fit``);
- a "uniform" distribution with one parameter, the mean of the observations,
  which the paper calls "equivalent to a lognormal distribution with zero
  variance": a constant delay, every table entry equal to the mean
  (:func:`uniform_same_mean`; a width can be given for a true uniform);
- three log-normals with the scale at 25 %, 50 % and 75 % of the fitted one
  and the shape found by binary search so that the mean is that of the
  observations, the location kept (:func:`mean_preserving_lognormals`).

Direction of the spread. With ``loc`` and the mean fixed,
``mean − loc = scale · exp(s²/2)``, so a smaller scale forces a larger shape,
and the variance ``(mean − loc)² (exp(s²) − 1)`` grows: the 25 % log-normal is
the widest, the fitted one (100 %) the narrowest log-normal, the constant
delay has none. This is the paper's intent: Sec. 7 varies "the standard
deviation of the latency ... by adjusting the scale parameter" at a fixed
mean, and the latency standard deviations "above 400 µs" of Sec. 7 are far
beyond what the fitted congestion distributions (Fig. 3) show, which only the
shrunken scales produce. Sec. 5.3 calls the three "intermediate"; with the
location kept they are not intermediate in spread between the constant and
the fit, they are wider than the fit.

Units: samples and parameters are in microseconds (``latency_us``); injector
tables are integers in the injector's unit (``NN_LATENCY_UNIT``: ns or µs).

Bad input. A latency is positive and finite: samples with a zero, negative,
NaN or infinite value are refused with a ``ValueError`` that counts them and
names the first, rather than dropped (1 % zeros silently accepted moved a
fitted shape from 0.92 to 0.53); the caller decides what a bad sample means.
The fit's search scales with a robust spread, ``median − min``, not the full
range, so one outlier among hundreds of thousands of samples does not move
its bounds (:func:`robust_spread`). Every distribution that cannot be derived
(a target mean at or below the location, a scale fraction that is not a
positive finite number or needs an unrepresentable shape, a non-finite
constant) raises a ``ValueError`` naming the value, and a table whose
rounding to the injector's unit loses its mean or most of its entries is
refused (:func:`netnoise.studies.latency_variation.tables.distribution_table`).
Every level's distributions are in :mod:`netnoise.studies.latency_variation.level_fits`.
"""

from __future__ import annotations

import contextlib
import math
import numbers
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import optimize, stats

from netnoise.studies.latency_variation.injector import TABLE_SIZE

#: Scale fractions of the paper's intermediate log-normals (Sec. 5.3).
FRACTIONS = (0.25, 0.5, 0.75)
#: The profile search for the location spans gaps ``min(x) − loc`` from this share of
#: the robust spread (far below any gap a fitted sample of latencies has) ...
GAP_FLOOR = 1e-12
#: ... to this multiple of it (the normal limit, shape → 0).
GAP_CEILING = 1e4
#: Points per unit of log(gap) of the grid that brackets the profile's maximum.
GAP_GRID_DENSITY = 4


@dataclass(frozen=True)
class Lognormal:
    """A three-parameter log-normal in SciPy's parametrisation.

    ``X = loc + scale · exp(shape · Z)`` with ``Z`` standard normal, i.e.
    ``scipy.stats.lognorm(shape, loc=loc, scale=scale)``.
    """

    shape: float
    loc: float
    scale: float

    def __post_init__(self):
        for name, value, ok in (
            ("shape", self.shape, lambda v: v >= 0),
            ("loc", self.loc, lambda v: True),
            ("scale", self.scale, lambda v: v > 0),
        ):
            if not (isinstance(value, numbers.Real) and math.isfinite(value) and ok(value)):
                allowed = {"shape": "≥ 0", "loc": "finite", "scale": "> 0"}[name]
                raise ValueError(f"log-normal {name} {value!r}: must be a finite number {allowed}")

    def dist(self):
        return stats.lognorm(self.shape, loc=self.loc, scale=self.scale)

    @property
    def mean(self) -> float:
        return self.loc + self.scale * math.exp(self.shape**2 / 2)

    @property
    def var(self) -> float:
        s2 = self.shape**2
        return self.scale**2 * math.exp(s2) * math.expm1(s2)

    @property
    def std(self) -> float:
        return math.sqrt(self.var)

    @property
    def median(self) -> float:
        return self.loc + self.scale


@dataclass(frozen=True)
class LognormalFit(Lognormal):
    """A log-normal fitted to samples, with what the fit was made from."""

    n: int = 0
    loglik: float = math.nan
    sample_mean: float = math.nan
    sample_std: float = math.nan
    #: (shape, loc, scale) of the quantile start (see :func:`quantile_start`)
    start: tuple[float, float, float] = field(default=(math.nan,) * 3)
    #: which candidate won: "scipy", "profile" or "location0"
    candidate: str = ""


@dataclass(frozen=True)
class ScaledLognormal(Lognormal):
    """A log-normal derived from a fit: scale × ``fraction``, shape re-solved for the mean."""

    fraction: float = 1.0
    target_mean: float = math.nan


# ------------------------------------------------------------------ fitting


def _latencies(samples: Any) -> np.ndarray:
    """The samples as a flat float array; refuses non-finite and non-positive values."""
    x = np.asarray(samples, dtype=float).ravel()
    for problem, bad in (
        ("not finite", ~np.isfinite(x)),
        ("not positive (a latency is > 0)", np.isfinite(x) & (x <= 0)),
    ):
        if bad.any():
            first = np.flatnonzero(bad)[:3]
            shown = ", ".join(f"[{i}] = {x[i]:g}" for i in first)
            raise ValueError(
                f"latency samples: {int(bad.sum())} of {len(x)} are {problem}, e.g. {shown}; "
                "remove or correct them before fitting"
            )
    if len(np.unique(x)) < 3:
        raise ValueError("a log-normal fit needs at least three distinct finite samples")
    return x


def robust_spread(samples: Any) -> float:
    """``median − min`` of latency samples: the scale the fit's search is set in.

    The full range (``max − min``) of latency samples is set by their largest
    outlier: one 10 ms sample among half a million of a few µs made it 10⁴
    times the body's width and pushed the location search's floor above the
    true gap. The distance from the minimum to the median only depends on
    the lower half. If more than half the samples equal the minimum, the
    interquartile range, then the full range stands in.
    """
    x = _latencies(samples)
    lo, q1, median, q3 = np.quantile(x, [0, 0.25, 0.5, 0.75])
    for spread in (median - lo, q3 - q1, float(np.ptp(x))):
        if spread > 0:
            return float(spread)
    raise ValueError("latency samples: all equal, no spread")


def quantile_start(samples: Any, p: float = 0.1) -> tuple[float, float, float]:
    """Start values (shape, loc, scale) matched to three quantiles of the samples.

    With ``x_q = loc + scale · exp(s z_q)``, the median ``m = loc + scale`` and the
    quantiles at ``p`` and ``1 − p`` give ``a = x_{1−p} − m = scale (e^{s z} − 1)``
    and ``b = m − x_p = scale (1 − e^{−s z})``, so ``s = ln(a/b) / z``,
    ``scale = a b / (a − b)`` and ``loc = m − scale``. Quantiles ignore the
    outliers of the latency samples (Fig. 4 of the paper shows one above 20 µs)
    that pull moment-based starts. Data that are not skewed right (``a ≤ b``)
    get a narrow log-normal placed below the data.
    """
    x = _latencies(samples)
    z = stats.norm.isf(p)
    lo, m, hi = np.quantile(x, [p, 0.5, 1 - p])
    a, b = hi - m, m - lo
    if b > 0 and a > b * (1 + 1e-9):
        shape = math.log(a / b) / z
        scale = a * b / (a - b)
        return shape, m - scale, scale
    scale = 10.0 * robust_spread(x)
    return 0.1, m - scale, scale


def _loglik(x: np.ndarray, shape: float, loc: float, scale: float) -> float:
    return float(np.sum(stats.lognorm.logpdf(x, shape, loc=loc, scale=scale)))


def _profile(x: np.ndarray, loc: float) -> tuple[float, float]:
    """Closed-form ML shape and scale at a fixed location below the data."""
    ln = np.log(x - loc)
    return float(ln.std()), float(math.exp(ln.mean()))


def _profile_loglik(x: np.ndarray, loc: float) -> float:
    """The log-likelihood at ``loc`` with the ML shape and scale, in closed form.

    With ``l = ln(x − loc)``, μ and σ its mean and (ML) standard deviation:
    ``Σ ln f = −Σ l − n ln σ − n/2 ln 2π − n/2``.
    """
    ln = np.log(x - loc)
    sigma = float(ln.std())
    if not sigma > 0:
        return -math.inf
    n = len(x)
    return -float(ln.sum()) - n * math.log(sigma) - n / 2 * (math.log(2 * math.pi) + 1)


def _profile_fit(x: np.ndarray, start_loc: float, spread: float) -> tuple[float, float, float]:
    """Maximise the profile log-likelihood over the gap ``min(x) − loc`` (log scale).

    The gap is searched from ``GAP_FLOOR`` to ``GAP_CEILING`` times the robust
    ``spread`` (and at least 10⁴ times the start's gap): first on a grid of
    ``GAP_GRID_DENSITY`` points per unit of ln(gap), then by Brent's bounded
    method between the grid neighbours of the best point. The best point is
    the highest interior local maximum of the grid: the likelihood also
    rises towards the floor, its singularity at ``loc → min(x)`` (Hill 1963),
    steeply where many samples tie at the minimum (coarse timers). Only
    without an interior maximum does an end win: the ceiling is the normal
    limit (data not skewed), the floor the singularity that
    :func:`fit_lognormal` refuses.
    """
    x_min = float(x.min())
    gap0 = max(x_min - start_loc, GAP_FLOOR * spread)
    lo = math.log(GAP_FLOOR * spread)
    hi = math.log(max(gap0, spread) * GAP_CEILING)

    def neg(t: float) -> float:
        return -_profile_loglik(x, x_min - math.exp(t))

    grid = np.linspace(lo, hi, max(int(GAP_GRID_DENSITY * (hi - lo)), 8))
    values = np.array([neg(t) for t in grid])
    inner = values[1:-1]
    local = np.flatnonzero((inner <= values[:-2]) & (inner <= values[2:])) + 1
    best = int(local[np.argmin(values[local])]) if len(local) else int(np.argmin(values))
    bracket = (grid[max(best - 1, 0)], grid[min(best + 1, len(grid) - 1)])
    res = optimize.minimize_scalar(neg, bounds=bracket, method="bounded", options={"xatol": 1e-10})
    t = float(res.x) if res.fun <= values[best] else float(grid[best])
    loc = x_min - math.exp(t)
    shape, scale = _profile(x, loc)
    return shape, loc, scale


def _most_likely(
    x: np.ndarray, candidates: dict[str, tuple[float, float, float]], lowest_loc: float
) -> tuple[str | None, float]:
    """The candidate (shape, loc, scale) of the largest log-likelihood with its
    location in ``[lowest_loc, min(x))``, and that log-likelihood."""
    x_min, spread = float(x.min()), robust_spread(x)
    best, best_ll = None, -math.inf
    for name, (shape, loc, scale) in candidates.items():
        if not (shape > 0 and scale > 0 and lowest_loc <= loc and x_min - loc > 1e-10 * spread):
            continue
        ll = _loglik(x, shape, loc, scale)
        if math.isfinite(ll) and ll > best_ll:
            best, best_ll = name, ll
    return best, best_ll


def _target_mean(x: np.ndarray, params: tuple[float, float, float], mean_from: str) -> float:
    """The mean the derived log-normals share: the observations' or the fit's."""
    if mean_from not in ("observed", "fit"):
        raise ValueError("mean_from must be 'observed' or 'fit'")
    return float(x.mean()) if mean_from == "observed" else Lognormal(*params).mean


def _share_below_zero(params: tuple[float, float, float]) -> float:
    shape, loc, scale = params
    return float(stats.lognorm.cdf(0.0, shape, loc=loc, scale=scale))


def _injects_below_zero(
    params: tuple[float, float, float], target_mean: float, fractions: Sequence[float]
) -> bool:
    """Whether the fit, or a log-normal derived from it with its location kept
    (:func:`mean_preserving_lognormals` at ``fractions`` and ``target_mean``), puts
    at least one of an injector table's equally likely delays below 0."""
    shape, loc, scale = params
    derived: list[tuple[float, float, float]] = [params]
    if loc < 0 and fractions:
        with contextlib.suppress(ValueError):
            derived += [
                (d.shape, d.loc, d.scale)
                for d in mean_preserving_lognormals(
                    Lognormal(shape, loc, scale), fractions, target_mean=target_mean
                )
            ]
    return any(_share_below_zero(d) >= 1 / TABLE_SIZE for d in derived)


def fit_lognormal(
    samples: Any, fractions: Sequence[float] = (), mean_from: str = "observed"
) -> LognormalFit:
    """Maximum-likelihood three-parameter log-normal, as the paper's ``lognormal.fit``.

    Robust start: the three-parameter log-normal likelihood is unbounded along
    ``loc → min(x)`` (Hill 1963), and an optimiser started from moment
    estimates can run into that boundary or into the ``s → 0, loc → −∞``
    normal limit. The fit therefore

    1. computes start values from quantiles (:func:`quantile_start`, robust to
       the outliers of latency samples) and passes them to
       ``scipy.stats.lognorm.fit`` ("scipy" candidate). Recent SciPy (1.17
       here) solves the location's likelihood equation directly (Cohen & Whitten 1980) and uses
       the start values on its generic-optimiser fallback; SciPy 0.16, which
       the paper used, always used them;
    2. maximises the profile likelihood over the location from the same start
       ("profile" candidate);
    3. keeps the candidate with the larger log-likelihood among those whose
       location lies strictly below the data (a location within 1e-10 of the
       robust spread, :func:`robust_spread`, from ``min(x)`` is the
       degenerate boundary solution and refused).

    The fit becomes an injector table, which cannot hold a negative delay. A
    sample near-symmetric or bimodal enough (a loaded loopback: a fast path
    and a queued one) drifts towards the normal limit, where the fit can put
    a good part of its mass below 0. When at least one of the table's
    ``TABLE_SIZE`` equally likely delays would be negative, the fit is
    therefore made again with its location in ``[0, min(x))``, the
    two-parameter log-normal (location 0, "location0" candidate) among the
    candidates. The same holds for the log-normals derived at the scale
    ``fractions`` (:func:`mean_preserving_lognormals`, mean of the observations
    or, with ``mean_from="fit"``, of the fit): they keep the fit's location but
    spread wider, so a location a little below 0 that the fit itself barely
    reaches puts a good part of theirs below 0. The paper's latencies, skewed
    to the right, fit far from that.

    Samples must be positive and finite (a ``ValueError`` counts the others).
    """
    x = _latencies(samples)
    spread = robust_spread(x)
    start = quantile_start(x)
    candidates: dict[str, tuple[float, float, float]] = {}
    with contextlib.suppress(ValueError, RuntimeError, FloatingPointError):
        candidates["scipy"] = tuple(
            float(v) for v in stats.lognorm.fit(x, start[0], loc=start[1], scale=start[2])
        )
    candidates["profile"] = _profile_fit(x, start[1], spread)
    best, best_ll = _most_likely(x, candidates, lowest_loc=-math.inf)
    if best is not None and _injects_below_zero(
        candidates[best], _target_mean(x, candidates[best], mean_from), fractions
    ):
        shape0, scale0 = _profile(x, 0.0)
        candidates["location0"] = (shape0, 0.0, scale0)
        best, best_ll = _most_likely(x, candidates, lowest_loc=0.0)
    if best is None:
        raise ValueError("no log-normal fit with its location below the data converged")
    shape, loc, scale = candidates[best]
    return LognormalFit(
        shape=shape,
        loc=loc,
        scale=scale,
        n=len(x),
        loglik=best_ll,
        sample_mean=float(x.mean()),
        sample_std=float(x.std(ddof=1)),
        start=start,
        candidate=best,
    )


# --------------------------------------------------------- derived distributions


def _as_mean(value: Any) -> float:
    if isinstance(value, Lognormal):
        return value.mean
    arr = np.asarray(value, dtype=float)
    if arr.ndim == 0:
        mean = float(arr)
    else:
        bad = ~np.isfinite(arr)
        if bad.any() or len(arr) == 0:
            raise ValueError(
                f"samples for a mean: {int(bad.sum())} of {arr.size} are not finite"
                if len(arr)
                else "no sample to take the mean of"
            )
        mean = float(arr.mean())
    if not (math.isfinite(mean) and mean >= 0):
        raise ValueError(f"mean {mean!r}: a constant delay is a finite number ≥ 0")
    return mean


def uniform_same_mean(mean: Any, width: float = 0.0):
    """The paper's "uniform" distribution: the observations' mean, no spread.

    ``mean`` is a number, an array of samples (their mean is used, as in the
    paper: "computed directly from the observations") or a fitted
    :class:`Lognormal` (its mean). The paper's uniform has one parameter and
    "zero variance", i.e. a constant delay: it is returned as a point mass
    (``scipy.stats.rv_discrete`` with one value), whose quantiles are all the
    mean. ``width > 0`` gives a true uniform on ``mean ± width/2`` instead.
    """
    m = _as_mean(mean)
    if not (math.isfinite(width) and width >= 0):
        raise ValueError(f"width {width!r}: must be a finite number ≥ 0")
    if width > 2 * m:
        raise ValueError(f"width {width!r}: a uniform on {m:.6g} ± width/2 goes below 0")
    if width == 0:
        return stats.rv_discrete(name="constant", values=([m], [1.0]))
    return stats.uniform(loc=m - width / 2, scale=width)


def mean_preserving_lognormals(
    fit: Lognormal, fractions: Iterable[float] = FRACTIONS, target_mean: float | None = None
) -> list[ScaledLognormal]:
    """Log-normals with scale ``fraction × fit.scale``, location kept, same mean.

    The shape is found by bisection (Brent's bracketed root finder,
    ``scipy.optimize.brentq``), as the paper's "binary search", on the
    log-normal's mean ``loc + scale · exp(s²/2)``; the closed form
    ``s = sqrt(2 ln((mean − loc)/scale))`` is what the tests check it
    against. ``target_mean`` defaults to the mean of ``fit``; the paper
    matches "the mean of the observations" (pass ``fit.sample_mean``). A solution exists only when
    ``fraction × scale < target_mean − loc`` (the mean at shape 0); for
    ``fraction < 1`` and the fit's own mean that always holds. See the module
    docstring for why the spread grows as the fraction shrinks.

    The search runs on ``ln(mean − loc)``, so no fraction overflows it; a
    fraction so small that the derived log-normal's variance is not a finite
    double, a fraction that is not a positive finite number, and a target at or
    below the location raise ``ValueError`` naming the value.
    """
    target = fit.mean if target_mean is None else float(target_mean)
    if not (math.isfinite(target) and target > fit.loc):
        raise ValueError(
            f"target mean {target!r}: must be a finite number above the location "
            f"{fit.loc:.6g} (the mean of a log-normal exceeds its location)"
        )
    log_excess = math.log(target - fit.loc)
    out = []
    for f in fractions:
        f = float(f)
        if not (math.isfinite(f) and f > 0):
            raise ValueError(f"scale fraction {f!r}: must be a positive finite number")
        scale = f * fit.scale
        if not scale > 0:
            raise ValueError(f"scale fraction {f!r}: the scale {fit.scale:.6g} × {f!r} is 0")

        def excess(shape: float, log_scale: float = math.log(scale)) -> float:
            # ln(mean − loc) = ln(scale) + s²/2, increasing in s, never overflowing.
            return log_scale + shape**2 / 2 - log_excess

        if excess(0.0) >= 0:
            raise ValueError(
                f"scale fraction {f!r}: even shape 0 gives a mean of {fit.loc + scale:.6g}, "
                f"not below the target {target:.6g}"
            )
        hi = max(1.0, 2 * fit.shape)
        while excess(hi) <= 0:
            hi *= 2
        shape = optimize.brentq(excess, 0.0, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps)
        derived = ScaledLognormal(
            shape=float(shape), loc=fit.loc, scale=scale, fraction=f, target_mean=target
        )
        try:
            std = derived.std
        except OverflowError:
            std = math.inf
        if not math.isfinite(std):
            raise ValueError(
                f"scale fraction {f!r}: the shape {shape:.6g} that keeps the mean {target:.6g} "
                "gives a standard deviation beyond any double; use a larger fraction"
            )
        out.append(derived)
    return out
