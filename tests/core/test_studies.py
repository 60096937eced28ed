"""The study registry: every study's files are where its key says, and only there."""

from __future__ import annotations

import subprocess
import sys

import pytest

from netnoise import studies
from netnoise.config import load
from tests.conftest import DEFAULT_SLICE, REPO


@pytest.mark.parametrize("study", studies.STUDIES, ids=lambda s: s.key)
def test_a_study_lists_its_whole_story(study):
    files = study.files()
    assert all((REPO / f).is_file() for f in files), [f for f in files if not (REPO / f).is_file()]
    key = study.key
    for part in (
        f"src/netnoise/studies/{key}/__init__.py",
        f"src/netnoise/studies/{key}/plan.py",
        f"src/netnoise/studies/{key}/config.py",
        f"workflow/rules/{key}.smk",
        f"workflow/schemas/{key}.schema.yaml",
        f"notebooks/{study.number}_{key}.ipynb",
    ):
        assert part in files
    # A paper's published values are its reference; a study beyond the papers has none.
    folders = ("workflow/scripts", "workflow/report", "tests")
    for folder in (*folders, "resources/reference") if study.reproduces else folders:
        assert any(f.startswith(f"{folder}/{key}/") for f in files), folder


def test_every_file_that_names_a_study_is_listed_by_it():
    listed = {f for study in studies.STUDIES for f in study.files()}
    unlisted = [
        f
        for f in studies.tracked_files()
        if any(key in f for key in studies.KEYS) and f not in listed
    ]
    assert unlisted == []


def test_no_file_belongs_to_two_studies():
    seen: dict[str, str] = {}
    for study in studies.STUDIES:
        for f in study.files():
            assert seen.setdefault(f, study.key) == study.key, f


def test_netnoise_studies_files_prints_them():
    done = subprocess.run(
        [sys.executable, "-m", "netnoise", "studies", "--files", "latency_variation"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "workflow/rules/latency_variation.smk" in lines
    assert "csrc/injector/nnlat_core.c" in lines
    assert lines[-1].startswith("config section: latency_variation")
    bad = subprocess.run(
        [sys.executable, "-m", "netnoise", "studies", "--files", "seed004"],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2
    assert bad.stderr.strip() == (
        "netnoise: no study 'seed004'; the studies are "
        "impact_compression, network_noise, variability, asymmetric, latency_variation, "
        "characterise"
    )


@pytest.mark.parametrize("name", [DEFAULT_SLICE, "network_noise", "latency_variation"])
def test_small_test_configs_are_valid(name):
    assert load(REPO / ".test" / name / "config.yaml")["platform"]["kind"] == "localhost"
