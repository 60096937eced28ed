"""Seed 004 Sec. 5.3: the log-normal fits, the distributions derived from them and
the injector tables made from those."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from netnoise.studies.latency_variation import fits as latency
from netnoise.studies.latency_variation import level_fits, tables

# ------------------------------------------------------------------ fitting


@pytest.mark.parametrize(
    ("shape", "loc", "scale"),
    [(0.5, 5.0, 1.2), (0.25, 5.9, 0.4), (1.0, 2.0, 3.0)],
)
def test_fit_recovers_known_lognormal_parameters(shape, loc, scale):
    rng = np.random.default_rng(4)
    x = stats.lognorm.rvs(shape, loc=loc, scale=scale, size=100_000, random_state=rng)
    fit = latency.fit_lognormal(x)
    assert fit.shape == pytest.approx(shape, rel=0.03)
    assert fit.scale == pytest.approx(scale, rel=0.03)
    assert fit.loc == pytest.approx(loc, abs=0.02 * scale)
    assert fit.n == len(x)
    assert fit.mean == pytest.approx(loc + scale * math.exp(shape**2 / 2), rel=5e-3)
    assert fit.loc < x.min()


def test_quantile_start_is_close_to_the_truth():
    x = stats.lognorm.rvs(0.5, loc=5.0, scale=1.2, size=50_000, random_state=1)
    shape, loc, scale = latency.quantile_start(x)
    assert shape == pytest.approx(0.5, rel=0.1)
    assert loc == pytest.approx(5.0, abs=0.1)
    assert scale == pytest.approx(1.2, rel=0.1)


def paper_like_latency(rng: np.random.Generator) -> np.ndarray:
    """Fig. 4 of the paper: a mode near 6.1 µs, a minor one at 7.2 µs, two outliers > 20 µs,
    rounded to 10 ns."""
    main = 5.5 + rng.lognormal(np.log(0.6), 0.3, 8000)
    minor = 7.2 + rng.normal(0, 0.1, 1500)
    return np.round(np.concatenate([main, minor, [21.0, 25.0]]), 2)


@pytest.mark.parametrize(
    "sample",
    [
        paper_like_latency(np.random.default_rng(1)),
        np.random.default_rng(2).normal(10, 1, 5000),  # the s → 0, loc → −∞ limit
        3 + np.random.default_rng(3).exponential(1, 5000),
    ],
    ids=["paper-like", "normal", "shifted-exponential"],
)
def test_fit_is_interior_and_never_worse_than_plain_scipy(sample):
    fit = latency.fit_lognormal(sample)
    plain = stats.lognorm.fit(sample)
    plain_ll = np.sum(stats.lognorm.logpdf(sample, *plain))
    assert fit.loc < sample.min() - 1e-8 * np.ptp(sample)
    assert np.isfinite([fit.shape, fit.loc, fit.scale]).all()
    assert fit.loglik >= plain_ll - 1e-6 * abs(plain_ll)
    assert fit.mean == pytest.approx(sample.mean(), rel=0.02)


def test_a_fit_that_would_draw_negative_delays_keeps_its_location_at_zero_or_above():
    # Flat like a loaded loopback's round trips: the plain fit is the normal
    # limit, with 2 % of its delays below 0, which no injector can wait.
    sample = np.random.default_rng(4).uniform(1, 20, 800)
    plain = stats.lognorm.fit(sample)
    assert stats.lognorm.cdf(0, *plain) > 0.01
    fit = latency.fit_lognormal(sample)
    assert 0 <= fit.loc < sample.min() and fit.candidate == "location0"
    assert fit.mean == pytest.approx(sample.mean(), rel=0.1)
    table = tables.distribution_table(fit)
    assert table.min() >= 0 and table.mean() / 1000 == pytest.approx(fit.mean, rel=0.01)


def test_a_fit_whose_derived_log_normals_would_draw_negative_delays_keeps_its_location():
    # Near-normal round trips (17 ± 2 us): the fit itself sits a little below 0 and
    # barely reaches it, but the log-normal at half its scale keeps that location
    # and spreads wider: a third of its delays below 0.
    sample = np.random.default_rng(5).normal(17, 4, 200)
    alone = latency.fit_lognormal(sample)
    # Which optimiser's start wins (scipy's or the profile's) differs between
    # machines by rounding; either sits below 0.
    assert alone.loc < 0 and alone.candidate in {"scipy", "profile"}
    (wide,) = latency.mean_preserving_lognormals(alone, [0.5], target_mean=sample.mean())
    with pytest.raises(ValueError, match="delays below 0"):
        tables.distribution_table(wide.dist())
    fit = latency.fit_lognormal(sample, [0.5])
    assert 0 <= fit.loc < sample.min() and fit.candidate == "location0"
    (derived,) = latency.mean_preserving_lognormals(fit, [0.5], target_mean=sample.mean())
    table = tables.distribution_table(derived.dist())
    assert table.min() >= 0 and table.mean() / 1000 == pytest.approx(sample.mean(), rel=0.01)
    # A fit far above 0 keeps its own location whatever the fractions.
    skewed = 10 + np.random.default_rng(5).lognormal(1, 0.5, 500)
    assert latency.fit_lognormal(skewed, [0.25, 0.5]) == latency.fit_lognormal(skewed)
    with pytest.raises(ValueError, match="mean_from must be 'observed' or 'fit'"):
        latency.fit_lognormal(sample, [0.5], mean_from="median")


def test_fit_rejects_degenerate_samples():
    with pytest.raises(ValueError, match="three distinct"):
        latency.fit_lognormal([6.0, 6.0, 6.1, 6.1])


@pytest.mark.parametrize(
    ("bad", "problem"),
    [(0.0, "not positive"), (-1.5, "not positive"), (np.nan, "not finite"), (np.inf, "not finite")],
)
def test_fit_refuses_samples_that_are_no_latency(bad, problem):
    """1 % zeros once moved the shape from 0.92 to 0.53 without a word: now they are named."""
    x = 2.1 + np.random.default_rng(8).lognormal(0, 0.92, 10_000)
    x[:100] = bad
    with pytest.raises(ValueError, match=rf"100 of 10000 are {problem}.*\[0\] = {bad:g}"):
        latency.fit_lognormal(x)
    with pytest.raises(ValueError, match=r"^level 40: latency samples: 100 of 10000"):
        level_fits.fit_levels(pd.DataFrame({"level": 40, "latency_us": x}))


def test_robust_spread_is_median_minus_minimum_and_ignores_the_top():
    x = np.array([1.0, 2.0, 3.0, 4.0, 100.0])
    assert latency.robust_spread(x) == 2.0
    assert latency.robust_spread(np.append(x[:-1], 1e9)) == 2.0
    # More than half at the minimum: the interquartile range, then the full range.
    assert latency.robust_spread([1.0, 1.0, 1.0, 2.0, 5.0]) == pytest.approx(1.0)
    assert latency.robust_spread([1.0] * 8 + [3.0, 5.0]) == pytest.approx(4.0)


@pytest.mark.parametrize("shape", [0.5, 1.0, 2.0, 2.5])
@pytest.mark.parametrize("outlier_us", [1e4, 1e7])
def test_one_outlier_among_many_does_not_move_the_fit(shape, outlier_us):
    """One 10 ms (or 10 s) sample among 60,000 of a few µs.

    With bounds scaled by the full range, the 10 s sample put the search's
    floor at a gap of 10 µs (location 2.1 → −7.9 µs) and the 10 ms sample, at
    shape 2, a floor of 0.01 µs above a true gap of about 1e-4 µs. Maximum
    likelihood itself is not robust: a sample 18 shapes above the median
    widens a narrow fit by a few percent, as it should; the fit is the
    optimum of the contaminated sample, not a point on a search bound.
    """
    rng = np.random.default_rng(int(10 * shape))
    x = 2.1 + rng.lognormal(0.0, shape, 60_000)
    x = x[x < 1000]
    clean = latency.fit_lognormal(x)
    x[np.argmax(x)] = outlier_us
    fit = latency.fit_lognormal(x)
    assert fit.loglik >= latency._loglik(x, clean.shape, clean.loc, clean.scale)
    assert fit.shape == pytest.approx(clean.shape, rel=0.05)
    assert fit.scale == pytest.approx(clean.scale, rel=0.05)
    assert fit.loc == pytest.approx(clean.loc, abs=0.05 * clean.scale)
    assert clean.shape == pytest.approx(shape, rel=0.03)
    assert clean.loc == pytest.approx(2.1, abs=0.01)


def test_profile_fit_prefers_the_interior_maximum_over_the_singularity():
    """A timer of 0.5 µs ties 8 % of the samples at the minimum: the likelihood at
    loc → min(x) then beats the interior maximum, which the fit still keeps."""
    rng = np.random.default_rng(9)
    x = np.round((2.0 + rng.lognormal(0.0, 1.0, 20_000)) / 0.5) * 0.5
    assert (x == x.min()).mean() > 0.05
    spread = latency.robust_spread(x)
    shape, loc, scale = latency._profile_fit(x, latency.quantile_start(x)[1], spread)
    floor = latency._profile_loglik(x, x.min() - latency.GAP_FLOOR * spread)
    assert floor > latency._profile_loglik(x, loc)
    assert x.min() - loc > 0.1
    assert (shape, loc, scale) == pytest.approx((1.0, 2.0, 1.0), abs=0.3)
    assert latency.fit_lognormal(x).loc == pytest.approx(loc)


# --------------------------------------------------------- derived distributions


def test_mean_preserving_lognormals_keep_the_mean_and_widen_as_the_scale_shrinks():
    fit = latency.Lognormal(shape=0.5, loc=5.0, scale=1.2)
    derived = latency.mean_preserving_lognormals(fit, (0.25, 0.5, 0.75))
    assert [d.fraction for d in derived] == [0.25, 0.5, 0.75]
    for d in derived:
        assert d.mean == pytest.approx(fit.mean, rel=1e-9)
        assert d.dist().mean() == pytest.approx(fit.mean, rel=1e-9)  # SciPy agrees
        assert d.loc == fit.loc
        assert d.scale == pytest.approx(d.fraction * fit.scale, rel=1e-15)
        # mean − loc = scale e^{s²/2}  ⇒  s² = s_fit² + 2 ln(1/fraction)
        assert d.shape == pytest.approx(math.sqrt(0.25 + 2 * math.log(1 / d.fraction)), rel=1e-9)
    # The paper varies the standard deviation through the scale at a fixed mean:
    # the smaller the scale fraction, the larger the spread; all wider than the fit.
    stds = [d.std for d in derived]
    assert stds[0] > stds[1] > stds[2] > fit.std
    assert [d.dist().std() for d in derived] == pytest.approx(stds, rel=1e-9)
    # ... and the smaller the median (Fig. 6: lognorm's median below the mean).
    assert derived[0].median < derived[1].median < derived[2].median < fit.median


def test_mean_preserving_can_target_the_observed_mean():
    x = stats.lognorm.rvs(0.4, loc=5.0, scale=1.0, size=20_000, random_state=7)
    fit = latency.fit_lognormal(x)
    for d in latency.mean_preserving_lognormals(fit, target_mean=fit.sample_mean):
        assert d.mean == pytest.approx(x.mean(), rel=1e-9)


def test_mean_preserving_refuses_an_unreachable_mean():
    fit = latency.Lognormal(shape=0.1, loc=5.0, scale=1.0)
    with pytest.raises(ValueError, match="shape 0"):
        latency.mean_preserving_lognormals(fit, (2.0,))


@pytest.mark.parametrize(
    ("target", "match"),
    [
        (0.0, "target mean 0.0: must be a finite number above the location 5"),
        (5.0, "target mean 5.0"),
        (-3.0, "target mean -3.0"),
        (np.nan, "target mean nan"),
        (np.inf, "target mean inf"),
    ],
)
def test_mean_preserving_names_a_target_no_lognormal_reaches(target, match):
    """target_mean=0 raised ZeroDivisionError; every such target is now a ValueError."""
    fit = latency.Lognormal(shape=0.5, loc=5.0, scale=1.2)
    with pytest.raises(ValueError, match=match):
        latency.mean_preserving_lognormals(fit, target_mean=target)


def test_mean_preserving_target_zero_with_location_below_zero_is_solved():
    fit = latency.Lognormal(shape=0.5, loc=-4.0, scale=1.2)
    (derived,) = latency.mean_preserving_lognormals(fit, (0.5,), target_mean=0.0)
    assert derived.mean == pytest.approx(0.0, abs=1e-12)
    assert derived.shape == pytest.approx(math.sqrt(2 * math.log(4.0 / 0.6)), rel=1e-12)


@pytest.mark.parametrize("fraction", [1e-3, 1e-30, 1e-150, 0.999999, 1.0, 1.5])
def test_mean_preserving_extreme_fractions_keep_the_mean_or_fail_clearly(fraction):
    """Closed form s² = s_fit² + 2 ln(1/f) wherever the spread is a finite double.

    A tiny fraction used to overflow (OverflowError); a fraction ≥ the mean's
    reach is refused; everything else keeps the mean to 1e-9.
    """
    fit = latency.Lognormal(shape=0.5, loc=5.0, scale=1.2)
    s2 = 0.25 + 2 * math.log(1 / fraction)
    if s2 <= 0:
        with pytest.raises(ValueError, match=f"scale fraction {fraction!r}: even shape 0"):
            latency.mean_preserving_lognormals(fit, (fraction,))
        return
    if s2 > 700:  # exp(s²) overflows a double: the variance is not representable
        with pytest.raises(ValueError, match=f"scale fraction {fraction!r}: the shape"):
            latency.mean_preserving_lognormals(fit, (fraction,))
        return
    (derived,) = latency.mean_preserving_lognormals(fit, (fraction,))
    assert derived.shape == pytest.approx(math.sqrt(s2), rel=1e-9)
    assert derived.mean == pytest.approx(fit.mean, rel=1e-9)
    assert math.isfinite(derived.std)


@pytest.mark.parametrize("fraction", [0.0, -0.5, np.nan, np.inf])
def test_mean_preserving_names_a_fraction_that_is_no_fraction(fraction):
    fit = latency.Lognormal(shape=0.5, loc=5.0, scale=1.2)
    with pytest.raises(ValueError, match=f"scale fraction {float(fraction)!r}: must be"):
        latency.mean_preserving_lognormals(fit, (fraction,))


@pytest.mark.parametrize(
    ("params", "name"),
    [
        ((-0.1, 5.0, 1.0), "shape -0.1"),
        ((0.5, np.nan, 1.0), "loc nan"),
        ((0.5, 5.0, 0.0), "scale 0.0"),
    ],
)
def test_lognormal_names_an_impossible_parameter(params, name):
    with pytest.raises(ValueError, match=f"log-normal {name}"):
        latency.Lognormal(*params)


def test_uniform_same_mean_is_a_constant_delay_at_the_observed_mean():
    x = np.array([5.0, 6.0, 7.5, 9.5])
    u = latency.uniform_same_mean(x)
    assert u.mean() == pytest.approx(7.0)
    assert u.std() == 0.0
    assert latency.uniform_same_mean(latency.Lognormal(0.5, 5.0, 1.2)).mean() == pytest.approx(
        5.0 + 1.2 * math.exp(0.125)
    )
    wide = latency.uniform_same_mean(7.0, width=2.0)
    assert wide.mean() == pytest.approx(7.0)
    assert wide.std() == pytest.approx(2.0 / math.sqrt(12))


@pytest.mark.parametrize(
    ("mean", "width", "match"),
    [
        (np.nan, 0.0, "mean nan"),
        (-2.0, 0.0, "mean -2.0"),
        ([1.0, np.nan], 0.0, "1 of 2 are not finite"),
        (7.0, np.nan, "width nan"),
        (7.0, -1.0, "width -1.0"),
        (7.0, 15.0, "width 15.0"),
    ],
)
def test_uniform_same_mean_names_what_is_wrong(mean, width, match):
    with pytest.raises(ValueError, match=match):
        latency.uniform_same_mean(mean, width)


def test_moments_of_a_constant_are_exact_where_scipy_gives_nan():
    huge = latency.uniform_same_mean(1e200)
    with np.errstate(over="ignore"):
        assert np.isnan(huge.std())  # E[X²] − E[X]² overflows in SciPy
    assert tables.moments(huge) == (1e200, 0.0)
    assert tables.moments(latency.uniform_same_mean(6.362)) == (6.362, 0.0)
    wide = latency.Lognormal(2.0, 0.0, 1.0)
    assert tables.moments(wide) == pytest.approx((wide.mean, wide.std), rel=1e-12)
    with pytest.raises(ValueError, match="mean inf"):
        tables.moments(stats.pareto(0.5))


# -------------------------------------------------------------- injector tables


WIDE = latency.Lognormal(shape=2.0, loc=0.0, scale=1.0)  # mean e² ≈ 7.39 µs, heavy tail


@pytest.mark.parametrize(
    "dist",
    [
        latency.Lognormal(0.5, 5.0, 1.2),
        WIDE,
        latency.uniform_same_mean(6.362),
        stats.gamma(2.0, scale=3.0),
    ],
    ids=["fit-like", "wide", "constant", "gamma"],
)
def test_distribution_table_is_4096_sorted_non_negative_ints_with_the_mean(dist):
    table = tables.distribution_table(dist, 1)  # ns table of a µs distribution
    assert table.shape == (4096,)
    assert np.issubdtype(table.dtype, np.integer)
    assert table.min() >= 0
    assert np.all(np.diff(table) >= 0)
    frozen = dist.dist() if isinstance(dist, latency.Lognormal) else dist
    # Rounding moves every entry by at most half a unit (1 ns here).
    assert abs(table.mean() - 1000 * frozen.mean()) <= 0.5


def test_midpoint_quantiles_are_exact_but_lose_the_tail_mean():
    n = 4096
    table = tables.distribution_table(WIDE, 1, method="midpoint")
    expected = np.rint(1000 * WIDE.dist().ppf((np.arange(n) + 0.5) / n))
    np.testing.assert_array_equal(table, expected)
    # The 1 − 1/(2n) quantile cuts the tail: the table mean is 1–2 % low.
    assert table.mean() / (1000 * WIDE.mean) - 1 < -0.01
    # Bin means agree with the midpoints in the body of the distribution.
    bins = tables.quantile_values(WIDE, n)
    mids = tables.quantile_values(WIDE, n, method="midpoint")
    np.testing.assert_allclose(bins[100:-100], mids[100:-100], rtol=1e-3)


def test_distribution_table_units_shuffle_and_limits():
    dist = latency.Lognormal(0.5, 5.0, 1.2)
    ns = tables.distribution_table(dist, "ns")
    us = tables.distribution_table(dist, "us")
    assert np.all(np.abs(us - ns / 1000) <= 0.5 + 1e-9)
    shuffled = tables.distribution_table(dist, "ns", seed=3)
    assert not np.array_equal(shuffled, ns)
    np.testing.assert_array_equal(np.sort(shuffled), ns)
    np.testing.assert_array_equal(shuffled, tables.distribution_table(dist, "ns", seed=3))
    with pytest.raises(ValueError, match="below 0"):
        tables.distribution_table(stats.norm(0, 1), "ns")
    with pytest.raises(ValueError, match="unit"):
        tables.distribution_table(dist, "ms")


def test_a_thin_tail_below_zero_becomes_zero_delays_with_the_mean_kept():
    # A near-normal fit 2.5 standard deviations above 0: 0.6 % of its mass is
    # below 0, and clipping it moves the mean by 0.08 %.
    near_normal = stats.norm(10.0, 4.0)
    table = tables.distribution_table(near_normal, "ns")
    assert table.min() == 0
    assert 0.005 < np.mean(table == 0) < 0.01
    assert abs(table.mean() / 10_000 - 1) < 0.002
    # Half the mass below 0 would move the mean by far more than 1 %.
    with pytest.raises(ValueError, match=r"of 4096 delays below 0.*more than 1 %"):
        tables.distribution_table(stats.norm(1.0, 1000.0), "ns")


def test_a_table_whose_rounding_loses_most_entries_or_its_mean_is_refused():
    # A 0.4 µs delay in whole µs: every entry would be 0.
    with pytest.raises(ValueError, match="makes 4096 of 4096 delays 0"):
        tables.distribution_table(latency.uniform_same_mean(0.4), "us")
    # Most of a narrow log-normal below 0.5 µs: more than half become 0.
    with pytest.raises(ValueError, match="delays 0"):
        tables.distribution_table(latency.Lognormal(1.0, 0.0, 0.3), "us")
    # 6.362 µs in whole µs is 6 µs: the mean moves by −5.7 %.
    with pytest.raises(ValueError, match=r"from 6362 ns to 6000 ns \(-5.69 %"):
        tables.distribution_table(latency.uniform_same_mean(6.362), "us")
    # ... which a caller may allow explicitly; in ns it is exact.
    loose = tables.distribution_table(latency.uniform_same_mean(6.362), "us", max_mean_error=0.1)
    assert (loose == 6).all()
    assert (tables.distribution_table(latency.uniform_same_mean(6.362), "ns") == 6362).all()
    # Within 1 %: a wide log-normal of mean 7.39 µs rounds to whole µs without complaint.
    table = tables.distribution_table(WIDE, "us")
    assert abs(table.mean() / WIDE.mean - 1) < 0.01


def test_mean_preserving_tables_share_the_mean():
    fit = latency.Lognormal(0.5, 5.0, 1.2)
    made = [
        tables.distribution_table(d, 1)
        for d in [fit, latency.uniform_same_mean(fit), *latency.mean_preserving_lognormals(fit)]
    ]
    means = np.array([t.mean() for t in made])
    stds = np.array([t.std() for t in made])
    assert np.all(np.abs(means - 1000 * fit.mean) <= 0.5)
    # constant < fit < 75 % < 50 % < 25 %
    assert stds[1] == 0 and stds[1] < stds[0] < stds[4] < stds[3] < stds[2]


def test_write_distribution_round_trips_through_the_injector(tmp_path):
    from netnoise.studies.latency_variation import injector

    dist = latency.mean_preserving_lognormals(latency.Lognormal(0.5, 5.0, 1.2), (0.5,))[0]
    table_path, seed_path = tmp_path / "dist.txt", tmp_path / "seed.txt"
    summary = tables.write_distribution(dist, table_path, seed_path, "ns", seed=17)
    expected = tables.distribution_table(dist, "ns")
    np.testing.assert_array_equal(np.asarray(injector.read_table(table_path)).ravel(), expected)
    # The injector's format itself: 512 lines of 8 space-separated integers.
    lines = table_path.read_text().splitlines()
    assert len(lines) == 512
    assert all(len(line.split()) == 8 for line in lines)
    np.testing.assert_array_equal([int(v) for line in lines for v in line.split()], expected)
    assert injector.read_seed(seed_path) == 17
    assert summary["table_mean"] == pytest.approx(dist.mean, abs=0.5e-3)


def test_write_distribution_hands_table_and_seed_to_the_injector_interface(tmp_path, monkeypatch):
    """Independent of the injector's writers: stand-ins record what write_distribution passes."""
    calls = {}
    monkeypatch.setattr(
        tables.injector,
        "write_table",
        lambda values, path, unit: calls.update(values=list(values), table=path, unit=unit),
    )
    monkeypatch.setattr(
        tables.injector, "write_seed", lambda path, seed: calls.update(seed=seed, seed_path=path)
    )
    dist = latency.uniform_same_mean(6.02)
    summary = tables.write_distribution(dist, tmp_path / "t", tmp_path / "s", "us", seed=5)
    assert calls["values"] == [6] * 4096 and calls["unit"] == "us"
    assert all(type(v) is int for v in calls["values"])
    assert (calls["table"], calls["seed_path"], calls["seed"]) == (
        tmp_path / "t",
        tmp_path / "s",
        5,
    )
    assert summary["table_mean"] == 6.0 and summary["dist_mean"] == pytest.approx(6.02)
    assert summary["dist_std"] == 0.0


# ------------------------------------------------------------------ per level


def test_fit_levels_and_distributions():
    rng = np.random.default_rng(5)
    truth = {0: (0.3, 5.5, 0.6), 40: (0.5, 5.5, 1.5), 70: (0.8, 5.0, 4.0)}
    frames = [
        pd.DataFrame(
            {
                "level": level,
                "latency_us": stats.lognorm.rvs(s, loc=lo, scale=c, size=30_000, random_state=rng),
            }
        )
        for level, (s, lo, c) in truth.items()
    ]
    samples = pd.concat(frames, ignore_index=True)
    levels = level_fits.fit_levels(samples)
    assert list(levels["level"]) == [0, 40, 70]
    assert (levels["n"] == 30_000).all()
    for row in levels.itertuples():
        s, _, c = truth[row.level]
        assert row.shape == pytest.approx(s, rel=0.05)
        assert row.scale_us == pytest.approx(c, rel=0.05)
        assert row.target_mean_us == pytest.approx(row.mean_us, rel=1e-12)
        assert row.shape_scale25 > row.shape_scale50 > row.shape_scale75 > row.shape
        assert row.std_us_scale25 > row.std_us_scale50 > row.std_us_scale75 > row.fit_std_us
    long = level_fits.distributions(levels)
    assert len(long) == 5 * len(levels)
    assert list(long.loc[long.level == 40, "distribution"]) == [
        "lognorm",
        "uniform",
        "lognorm_scale75",
        "lognorm_scale50",
        "lognorm_scale25",
    ]
    same_mean = long[long.distribution != "lognorm"]
    target = same_mean["level"].map(levels.set_index("level")["target_mean_us"])
    np.testing.assert_allclose(same_mean["mean_us"], target, rtol=1e-9)
    for row in long.to_dict("records"):
        assert level_fits.frozen_distribution(row).mean() == pytest.approx(row["mean_us"], rel=1e-9)


def test_the_std_grid_gives_each_level_every_spread_at_its_mean():
    levels = pd.DataFrame(
        [
            {"level": 20, "shape": 0.8, "loc_us": 30.0, "scale_us": 60.0, "target_mean_us": 120.0},
            {"level": 40, "shape": 1.1, "loc_us": 40.0, "scale_us": 90.0, "target_mean_us": 250.0},
        ]
    )
    grid = level_fits.distributions(levels, [0, 100, 400])
    grid = grid[grid["distribution"].str.startswith("std")]
    assert grid["distribution"].tolist() == ["std0", "std100", "std400"] * 2
    assert grid["mean_us"].to_numpy() == pytest.approx([120, 120, 120, 250, 250, 250])
    assert grid["std_us"].to_numpy() == pytest.approx([0, 100, 400] * 2, abs=1e-9)
    assert grid.iloc[0]["family"] == "constant"
    # Across the grid, mean and spread are uncorrelated.
    assert np.corrcoef(grid["mean_us"], grid["std_us"])[0, 1] == pytest.approx(0, abs=1e-12)
    with pytest.raises(ValueError, match="mean 10 µs must lie above the location 30 µs"):
        level_fits.with_mean_and_std(30, 10, 5)


def test_midpoint_table_of_a_uniform_is_its_evenly_spaced_quantiles():
    table = tables.distribution_table(
        stats.uniform(0, 1000), "ns", method="midpoint", dist_unit_ns=1
    )
    assert list(table) == sorted(table)
    assert table[0] == 0 and table[-1] == 1000
    assert abs(np.mean(table) - 500) < 0.5
