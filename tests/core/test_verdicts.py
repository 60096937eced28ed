"""The rules behind every headline claim, one kind at a time, on both sides of
their bands: a result far beyond the paper's is not a reproduction, a trend is
judged over all its levels, every part of a claim must hold, and an undecided
result says which way it leans."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from netnoise import claims_summary as summary
from netnoise import verdicts as v
from netnoise.estimates import Estimate, slope_estimate


def _test(kind: str, low: float, high: float, *, unit: str = "%", null: float = 0.0) -> v.Test:
    return v.Test(
        part="",
        quote="words",
        paper_value="paper",
        kind=kind,
        statistic="what",
        unit=unit,
        paper_number=math.nan,
        null_value=null,
        target_low=low,
        target_high=high,
        unit_of_replication="runs",
        band_reason="why",
    )


def _claim(*tests: v.Test, claim_id: str = "c", effect: str = "") -> v.Claim:
    return v.Claim("s", claim_id, "A claim", "Sec. 1", effect, {t.part: t for t in tests})


FACTOR_2 = _test("magnitude", 150, 300)


@pytest.mark.parametrize(
    ("estimate", "verdict", "words"),
    [
        (Estimate(223, 193, 253, 128), v.REPRODUCED, "within 150 to 300 %"),
        # Ten times the paper's added time is another phenomenon, not a reproduction.
        (Estimate(1100, 1000, 1200, 128), v.NOT_REPRODUCED, "larger than the paper's"),
        (Estimate(110, 105, 115, 128), v.NOT_REPRODUCED, "smaller than the paper's"),
        (Estimate(290, 250, 330, 128), v.LEANS_REPRODUCED, "straddles 300 %"),
        (Estimate(320, 280, 360, 128), v.LEANS_NOT_REPRODUCED, "straddles 300 %"),
        (v.NOTHING, v.NOT_MEASURABLE, "nothing was measured"),
    ],
)
def test_a_magnitude_reproduces_only_inside_its_band(estimate, verdict, words):
    judgement = FACTOR_2.judge(estimate)
    assert judgement.verdict == verdict
    assert words in judgement.reason


def test_an_undecided_result_names_the_samples_that_would_decide_it():
    # se = 0.6 / 1.96; n = 16·((1.96 + 0.8416)·se / 0.4)² = 73.6
    judgement = _test("threshold", math.nan, 0).judge(Estimate(-0.4, -1.0, 0.2, 16))
    assert judgement.verdict == v.LEANS_REPRODUCED
    assert "about 74 runs for 80 % power" in judgement.reason
    assert judgement.samples_needed == pytest.approx(73.6, abs=0.1)
    leaning_against = _test("threshold", 75, math.nan).judge(Estimate(56, 33, 77, 16))
    assert leaning_against.verdict == v.LEANS_NOT_REPRODUCED


@pytest.mark.parametrize(
    ("estimate", "verdict"),
    [
        (Estimate(7.7, 7.3, 8.6, 16), v.REPRODUCED),
        (Estimate(12, 11, 13, 16), v.NOT_REPRODUCED),
        (Estimate(0.5, math.nan, math.nan, 1), v.REPRODUCED),
    ],
)
def test_a_threshold_holds_when_the_whole_interval_is_on_its_side(estimate, verdict):
    assert _test("threshold", math.nan, 10).judge(estimate).verdict == verdict


def _levels(values: list[float], half: float = 2.0) -> list[Estimate]:
    return [Estimate(y, y - half, y + half, 32) for y in values]


RISES = _test("trend", 50, math.nan, unit="points per unit ratio")
RATIOS = [0.0, 0.25, 0.5, 0.75, 1.0]


def test_a_trend_reproduces_when_its_slope_over_every_level_passes_the_minimum_effect():
    judgement = RISES.judge_trend(slope_estimate(RATIOS, _levels([100, 130, 160, 190, 220])))
    assert judgement.verdict == v.REPRODUCED
    assert "over 5 levels, Spearman ρ of the level means 1.00" in judgement.reason


def test_a_flat_trend_with_a_rising_end_point_is_not_a_trend():
    # A difference of the two ends (+30 points) would pass; the slope over all
    # levels falls short of the minimum effect, and its scatter about a line
    # leaves it undecided at best.
    trend = slope_estimate(RATIOS, _levels([100, 100, 100, 100, 130], half=1.0))
    judgement = RISES.judge_trend(trend)
    assert trend.slope.value < 50
    assert judgement.verdict == v.LEANS_NOT_REPRODUCED


def test_a_falling_trend_is_not_reproduced_and_says_it_falls():
    judgement = RISES.judge_trend(slope_estimate(RATIOS, _levels([200, 180, 160, 140, 120])))
    assert judgement.verdict == v.NOT_REPRODUCED
    assert judgement.reason.startswith("falls:")


def test_a_trend_needs_three_levels():
    judgement = RISES.judge_trend(slope_estimate([0, 1], _levels([100, 200])))
    assert judgement.verdict == v.NOT_MEASURABLE
    assert "at least 3 levels; this run has 2" in judgement.reason


def test_means_that_scatter_about_the_line_widen_the_slopes_interval():
    tight = slope_estimate(RATIOS, _levels([100, 140, 150, 190, 200], half=0.5)).slope
    line = slope_estimate(RATIOS, _levels([100, 125, 150, 175, 200], half=0.5)).slope
    assert tight.value == pytest.approx(line.value, rel=0.05)
    assert (tight.high - tight.low) > 5 * (line.high - line.low)


def test_a_two_part_comparison_holds_only_if_both_parts_do():
    mae = _test("comparison", math.nan, 0, unit="points")
    mae = v.Test(**{**mae.__dict__, "part": "mean_error"})
    within = v.Test(**{**_test("comparison", 0, math.nan, unit="points").__dict__, "part": "w20"})
    claim = _claim(mae, within)
    lower = Estimate(-2.0, -3.0, -1.0, 36)
    behind = Estimate(-10.0, -18.0, -3.0, 36)
    row = claim.all_parts(
        {"mean_error": (lower, mae.judge(lower)), "w20": (behind, within.judge(behind))}
    )
    assert row["verdict"] == v.NOT_REPRODUCED
    assert row["reason"].startswith("1 of 2 parts hold (deciding: w20)")
    assert row["value"] == -10.0
    with pytest.raises(ValueError, match="judge every part"):
        claim.all_parts({"mean_error": (lower, mae.judge(lower))})


def test_a_shape_holds_when_the_papers_shape_fits_better_beyond_doubt():
    shape = _test("shape", 0, math.nan, unit="nats")
    assert shape.judge(Estimate(0.4, 0.3, 0.5, 1000)).verdict == v.REPRODUCED
    assert shape.judge(Estimate(-0.05, -0.09, -0.01, 1000)).verdict == v.NOT_REPRODUCED


def test_the_cpu_only_control_decides_whether_an_effect_is_the_networks():
    claim = _claim(FACTOR_2)
    ours = Estimate(250, 230, 270, 128)
    beaten = v.Control("CPU-only control", 250, 110, 1e-6)
    matched = v.Control("CPU-only control", 250, 253, 0.6)
    assert claim.judged(ours, v.network_gate([beaten]))["verdict"] == v.REPRODUCED
    gated = claim.judged(ours, v.network_gate([beaten, matched]))
    assert gated["verdict"] == v.NOT_REPRODUCED
    assert "CPU-only control 253 % against 250 % (p = 0.6)" in gated["reason"]
    assert claim.judged(ours, v.network_gate(None))["verdict"] == v.UNCONTROLLED
    small = Estimate(120, 110, 130, 128)
    assert claim.judged(small, v.network_gate([beaten]))["verdict"] == v.NOT_REPRODUCED


def test_a_claim_met_only_outside_the_papers_regime_is_not_reproduced():
    claim = _claim(_test("threshold", 75, math.nan))
    ours = Estimate(90, 80, 100, 16)
    assert claim.judged(ours, v.regime_gate(None))["verdict"] == v.REPRODUCED
    gated = claim.judged(ours, v.regime_gate("predicting 0 meets it too"))
    assert gated["verdict"] == v.NOT_REPRODUCED and "predicting 0" in gated["reason"]


def test_a_claim_over_cases_takes_its_most_severe_case():
    good = v.Judgement(v.REPRODUCED, "ok")
    open_ = v.Judgement(v.LEANS_REPRODUCED, "wide")
    bad = v.Judgement(v.NOT_REPRODUCED, "below")
    e = Estimate(1, 0, 2, 3)
    assert v.worst_of([("a", e, good), ("b", e, good)])[2].verdict == v.REPRODUCED
    label, _, judgement = v.worst_of([("a", e, good), ("b", e, open_), ("c", e, bad)])
    assert label == "c" and judgement.reason == "holds in 1 of 3; c: below"


def _table(*rows: tuple[str, str, Estimate, float, float, float]) -> pd.DataFrame:
    """Claims about one effect: (claim id, verdict, estimate, null, low, high)."""
    judged = []
    for claim_id, verdict, estimate, null, low, high in rows:
        test = v.Test(**{**_test("magnitude", low, high).__dict__, "null_value": null})
        claim = _claim(test, claim_id=claim_id, effect="slowdown")
        judged.append(claim.row(estimate, v.Judgement(verdict, "why")))
    return v.table(judged)


def test_two_rows_that_contradict_each_other_are_found():
    # "No slowdown" (100 %, its interval holds the null) beside "the slowdown
    # grows" (reproduced) cannot both be so.
    contradicting = _table(
        ("factor_2", v.NOT_REPRODUCED, Estimate(100.1, 99.9, 100.3, 32), 100, 150, 300),
        ("rises", v.REPRODUCED, Estimate(80, 60, 100, 96), 0, 50, math.inf),
    )
    assert v.contradictions(contradicting) == [
        "s: rises is reproduced, so slowdown is there, but factor_2 shows none"
    ]
    consistent = _table(
        ("factor_2", v.NOT_REPRODUCED, Estimate(130, 120, 140, 32), 100, 150, 300),
        ("rises", v.REPRODUCED, Estimate(80, 60, 100, 96), 0, 50, math.inf),
    )
    assert v.contradictions(consistent) == []


def test_a_verdict_outside_the_vocabulary_is_refused():
    with pytest.raises(ValueError, match="verdict must be one of"):
        _claim(FACTOR_2).row(v.NOTHING, v.Judgement("probably", "hope"))


def _judged(*verdicts: str) -> pd.DataFrame:
    claim = _claim(FACTOR_2)
    return v.table(claim.row(Estimate(200, 180, 220, 3), v.Judgement(x, "why")) for x in verdicts)


def test_the_summary_counts_each_kind_of_verdict_and_shows_the_band():
    claims = _judged(v.REPRODUCED, v.NOT_REPRODUCED, v.LEANS_REPRODUCED, v.UNCONTROLLED)
    total = summary.summarise(claims).iloc[-1]
    assert (total["claims"], total["reproduced"], total["inconclusive"]) == (4, 1, 2)
    markdown = summary.summary_markdown(claims, "testbed", {"s": "000"})
    assert markdown.startswith("**1 of 4 headline claims reproduced on testbed.**")
    assert "| 000 | A claim | 200 % (180 to 220) | 150 to 300 % | reproduced |" in (markdown)


def test_claims_of_two_platforms_stand_side_by_side():
    first = _claim(FACTOR_2, claim_id="c")
    second = _claim(_test("threshold", math.nan, 10), claim_id="d")
    testbed = v.table(
        [
            first.row(Estimate(200, 180, 220, 3), v.Judgement(v.REPRODUCED, "why")),
            second.row(Estimate(2, 1, 3, 3), v.Judgement(v.REPRODUCED, "why")),
        ]
    )
    simgrid = v.table([first.row(Estimate(100, 99, 101, 9), v.Judgement(v.NOT_REPRODUCED, "w"))])
    table = summary.beside({"testbed": testbed, "simgrid": simgrid})
    assert table["claim_id"].tolist() == ["c", "d"]
    assert table["band"].tolist() == ["150 to 300 %", "< 10 %"]
    assert table["simgrid verdict"].tolist() == [v.NOT_REPRODUCED, summary.NOT_RUN]
    markdown = summary.beside_markdown({"testbed": testbed, "simgrid": simgrid}, {"s": "000"})
    assert "| 000 | A claim | paper | < 10 % | 2 % (1 to 3): reproduced | —: not run |" in markdown
    with pytest.raises(ValueError, match="no platform"):
        summary.beside({})


def test_a_reproduced_row_outside_its_band_is_an_error():
    inside = _judged(v.REPRODUCED)
    assert v.outside_band(inside) == []
    beyond = inside.assign(ci_high=320.0)
    assert v.outside_band(beyond) == ["s: c is reproduced outside its band"]
