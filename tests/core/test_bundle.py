"""Results bundles: what they carry, and how damaged or foreign ones are refused."""

from __future__ import annotations

import json
import shutil
import tarfile
from pathlib import Path

import pandas as pd
import pytest
import yaml
from snakemake.utils import update_config

from netnoise import bundle, headlines, provenance
from netnoise.bundle import PlannedFile
from netnoise.config import validate
from tests.conftest import REPO, shipped_studies

SUMMARY = (
    "output_file\tdate\trule\tlog-file(s)\tinput-file(s)\tshellcmd\tstatus\tplan\n"
    "r/figures/a.svg\t-\tplot_a\tr/logs/a.log\t/src/style,r/tidy/a.csv\t-\tok\tno update\n"
    "r/tidy/a.csv\t-\ttidy_a\t-\tr/raw/a0.csv,r/raw/a1.csv\t-\tok\tno update\n"
    "r/raw/a0.csv\t-\tmeasure_a\t-\tr/bin/prog\t-\tok\tno update\n"
    "r/raw/a0.csv.prov.json\t-\tmeasure_a\t-\tr/bin/prog\t-\tok\tno update\n"
    "r/raw/a1.csv\t-\tmeasure_a\t-\tr/bin/prog\t-\tok\tno update\n"
    "r/bin/prog\t-\tbuild_programs\t-\tcsrc/prog.c\t-\tok\tno update\n"
    "r/bin/build-info.json\t-\tbuild_programs\t-\tcsrc/prog.c\t-\tok\tno update\n"
    "r/tables/check.csv\t-\tvalidate_testbed\t-\t-\t-\tok\tno update\n"
)


def test_parse_summary():
    planned = bundle.parse_summary("Building DAG of jobs...\n" + SUMMARY)
    assert planned[0] == PlannedFile("r/figures/a.svg", "plot_a", ("/src/style", "r/tidy/a.csv"))
    assert planned[-1].inputs == ()


def test_bundle_carries_analysis_inputs_and_provenance_not_raw_or_programs():
    planned = bundle.parse_summary(SUMMARY)
    assert bundle.cached_files(planned) == {
        "r/tidy/a.csv": "tidy_a",
        "r/raw/a0.csv.prov.json": "measure_a",
        "r/bin/build-info.json": "build_programs",
        "r/tables/check.csv": "validate_testbed",
    }
    assert bundle.analysis_inputs(planned) == {"r/tidy/a.csv": "tidy_a"}
    assert set(bundle.raw_files(planned)) == {
        "r/raw/a0.csv",
        "r/raw/a0.csv.prov.json",
        "r/raw/a1.csv",
    }


MANIFEST_RECORD = {
    "created": "2026-01-01T00:00:00+00:00",
    "netnoise_version": "0.1.0",
    "git": {"sha": "0" * 40, "dirty": False},
    "platform": "testbed",
}


def make_bundle(path, files, *, manifest=None, config=None, listed=None, members=None):
    """A bundle of ``files`` (name -> bytes) and ``config`` (a mapping, or YAML text)
    whose manifest lists, as whoever made it would, every member with its true
    checksum. ``listed`` replaces the manifest's files; ``manifest`` updates the
    manifest (a dict) or replaces it (anything else; bytes: its text); ``members``
    adds tar members made by a function of their TarInfo (links, devices)."""
    text = config if isinstance(config, str) else yaml.safe_dump(config or {})
    contents = {bundle.CONFIG: text.encode(), **files}
    entries = {
        name: {"sha256": bundle.sha256(data), "bytes": len(data), "rule": "tidy_a"}
        for name, data in contents.items()
    }
    record = {"format": bundle.FORMAT, **MANIFEST_RECORD, "files": entries}
    if isinstance(manifest, dict):
        record |= manifest
    elif manifest is not None:
        record = manifest
    if listed is not None:
        record["files"] = listed
    with tarfile.open(path, "w:gz") as tar:
        raw = record if isinstance(record, bytes) else json.dumps(record).encode()
        bundle.add_member(tar, bundle.MANIFEST, raw)
        for name, data in contents.items():
            bundle.add_member(tar, name, data)
        for name, setup in (members or {}).items():
            info = tarfile.TarInfo(name)
            setup(info)
            tar.addfile(info)
    return path


def test_verify_accepts_an_intact_bundle(tmp_path):
    path = make_bundle(tmp_path / "b.tar.gz", {"results/x/tidy/a.csv": b"a\n1\n"})
    manifest = bundle.verify(path)
    assert manifest["files"]["results/x/tidy/a.csv"]["bytes"] == 4
    assert bundle.CONFIG in manifest["files"]


def test_shipped_bundle_is_intact_and_from_a_testbed_run():
    manifest = bundle.verify(bundle.SHIPPED)
    assert manifest["platform"] == "testbed"
    assert all(name.endswith(bundle.DATA_SUFFIXES) for name in manifest["files"])
    assert bundle.SHIPPED.stat().st_size < 10_000_000
    studies = {path.split("/")[3] for path in manifest["files"] if "/tidy/" in path}
    # Every study its run measured has its tidy tables.
    measured = shipped_studies()
    assert len(measured) >= 3 and measured <= studies
    if "variability" in measured:
        assert "results/testbed/models/variability.npz" in manifest["files"]


def test_shipped_bundle_config_is_the_merge_its_manifest_names():
    # One make reproduce CONFIG="<the manifest's configfiles>": the bundled config
    # is exactly what those files give, so a reviewer can run the same study.
    manifest = bundle.verify(bundle.SHIPPED)
    with tarfile.open(bundle.SHIPPED, "r:gz") as tar:
        shipped = validate(yaml.safe_load(tar.extractfile(bundle.CONFIG)))
    assert manifest["configfiles"][0] == "config/config.yaml"
    assert shipped == bundle.run_config([REPO / name for name in manifest["configfiles"]])


@pytest.mark.slow
def test_reviewer_mode_rebuilds_every_table_of_the_shipped_bundle(shipped_review):
    manifest = bundle.verify(bundle.SHIPPED)
    review = shipped_review
    verdicts = bundle.compare_tables(manifest, review)
    assert len(verdicts) == len(manifest["derived_tables"]) > 20
    # The shipped run is another revision's: its claims are judged again by this
    # version's rules, every other table agrees.
    assert [p for p, v in verdicts.items() if v not in bundle.ACCEPTED] == []
    rejudged = {Path(p).name for p, v in verdicts.items() if v == bundle.REJUDGED}
    assert rejudged <= set(bundle.CLAIMS_TABLES)
    rebuilt = review / "results" / "testbed"
    summary = pd.read_csv(rebuilt / "tables" / "claims_summary.csv")
    judged = headlines.collect_headline_claims(rebuilt)
    assert summary["verdict"].tolist() == judged["verdict"].tolist()
    tables = {path.split("/")[3] for path in verdicts if path.count("/") > 3}
    assert shipped_studies() <= tables
    figures = list((review / "results" / "testbed" / "figures").rglob("*.png"))
    assert len(figures) > 20
    assert (review / "report.html").stat().st_size > 100_000


def test_rebuilt_tables_are_compared_with_the_bundled_ones(tmp_path):
    """Bytes first; failing that, every number within a relative 1e-6 (the last
    digits of floating point differ between CPUs), text cells exactly."""
    table = "results/t/tables/x.csv"
    expected = "a,b,name\n1.0,0.30000000000000004,cg\n2.5,7.3549500000000005,ft\n"
    cases = {
        "same.csv": expected,
        "close.csv": "a,b,name\n1.0,0.30000000000000010,cg\n2.5,7.35495000000001,ft\n",
        "off.csv": "a,b,name\n1.0,0.3001,cg\n2.5,7.3549500000000005,ft\n",
        "renamed.csv": "a,b,name\n1.0,0.30000000000000004,mg\n2.5,7.3549500000000005,ft\n",
        "extended.csv": "a,network,b,name\n1.0,ns3,0.30000000000000004,cg\n2.5,ns3,7.35495,ft\n",
        "reordered.csv": "b,a,name\n0.30000000000000004,1.0,cg\n7.3549500000000005,2.5,ft\n",
    }
    verdicts = {}
    for name, text in cases.items():
        workdir = tmp_path / name
        for path, content in (
            (workdir / bundle.EXPECTED / table, expected),
            (workdir / table, text),
        ):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content)
        manifest = {"derived_tables": {table: bundle.sha256(expected.encode())}}
        verdicts[name] = bundle.compare_tables(manifest, workdir)[table]
    assert verdicts == {
        "same.csv": "identical",
        "close.csv": "equal to 1e-6",
        "off.csv": "different",
        "renamed.csv": "different",
        "extended.csv": bundle.EXTENDED,
        "reordered.csv": "different",
    }
    assert bundle.compare_tables({"derived_tables": {table: "0" * 64}}, tmp_path) == {
        table: "missing"
    }


def test_a_claims_table_of_another_revision_is_judged_again_any_other_must_agree(tmp_path):
    """Claims are verdicts of the rules of the revision that judges them: a bundle of
    another revision gets this version's, and the review says so; the same
    revision's claims, and every measured table, must agree."""
    claims, measured = "results/t/tables/s/headline_claims.csv", "results/t/tables/s/x.csv"
    for path in (claims, measured):
        for root, text in ((tmp_path / bundle.EXPECTED, "a\n1\n"), (tmp_path, "a\n2\n")):
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(text)
    tables = {claims: bundle.sha256(b"a\n1\n"), measured: bundle.sha256(b"a\n1\n")}
    here = provenance.git_state()["sha"]
    other = {"derived_tables": tables, "git": {"sha": "f" * 40, "dirty": False}}
    same = {"derived_tables": tables, "git": {"sha": here, "dirty": False}}
    assert bundle.compare_tables(other, tmp_path) == {
        claims: bundle.REJUDGED,
        measured: "different",
    }
    assert set(bundle.compare_tables(same, tmp_path).values()) == {"different"}


def test_review_runs_under_names_of_its_own_and_keeps_every_testbed(tmp_path):
    config = {"platform": {"testbed": {"prefix": "nn"}}, "asymmetric": {"testbed": {"prefix": "x"}}}
    (tmp_path / bundle.CONFIG).write_text(yaml.safe_dump(validate(config)))
    files = bundle.review_configfiles(tmp_path)
    assert files[0] == tmp_path / bundle.CONFIG
    merged = yaml.safe_load(files[0].read_text())
    update_config(merged, yaml.safe_load(files[1].read_text()))
    resolved = validate(merged)
    assert resolved["platform"]["testbed"]["prefix"] == bundle.REVIEW_PREFIX
    assert resolved["platform"]["testbed"]["keep_up"] is True
    assert resolved["asymmetric"]["testbed"]["prefix"] == f"{bundle.REVIEW_PREFIX}r"


def _sidecar(sha: str, host: str = "node") -> bytes:
    return json.dumps(
        {
            "schema": provenance.SCHEMA,
            "result": {"path": "results/x/raw/a.csv", "sha256": "0" * 64},
            "git": {"sha": sha, "dirty": False},
            "software": {"hostname": host},
            "start": "2026-01-01T00:00:00+00:00",
            "config": {},
        }
    ).encode()


def test_verify_refuses_a_bundle_whose_results_come_from_two_revisions(tmp_path):
    one = make_bundle(
        tmp_path / "one.tar.gz",
        {"results/x/raw/a.csv.prov.json": _sidecar("0" * 40)},
    )
    assert bundle.identify(one).revisions == {"0" * 40: 1}
    bundle.verify(one)
    two = make_bundle(
        tmp_path / "two.tar.gz",
        {
            "results/x/raw/a.csv.prov.json": _sidecar("0" * 40),
            "results/x/raw/b.csv.prov.json": _sidecar("1" * 40),
        },
    )
    with pytest.raises(bundle.BundleError, match="not one run: the results come from 2 revisions"):
        bundle.verify(two)
    other = make_bundle(
        tmp_path / "other.tar.gz", {"results/x/raw/a.csv.prov.json": _sidecar("1" * 40)}
    )
    with pytest.raises(bundle.BundleError, match="its manifest names revision 000000000000"):
        bundle.verify(other)


def test_run_identity_names_revision_machine_and_span():
    records = [json.loads(_sidecar("0" * 40, host)) for host in ("n1", "n2")]
    records[1]["start"] = "2026-01-01T00:42:10+00:00"
    line = provenance.run_identity(records, {}).describe()
    assert line == (
        f"revision {'0' * 12} (2 results); machine n1 (1), n2 (1); measured"
        " 2026-01-01T00:00:00+00:00 to 2026-01-01T00:42:10+00:00 (42 min)"
    )


@pytest.mark.slow
@pytest.mark.mpi
def test_bundle_create_refuses_results_of_two_revisions(platform_run, tmp_path):
    """A results tree patched with one result of another revision is not one run."""
    workdir = tmp_path / "run"
    shutil.copytree(platform_run, workdir)
    sidecar = next((workdir / "results").rglob("raw/**/*.prov.json"))
    record = json.loads(sidecar.read_text())
    record["git"]["sha"] = "f" * 40
    sidecar.write_text(json.dumps(record))
    with pytest.raises(
        bundle.BundleError,
        match="not one run of one clean revision: the results come from 2 revisions",
    ):
        bundle.create(tmp_path / "b.tar.gz", workdir=workdir, configfiles=["config/config.yaml"])
    assert not (tmp_path / "b.tar.gz").exists()


@pytest.mark.slow
def test_a_successful_review_says_what_agrees_and_every_verdict_in_40_lines(
    shipped_review, monkeypatch, capsys
):
    """The terminal gets the comparison in one line, where the results are, and one
    line per claim; the workflow's own output stays in the review's log."""
    from netnoise.cli import main

    monkeypatch.setattr(bundle, "review", lambda *args, **kwargs: shipped_review)
    assert main(["review", "--workdir", str(shipped_review)]) == 0
    printed = capsys.readouterr().out.splitlines()
    summary = pd.read_csv(shipped_review / "results" / "testbed" / "tables" / "claims_summary.csv")
    assert len(printed) <= 40
    tables = len(bundle.verify(bundle.SHIPPED)["derived_tables"])
    assert f"of {tables} tables identical to the bundled run's" in printed[0]
    assert sum(line.lstrip().startswith(tuple(summary["verdict"])) for line in printed) == len(
        summary
    )
    assert (shipped_review / "review.log").stat().st_size > 1000
