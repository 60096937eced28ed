"""A sixth study joins through the public contract alone: registered under the
same entry point group as the five (a distribution of the test's own on the
path), its config section is validated, the workflow plans its rules, its
claims are judged and its report page made, with no shared module changed."""

from __future__ import annotations

import dataclasses
import html
import os

import numpy as np
import pandas as pd
import pytest
import yaml

from netnoise import config, headlines, report, studies, verdicts
from netnoise.platform import from_config
from netnoise.settings import Settings
from tests.conftest import REPO, snakemake
from tests.core import toy_study

ENTRY_POINTS = "[netnoise.studies]\ntoy = tests.core.toy_study:STUDY\n"


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """The toy study registered by a distribution of its own, in this process and
    in the workflow's (through PYTHONPATH)."""
    site = tmp_path / "site"
    info = site / "netnoise_toy_study-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: netnoise-toy-study\nVersion: 1.0\n"
    )
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    monkeypatch.syspath_prepend(str(site))
    paths = [str(site), str(REPO), os.environ.get("PYTHONPATH", "")]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in paths if p))
    studies.registered.cache_clear()
    yield studies.get("toy")
    studies.registered.cache_clear()


def test_the_toy_study_is_found_beside_the_five(toy):
    assert toy is toy_study.STUDY
    assert studies.KEYS[-1] == "toy" and len(studies.KEYS) == 7


def test_its_config_section_is_checked_by_its_schema_and_its_own_checks(toy):
    resolved = config.validate({"toy": {"enabled": True}})
    study = Settings.of(resolved).study(toy.settings)
    assert (study.enabled, study.min_ratio) == (True, 2)
    with pytest.raises(config.ConfigError, match=r"toy\.min_ratio: -1 is out of range"):
        config.validate({"toy": {"min_ratio": -1}})
    with pytest.raises(config.ConfigError, match=r"toy\.min_ratio: 0\.5 claims no growth"):
        config.validate({"toy": {"enabled": True, "min_ratio": 0.5}})
    with pytest.raises(config.ConfigError, match=r"unknown key\(s\) ratio"):
        config.validate({"toy": {"ratio": 2}})


def test_the_workflow_plans_its_rules_and_its_claims_and_report_pages(toy, tmp_path):
    off = {key: {"enabled": False} for key in studies.KEYS if key != "toy"}
    (tmp_path / "config").mkdir()
    run_config = {"platform": {"kind": "localhost"}, **off, "toy": {"enabled": True}}
    (tmp_path / "config" / "config.yaml").write_text(yaml.safe_dump(run_config))
    out = snakemake("-n", "--forceall", cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    for rule in ("tabulate_toy", "tabulate_headline_claims", "tabulate_claims_summary"):
        assert f"rule {rule}:" in out.stdout, rule
    assert "results/localhost/tables/toy/latency_growth.csv" in out.stdout
    assert "results/localhost/report/toy/about.html" in out.stdout
    assert "results/localhost/report/toy/latency_growth.html" in out.stdout


def _growth(tmp_path, ratio: float) -> dict:
    """A latency_growth table under a platform's results: 20 samples of each size,
    the largest ``ratio`` times the smallest."""
    rng = np.random.default_rng(0)
    small = 50 + rng.normal(0, 1, 20)
    table = pd.DataFrame(
        {
            "size_bytes": [8] * 20 + [65536] * 20,
            "latency_us": [*small, *(ratio * 50 + rng.normal(0, 1, 20))],
            "min_ratio": 2.0,
        }
    )
    path = tmp_path / "results" / "tables" / "toy" / "latency_growth.csv"
    path.parent.mkdir(parents=True)
    table.to_csv(path, index=False)
    return headlines.headline_inputs("toy", tmp_path / "results")


@pytest.mark.parametrize(
    ("ratio", "verdict"), [(4.0, verdicts.REPRODUCED), (1.2, verdicts.NOT_REPRODUCED)]
)
def test_its_claim_is_judged_from_its_table(toy, tmp_path, ratio, verdict):
    claims = headlines.judge_headline_claims("toy", _growth(tmp_path, ratio))
    assert list(claims["claim_id"]) == ["latency_grows_with_size"]
    assert claims["verdict"].iloc[0] == verdict
    assert claims["value"].iloc[0] == pytest.approx(ratio, rel=0.05)
    gathered = headlines.collect_headline_claims(tmp_path / "results")
    assert list(gathered["study"]) == ["toy"]


def test_its_report_page_shows_its_paper_and_results(toy, tmp_path):
    platform = from_config(config.validate({})["platform"])
    titles = [result.title for result in toy.results]
    page = report.about_page(toy, titles, source="from a test", facts=platform.facts())
    assert "Study 900: Message time against message size" in page
    assert "10.1016/0167-8191(94)90027-2" in page and html.escape(toy.testbed_changes) in page
    assert all(title in page for title in titles[2:])
    claims = headlines.judge_headline_claims("toy", _growth(tmp_path, 4.0))
    assert verdicts.REPRODUCED in report.claims_html(claims)


def _section(title: str) -> str:
    text = (REPO / "docs" / "architecture.md").read_text()
    return text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_how_to_add_a_study_names_every_part_the_toy_study_gives_within_a_screen():
    page = _section("How to add a study")
    assert len(page.strip().splitlines()) <= 30
    parts = [field.name for field in dataclasses.fields(toy_study.STUDY) if field.name != "key"]
    assert [part for part in parts if f"`{part}`" not in page and f"`{part}(" not in page] == []
