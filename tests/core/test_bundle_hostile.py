"""Hostile and damaged bundles: whoever edits a bundle can recompute its manifest's
checksums, so a bundle is trusted for nothing but data. Each one below is refused by
``bundle verify`` (and so by ``review`` and ``open_results``) with a clear error,
never a traceback, never run, never accepted silently."""

from __future__ import annotations

import gzip
import io
import os
import pickle
import subprocess
import tarfile
import zipfile

import numpy as np
import pytest
import yaml

from netnoise import __version__, bundle
from netnoise.bundle import BundleError
from netnoise.config import validate
from tests.conftest import snakemake
from tests.core.test_bundle import make_bundle

TABLE = "results/testbed/tidy/a.csv"


class Payload:
    """Unpickling it would create the file ``marker``."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _npz(**arrays) -> bytes:
    out = io.BytesIO()
    np.savez(out, **arrays)
    return out.getvalue()


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def _symlink(info):
    info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"


def _hardlink(info):
    info.type, info.linkname = tarfile.LNKTYPE, bundle.CONFIG


def _device(info):
    info.type, info.devmajor, info.devminor = tarfile.CHRTYPE, 1, 3


def _truncated(path):
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _uncompressed(path):
    with gzip.open(path) as fh:
        path.write_bytes(fh.read())


def _tampered_config(path):
    """Edit config.yaml after packing, leaving the manifest as it was."""
    with tarfile.open(path) as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar.getmembers()}
    config = yaml.safe_load(members[bundle.CONFIG])
    config["network_noise"]["seed"] = 99
    members[bundle.CONFIG] = yaml.safe_dump(config).encode()
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            bundle.add_member(tar, name, data)


def _doubled(path):
    """A second member of an existing name, after the first."""
    with tarfile.open(path) as tar:
        members = [(m.name, tar.extractfile(m).read()) for m in tar.getmembers()]
    with tarfile.open(path, "w:gz") as tar:
        for name, data in [*members, (TABLE, b"a\n666\n")]:
            bundle.add_member(tar, name, data)


def _npy_declaring(shape, data: bytes) -> bytes:
    """An .npz whose one array's header declares ``shape`` of float64 over ``data``."""
    npy = io.BytesIO()
    header = {"descr": "<f8", "fortran_order": False, "shape": shape}
    np.lib.format.write_array_header_1_0(npy, header)
    npy.write(data)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("a.npy", npy.getvalue())
    return out.getvalue()


GOOD = {TABLE: b"a\n1\n"}
DERIVED = "results/testbed/tables/t.csv"
CONFIG = validate({})
MODEL = "results/testbed/models/variability"


def _entries(files, how):
    """Manifest entries of the config and ``files``, changed as ``how`` says."""
    contents = {bundle.CONFIG: yaml.safe_dump(CONFIG).encode(), **files}
    entries = {n: {"sha256": bundle.sha256(d), "bytes": len(d)} for n, d in contents.items()}
    if how == "wrong checksum":
        entries[TABLE]["sha256"] = bundle.sha256(b"another table\n")
    elif how == "unlisted":
        del entries[TABLE]
    elif how == "extra":
        entries["results/testbed/tidy/gone.csv"] = {"sha256": "0" * 64, "bytes": 1}
    elif how == "no config":
        del entries[bundle.CONFIG]
    elif how == "no checksum":
        del entries[TABLE]["sha256"]
    return entries


# case -> (files, given the marker a payload would create; make_bundle keywords;
#          damage done to the packed file; what the error says)
HOSTILE = {
    "pickle payload": (
        lambda marker: {f"{MODEL}.joblib": pickle.dumps(Payload(marker))},
        {},
        None,
        f"'{MODEL}.joblib' is not a data format a bundle may carry",
    ),
    "pickle inside an npz": (
        lambda marker: {f"{MODEL}.npz": _npz(model=np.array([Payload(marker)]))},
        {},
        None,
        "variability.npz: model.npy holds Python objects (a pickle), not numbers",
    ),
    "pickle named npz": (
        lambda marker: {f"{MODEL}.npz": pickle.dumps(Payload(marker))},
        {},
        None,
        "variability.npz: not an archive of arrays (File is not a zip file)",
    ),
    "shell script": (
        lambda marker: {"results/testbed/run.sh": f"#!/bin/sh\ntouch {marker}\n".encode()},
        {},
        None,
        "'results/testbed/run.sh' is not a data format",
    ),
    "path traversal": (
        lambda _: {"../escape.csv": b"x\n"},
        {},
        None,
        "unsafe member name '../escape.csv'",
    ),
    "absolute path": (
        lambda _: {"/tmp/abs.csv": b"x\n"},
        {},
        None,
        "unsafe member name '/tmp/abs.csv'",
    ),
    "path not in normal form": (
        lambda _: {"results//testbed/./a.csv": b"x\n"},
        {},
        None,
        "unsafe member name 'results//testbed/./a.csv'",
    ),
    "symbolic link": (
        lambda _: GOOD,
        {"members": {"results/testbed/link.csv": _symlink}},
        None,
        "'results/testbed/link.csv' is not a regular file",
    ),
    "hard link": (
        lambda _: GOOD,
        {"members": {"results/testbed/hard.csv": _hardlink}},
        None,
        "'results/testbed/hard.csv' is not a regular file",
    ),
    "device": (
        lambda _: GOOD,
        {"members": {"results/testbed/null.csv": _device}},
        None,
        "'results/testbed/null.csv' is not a regular file",
    ),
    "member given twice": (lambda _: GOOD, {}, _doubled, f"'{TABLE}' appears 2 times"),
    "tampered config": (
        lambda _: GOOD,
        {},
        _tampered_config,
        "config.yaml does not match its checksum",
    ),
    "config not in the manifest": (
        lambda _: GOOD,
        {"listed": "no config"},
        None,
        "manifest.json does not cover config.yaml",
    ),
    "empty manifest": (
        lambda _: GOOD,
        {"listed": {}},
        None,
        "manifest.json: 'files' must map every file of the bundle to its checksum",
    ),
    "files as a list": (
        lambda _: GOOD,
        {"listed": [TABLE, bundle.CONFIG]},
        None,
        "'files' must map every file of the bundle",
    ),
    "manifest a list": (
        lambda _: GOOD,
        {"manifest": [1, 2]},
        None,
        "manifest.json is a JSON list, not an object",
    ),
    "manifest not JSON": (
        lambda _: GOOD,
        {"manifest": b"{oops"},
        None,
        "manifest.json is not JSON (Expecting property name",
    ),
    "deeply nested manifest": (
        lambda _: GOOD,
        {"manifest": _nested(100_000).encode()},
        None,
        "manifest.json is nested too deeply",
    ),
    "manifest entry without checksum": (
        lambda _: GOOD,
        {"listed": "no checksum"},
        None,
        f"the entry of '{TABLE}' needs a sha256 and a size",
    ),
    "manifest without its run's record": (
        lambda _: GOOD,
        {"manifest": {"git": "HEAD", "created": 0}},
        None,
        "'git' must give the run's sha and dirty; manifest.json: 'created' must be text",
    ),
    "older format": (
        lambda _: GOOD,
        {"manifest": {"format": "netnoise-bundle-1"}},
        None,
        f"bundle format 'netnoise-bundle-1'; this netnoise ({__version__}) reads "
        "'netnoise-bundle-3', 'netnoise-bundle-2': make the bundle again",
    ),
    "checksum of another file": (
        lambda _: GOOD,
        {"listed": "wrong checksum"},
        None,
        f"{TABLE} does not match its checksum",
    ),
    "unlisted file": (
        lambda _: GOOD,
        {"listed": "unlisted"},
        None,
        f"files not in the manifest: ['{TABLE}']",
    ),
    "listed file missing": (
        lambda _: GOOD,
        {"listed": "extra"},
        None,
        "files in the manifest are missing: ['results/testbed/tidy/gone.csv']",
    ),
    "malformed config": (
        lambda _: GOOD,
        {"config": "platform: [testbed\n"},
        None,
        ":config.yaml:2:1): malformed YAML: while parsing a flow sequence",
    ),
    "config with a key twice": (
        lambda _: GOOD,
        {"config": "platform: {}\nplatform: {kind: localhost}\n"},
        None,
        ":config.yaml:2:1): key 'platform' is given twice",
    ),
    "deeply nested config": (
        lambda _: GOOD,
        {"config": f"platform: {_nested(5000)}\n"},
        None,
        ":config.yaml): nested too deeply",
    ),
    "config of another schema": (
        lambda _: GOOD,
        {"config": {"platform": {"kind": "cloud"}}},
        None,
        "its config does not match this version's schema: invalid configuration",
    ),
    "config with a NaN": (
        lambda _: GOOD,
        {"config": {"platform": {"timeout_s": float("nan")}}},
        None,
        "platform.timeout_s: nan is not a finite number",
    ),
    "platform other than the manifest's": (
        lambda _: GOOD,
        {
            "config": {
                "platform": {"kind": "slurm", "slurm": {"fabric": "tcp"}},
                "impact_compression": {"compression": {"link_mbit": 50}},
                "variability": {"enabled": False},
                "latency_variation": {"enabled": False},
            }
        },
        None,
        "its config runs on 'slurm', its manifest says 'testbed'",
    ),
    "json sidecar that is not JSON": (
        lambda _: {f"{TABLE}.prov.json": b"{not json"},
        {},
        None,
        "a.csv.prov.json: not JSON (Expecting property name",
    ),
    "creation date that is not a date": (
        lambda _: GOOD,
        {"manifest": {"created": "the day before yesterday"}},
        None,
        "'created' 'the day before yesterday' is not a date and time",
    ),
    "table of a million columns": (
        lambda _: {TABLE: b",".join([b"c"] * 1_000_000) + b"\n"},
        {},
        None,
        "a.csv: more than 1000 columns",
    ),
    "table with rows of another width": (
        lambda _: {TABLE: b"a,b\n1,2\n3\n"},
        {},
        None,
        "a.csv: line 3 has 1 fields, the header 2",
    ),
    "array header declaring terabytes": (
        lambda _: {f"{MODEL}.npz": _npy_declaring((1 << 40,), b"\0" * 8)},
        {},
        None,
        "a.npy declares 1099511627776 elements",
    ),
    "array header declaring more than its bytes": (
        lambda _: {f"{MODEL}.npz": _npy_declaring((100,), b"\0" * 8)},
        {},
        None,
        "a.npy declares 100 elements of 8 bytes but holds 8 bytes",
    ),
    "python tag in a YAML file": (
        lambda marker: {
            "results/testbed/models/asymmetric/platform_bbr.yaml": (
                f"racks: !!python/object/apply:os.system ['touch {marker}']\n".encode()
            )
        },
        {},
        None,
        "platform_bbr.yaml:1:8): could not determine a constructor for the tag "
        "'tag:yaml.org,2002:python/object/apply:os.system'",
    ),
    "alias bomb in the config": (
        lambda _: GOOD,
        {
            "config": "x: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1]\n"
            + "".join(f"x{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 10))
        },
        None,
        "values once its aliases (*name) are expanded",
    ),
    "derived tables contradicting their copies": (
        lambda _: {**GOOD, f"{bundle.EXPECTED}/{DERIVED}": b"a\n1\n"},
        {"manifest": {"derived_tables": {DERIVED: bundle.sha256(b"a\n2\n")}}},
        None,
        f"'derived_tables' gives {DERIVED} another checksum than its copy",
    ),
    "sidecar without its result's checksum": (
        lambda _: {f"{TABLE}.prov.json": b'{"schema": "netnoise-provenance-1", "result": {}}'},
        {},
        None,
        "a.csv.prov.json: 'result' must give the result's path and sha256",
    ),
    "sidecar whose start is not a date": (
        lambda _: {
            f"{TABLE}.prov.json": (
                b'{"schema": "netnoise-provenance-1", "start": "soon", '
                b'"result": {"path": "a.csv", "sha256": "00"}}'
            )
        },
        {},
        None,
        "a.csv.prov.json: 'start' is not a date and time",
    ),
    "truncated archive": (lambda _: GOOD, {}, _truncated, "damaged or not a bundle"),
    "plain tar": (lambda _: GOOD, {}, _uncompressed, "damaged or not a bundle"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_bundles_are_refused_and_never_run(tmp_path, case):
    files, options, damage, message = HOSTILE[case]
    marker = tmp_path / "ran"
    files = files(marker)
    options = {"config": CONFIG, **options}
    if isinstance(options.get("listed"), str):
        options["listed"] = _entries(files, options["listed"])
    path = make_bundle(tmp_path / "b.tar.gz", files, **options)
    if damage is not None:
        damage(path)
    with pytest.raises(BundleError) as err:
        bundle.verify(path)
    assert message in str(err.value)
    assert str(path) in str(err.value)
    with pytest.raises(BundleError):
        bundle.review(path, tmp_path / "review")
    assert not (tmp_path / "review").exists()
    assert not marker.exists()


def test_a_bundle_too_large_to_unpack_is_refused(tmp_path, monkeypatch):
    path = make_bundle(tmp_path / "b.tar.gz", {TABLE: b"a\n" + b"1\n" * 1000}, config=CONFIG)
    assert bundle.verify(path)["platform"] == "testbed"
    monkeypatch.setattr(bundle.layout, "MAX_BYTES", 1000)
    with pytest.raises(BundleError, match="more than 1000"):
        bundle.verify(path)


def test_a_file_too_large_or_too_many_files_are_refused_from_their_headers(tmp_path, monkeypatch):
    """A sparse member of gigabytes packs into a small file: its size in the tar
    header refuses it before a byte of it is read."""
    path = make_bundle(tmp_path / "b.tar.gz", {TABLE: b"a\n" + b"1\n" * 50_000}, config=CONFIG)
    monkeypatch.setattr(bundle.layout, "MAX_FILE_BYTES", 50_000)
    with pytest.raises(BundleError, match=f"'{TABLE}' unpacks to 100002 bytes, more than 50000"):
        bundle.verify(path)
    monkeypatch.setattr(bundle.layout, "MAX_FILE_BYTES", 1 << 20)
    monkeypatch.setattr(bundle.layout, "MAX_FILES", 2)
    with pytest.raises(BundleError, match="more than 2 files"):
        bundle.verify(path)


def test_junk_or_a_tar_of_no_bundle(tmp_path):
    (tmp_path / "junk.tar.gz").write_bytes(b"junk")
    with pytest.raises(BundleError, match="damaged or not a bundle"):
        bundle.verify(tmp_path / "junk.tar.gz")
    plain = tmp_path / "plain.tar.gz"
    with tarfile.open(plain, "w:gz") as tar:
        bundle.add_member(tar, "readme.txt", b"hello")
    with pytest.raises(BundleError, match=r"no manifest\.json: not a netnoise bundle"):
        bundle.verify(plain)


@pytest.mark.root
@pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root")
def test_the_workflows_end_under_a_reviews_config_leaves_other_testbeds_up(tmp_path):
    """A review runs the workflow with a bundle's config, whose testbed names may be
    those of a run in progress; the workflow's end tears down the testbed of its
    config. Under the review's config it leaves every testbed as it is."""
    prefix = "nnbh"
    namespace = f"{prefix}-n01"
    config = validate({"platform": {"testbed": {"prefix": prefix}}})
    (tmp_path / bundle.CONFIG).write_text(yaml.safe_dump(config))
    # A target that exists (as in a bundle): the run has nothing to do, then ends.
    target = "results/testbed/tables/testbed_validation.csv"
    for made in (target, f"{target}.prov.json"):
        (tmp_path / made).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / made).write_text("made\n")
    run = ["--cores", "1", target, "--allowed-rules", "validate_testbed"]
    subprocess.run(["ip", "netns", "add", namespace], check=True)
    try:
        reviewed = bundle.review_configfiles(tmp_path)
        out = snakemake("--configfile", *map(str, reviewed), *run, cwd=tmp_path)
        assert out.returncode == 0, out.stderr[-3000:]
        assert "Nothing to be done" in out.stderr
        assert namespace in _namespaces(), "the review's end removed a testbed it did not create"
    finally:
        subprocess.run(["ip", "netns", "delete", namespace], check=False, capture_output=True)


def _namespaces() -> list[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True)
    return [line.split()[0] for line in out.stdout.splitlines() if line.strip()]


def _tree(root):
    """Every path under ``root`` with its content (None for a directory)."""
    return {
        str(p.relative_to(root)): None if p.is_dir() else p.read_bytes()
        for p in sorted(root.rglob("*"))
    }


def test_review_and_report_touch_nothing_beside_or_inside_a_directory_they_did_not_make(
    tmp_path, monkeypatch, capsys
):
    """Files planted beside the work directory, inside one a review did not make, and the
    bundle itself: every refused command leaves them byte for byte, and creates nothing."""
    from netnoise.cli import main

    packed = make_bundle(tmp_path / "b.tar.gz", GOOD, config=CONFIG)
    (tmp_path / "beside.txt").write_text("precious\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "inside.txt").write_text("precious too\n")
    planted = _tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    refused = {
        "a directory a review did not make": ["review", "--bundle", "b.tar.gz", "--workdir", "sub"],
        "the directory of the bundle": ["review", "--bundle", "b.tar.gz", "--workdir", "."],
        "the bundle's directory by another name": [
            "review", "--bundle", str(packed), "--workdir", str(tmp_path / "sub" / ".."),
        ],
        "empty text, the current directory": ["review", "--bundle", "b.tar.gz", "--workdir", ""],
        "a file": ["review", "--bundle", "b.tar.gz", "--workdir", "beside.txt"],
        "under a directory that does not exist": [
            "review", "--bundle", "b.tar.gz", "--workdir", "absent/wd",
        ],
        "a report of a run that is not there": ["report", "--workdir", "absent/wd"],
        "a report into a directory that is not there": [
            "report", "--workdir", "sub", "--output", "absent/report.html",
            "--configfile", "sub/inside.txt",
        ],
        "a bundle of a run that is not there": [
            "bundle", "create", "-o", "new.tar.gz", "--workdir", "absent/wd",
        ],
    }  # fmt: skip
    for case, argv in refused.items():
        assert main(argv) == 2, case
        last = capsys.readouterr().err.strip().splitlines()[-1]
        assert last.startswith("netnoise: ") and "unexpected" not in last, (case, last)
        assert _tree(tmp_path) == planted, case
    # A directory a review made is its own: emptied for the next one, nothing else.
    bundle.unpack(packed, "review")
    assert (tmp_path / "review" / bundle.WORKDIR_MARK).is_file()
    assert (tmp_path / "review" / TABLE).read_bytes() == GOOD[TABLE]
    (tmp_path / "review" / "left-by-the-last-review.csv").write_text("x\n")
    bundle.unpack(packed, "review")
    assert not (tmp_path / "review" / "left-by-the-last-review.csv").exists()
    after = {k: v for k, v in _tree(tmp_path).items() if not k.startswith("review")}
    assert after == planted


def test_review_fails_when_a_rebuilt_table_differs_from_the_bundled_one(
    tmp_path, monkeypatch, capsys
):
    """derived_tables that no rebuilt table matches (by checksum or, with its copy, to
    1e-6) make the review fail, not print a count and pass."""
    from netnoise.cli import main

    rebuilt = tmp_path / "review"
    (rebuilt / DERIVED).parent.mkdir(parents=True)
    (rebuilt / DERIVED).write_text("a\n1\n")
    (rebuilt / bundle.EXPECTED / DERIVED).parent.mkdir(parents=True)
    (rebuilt / bundle.EXPECTED / DERIVED).write_text("a\n2\n")
    claimed = {"derived_tables": {DERIVED: bundle.sha256(b"a\n2\n")}}
    monkeypatch.setattr(bundle, "review", lambda *args, **kwargs: rebuilt)
    monkeypatch.setattr(bundle, "verify", lambda path: claimed)
    status = main(["review", "--bundle", "b.tar.gz", "--workdir", str(rebuilt), "--no-report"])
    out, err = capsys.readouterr()
    assert status == 1
    assert f"different: {DERIVED}" in out
    assert err.strip().splitlines()[-1] == (
        "netnoise: 1 table(s) differ from the bundled run's or are missing"
    )


def test_the_default_review_directory_is_made_under_any_current_directory(
    tmp_path, monkeypatch, capsys
):
    """A plain ``netnoise review`` works from a directory with no ``results/``, as after a
    ``pip install`` (a --workdir the user names must have its parent already)."""
    from netnoise.cli import REVIEW_WORKDIR, main

    made = []

    def review_that_stops_after_the_workdir(bundle_path, workdir, **kwargs):
        made.append(bundle.fresh_workdir(workdir, bundle_path))
        raise bundle.BundleError("stopped after making the working directory")

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(bundle, "review", review_that_stops_after_the_workdir)
    assert main(["review", "--bundle", str(tmp_path / "b.tar.gz")]) != 0
    assert made == [tmp_path / REVIEW_WORKDIR]
    assert "stopped after making the working directory" in capsys.readouterr().err
