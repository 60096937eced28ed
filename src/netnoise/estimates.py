"""Measured values with their 95 % intervals, and the statistics a claim is judged by.

An :class:`Estimate` is a value, its interval and the number of units of
replication behind it (pairings, patterns, runs, …): the interval is always
taken over those units, so that the samples a claim needs can be stated in
them. The helpers here build estimates the way a claim's kind needs them: a
mean, a share, the difference of two estimates, a slope over the levels of a
trend and a percentile bootstrap over units.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

#: Significance of every test behind a verdict, and the power a sample-size
#: estimate aims for.
ALPHA = 0.05
POWER = 0.80
Z_INTERVAL = float(stats.norm.ppf(1 - ALPHA / 2))
Z_POWER = float(stats.norm.ppf(POWER))
#: Bootstrap replicates behind a percentile interval, and their seed (an
#: interval is a pure function of its data).
RESAMPLES = 2000
SEED = 20140519


@dataclass(frozen=True)
class Estimate:
    """A measured value with its 95 % interval and the units of replication behind it."""

    value: float
    low: float
    high: float
    samples: int

    @classmethod
    def from_row(
        cls,
        row: Mapping[str, Any],
        value: str,
        samples: str | int,
        low: str | None = None,
        high: str | None = None,
    ) -> Estimate:
        """The estimate a table's row holds: the value in column ``value``, its interval
        in ``low`` and ``high`` (by default ``value`` + ``_ci_low``, ``_ci_high``), its
        samples in column ``samples`` or, given a number, that many."""
        return cls(
            float(row[value]),
            float(row[low or f"{value}_ci_low"]),
            float(row[high or f"{value}_ci_high"]),
            int(row[samples] if isinstance(samples, str) else samples),
        )

    @property
    def measured(self) -> bool:
        return not math.isnan(self.value)

    @property
    def has_interval(self) -> bool:
        return not (math.isnan(self.low) or math.isnan(self.high))

    @property
    def standard_error(self) -> float:
        """The interval's half-width over z₀.₉₇₅ (the wider side, as an interval
        from a bootstrap need not be symmetric)."""
        if not self.has_interval:
            return math.nan
        return max(self.value - self.low, self.high - self.value) / Z_INTERVAL

    def text(self, unit: str = "", digits: int = 3) -> str:
        """``"9.46 % (7.37 to 11.6)"``; without an interval, the value alone."""
        value = f"{self.value:.{digits}g}{unit_suffix(unit)}"
        if not self.has_interval:
            return value
        return f"{value} ({self.low:.{digits}g} to {self.high:.{digits}g})"

    def scaled(self, factor: float, offset: float = 0.0) -> Estimate:
        """The estimate in another unit: ``factor · x + offset`` (a share as a
        percentage, a ratio as a percentage of the unperturbed time)."""
        ends = sorted((self.low * factor + offset, self.high * factor + offset))
        return Estimate(self.value * factor + offset, ends[0], ends[1], self.samples)


NOTHING = Estimate(math.nan, math.nan, math.nan, 0)


def unit_suffix(unit: str) -> str:
    """How a unit follows a number: ``2×``, ``45 %``, ``0.7 R²``."""
    return unit if unit in ("", "×") else f" {unit}"


def mean_estimate(values: Iterable[float]) -> Estimate:
    """The mean of ``values`` with its Student-t 95 % interval."""
    array = np.asarray([v for v in values if not math.isnan(v)], dtype=float)
    if array.size == 0:
        return NOTHING
    mean = float(array.mean())
    if array.size == 1:
        return Estimate(mean, math.nan, math.nan, 1)
    half = stats.t.ppf(1 - ALPHA / 2, array.size - 1) * array.std(ddof=1) / math.sqrt(array.size)
    return Estimate(mean, mean - half, mean + half, int(array.size))


def share_estimate(successes: int, trials: int) -> Estimate:
    """A share with its Wilson 95 % interval (sound at 0 and 1, where a normal
    interval collapses)."""
    if trials <= 0:
        return NOTHING
    share = successes / trials
    z2 = Z_INTERVAL**2
    centre = (share + z2 / (2 * trials)) / (1 + z2 / trials)
    half = (Z_INTERVAL / (1 + z2 / trials)) * math.sqrt(
        share * (1 - share) / trials + z2 / (4 * trials**2)
    )
    return Estimate(share, max(0.0, centre - half), min(1.0, centre + half), trials)


def difference(high: Estimate, low: Estimate) -> Estimate:
    """``high − low`` of two independent estimates, the intervals' half-widths
    added in quadrature on each side."""
    below = math.hypot(high.value - high.low, low.high - low.value)
    above = math.hypot(high.high - high.value, low.value - low.low)
    value = high.value - low.value
    return Estimate(value, value - below, value + above, min(high.samples, low.samples))


def ratio(numerator: Estimate, denominator: Estimate) -> Estimate:
    """``numerator / denominator`` of two independent positive estimates, with
    the delta method's interval from both relative standard errors."""
    value = numerator.value / denominator.value
    relative = math.hypot(
        numerator.standard_error / numerator.value, denominator.standard_error / denominator.value
    )
    half = Z_INTERVAL * value * relative
    return Estimate(value, value - half, value + half, min(numerator.samples, denominator.samples))


def bootstrap_estimate(
    units: Sequence[Any],
    statistic: Callable[[Sequence[Any]], float],
    *,
    strata: Sequence[Any] | None = None,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> Estimate:
    """``statistic`` of ``units`` with its percentile 95 % interval over
    ``resamples`` resamplings of the units with replacement (within each of
    ``strata``, when given: runs per distribution, say), seeded so that the
    interval is a pure function of the data. A replicate whose statistic is
    undefined (nan) is dropped; fewer than half defined leaves no interval."""
    units = list(units)
    value = float(statistic(units))
    if len(units) < 2 or math.isnan(value):
        return Estimate(value, math.nan, math.nan, len(units))
    rng = np.random.default_rng(seed)
    if strata is None:
        groups = [np.arange(len(units))]
    else:
        codes = {stratum: code for code, stratum in enumerate(dict.fromkeys(strata))}
        labels = np.asarray([codes[stratum] for stratum in strata])
        groups = [np.flatnonzero(labels == code) for code in codes.values()]
    replicates = []
    for _ in range(resamples):
        picked = np.concatenate([rng.choice(group, size=group.size) for group in groups])
        replicates.append(statistic([units[i] for i in picked]))
    finite = np.asarray([r for r in replicates if not math.isnan(r)], dtype=float)
    if finite.size < resamples / 2:
        return Estimate(value, math.nan, math.nan, len(units))
    low, high = np.percentile(finite, [100 * ALPHA / 2, 100 * (1 - ALPHA / 2)])
    return Estimate(value, float(low), float(high), len(units))


@dataclass(frozen=True)
class Trend:
    """A slope over a claim's levels, with the levels' rank correlation beside it."""

    slope: Estimate
    levels: int
    spearman: float


def slope_estimate(levels: Sequence[float], means: Sequence[Estimate]) -> Trend:
    """The weighted least-squares slope of ``means`` (each with its interval)
    against ``levels``, over all levels: each level weighs by its inverse
    variance, and where the means scatter about the line more than their
    intervals allow (reduced χ² above 1) the slope's interval widens by that
    much, so that a curve is not read as a precise line. Its samples are the
    units of replication of all levels together."""
    x = np.asarray(levels, dtype=float)
    y = np.asarray([m.value for m in means], dtype=float)
    se = np.asarray([m.standard_error for m in means], dtype=float)
    samples = int(sum(m.samples for m in means))
    spearman = (
        float(stats.spearmanr(x, y).statistic)
        if x.size >= 2 and np.ptp(x) > 0 and np.ptp(y) > 0
        else math.nan
    )
    if x.size < 2 or np.ptp(x) == 0:
        return Trend(Estimate(math.nan, math.nan, math.nan, samples), int(x.size), spearman)
    known = bool(np.all(np.isfinite(se)) and np.all(se > 0))
    weights = 1 / se**2 if known else np.ones_like(y)
    centre = np.average(x, weights=weights)
    sxx = float(np.sum(weights * (x - centre) ** 2))
    slope = float(np.sum(weights * (x - centre) * (y - np.average(y, weights=weights))) / sxx)
    if not known:
        return Trend(Estimate(slope, math.nan, math.nan, samples), int(x.size), spearman)
    intercept = np.average(y, weights=weights) - slope * centre
    dispersion = (
        float(np.sum(weights * (y - intercept - slope * x) ** 2)) / (x.size - 2)
        if x.size > 2
        else 1.0
    )
    half = Z_INTERVAL * math.sqrt(max(1.0, dispersion) / sxx)
    return Trend(Estimate(slope, slope - half, slope + half, samples), int(x.size), spearman)


def samples_for_power(estimate: Estimate, target: float) -> float:
    """Units of replication for a 95 % interval to exclude ``target`` with 80 %
    power, if the effect stays what it is: n·((z₀.₉₇₅ + z₀.₈)·se / gap)², the
    standard error read from the interval's half-width on the target's side.
    Infinite where the value sits on the target."""
    gap = abs(estimate.value - target)
    if gap == 0 or estimate.samples <= 0 or not estimate.has_interval:
        return math.inf
    near = estimate.low if target < estimate.value else estimate.high
    se = abs(estimate.value - near) / Z_INTERVAL
    return estimate.samples * ((Z_INTERVAL + Z_POWER) * se / gap) ** 2
