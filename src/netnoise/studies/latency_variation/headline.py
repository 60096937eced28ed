"""Seed 004's headline claims (Underwood, Anderson and Apon, ICPE 2018), judged
by :mod:`netnoise.verdicts` from Table 4's correlations (``table4``: Steiger's
test of r_std against r_mean per application) and the fixed-mean experiment
(``fixed_mean``: runtimes under distributions of one mean and growing spread)."""

from __future__ import annotations

import math

import pandas as pd

from netnoise import verdicts as v

STUDY = "latency_variation"
#: LU runs 3.5 times slower at high latency variation than near none.
PAPER_FACTOR = 3.5
#: The distribution with (near) no variation that the others are compared with.
STEADY = "uniform"
#: Where each argument of :func:`headline_claims` is read, under a platform's results.
INPUTS = {
    "table4": "tables/latency_variation/table4.csv",
    "fixed_mean": "tables/latency_variation/fixed_mean.csv",
}
HALF_FACTOR = 1 + (PAPER_FACTOR - 1) / 2

#: The paper's headline claims in words (resources/reference/, beside its published values).
CLAIMS = v.read_claims(STUDY)
CORRELATION = CLAIMS["variation_beats_mean"]
SLOWDOWN = CLAIMS["variation_slows_up_to_3_5"]


def _steiger(row: pd.Series) -> v.Estimate:
    """r_std − r_mean with the interval Steiger's z implies (its standard error
    is the difference over z)."""
    difference = float(row["r_std"] - row["r_mean"])
    z = float(row["steiger_z"])
    se = abs(difference / z) if z else math.nan
    half = v.Z_INTERVAL * se
    return v.Estimate(difference, difference - half, difference + half, int(row["n"]))


def _slowdown(spread: pd.Series, steady: pd.Series) -> v.Estimate:
    """Mean runtime under ``spread`` over the mean under ``steady``, with the
    ratio's delta-method 95 % interval from both means' standard errors."""
    ratio = spread["runtime_mean_s"] / steady["runtime_mean_s"]
    relative = math.hypot(
        spread["runtime_std_s"] / math.sqrt(spread["runs"]) / spread["runtime_mean_s"],
        steady["runtime_std_s"] / math.sqrt(steady["runs"]) / steady["runtime_mean_s"],
    )
    half = v.Z_INTERVAL * ratio * relative
    return v.Estimate(ratio, ratio - half, ratio + half, int(min(spread["runs"], steady["runs"])))


def _worst_slowdown(fixed_mean: pd.DataFrame) -> tuple[v.Estimate, str]:
    best, where = v.NOTHING, ""
    for (level, application), group in fixed_mean.groupby(["level", "application"], sort=True):
        steady = group[group["distribution"] == STEADY]
        if steady.empty:
            continue
        for _, row in group[group["distribution"] != STEADY].iterrows():
            estimate = _slowdown(row, steady.iloc[0])
            if not best.measured or estimate.value > best.value:
                best = estimate
                where = f"{application}, {row['distribution']} against {STEADY}, level {level:g}"
    return best, where


def headline_claims(table4: pd.DataFrame, fixed_mean: pd.DataFrame) -> pd.DataFrame:
    """The paper's two headline claims as rows of the claims schema."""
    measured = table4.dropna(subset=["application", "r_mean", "r_std"])
    per_application = [
        (
            row["application"],
            v.judge_bound(_steiger(row), ">", 0, samples="runs"),
            _steiger(row),
        )
        for _, row in measured.iterrows()
    ]
    label, correlation = v.worst_of((a, j) for a, j, _ in per_application)
    weakest = next((e for a, _, e in per_application if a == label), v.NOTHING)
    slowdown, where = _worst_slowdown(fixed_mean)
    return v.table(
        [
            CORRELATION.row(weakest, correlation),
            SLOWDOWN.row(
                slowdown,
                v.with_context(
                    v.judge_bound(slowdown, ">=", HALF_FACTOR, unit="×", samples="runs"), where
                ),
            ),
        ]
    )
