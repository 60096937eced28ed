"""Seed 000's headline claims (Casas and Bronevetsky, IPDPS 2014), judged by
:mod:`netnoise.verdicts` against the spec in ``resources/reference``: the
pairings' slowdowns (``slowdowns``), every method's prediction of every pairing
(``predictions``) and the utilisation of each CompressionB configuration
(``utilization``).

The prediction claims are statements about the paper's 36 pairings, so their
intervals resample pairings: a pairing's error is one unit, and the methods are
compared on the same resampled pairings.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from netnoise import verdicts as v
from netnoise.estimates import NOTHING, Estimate, bootstrap_estimate, difference, share_estimate

STUDY = "impact_compression"
QUEUE = "queue"
#: The Predict-0 baseline: a claim it meets as well says nothing about a model.
NO_SLOWDOWN = "zero"
#: The look-up-table methods (Sec. IV-A) the queue model is compared with.
TABLES = {"average": "AverageLT", "average_stdev": "AverageStDevLT", "pdf": "PDFLT"}
#: Where each argument of :func:`headline_claims` is read, under a platform's results.
INPUTS = {
    "slowdowns": "tables/impact_compression/slowdowns.csv",
    "predictions": "tables/impact_compression/predictions.csv",
    "utilization": "tables/impact_compression/utilization.csv",
}

CLAIMS = v.read_claims(STUDY)


def _controls(slowdowns: pd.DataFrame, largest: pd.Series) -> list[v.Control] | None:
    """The largest slowdown's application beside its CPU-only control; none is
    needed in simulated time (:func:`netnoise.verdicts.simulated_clock`), and
    without one the cores may explain any slowdown."""
    if v.simulated_clock(slowdowns):
        return []
    control, p_value = largest.get("cpu_control"), largest.get("p_vs_cpu")
    if control is None or p_value is None or not np.isfinite([control, p_value]).all():
        return None
    return [v.Control("CPU-only control", 100 * largest["measured"], 100 * control, p_value)]


def _errors(predictions: pd.DataFrame) -> pd.DataFrame:
    """Every method's error on every pairing, in points: a row a pairing, a column a method."""
    return (
        predictions.assign(points=100 * predictions["error"].abs())
        .pivot_table(index=["application", "partner"], columns="method", values="points")
        .dropna()
    )


def _share_within(points: pd.Series, limit: float) -> Estimate:
    return share_estimate(int((points <= limit).sum()), len(points)).scaled(100)


def _paired(errors: pd.DataFrame, method: str, statistic) -> Estimate:
    """``statistic`` (of an array of errors) of the queue model minus that of
    ``method``, over pairings resampled together for both."""
    pairs = list(zip(errors[QUEUE], errors[method], strict=True))

    def gap(sample) -> float:
        both = np.asarray(sample, float)
        return statistic(both[:, 0]) - statistic(both[:, 1])

    return bootstrap_estimate(pairs, gap)


def _trivial(errors: pd.DataFrame, largest_pct: float) -> str | None:
    """Where predicting no slowdown at all meets the paper's accuracy targets,
    the slowdowns are too small for those targets to tell a model from nothing."""
    zero = errors[NO_SLOWDOWN]
    if (zero <= 10).mean() > 0.75 and zero.mean() < 10:
        return (
            f"predicting no slowdown also puts {100 * (zero <= 10).mean():.0f} % within 10 points"
            f" (MAE {zero.mean():.2g} points): our largest slowdown is {largest_pct:.3g} %"
        )
    return None


def _magnitude(slowdowns: pd.DataFrame) -> tuple[dict, float]:
    claim = CLAIMS["slowdown_magnitude"]
    largest = slowdowns.loc[slowdowns["measured"].idxmax()]
    estimate = Estimate.from_row(largest, "measured", "runs").scaled(100)
    row = claim.judged(
        estimate,
        v.network_gate(_controls(slowdowns, largest)),
        context=f"{largest['application']} beside {largest['partner']}",
    )
    return row, estimate.value


def _every_table(errors: pd.DataFrame, claim: v.Claim, part: str, estimate_of) -> tuple:
    """A claim's part over every look-up table: the weakest table's case."""
    test = claim.tests[part]
    cases = [
        (label, estimate, test.judge(estimate))
        for method, label in TABLES.items()
        if method in errors
        for estimate in [estimate_of(method)]
    ]
    return v.worst_of(cases)


def _utilisation_span(utilization: pd.DataFrame) -> tuple[Estimate, str]:
    configurations = utilization.dropna(subset=["offered_load"])
    if len(configurations) < 2:
        return NOTHING, ""
    scaled = [
        (row["component"], Estimate.from_row(row, "utilization", "samples").scaled(100))
        for _, row in configurations.iterrows()
    ]
    (low_name, lowest), (high_name, highest) = (
        min(scaled, key=lambda c: c[1].value),
        max(scaled, key=lambda c: c[1].value),
    )
    return (
        difference(highest, lowest),
        f"{lowest.value:.3g} % ({low_name}) to {highest.value:.3g} % ({high_name})"
        f" over {len(scaled)} configurations",
    )


def headline_claims(
    slowdowns: pd.DataFrame, predictions: pd.DataFrame, utilization: pd.DataFrame
) -> pd.DataFrame:
    """The paper's headline claims as rows of the claims table."""
    magnitude, largest_pct = _magnitude(slowdowns)
    errors = _errors(predictions)
    queue = errors[QUEUE]
    trivial = v.regime_gate(_trivial(errors, largest_pct))
    beats = CLAIMS["queue_beats_lookup_tables"]
    _, mae, mae_judgement = _every_table(
        errors, beats, "mean_error", lambda m: _paired(errors, m, np.mean)
    )
    _, within, within_judgement = _every_table(
        errors,
        beats,
        "within_20",
        lambda m: _paired(errors, m, lambda points: 100 * np.mean(points <= 20)),
    )
    _, misses, misses_judgement = _every_table(
        errors,
        CLAIMS["lookup_tables_miss_20"],
        "",
        lambda m: share_estimate(int((errors[m] > 20).sum()), len(errors)).scaled(100),
    )
    span, configurations = _utilisation_span(utilization)
    return v.table(
        [
            magnitude,
            CLAIMS["queue_within_10"].judged(_share_within(queue, 10), trivial),
            CLAIMS["queue_mean_error"].judged(
                bootstrap_estimate(list(queue), lambda s: float(np.mean(s))),
                trivial,
                context="bootstrap over the pairings",
            ),
            CLAIMS["queue_within_20"].judged(_share_within(queue, 20), trivial),
            CLAIMS["lookup_tables_miss_20"].row(misses, misses_judgement),
            beats.all_parts(
                {"mean_error": (mae, mae_judgement), "within_20": (within, within_judgement)}
            ),
            CLAIMS["utilisation_range"].judged(span, context=configurations),
        ]
    )
