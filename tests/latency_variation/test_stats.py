"""Seed 004: latency distributions (Sec. 5.3), injector tables and the statistics of Sec. 6–7."""

from __future__ import annotations

import math
import sys
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from netnoise.studies.latency_variation import fits as latency
from netnoise.studies.latency_variation import stats as nstats

REPO = Path(__file__).resolve().parents[2]
TABLE4 = REPO / "resources" / "reference" / "latency_variation" / "table4.csv"


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


def test_fit_rejects_degenerate_samples():
    with pytest.raises(ValueError, match="three distinct"):
        latency.fit_lognormal([6.0, 6.0, 6.1, np.nan])


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
    table = latency.distribution_table(dist, 1)  # ns table of a µs distribution
    assert table.shape == (4096,)
    assert np.issubdtype(table.dtype, np.integer)
    assert table.min() >= 0
    assert np.all(np.diff(table) >= 0)
    frozen = dist.dist() if isinstance(dist, latency.Lognormal) else dist
    # Rounding moves every entry by at most half a unit (1 ns here).
    assert abs(table.mean() - 1000 * frozen.mean()) <= 0.5


def test_midpoint_quantiles_are_exact_but_lose_the_tail_mean():
    n = 4096
    table = latency.distribution_table(WIDE, 1, method="midpoint")
    expected = np.rint(1000 * WIDE.dist().ppf((np.arange(n) + 0.5) / n))
    np.testing.assert_array_equal(table, expected)
    # The 1 − 1/(2n) quantile cuts the tail: the table mean is 1–2 % low.
    assert table.mean() / (1000 * WIDE.mean) - 1 < -0.01
    # Bin means agree with the midpoints in the body of the distribution.
    bins = latency.quantile_values(WIDE, n)
    mids = latency.quantile_values(WIDE, n, method="midpoint")
    np.testing.assert_allclose(bins[100:-100], mids[100:-100], rtol=1e-3)


def test_distribution_table_units_shuffle_and_limits():
    dist = latency.Lognormal(0.5, 5.0, 1.2)
    ns = latency.distribution_table(dist, "ns")
    us = latency.distribution_table(dist, "us")
    assert np.all(np.abs(us - ns / 1000) <= 0.5 + 1e-9)
    shuffled = latency.distribution_table(dist, "ns", seed=3)
    assert not np.array_equal(shuffled, ns)
    np.testing.assert_array_equal(np.sort(shuffled), ns)
    np.testing.assert_array_equal(shuffled, latency.distribution_table(dist, "ns", seed=3))
    with pytest.raises(ValueError, match="negative"):
        latency.distribution_table(stats.norm(0, 1), "ns")
    with pytest.raises(ValueError, match="unit"):
        latency.distribution_table(dist, "ms")


def test_mean_preserving_tables_share_the_mean():
    fit = latency.Lognormal(0.5, 5.0, 1.2)
    tables = [
        latency.distribution_table(d, 1)
        for d in [fit, latency.uniform_same_mean(fit), *latency.mean_preserving_lognormals(fit)]
    ]
    means = np.array([t.mean() for t in tables])
    stds = np.array([t.std() for t in tables])
    assert np.all(np.abs(means - 1000 * fit.mean) <= 0.5)
    # constant < fit < 75 % < 50 % < 25 %
    assert stds[1] == 0 and stds[1] < stds[0] < stds[4] < stds[3] < stds[2]


def test_write_distribution_round_trips_through_the_injector(tmp_path):
    from netnoise.studies.latency_variation import injector

    dist = latency.mean_preserving_lognormals(latency.Lognormal(0.5, 5.0, 1.2), (0.5,))[0]
    table_path, seed_path = tmp_path / "dist.txt", tmp_path / "seed.txt"
    summary = latency.write_distribution(dist, table_path, seed_path, "ns", seed=17)
    expected = latency.distribution_table(dist, "ns")
    np.testing.assert_array_equal(np.asarray(injector.read_table(table_path)).ravel(), expected)
    # The injector's format itself: 512 lines of 8 space-separated integers.
    lines = table_path.read_text().splitlines()
    assert len(lines) == 512
    assert all(len(line.split()) == 8 for line in lines)
    np.testing.assert_array_equal([int(v) for line in lines for v in line.split()], expected)
    assert injector.read_seed(seed_path) == 17
    # The injector's own midpoint-quantile table is this module's "midpoint" method.
    frozen = dist.dist()
    np.testing.assert_array_equal(
        injector.quantile_table(lambda q: 1000 * frozen.ppf(q)),
        latency.distribution_table(dist, "ns", method="midpoint"),
    )
    assert summary["table_mean"] == pytest.approx(dist.mean, abs=0.5e-3)


def test_write_distribution_hands_table_and_seed_to_the_injector_interface(tmp_path, monkeypatch):
    """Independent of injector.py: a stand-in records what write_distribution passes."""
    from netnoise.studies import latency_variation

    calls = {}
    fake = types.ModuleType("netnoise.studies.latency_variation.injector")
    fake.write_table = lambda values, path, unit: calls.update(
        values=list(values), table=path, unit=unit
    )
    fake.write_seed = lambda path, seed: calls.update(seed=seed, seed_path=path)
    monkeypatch.setitem(sys.modules, "netnoise.studies.latency_variation.injector", fake)
    monkeypatch.setattr(latency_variation, "injector", fake)
    dist = latency.uniform_same_mean(6.362)
    summary = latency.write_distribution(dist, tmp_path / "t", tmp_path / "s", "us", seed=5)
    assert calls["values"] == [6] * 4096 and calls["unit"] == "us"
    assert all(type(v) is int for v in calls["values"])
    assert (calls["table"], calls["seed_path"], calls["seed"]) == (
        tmp_path / "t",
        tmp_path / "s",
        5,
    )
    assert summary["table_mean"] == 6.0 and summary["dist_mean"] == pytest.approx(6.362)


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
    levels = latency.fit_levels(samples)
    assert list(levels["level"]) == [0, 40, 70]
    assert (levels["n"] == 30_000).all()
    for row in levels.itertuples():
        s, _, c = truth[row.level]
        assert row.shape == pytest.approx(s, rel=0.05)
        assert row.scale_us == pytest.approx(c, rel=0.05)
        assert row.target_mean_us == pytest.approx(row.mean_us, rel=1e-12)
        assert row.shape_scale25 > row.shape_scale50 > row.shape_scale75 > row.shape
        assert row.std_us_scale25 > row.std_us_scale50 > row.std_us_scale75 > row.fit_std_us
    long = latency.distributions(levels)
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
        assert latency.frozen_distribution(row).mean() == pytest.approx(row["mean_us"], rel=1e-9)


# ---------------------------------------------------------------- statistics


def test_ks_accepts_a_normal_sample_and_rejects_a_lognormal_one():
    rng = np.random.default_rng(11)
    normal = nstats.ks_normality(rng.normal(100, 5, 2000))
    assert normal["normal"] and normal["pvalue"] > 0.05
    assert "Lilliefors" in normal["caveat"]
    skewed = nstats.ks_normality(rng.lognormal(0, 0.8, 2000), lilliefors_mc=200)
    assert not skewed["normal"]
    assert skewed["pvalue"] < 1e-6
    assert skewed["lilliefors_pvalue"] <= 1 / 201 + 1e-12  # no simulated sample as extreme


def test_mann_whitney_on_shifted_samples():
    assert nstats.mann_whitney([1, 2, 3], [4, 5, 6])["u"] == 0
    assert nstats.mann_whitney([4, 5, 6], [1, 2, 3])["u"] == 9
    rng = np.random.default_rng(12)
    a, b = rng.normal(0, 1, 300), rng.normal(0.5, 1, 300)
    shifted = nstats.mann_whitney(a, b)
    assert shifted["pvalue"] < 1e-6
    assert shifted["prob_superiority"] < 0.4
    assert nstats.mann_whitney(a, b, alternative="less")["pvalue"] < shifted["pvalue"]
    same = nstats.mann_whitney(a, rng.normal(0, 1, 300))
    assert same["pvalue"] > 0.01


def test_pearson_on_constructed_data():
    # dx = (−2, −1, 0, 1, 2), dy = (−2, 0, 1, 0, 1): Σdxdy = 6, Σdx² = 10, Σdy² = 6.
    res = nstats.pearson([1, 2, 3, 4, 5], [2, 4, 5, 4, 5])
    assert res["r"] == pytest.approx(6 / math.sqrt(60), rel=1e-12)
    assert res["n"] == 5
    assert 0 < res["pvalue"] < 1
    assert nstats.pearson([1, 2, 3, 4], [3, 5, 7, 9])["r"] == pytest.approx(1.0)
    assert nstats.pearson([1, 2, 3, np.nan], [-1, -2, -3, 7])["r"] == pytest.approx(-1.0)
    assert math.isnan(nstats.pearson([1, 2, 3, 4], [2, 2, 2, 2])["r"])


def test_fisher_z_against_a_hand_computed_value():
    # arctanh 0.5 = ln(3)/2, arctanh 0.8 = ln(9)/2 = ln 3, √(2/(103 − 3)) = 1/√50:
    # z = −(ln 3 / 2) √50 = −ln(3) √12.5 ≈ −3.884181.
    res = nstats.fisher_z_independent(0.5, 0.8, 103)
    assert res["z"] == pytest.approx(-math.log(3) * math.sqrt(12.5), rel=1e-12)
    assert res["z"] == pytest.approx(-3.884181, abs=1e-6)
    assert res["pvalue"] == pytest.approx(stats.norm.cdf(-3.884181), rel=1e-5)
    assert res["pvalue"] == pytest.approx(5.13e-5, rel=0.01)
    two = nstats.fisher_z_independent(0.5, 0.8, 103, alternative="two-sided")
    assert two["pvalue"] == pytest.approx(2 * res["pvalue"])
    # Unequal sizes: √(1/97 + 1/197).
    z = nstats.fisher_z_independent(0.5, 0.8, 100, 200)["z"]
    assert z == pytest.approx(-math.log(3) / 2 / math.sqrt(1 / 97 + 1 / 197))


def test_fisher_z_reproduces_table4_of_the_paper():
    """The paper's formula, Φ(z) with √(2/(n−3)), and one n for all five rows.

    r is printed rounded to 0.01, so each reported p must lie between the
    p-values of the extreme corners of the rounding box; n = 1000 (the paper
    does not give n; about 930–1040 fits every row) does for all five.
    """
    ref = pd.read_csv(TABLE4)
    for row in ref.itertuples():
        corners = [
            nstats.fisher_z_independent(row.r_mean + dm, row.r_std + ds, 1000)["pvalue"]
            for dm in (-0.005, 0.005)
            for ds in (-0.005, 0.005)
        ]
        assert min(corners) <= row.significant_p <= max(corners), row.application
        central = nstats.fisher_z_independent(row.r_mean, row.r_std, 1000)["pvalue"]
        assert 0.1 < math.log10(central) / math.log10(row.significant_p) < 10


def test_steiger_reduces_to_the_independent_form_without_shared_correlation():
    z_dep = nstats.steiger_z(0.3, -0.3, 0.0, 80)["z"]
    z_ind = nstats.fisher_z_independent(0.3, -0.3, 80)["z"]
    assert z_dep == pytest.approx(z_ind, rel=1e-12)


def test_dependent_tests_hold_their_level_where_the_independent_one_does_not():
    """H0 ρ12 = ρ13 = 0.5 with ρ23 = 0.6, n = 50: rejection rates at α = 0.05 (two-sided)."""
    rng = np.random.default_rng(13)
    cov = np.array([[1.0, 0.5, 0.5], [0.5, 1.0, 0.6], [0.5, 0.6, 1.0]])
    reps, n = 4000, 50
    data = rng.multivariate_normal(np.zeros(3), cov, size=(reps, n))
    centred = data - data.mean(axis=1, keepdims=True)
    c = np.einsum("rni,rnj->rij", centred, centred)
    d = np.sqrt(np.einsum("rii->ri", c))
    r = c / d[:, :, None] / d[:, None, :]
    r12, r13, r23 = r[:, 0, 1], r[:, 0, 2], r[:, 1, 2]
    rate = {
        "steiger": np.mean(nstats.steiger_z(r12, r13, r23, n, "two-sided")["pvalue"] < 0.05),
        "williams": np.mean(nstats.williams_t(r12, r13, r23, n, "two-sided")["pvalue"] < 0.05),
        "fisher": np.mean(
            nstats.fisher_z_independent(r12, r13, n, alternative="two-sided")["pvalue"] < 0.05
        ),
    }
    assert 0.035 < rate["steiger"] < 0.065
    assert 0.035 < rate["williams"] < 0.065
    assert rate["fisher"] < 0.02  # ignores ρ23 > 0: far too conservative


def synthetic_runs(rng: np.random.Generator) -> pd.DataFrame:
    """Five distributions at each of four levels; runtime follows the std, not the mean."""
    rows = []
    for app, runs_per_cell, slope in (("LU", 3, 0.02), ("EP", 2, 0.0)):
        for mean_us in (10.0, 20.0, 30.0, 40.0):
            for std_us in (0.0, mean_us, 2 * mean_us, 4 * mean_us, 8 * mean_us):
                for _ in range(runs_per_cell):
                    runtime = 100 + slope * std_us + rng.normal(0, 0.5)
                    rows.append((app, runtime, mean_us, std_us))
    return pd.DataFrame(
        rows, columns=["application", "runtime_s", "latency_mean_us", "latency_std_us"]
    )


def test_correlation_table_layout_and_n():
    rng = np.random.default_rng(14)
    runs = synthetic_runs(rng)
    runs.loc[0, "runtime_s"] = np.nan  # one LU run lost
    table = nstats.correlation_table(runs)
    assert list(table.columns) == list(nstats.TABLE4_COLUMNS)
    assert list(table["application"]) == ["LU", "EP"]
    assert list(table["n"]) == [4 * 5 * 3 - 1, 4 * 5 * 2]
    lu = table.iloc[0]
    assert lu.r_std > 0.9 > lu.r_mean > 0
    assert lu.fisher_z < 0 and lu.fisher_p < 1e-6
    expected = nstats.fisher_z_independent(lu.r_mean, lu.r_std, lu.n)
    assert lu.fisher_p == pytest.approx(expected["pvalue"], rel=1e-12)
    assert lu.steiger_p < 1e-6 and lu.williams_p < 1e-6
    assert lu.r_mean_std == pytest.approx(
        np.corrcoef(runs.latency_mean_us[1:60], runs.latency_std_us[1:60])[0, 1]
    )
    ep = table.iloc[1]
    assert abs(ep.r_std) < 0.5 and ep.fisher_p > 0.01


def test_reference_table4_loads_with_its_source():
    ref = pd.read_csv(TABLE4)
    assert {"application", "r_mean", "r_std", "significant_p", "n", "source", "note"} <= set(
        ref.columns
    )
    assert list(ref["application"]) == ["FT", "CG", "IS", "MG", "LU"]
    assert ref["source"].str.contains("004_c25dd7b2cfbfc0d4.txt").all()
    assert ref["source"].str.contains("Table 4").all()
    assert (ref["r_std"] > ref["r_mean"]).all()
    assert (ref["significant_p"] < 0.05).all()
    assert ref["n"].isna().all()  # not stated in the seed
