"""Seed 004 Sec. 6–7: normality, Mann–Whitney U, Pearson's r and the tests of
r_mean against r_std (Fisher's z, Steiger's Z, Williams' T2), Table 4."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from netnoise.studies.latency_variation import stats as nstats

REPO = Path(__file__).resolve().parents[2]
TABLE4 = REPO / "resources" / "reference" / "latency_variation" / "table4.csv"


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
    n = 50
    r12, r13, r23 = simulated_correlations(np.random.default_rng(13), 0.5, 0.5, 0.6, n, 4000)
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


def simulated_correlations(rng, r12, r13, r23, n, reps):
    """r12, r13, r23 of ``reps`` samples of n trivariate normal runs."""
    cov = np.array([[1.0, r12, r13], [r12, 1.0, r23], [r13, r23, 1.0]])
    data = rng.multivariate_normal(np.zeros(3), cov, size=(reps, n))
    centred = data - data.mean(axis=1, keepdims=True)
    c = np.einsum("rni,rnj->rij", centred, centred)
    d = np.sqrt(np.einsum("rii->ri", c))
    r = c / d[:, :, None] / d[:, None, :]
    return r[:, 0, 1], r[:, 0, 2], r[:, 1, 2]


def test_steiger_power_and_sample_size_against_hand_computed_values():
    """r̄ = 0 and r23 = 0 make c = 0: δ = (atanh −0.2 − atanh 0.2) √(n−3) / √2."""
    d = 2 * math.atanh(-0.2)  # −0.405465
    z = stats.norm.isf(0.05) + stats.norm.ppf(0.8)  # 1.644854 + 0.841621
    expected_n = math.ceil(3 + 2 * z**2 / d**2)  # 3 + 75.22 → 79
    assert expected_n == 79
    assert nstats.steiger_sample_size(-0.2, 0.2, 0.0) == 79
    assert (
        nstats.steiger_power(-0.2, 0.2, 0.0, 79) >= 0.8 > nstats.steiger_power(-0.2, 0.2, 0.0, 78)
    )
    delta = d * math.sqrt(100 - 3) / math.sqrt(2)
    assert nstats.steiger_power(-0.2, 0.2, 0.0, 100) == pytest.approx(
        stats.norm.cdf(stats.norm.ppf(0.05) - delta), rel=1e-12
    )
    # The other direction, two-sided, and the paper's situation.
    assert nstats.steiger_power(0.2, -0.2, 0.0, 100, alternative="greater") == pytest.approx(
        nstats.steiger_power(-0.2, 0.2, 0.0, 100), rel=1e-12
    )
    two = nstats.steiger_sample_size(-0.2, 0.2, 0.0, alternative="two-sided")
    assert two == math.ceil(3 + 2 * (stats.norm.isf(0.025) + stats.norm.ppf(0.8)) ** 2 / d**2)
    assert nstats.steiger_sample_size(0.5, 0.3, 0.0) == math.inf  # measured the other way
    assert nstats.steiger_sample_size(0.3, 0.3, 0.0) == math.inf
    assert math.isnan(nstats.steiger_sample_size(np.nan, 0.3, 0.0))
    with pytest.raises(ValueError, match=r"power 1\.2"):
        nstats.steiger_sample_size(0.3, 0.5, 0.0, power=1.2)
    # For the same two correlations a correlated design (the quick study's
    # r(mean, std) = 0.795) needs fewer runs, the shared variance cancelling in the
    # difference; but there, a runtime that follows the std alone has
    # r_mean = 0.795 r_std, and it is the difference itself that vanishes.
    assert nstats.steiger_sample_size(0.3, 0.5, 0.795) < nstats.steiger_sample_size(0.3, 0.5, 0)
    r_std = 0.5
    confounded = nstats.steiger_sample_size(0.795 * r_std, r_std, 0.795)
    independent = nstats.steiger_sample_size(0.0, r_std, 0.0)
    assert confounded > 2 * independent


@pytest.mark.parametrize(
    ("r12", "r13", "r23", "n"),
    [(0.3, 0.6, 0.3, 60), (0.2, 0.5, 0.0, 40), (0.5, 0.7, -0.2, 80), (0.1, 0.4, 0.795, 25)],
)
def test_steiger_power_matches_3000_simulations(r12, r13, r23, n):
    """Rejection rate of Steiger's test on 3,000 simulated designs against the
    analytic power: within 3 points, or below it (conservative) by at most 7
    where r23 is high and n small."""
    rng = np.random.default_rng(int(100 * (r12 + r13 + r23)) + n)
    r = simulated_correlations(rng, r12, r13, r23, n, 3000)
    rate = np.mean(nstats.steiger_z(*r, n)["pvalue"] < 0.05)
    power = nstats.steiger_power(r12, r13, r23, n)
    assert -0.03 <= rate - power <= (0.07 if r23 > 0.5 else 0.03)


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
    assert lu.steiger_power > 0.99 and lu.n_for_power < lu.n
    assert lu.n_for_power == nstats.steiger_sample_size(lu.r_mean, lu.r_std, lu.r_mean_std)
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


def test_two_slopes_recovers_known_slopes_and_covers_them():
    rng = np.random.default_rng(11)
    x1 = np.repeat([100.0, 300.0], 30)
    x2 = np.tile(np.repeat([0.0, 300.0, 1000.0], 10), 2)
    exact = nstats.two_slopes(2.0 + 0.004 * x1 + 0.0005 * x2, x1, x2)
    assert exact["b1"] == pytest.approx(0.004) and exact["b2"] == pytest.approx(0.0005)
    assert exact["r2"] == pytest.approx(1.0) and exact["n"] == 60
    covered = 0
    for _ in range(400):
        y = 2.0 + 0.004 * x1 + 0.0005 * x2 + rng.normal(0, 0.2, x1.size)
        fit = nstats.two_slopes(y, x1, x2)
        covered += fit["b2_low"] <= 0.0005 <= fit["b2_high"]
    # 95 % intervals: 380 of 400 expected, binomial sd 4.4.
    assert 366 <= covered <= 394


@pytest.mark.parametrize(
    "x1, x2",
    [
        ([1.0, 1.0, 1.0, 1.0, 1.0], [0.0, 1.0, 2.0, 3.0, 4.0]),  # a constant
        ([1.0, 2.0, 3.0, 4.0, 5.0], [2.0, 4.0, 6.0, 8.0, 10.0]),  # collinear
        ([1.0, 2.0, 3.0], [0.0, 5.0, 1.0]),  # too few rows
    ],
)
def test_two_slopes_is_nan_where_the_slopes_are_not_identified(x1, x2):
    fit = nstats.two_slopes(np.arange(len(x1), dtype=float), x1, x2)
    assert math.isnan(fit["b1"]) and math.isnan(fit["b2_high"])
