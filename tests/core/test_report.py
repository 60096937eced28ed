"""The report's pages, titles, citations and the source of its numbers (netnoise.report)."""

from __future__ import annotations

import html
import re

import pandas as pd
import pytest

from netnoise import report, studies
from tests.conftest import REPO


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (7.3549500000000005, "7.355"),
        (0.5, "0.5"),
        (94.80300000000001, "94.8"),
        (1301.0515, "1301"),
        (10090.2, "10\u202f090"),
        (-0.4130874997396037, "−0.4131"),
        (9.01980857235893e-37, "9.02e-37"),
        (0.0, "0"),
        (float("nan"), "–"),
    ],
)
def test_numbers_are_rounded_to_four_significant_digits(value, shown):
    assert report.format_number(value) == shown


@pytest.mark.parametrize(
    ("column", "head"),
    [
        ("runtime_mean_s", "runtime mean (s)"),
        ("rtt_us", "rtt (µs)"),
        ("eps_abs_mean_pct", "eps abs mean (%)"),
        ("configured_mbit", "configured (Mbit/s)"),
        ("late_share", "late share (%)"),
        ("size_bytes", "size (bytes)"),
        ("runs", "runs"),
        ("median", "median (µs)"),
    ],
)
def test_column_heads_carry_the_unit_of_the_name_or_the_table(column, head):
    assert report.column_head(column, report.LATENCY_UNITS) == head


def test_a_table_page_rounds_shows_shares_in_percent_and_carries_its_csv(tmp_path):
    csv = tmp_path / "t.csv"
    frame = pd.DataFrame(
        {"app": ["a", "b"], "nodes": [2.0, 4.0], "share": [0.9563, 0.5], "ok": [True, False]}
    )
    frame.to_csv(csv, index=False)
    page = report.table_page(csv, "Table X · a test", source="From a test.")
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", page)
    assert cells == ["a", "2", "95.63", "yes", "b", "4", "50", "no"]
    assert "share (%)" in page and "From a test." in page
    assert 'download="t.csv" href="data:text/csv;base64,' in page


def test_every_study_cites_its_paper_and_says_what_the_testbed_changes():
    for study in studies.STUDIES:
        citation = study.citation
        assert citation.authors and citation.title and study.testbed_changes
        seed = REPO.parent / "shared" / "seeds" / (study.seed or "none")
        if citation.doi and seed.is_file() and "DOI" not in citation.note:
            # A DOI is given where the paper text shows it, or the note says it
            # is the published paper's.
            assert citation.doi in seed.read_text()
    assert studies.get("latency_variation").citation.doi == "10.1145/3184407.3184427"
    assert "No DOI given in the paper text" in studies.get("asymmetric").citation.text()


def test_a_studys_front_page_shows_the_platform_its_run_had():
    """The testbed's layout on the testbed, SimGrid's network and model on simgrid."""
    from netnoise.config import validate
    from netnoise.platform import from_config

    off = {key: {"enabled": False} for key in ("impact_compression", "latency_variation")}
    config = validate({"platform": {"kind": "simgrid"}, **off})
    study = studies.get("network_noise")
    simgrid = from_config(config["platform"])
    simulated = report.about_page(study, ["Fig. 4"], source="s", facts=simgrid.facts())
    assert "This run's platform (from its config)" in simulated
    assert "SimGrid&#x27;s SMPI" in simulated and "flow (flow: CM02" in simulated
    testbed = from_config({**config["platform"], "kind": "testbed"})
    emulated = report.about_page(study, ["Fig. 4"], source="s", facts=testbed.facts())
    assert "This run's testbed (from its config)" in emulated and "SMPI" not in emulated


@pytest.mark.parametrize("study", studies.STUDIES, ids=lambda s: s.key)
def test_a_study_lists_its_results_once_each_with_a_caption_and_a_unique_title(study):
    results = study.results
    # Every paper's study opens with its headline claims (one caption for all),
    # then its front page; a study beyond the papers, judging none, with its front page.
    opening = (report.HEADLINE_CLAIMS, report.ABOUT) if study.reproduces else (report.ABOUT,)
    assert results[: len(opening)] == opening
    assert (REPO / "workflow" / "report" / f"{report.HEADLINE_CLAIMS.name}.rst").is_file()
    names = [r.name for r in results]
    titles = [r.title for r in results]
    assert len(set(names)) == len(names) and len(set(titles)) == len(titles)
    captions = REPO / "workflow" / "report" / study.key
    for name in names[len(opening) :]:
        caption = "fig6_errors" if name.startswith("fig6_errors_") else name
        assert (captions / f"{caption}.rst").is_file(), name
    rules = (REPO / "workflow" / "rules" / f"{study.key}.smk").read_text()
    assert "report(" not in rules.replace("report_result(", "")


def test_labels_keep_the_paper_order_when_sorted():
    results = studies.get("latency_variation").results
    labels = [report.labels(results, r.name) for r in results]
    assert sorted(labels, key=lambda label: label["#"]) == labels
    assert labels[0] == {"#": "01", "result": report.HEADLINE_CLAIMS.title}
    assert labels[1] == {"#": "02", "result": report.ABOUT.title}
    with pytest.raises(KeyError, match="no report result 'fig99'"):
        report.labels(results, "fig99")


def _provenance():
    return pd.DataFrame(
        {
            "start": ["2026-11-22T04:36:44.410+00:00", "2026-11-22T04:50:00.000+00:00"],
            "duration_s": [10.0, 60.0],
            "git_sha": ["4bb7a3a1cd7f", "4bb7a3a1cd7f"],
            "git_dirty": [False, False],
        }
    )


def test_a_fresh_run_names_its_platform_revision_and_dates():
    source = report.describe_source(_provenance(), "testbed")
    assert source.sentence_rst == (
        "**Numbers from a fresh run** on the **testbed** platform at revision "
        "``4bb7a3a1cd7f``, measured 2026-11-22 04:36 to 2026-11-22 04:51 UTC."
    )
    assert ("numbers from", "a run of the workflow") in source.facts


def test_a_revision_of_decimal_digits_only_stays_text(tmp_path):
    # About one short hash in three hundred has no letter; read as a number it
    # would break the sentence and lose its leading zeros.
    table = tmp_path / "provenance.csv"
    _provenance().assign(git_sha="073870561318").to_csv(table, index=False)
    source = report.describe_source(report.read_table(table), "testbed")
    assert "at revision ``073870561318``" in source.sentence_rst


def test_a_review_names_its_bundle_and_says_nothing_was_measured():
    manifest = {
        "created": "2026-11-22T04:58:42.058+00:00",
        "git": {"sha": "7b3ddf56bd938529bfb80c11e4c0ea7d6620d95d", "dirty": False},
        "netnoise_version": "0.1.0",
    }
    review = {
        "bundle": "resources/cache/quick-testbed.tar.gz",
        "sha256": "8fddd2373bace516" + "0" * 48,
        "reviewed": "2026-11-23T10:00:00.000+00:00",
    }
    source = report.describe_source(_provenance(), "testbed", manifest=manifest, review=review)
    assert "``quick-testbed.tar.gz`` (created 2026-11-22 04:58 UTC" in source.sentence_rst
    assert "revision ``7b3ddf56bd93``" in source.sentence_rst
    assert "nothing was measured for this report" in source.sentence_rst
    facts = dict(source.facts)
    assert facts["bundle SHA-256"] == review["sha256"]
    assert facts["measured at revision"] == "4bb7a3a1cd7f"
    page = report.source_page(source)
    assert "resources/cache/quick-testbed.tar.gz" in page


def test_the_papers_value_stands_beside_ours():
    columns = ["application", "r_mean", "r_std", "n", "paper_r_mean", "paper_r_std", "paper_p"]
    assert report.paper_beside_ours(columns) == [
        "application",
        "r_mean",
        "paper_r_mean",
        "r_std",
        "paper_r_std",
        "n",
        "paper_p",
    ]


def test_a_claims_table_reads_as_claims_with_the_papers_value_beside_ours():
    from netnoise import verdicts
    from netnoise.estimates import Estimate

    claim = verdicts.read_claims("impact_compression")["slowdown_magnitude"]
    row = claim.row(Estimate(9.5, 7.4, 11.6, 10), verdicts.Judgement("not reproduced", "small"))
    html = report.claims_html(verdicts.table([row]))
    heads = re.findall(r"<th>(.*?)</th>", html)
    assert heads == ["Claim", "Paper", "Ours (95 % interval)", "Band", "Verdict", "Evidence"]
    assert "9.5 % (7.4 to 11.6)" in html and 'class="verdict not-reproduced"' in html
    assert "22.5 to 90 %" in html and "In table I we depict" in html


def test_a_studys_front_page_explains_the_gaps_in_its_numbers():
    """Results this run's config does not make keep their place in the list, saying so."""
    study = studies.get("network_noise")
    titles = [result.title for result in study.results]
    page = report.about_page(study, titles, source="s", missing={titles[-1]})
    assert page.count("<li") == len(titles)
    assert f"{html.escape(titles[-1])}: not in this run" in page
    assert f"{html.escape(titles[2])}: not in this run" not in page
