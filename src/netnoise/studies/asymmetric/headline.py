"""Seed 003's headline claims (Zhu, Lastovetsky, Ali, Riesen and Hasanov), judged
by :mod:`netnoise.verdicts` from the property trials (``properties``), the random
patterns' shares within 10 % (``within10``, with the noise ceiling and the trials
the iteration cap stopped) and every link's error under both models
(``link_errors``)."""

from __future__ import annotations

import pandas as pd

from netnoise import verdicts as v

STUDY = "asymmetric"
#: Halfway from the fairness model's share (0) to the asymmetric model's (1).
ASYMMETRY_TARGET = 0.5
#: The paper's lowest share within 10 % on its main testbed (d = 3).
PAPER_WITHIN10_PCT = 72.0
#: Where each argument of :func:`headline_claims` is read, under a platform's results.
INPUTS = {
    "properties": "tables/asymmetric/properties.csv",
    "within10": "tables/asymmetric/within10.csv",
    "errors": "tidy/asymmetric/link_errors.csv",
}

#: The paper's headline claims in words (resources/reference/, beside its published values).
CLAIMS = v.read_claims(STUDY)
PROPERTY = CLAIMS["asymmetric_property"]
WITHIN_10 = CLAIMS["model_within_10"]
BEATS_FAIRNESS = CLAIMS["beats_fairness_model"]


def _within(row: pd.Series) -> v.Estimate:
    return v.Estimate.from_row(
        row, "within10_pct", "n_patterns", "within10_low_pct", "within10_high_pct"
    )


def _precision(row: pd.Series) -> str:
    return (
        f"{row['cap_stopped_pct']:.0f} % of trials stopped by the iteration cap;"
        f" noise ceiling {row['ceiling_pct']:.0f} %"
    )


def _case(congestion: str, d: float) -> str:
    """How the claims table names one congestion control at one d."""
    return f"{congestion}, d = {d:g}"


def _margin_bound(within10: pd.DataFrame, case: str) -> str:
    """What bounds the margin of ``case``: the share of its links whose two
    predictions differ at all (``max_margin_pct``)."""
    for _, row in within10.iterrows():
        if _case(row["congestion"], row["d"]) == case:
            return f"the models' predictions differ on {row['max_margin_pct']:.0f} % of its links"
    return ""


def _advantage(errors: pd.DataFrame) -> list[tuple[float, str, v.Judgement, v.Estimate]]:
    """Per d and congestion control (with the case's name): the asymmetric model's share within 10 %
    minus the fairness model's on the same links, a mean over the patterns."""
    random = errors[errors["family"] == "random"]
    keys = ["congestion", "d", "trial", "link"]
    paired = (
        random.pivot_table(index=keys, columns="model", values="within_10pct", aggfunc="first")
        .astype(float)
        .dropna()
        .reset_index()
    )
    cases = []
    for (congestion, d), group in paired.groupby(["congestion", "d"], sort=True):
        per_pattern = group.groupby("trial")[["asymmetric", "fairness"]].mean()
        estimate = v.mean_estimate(100 * (per_pattern["asymmetric"] - per_pattern["fairness"]))
        judgement = v.judge_bound(estimate, ">", 0, unit="points", samples="patterns")
        cases.append((d, _case(congestion, d), judgement, estimate))
    return cases


def headline_claims(
    properties: pd.DataFrame, within10: pd.DataFrame, errors: pd.DataFrame
) -> pd.DataFrame:
    """The paper's three headline claims as rows of the claims schema."""
    asymmetric = properties[(properties["level"] == "mpi") & properties["asymmetry"].notna()]
    asymmetry = v.mean_estimate(asymmetric["asymmetry"])
    per_row = [
        (
            _case(r["congestion"], r["d"]),
            v.judge_bound(_within(r), ">=", PAPER_WITHIN10_PCT, unit="%", samples="patterns"),
            r,
        )
        for _, r in within10.iterrows()
    ]
    label, within_judgement = v.worst_of((lab, j) for lab, j, _ in per_row)
    weakest = next((r for lab, _, r in per_row if lab == label), None)
    # Each d must be predicted better under at least one congestion control.
    per_d = {}
    for d, case, judgement, estimate in _advantage(errors):
        best = per_d.get(d)
        if best is None or estimate.value > best[2].value:
            per_d[d] = (case, judgement, estimate)
    label_d, beats = v.worst_of((case, j) for case, j, _ in per_d.values())
    beats_estimate = next((e for case, _, e in per_d.values() if case == label_d), v.NOTHING)
    return v.table(
        [
            PROPERTY.row(
                asymmetry,
                v.judge_bound(asymmetry, ">=", ASYMMETRY_TARGET, samples="link groups"),
            ),
            WITHIN_10.row(
                v.NOTHING if weakest is None else _within(weakest),
                v.with_context(within_judgement, "" if weakest is None else _precision(weakest)),
            ),
            BEATS_FAIRNESS.row(
                beats_estimate, v.with_context(beats, _margin_bound(within10, label_d))
            ),
        ]
    )
