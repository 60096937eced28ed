"""Seed 004's headline claims (Underwood, Anderson and Apon, ICPE 2018), judged
by :mod:`netnoise.verdicts` against the spec in ``resources/reference``, from
every injection run (``correlation_runs``: its runtime and the realised mean
and standard deviation of the latency injected into it; ``injected``: every
run, those without injection included), the latency samples of the load
characterisation (``samples``) and the log-normal fitted to each load level
(``fits``).

The unit of replication is the run within its distribution: intervals resample
runs inside each (level, distribution), so that every distribution keeps its
share of the runs."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats

from netnoise import verdicts as v
from netnoise.estimates import (
    Z_INTERVAL,
    Estimate,
    bootstrap_estimate,
    mean_estimate,
    ratio,
)

STUDY = "latency_variation"
#: The proxies standing for the paper's NPB codes, by the spec's parts.
LU = "lu_wavefront"
FIXED_MEAN_PARTS = {"lu": LU, "cg": "cg_solver", "mg": "multigrid"}
#: The proxy with the least communication: the paper's "applications without
#: communicating processes".
QUIET = "monte_carlo"
#: The distribution of zero spread at each level's mean, and runs without injection.
STEADY = "uniform"
ZERO = "zero"
#: Where each argument of :func:`headline_claims` is read, under a platform's results.
INPUTS = {
    "correlation_runs": "tidy/latency_variation/correlation_runs.csv",
    "injected": "tidy/latency_variation/injected_runtimes.csv",
    "samples": "tidy/latency_variation/characterization.csv",
    "fits": "models/latency_variation/fits.csv",
}

CLAIMS = v.read_claims(STUDY)
CONFIG = ["level", "distribution"]


def _correlation_gap(runs: list[tuple[float, float, float]]) -> float:
    runtime, mean, std = (np.asarray(column, float) for column in zip(*runs, strict=True))
    if np.ptp(mean) == 0 or np.ptp(std) == 0 or np.ptp(runtime) == 0:
        return math.nan
    return float(np.corrcoef(runtime, std)[0, 1] - np.corrcoef(runtime, mean)[0, 1])


def _variation_beats_mean(runs: pd.DataFrame) -> dict:
    claim = CLAIMS["variation_beats_mean"]
    cases = []
    for application, group in runs.groupby("application", sort=True):
        units = list(
            zip(group["runtime_s"], group["latency_mean_us"], group["latency_std_us"], strict=True)
        )
        strata = list(zip(group["level"], group["distribution"], strict=True))
        gap = bootstrap_estimate(units, _correlation_gap, strata=strata)
        cases.append((application, gap, claim.test.judge(gap)))
    _, estimate, judgement = v.worst_of(cases)
    return claim.row(estimate, judgement)


def _config_mean(group: pd.DataFrame) -> Estimate:
    return mean_estimate(group["runtime_s"])


def _lu_slowdown(runs: pd.DataFrame) -> dict:
    claim = CLAIMS["lu_slowdown_3_5"]
    lu = runs[runs["application"] == LU]
    if lu.empty:
        return claim.unmeasured(f"{LU} (the paper's LU) was not injected")
    spread = lu.groupby(CONFIG)["latency_std_us"].first()
    high, low = spread.idxmax(), spread.idxmin()
    configs = dict(list(lu.groupby(CONFIG)))
    slowdown = ratio(_config_mean(configs[high]), _config_mean(configs[low]))
    return claim.judged(
        slowdown,
        context=f"{high[1]} at level {high[0]:g} (std {spread[high]:.3g} µs) against"
        f" {low[1]} at level {low[0]:g} (std {spread[low]:.3g} µs)",
    )


def _fixed_mean(runs: pd.DataFrame) -> dict:
    """At the highest level, each application's runtime under its largest-spread
    distribution of the steady distribution's mean over its runtime under the
    steady one."""
    claim = CLAIMS["fixed_mean_slowdown"]
    level = runs["level"].max()
    at = runs[runs["level"] == level]
    steady = at[at["distribution"] == STEADY]
    if steady.empty:
        return claim.unmeasured(f"no {STEADY} distribution at level {level:g}")
    mean = float(steady["table_mean_us"].iloc[0])
    fixed = at[np.isclose(at["table_mean_us"], mean, rtol=0.01)]
    judged = {}
    for part, application in FIXED_MEAN_PARTS.items():
        mine = fixed[fixed["application"] == application]
        if mine.empty:
            judged[part] = (
                v.NOTHING,
                v.Judgement(v.NOT_MEASURABLE, f"{application} was not injected"),
            )
            continue
        widest = mine.loc[mine["latency_std_us"].idxmax(), "distribution"]
        increase = ratio(
            _config_mean(mine[mine["distribution"] == widest]),
            _config_mean(mine[mine["distribution"] == STEADY]),
        ).scaled(100, -100)
        judgement = v.with_context(
            claim.tests[part].judge(increase),
            f"{application}, {widest} against {STEADY} at level {level:g}"
            f" (mean {mean:.3g} µs; the paper's 70 % congestion)",
        )
        judged[part] = (increase, judgement)
    return claim.all_parts(judged)


def _no_degradation(injected: pd.DataFrame) -> dict:
    claim = CLAIMS["no_degradation_without_communication"]
    quiet = injected[injected["application"] == QUIET]
    zero = quiet[quiet["distribution"] == ZERO]
    if quiet.empty or zero.empty:
        return claim.unmeasured(f"{QUIET} (little communication) was not injected")
    baseline = _config_mean(zero)
    increases = [
        (
            f"{distribution} at level {level:g}",
            ratio(_config_mean(group), baseline).scaled(100, -100),
        )
        for (level, distribution), group in quiet[quiet["distribution"] != ZERO].groupby(CONFIG)
    ]
    label, worst = max(increases, key=lambda case: case[1].value)
    return claim.judged(worst, context=f"{QUIET}, {label}")


def _vuong(better: np.ndarray, worse: np.ndarray) -> Estimate:
    """The mean per-sample log-likelihood ratio with its normal interval (Vuong 1989)."""
    gap = better - worse
    half = Z_INTERVAL * gap.std(ddof=1) / math.sqrt(gap.size)
    mean = float(gap.mean())
    return Estimate(mean, mean - half, mean + half, int(gap.size))


def _lognormal_fit(samples: pd.DataFrame, fits: pd.DataFrame) -> dict:
    claim = CLAIMS["lognormal_best_fit"]
    cases = []
    for _, fit in fits.sort_values("level").iterrows():
        latency = samples[(samples["probe"] == fit["probe"]) & (samples["level"] == fit["level"])][
            "latency_us"
        ].to_numpy(float)
        if latency.size < 3:
            continue
        lognormal = stats.lognorm.logpdf(
            latency, fit["shape"], loc=fit["loc_us"], scale=fit["scale_us"]
        )
        alternatives = {
            "normal": stats.norm.logpdf(latency, latency.mean(), latency.std()),
            "uniform": stats.uniform.logpdf(
                latency, latency.min(), max(np.ptp(latency), np.finfo(float).tiny)
            ),
        }
        for name, alternative in alternatives.items():
            estimate = _vuong(lognormal, alternative)
            cases.append(
                (f"level {fit['level']:g} against {name}", estimate, claim.test.judge(estimate))
            )
    if not cases:
        return claim.unmeasured("no load level was characterised")
    _, estimate, judgement = v.worst_of(cases)
    return claim.row(estimate, judgement)


def headline_claims(
    correlation_runs: pd.DataFrame,
    injected: pd.DataFrame,
    samples: pd.DataFrame,
    fits: pd.DataFrame,
) -> pd.DataFrame:
    """The paper's headline claims as rows of the claims table."""
    runs = correlation_runs.dropna(subset=["runtime_s", "latency_mean_us", "latency_std_us"])
    return v.table(
        [
            _variation_beats_mean(runs),
            _lu_slowdown(runs),
            _fixed_mean(runs),
            _no_degradation(injected),
            _lognormal_fit(samples, fits),
        ]
    )
