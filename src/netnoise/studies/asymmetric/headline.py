"""Seed 003's headline claims (Zhu, Lastovetsky, Ali, Riesen and Hasanov), judged
by :mod:`netnoise.verdicts` against the spec in ``resources/reference``: the
property trials (``properties``), every link's error under both models
(``errors``), the random patterns' precision (``within10``: the noise ceiling
and the trials the iteration cap stopped) and the Alltoallv trial's makespan
(``trials``).

The random-pattern claims are statements about the paper's patterns, so their
intervals resample patterns (a pattern's links together), on CUBIC, the kernel
default of the paper's time; other congestion controls are named beside."""

from __future__ import annotations

import numpy as np
import pandas as pd

from netnoise import verdicts as v
from netnoise.estimates import (
    NOTHING,
    Estimate,
    bootstrap_estimate,
    mean_estimate,
    slope_estimate,
)

STUDY = "asymmetric"
PAPER_CONGESTION = "cubic"
#: Where each argument of :func:`headline_claims` is read, under a platform's results.
INPUTS = {
    "properties": "tables/asymmetric/properties.csv",
    "within10": "tables/asymmetric/within10.csv",
    "errors": "tidy/asymmetric/link_errors.csv",
    "trials": "tidy/asymmetric/mpi_trials.csv",
}

CLAIMS = v.read_claims(STUDY)


def _random(errors: pd.DataFrame) -> pd.DataFrame:
    return errors[(errors["family"] == "random") & (errors["congestion"] == PAPER_CONGESTION)]


def _patterns(links: pd.DataFrame) -> list[tuple[int, int]]:
    """Per pattern, its links within 10 % and its links."""
    within = links["within_10pct"].astype(bool).groupby(links["trial"], sort=True)
    return list(zip(within.sum().astype(int), within.size().astype(int), strict=True))


def _pooled_within(patterns: list[tuple[int, int]]) -> float:
    hits, links = np.asarray(patterns).sum(axis=0)
    return 100 * float(hits / links)


def _precision(within10: pd.DataFrame, d: float) -> str:
    rows = within10[(within10["congestion"] == PAPER_CONGESTION) & (within10["d"] == d)]
    if rows.empty:
        return ""
    row = rows.iloc[0]
    return (
        f"{row['cap_stopped_pct']:.0f} % of trials stopped by the iteration cap;"
        f" noise ceiling {row['ceiling_pct']:.0f} %;"
        f" the models' predictions differ on {row['max_margin_pct']:.0f} % of its links"
    )


def _within_claim(asymmetric: pd.DataFrame, within10: pd.DataFrame) -> dict:
    claim = CLAIMS["model_within_10"]
    judged = {}
    for part, test in claim.tests.items():
        d = float(part.removeprefix("d"))
        links = asymmetric[asymmetric["d"] == d]
        if links.empty:
            judged[part] = (NOTHING, v.Judgement(v.NOT_MEASURABLE, f"no pattern at d = {d:g}"))
            continue
        estimate = bootstrap_estimate(_patterns(links), _pooled_within)
        judged[part] = (estimate, v.with_context(test.judge(estimate), _precision(within10, d)))
    return claim.all_parts(judged)


def _advantage(random: pd.DataFrame) -> dict:
    """Per d, the asymmetric model's share within 10 % minus the fairness
    model's on the same links, a mean over the patterns."""
    claim = CLAIMS["beats_fairness_model"]
    paired = (
        random.pivot_table(
            index=["d", "trial", "link"], columns="model", values="within_10pct", aggfunc="first"
        )
        .astype(float)
        .dropna()
        .reset_index()
    )
    cases = []
    for d, group in paired.groupby("d", sort=True):
        per_pattern = group.groupby("trial")[["asymmetric", "fairness"]].mean()
        estimate = mean_estimate(100 * (per_pattern["asymmetric"] - per_pattern["fairness"]))
        cases.append((f"d = {d:g}", estimate, claim.test.judge(estimate)))
    _, estimate, judgement = v.worst_of(cases)
    return claim.row(estimate, judgement)


def _error_trend(asymmetric: pd.DataFrame) -> dict:
    levels, means = [], []
    for d, links in asymmetric.groupby("d", sort=True):
        per_pattern = links.groupby("trial")["abs_eps"].mean()
        levels.append(float(d))
        means.append(mean_estimate(100 * per_pattern))
    return CLAIMS["error_grows_with_d"].judged_trend(slope_estimate(levels, means))


def _alltoallv(errors: pd.DataFrame, trials: pd.DataFrame) -> dict:
    claim = CLAIMS["alltoallv_asymmetric_model"]
    links = errors[(errors["family"] == "alltoallv") & (errors["congestion"] == PAPER_CONGESTION)]
    run = trials[(trials["family"] == "alltoallv") & (trials["congestion"] == PAPER_CONGESTION)]
    if links.empty or run.empty:
        return claim.unmeasured("no Alltoallv trial on CUBIC")
    measured = float(run["makespan_s"].iloc[0])
    half = float(run["makespan_ci95_s"].iloc[0])
    iterations = int(run["iterations"].iloc[0])
    predicted = links.groupby("model")["time_pred_s"].max()

    def error(model: str) -> Estimate:
        """|predicted / measured − 1| in %, its interval from the measured time's."""
        signed = sorted(
            100 * (predicted[model] / t - 1) for t in (measured + half, measured - half)
        )
        ends = sorted(abs(e) for e in signed)
        low = 0.0 if signed[0] <= 0 <= signed[1] else ends[0]
        return Estimate(100 * abs(predicted[model] / measured - 1), low, ends[1], iterations)

    asymmetric, fairness = error("asymmetric"), error("fairness")
    worse = Estimate(
        fairness.value - asymmetric.value,
        fairness.low - asymmetric.high,
        fairness.high - asymmetric.low,
        iterations,
    )
    return claim.all_parts(
        {
            "asymmetric": (asymmetric, claim.tests["asymmetric"].judge(asymmetric)),
            "fairness_worse": (worse, claim.tests["fairness_worse"].judge(worse)),
        }
    )


def headline_claims(
    properties: pd.DataFrame, within10: pd.DataFrame, errors: pd.DataFrame, trials: pd.DataFrame
) -> pd.DataFrame:
    """The paper's headline claims as rows of the claims table."""
    measured = properties[(properties["level"] == "mpi") & properties["asymmetry"].notna()]
    random = _random(errors)
    asymmetric = random[random["model"] == "asymmetric"]
    others = sorted(
        set(errors.loc[errors["family"] == "random", "congestion"]) - {PAPER_CONGESTION}
    )
    beside = f"random patterns on {PAPER_CONGESTION}" + (
        f"; {', '.join(others)} measured beside" if others else ""
    )
    if asymmetric.empty:
        why = f"no random pattern on {PAPER_CONGESTION}"
        pattern_claims = [
            CLAIMS[c].unmeasured(why)
            for c in ("model_within_10", "beats_fairness_model", "error_grows_with_d")
        ]
    else:
        pattern_claims = [
            _within_claim(asymmetric, within10),
            _advantage(random),
            _error_trend(asymmetric),
        ]
        pattern_claims = [{**row, "reason": f"{row['reason']}; {beside}"} for row in pattern_claims]
    by_congestion = ", ".join(
        f"{c} {g.mean():.2f}" for c, g in measured.groupby("congestion")["asymmetry"]
    )
    return v.table(
        [
            CLAIMS["asymmetric_property"].judged(
                mean_estimate(measured["asymmetry"]),
                context=f"by congestion control: {by_congestion}",
            ),
            *pattern_claims,
            _alltoallv(errors, trials),
        ]
    )
