"""Results bundles: what they carry, and how damaged or foreign ones are refused."""

from __future__ import annotations

import json
import re
import tarfile

import pytest
import yaml

from netnoise import bundle
from netnoise.bundle import BundleError, PlannedFile

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


def _bundle(path, files, *, manifest_files=None, config=None, fmt=bundle.FORMAT):
    listed = {
        name: {"sha256": bundle._sha256(data), "bytes": len(data), "rule": "tidy_a"}
        for name, data in files.items()
    }
    manifest = {"format": fmt, "files": manifest_files if manifest_files is not None else listed}
    with tarfile.open(path, "w:gz") as tar:
        bundle._add(tar, bundle.MANIFEST, json.dumps(manifest).encode())
        bundle._add(tar, bundle.CONFIG, yaml.safe_dump(config or {}).encode())
        for name, data in files.items():
            bundle._add(tar, name, data)
    return path


def test_verify_accepts_an_intact_bundle(tmp_path):
    path = _bundle(tmp_path / "b.tar.gz", {"results/x/tidy/a.csv": b"a\n1\n"})
    assert bundle.verify(path)["files"]["results/x/tidy/a.csv"]["bytes"] == 4


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"fmt": "netnoise-bundle-0"}, "bundle format 'netnoise-bundle-0'; this netnoise"),
        ({"manifest_files": {}}, "files not in the manifest"),
        (
            {"manifest_files": {"results/x/tidy/a.csv": {"sha256": "0" * 64, "bytes": 4}}},
            "results/x/tidy/a.csv does not match its checksum",
        ),
        (
            {"config": {"platform": {"kind": "cloud"}}},
            "its config does not match this version's schema",
        ),
    ],
)
def test_verify_refuses_damaged_or_foreign_bundles(tmp_path, kwargs, message):
    path = _bundle(tmp_path / "b.tar.gz", {"results/x/tidy/a.csv": b"a\n1\n"}, **kwargs)
    with pytest.raises(BundleError, match=message):
        bundle.verify(path)


def test_verify_refuses_unsafe_paths_and_non_bundles(tmp_path):
    path = _bundle(tmp_path / "b.tar.gz", {"../escape.csv": b"x"})
    with pytest.raises(BundleError, match=re.escape("unsafe member name '../escape.csv'")):
        bundle.verify(path)
    plain = tmp_path / "plain.tar.gz"
    with tarfile.open(plain, "w:gz") as tar:
        bundle._add(tar, "readme.txt", b"hello")
    with pytest.raises(BundleError, match="not a netnoise bundle"):
        bundle.verify(plain)
    (tmp_path / "junk.tar.gz").write_bytes(b"junk")
    with pytest.raises(BundleError, match="damaged or not a bundle"):
        bundle.verify(tmp_path / "junk.tar.gz")
    with pytest.raises(BundleError, match="no such bundle"):
        bundle.verify(tmp_path / "absent.tar.gz")


def test_shipped_bundle_is_intact_and_from_a_testbed_run():
    manifest = bundle.verify(bundle.SHIPPED)
    assert manifest["platform"] == "testbed"
    assert bundle.SHIPPED.stat().st_size < 10_000_000
    studies = {path.split("/")[3] for path in manifest["files"] if "/tidy/" in path}
    assert {"impact_compression", "network_noise", "asymmetric", "variability"} <= studies
    assert "latency_variation" in studies


@pytest.mark.slow
def test_reviewer_mode_rebuilds_every_table_of_the_shipped_bundle(tmp_path):
    manifest = bundle.verify(bundle.SHIPPED)
    review = bundle.review(bundle.SHIPPED, tmp_path / "review", cores=2)
    verdicts = bundle.compare_tables(manifest, review)
    assert len(verdicts) > 30
    assert [p for p, v in verdicts.items() if v not in ("identical", "equal to 1e-6")] == []
    figures = list((review / "results" / "testbed" / "figures").rglob("*.png"))
    assert len(figures) > 40
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
        manifest = {"derived_tables": {table: bundle._sha256(expected.encode())}}
        verdicts[name] = bundle.compare_tables(manifest, workdir)[table]
    assert verdicts == {
        "same.csv": "identical",
        "close.csv": "equal to 1e-6",
        "off.csv": "different",
        "renamed.csv": "different",
    }
    assert bundle.compare_tables({"derived_tables": {table: "0" * 64}}, tmp_path) == {
        table: "missing"
    }
