"""The verdicts behind every headline claim, on both sides of their thresholds."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from netnoise import verdicts as v


@pytest.mark.parametrize(
    ("estimate", "relation", "target", "verdict"),
    [
        (v.Estimate(10, 9, 11, 20), ">=", 8, v.REPRODUCED),
        (v.Estimate(10, 9, 11, 20), ">=", 12, v.NOT_REPRODUCED),
        (v.Estimate(10, 7, 13, 20), ">=", 11, v.INCONCLUSIVE),
        (v.Estimate(-1, -2, -0.5, 16), "<", 0, v.REPRODUCED),
        (v.Estimate(1, 0.2, 1.5, 16), "<", 0, v.NOT_REPRODUCED),
        (v.Estimate(-0.4, -0.6, 0.1, 16), "<", 0, v.INCONCLUSIVE),
        (v.Estimate(0.5, math.nan, math.nan, 1), ">", 0.4, v.REPRODUCED),
        (v.NOTHING, ">", 0, v.NOT_MEASURABLE),
    ],
)
def test_a_bound_holds_only_when_the_whole_interval_is_on_its_side(
    estimate, relation, target, verdict
):
    assert v.judge_bound(estimate, relation, target).verdict == verdict


def test_an_inconclusive_verdict_names_the_samples_eighty_percent_power_needs():
    # se = 0.6 / 1.96 = 0.306; n = 16·((1.96 + 0.8416)·0.306 / 0.4)² = 73.6
    judgement = v.judge_bound(v.Estimate(-0.4, -1.0, 0.2, 16), "<", 0, samples="pairings")
    assert judgement.verdict == v.INCONCLUSIVE
    assert "about 74 pairings for 80 % power" in judgement.reason
    assert v.samples_for_power(v.Estimate(1, 0, 2, 10), 1) == math.inf


def test_a_relation_that_is_not_a_bound_is_refused():
    with pytest.raises(ValueError, match="relation must be one of"):
        v.judge_bound(v.Estimate(1, 0, 2, 3), "==", 1)


def test_shares_get_a_wilson_interval_that_stays_inside_zero_and_one():
    full = v.share_estimate(16, 16)
    assert full.value == 1 and full.high == 1 and 0.79 < full.low < 0.82
    assert v.share_estimate(0, 0) is v.NOTHING


def test_mean_estimate_gives_a_t_interval():
    estimate = v.mean_estimate([1.0, 2.0, 3.0])
    assert estimate.value == 2 and estimate.samples == 3
    assert estimate.high - 2 == pytest.approx(4.303 * 1 / math.sqrt(3), rel=1e-3)


def test_an_estimate_is_read_from_a_tables_row():
    row = pd.Series({"gap": 2.5, "gap_ci_low": 1.0, "gap_ci_high": 4.0, "runs": 7.0, "lo": 0.5})
    assert v.Estimate.from_row(row, "gap", "runs") == v.Estimate(2.5, 1.0, 4.0, 7)
    assert v.Estimate.from_row(row, "gap", 3, low="lo") == v.Estimate(2.5, 0.5, 4.0, 3)
    with pytest.raises(KeyError, match="gap_ci_high"):
        v.Estimate.from_row(row.drop("gap_ci_high"), "gap", "runs")


def test_the_cpu_only_control_decides_whether_an_effect_is_the_networks():
    holds = v.judge_bound(v.Estimate(250, 230, 270, 128), ">=", 150)
    beaten = v.Control("CPU-only control", 250, 110, 1e-6)
    matched = v.Control("CPU-only control", 250, 253, 0.6)
    assert v.network_gate(holds, [beaten]).verdict == v.REPRODUCED
    gated = v.network_gate(holds, [beaten, matched])
    assert gated.verdict == v.NOT_REPRODUCED
    assert "CPU-only control 253 % against 250 % (p = 0.6)" in gated.reason
    assert v.network_gate(holds, None).verdict == v.UNCONTROLLED
    refuted = v.judge_bound(v.Estimate(120, 110, 130, 128), ">=", 150)
    assert v.network_gate(refuted, [beaten]) == refuted


def test_a_claim_met_only_outside_the_papers_regime_is_not_reproduced():
    holds = v.judge_bound(v.Estimate(90, 80, 100, 16), ">", 75)
    assert v.regime_gate(holds, None) == holds
    gated = v.regime_gate(holds, "predicting 0 meets it too")
    assert gated.verdict == v.NOT_REPRODUCED and "predicting 0" in gated.reason


def test_a_claim_over_cases_takes_its_most_severe_case():
    good = v.Judgement(v.REPRODUCED, "ok")
    open_ = v.Judgement(v.INCONCLUSIVE, "wide")
    bad = v.Judgement(v.NOT_REPRODUCED, "below")
    assert v.worst_of([("a", good), ("b", good)])[1].verdict == v.REPRODUCED
    label, judgement = v.worst_of([("a", good), ("b", open_), ("c", bad)])
    assert label == "c" and judgement.reason == "holds in 1 of 3; c: below"
    assert v.worst_of([("a", good), ("b", open_)])[1].verdict == v.INCONCLUSIVE


def _claims(*verdicts: str) -> pd.DataFrame:
    claim = v.Claim("s", "c", "A claim", "1", "Sec. 1", "%", "> 0")
    rows = [claim.row(v.Estimate(1, 0.5, 1.5, 3), v.Judgement(x, "why")) for x in verdicts]
    return v.table(rows)


def test_the_summary_counts_each_kind_of_verdict():
    claims = _claims(v.REPRODUCED, v.NOT_REPRODUCED, v.INCONCLUSIVE, v.UNCONTROLLED)
    total = v.summarise(claims).iloc[-1]
    assert (total["claims"], total["reproduced"], total["inconclusive"]) == (4, 1, 2)
    assert v.headline_sentence(claims, "testbed") == (
        "1 of 4 headline claims reproduced on testbed"
    )
    markdown = v.summary_markdown(claims, "testbed", {"s": "000"})
    assert markdown.startswith("**1 of 4 headline claims reproduced on testbed.**")
    assert "| 000 | A claim | 1 (Sec. 1) | 1 % (0.5 to 1.5) | reproduced |" in markdown


def test_a_verdict_outside_the_vocabulary_is_refused():
    claim = v.Claim("s", "c", "A claim", "1", "Sec. 1", "%", "> 0")
    with pytest.raises(ValueError, match="verdict must be one of"):
        claim.row(v.NOTHING, v.Judgement("probably", "hope"))


def test_claims_of_two_platforms_stand_side_by_side():
    first = v.Claim("s", "c", "A claim", "1", "Sec. 1", "%", "> 0")
    second = v.Claim("s", "d", "Another", "2", "Sec. 2", "%", "> 0")
    testbed = v.table(
        [
            first.row(v.Estimate(1, 0.5, 1.5, 3), v.Judgement(v.REPRODUCED, "why")),
            second.row(v.Estimate(2, 1, 3, 3), v.Judgement(v.NOT_REPRODUCED, "why")),
        ]
    )
    simgrid = v.table([first.row(v.Estimate(4, 3, 5, 9), v.Judgement(v.INCONCLUSIVE, "w"))])
    table = v.beside({"testbed": testbed, "simgrid": simgrid})
    assert table["claim_id"].tolist() == ["c", "d"]
    assert table["testbed"].tolist() == ["1 % (0.5 to 1.5)", "2 % (1 to 3)"]
    assert table["simgrid verdict"].tolist() == [v.INCONCLUSIVE, v.NOT_RUN]
    assert table["simgrid"].tolist() == ["4 % (3 to 5)", "—"]
    markdown = v.beside_markdown({"testbed": testbed, "simgrid": simgrid}, {"s": "000"})
    assert markdown.startswith("**1 of 2 headline claims reproduced on testbed.**")
    assert "| 000 | Another | 2 | 2 % (1 to 3): not reproduced | —: not run |" in markdown
    with pytest.raises(ValueError, match="no platform"):
        v.beside({})
