"""The claims spec a referee audits: every headline claim quotes its paper
verbatim, has a kind, a band (or a one-sided bound) and a unit of replication,
and the default bands are what the rule says they are."""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

import pytest

from netnoise import studies
from netnoise import verdicts as v
from tests.conftest import REPO

#: The papers' texts, the specification: beside the checkout, or where
#: ``NETNOISE_SEEDS`` says.
SEEDS = Path(os.environ.get("NETNOISE_SEEDS", REPO.parent / "shared" / "seeds"))


def _normalised(text: str) -> str:
    """Words as a quote check compares them: no case, line breaks, hyphens or
    punctuation (the seeds are text extracted from PDFs)."""
    return re.sub(r"[^a-z0-9]", "", text.lower())


def _seed_text(study: studies.Study) -> str:
    path = SEEDS / study.seed
    if not path.is_file():
        pytest.skip(f"the seed texts are not beside this checkout ({SEEDS})")
    return _normalised(path.read_text())


SPECS = {study.key: v.read_claims(study.key) for study in studies.PAPERS}


def test_the_papers_headline_claims_are_all_there():
    assert sum(len(claims) for claims in SPECS.values()) >= 22
    assert all(len(claims) >= 4 for claims in SPECS.values())


@pytest.mark.parametrize("study", studies.PAPERS, ids=lambda s: s.key)
def test_every_quote_stands_verbatim_in_its_seed(study):
    text = _seed_text(study)
    for claim in SPECS[study.key].values():
        for part, test in claim.tests.items():
            quote = _normalised(test.quote)
            assert len(quote) >= 20, f"{claim.claim_id} {part}: too short to be a quote"
            assert quote in text, f"{claim.claim_id} {part}: not in {study.seed}"


@pytest.mark.parametrize("study", studies.PAPERS, ids=lambda s: s.key)
def test_the_default_band_is_half_to_twice_the_papers_effect(study):
    for claim in SPECS[study.key].values():
        for test in claim.tests.values():
            if test.kind != "magnitude" or not test.band_reason.startswith("half to twice"):
                continue
            if "added time" in test.band_reason or "default band" in test.band_reason:
                effect = test.paper_number - test.null_value
                assert (test.target_low, test.target_high) == pytest.approx(
                    (test.null_value + effect / 2, test.null_value + 2 * effect)
                ), claim.claim_id
            elif "unexplained variance" in test.band_reason or "beyond 10 %" in test.band_reason:
                ceiling = 1.0 if test.unit == "R²" else 100.0
                missing = ceiling - test.paper_number
                assert (test.target_low, test.target_high) == pytest.approx(
                    (ceiling - 2 * missing, ceiling - missing / 2), abs=0.01
                ), claim.claim_id


def test_every_magnitude_has_a_two_sided_band_and_every_other_kind_a_bound():
    for claims in SPECS.values():
        for claim in claims.values():
            for test in claim.tests.values():
                sides = sum(not math.isnan(x) for x in (test.target_low, test.target_high))
                assert sides == 2 if test.kind == "magnitude" else sides >= 1, claim.claim_id


SPEC_HEAD = ",".join(v.SPEC_COLUMNS)
GOOD = (
    "c,,A claim,the words of the paper here,Sec. 1,45 %,magnitude,the largest,%,45,0,22.5,90,"
    "runs,,half to twice"
)


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (GOOD.replace(",magnitude,", ",size,"), "kind must be one of magnitude, threshold"),
        (GOOD.replace(",runs,", ",nodes,"), "unit_of_replication must be one of"),
        (GOOD.replace(",22.5,90,", ",22.5,,"), "a magnitude needs both target_low and"),
        (GOOD.replace(",22.5,90,", ",90,22.5,"), "target_low 90 is above target_high 22.5"),
        (GOOD.replace(",45,0,", ",forty,0,"), "paper_number must be a number or empty"),
        (
            GOOD.replace(",magnitude,", ",threshold,"),
            "a threshold is one-sided: give target_low or target_high",
        ),
        (GOOD.replace("the words of the paper here", ""), "quote is empty"),
    ],
)
def test_a_bad_spec_row_is_refused_naming_its_field(tmp_path, row, message):
    path = tmp_path / "headline_claims.csv"
    path.write_text(f"{SPEC_HEAD}\n{row}\n")
    with pytest.raises(ValueError, match=message):
        v.read_claims("s", path)


def test_a_claims_parts_must_share_its_words(tmp_path):
    path = tmp_path / "headline_claims.csv"
    first = GOOD.replace("c,,", "c,one,", 1)
    second = GOOD.replace("c,,A claim", "c,two,Another claim", 1)
    path.write_text(f"{SPEC_HEAD}\n{first}\n{second}\n")
    with pytest.raises(ValueError, match="the parts of c must share its claim"):
        v.read_claims("s", path)
    path.write_text(f"{SPEC_HEAD}\n{first}\n{GOOD.replace('c,,', 'c,two,', 1)}\n")
    assert list(v.read_claims("s", path)["c"].tests) == ["one", "two"]
