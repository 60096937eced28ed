"""A bundle that verifies is one a review can read to its end: every table of the
types its readers take, every JSON document strict, the archive nothing but its
one gzip stream of one tar, checked within a memory bound, and results of one
run only. Each family below holds cases of one kind of damage; each case is
refused by ``bundle verify`` with a message naming the member and what is
wrong, and a review of it never starts."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import zlib

import pytest

from netnoise import bundle
from netnoise.bundle import BundleError
from netnoise.cli import main
from tests.core.test_bundle import MANIFEST_RECORD, make_bundle

RUNS = "results/testbed/tidy/variability/runs.csv"
ANY_TABLE = "results/testbed/tables/x.csv"
RESULT = "results/testbed/raw/x/a.csv"
PREAMBLE = "#@format=netnoise-2\n#@tool=pingpong\n"

# Cells a column of numbers (a unit column, or one a schema names) must not hold:
# what pandas would read as text, NaN or an infinity.
NOT_FINITE = ["nan", "NaN", "-nan", "inf", "-inf", "Infinity", "1e999", "-1e400"]
NOT_NUMBERS = ["abc", "1_000", " 1", "1 ", "0x10", "1,5", "--1", "1e", "e5", "½", "TRUE"]
NUMBERS = ["1", "-1.5e-3", ".5", "1.", "+2", "0", "6.02E23"]


def _table(header: str, cell: str, row: str = "{}") -> bytes:
    quoted = f'"{cell}"' if "," in cell or '"' in cell else cell
    return f"{header}\n{row.format(quoted)}\n".encode()


def _verify_refuses(tmp_path, files, message, **options):
    path = make_bundle(tmp_path / "b.tar.gz", files, **options)
    with pytest.raises(BundleError) as err:
        bundle.verify(path)
    assert str(path) in str(err.value)
    assert message in str(err.value), err.value
    with pytest.raises(BundleError):
        bundle.review(path, tmp_path / "review")
    assert not (tmp_path / "review").exists()
    return str(err.value)


# A column of numbers in tables of every kind: a unit column of any table, a
# required and a free number column of a table the review fits on, a sample of
# a result file.
NUMBER_COLUMNS = {
    "unit column": (ANY_TABLE, "name,rtt_us", "a,{}"),
    "required column of a schema": (RUNS, "application,nodes,runtime_s", "cg,4,{}"),
    "free column of a schema": (RUNS, "application,nodes,runtime_s,load", "cg,4,1.5,{}"),
    "sample of a result file": (RESULT, PREAMBLE + "pair,rtt_us", "0,{}"),
}


@pytest.mark.parametrize("cell", NOT_FINITE + NOT_NUMBERS)
@pytest.mark.parametrize("where", sorted(NUMBER_COLUMNS))
def test_a_number_column_holding_no_finite_number_is_refused(tmp_path, where, cell):
    name, header, row = NUMBER_COLUMNS[where]
    message = _verify_refuses(tmp_path, {name: _table(header, cell, row)}, "not a finite number")
    assert f"{name}: line" in message
    assert "\0" not in message


@pytest.mark.parametrize("cell", NUMBERS)
@pytest.mark.parametrize("where", sorted(NUMBER_COLUMNS))
def test_a_number_column_of_numbers_passes(tmp_path, where, cell):
    name, header, row = NUMBER_COLUMNS[where]
    if where == "sample of a result file" and cell.startswith("-"):
        cell = cell[1:]
    path = make_bundle(tmp_path / "b.tar.gz", {name: _table(header, cell, row)})
    assert name in bundle.verify(path)["files"]


@pytest.mark.parametrize(
    ("name", "header", "row"),
    [
        (RUNS, "application,nodes,runtime_s", "cg,4,{}"),
        (RUNS, "application,nodes,runtime_s", "cg,{},1.0"),
        (
            "results/testbed/tidy/baseline_latency.csv",
            "pair,iteration,size_bytes,rtt_us",
            "0,1,8,{}",
        ),
        (RESULT, PREAMBLE + "pair,rtt_us", "0,{}"),
    ],
)
def test_a_required_value_left_empty_is_refused(tmp_path, name, header, row):
    _verify_refuses(tmp_path, {name: _table(header, "", row)}, "is empty; every row gives it")


def test_an_empty_cell_of_a_free_column_passes(tmp_path):
    files = {
        ANY_TABLE: b"name,rtt_us\na,\n",
        RUNS: b"application,nodes,runtime_s,load\ncg,4,1.5,\n",
    }
    assert bundle.verify(make_bundle(tmp_path / "b.tar.gz", files))


def test_a_negative_sample_of_a_result_file_is_refused(tmp_path):
    table = (PREAMBLE + "pair,rtt_us\n0,-3\n").encode()
    _verify_refuses(tmp_path, {RESULT: table}, "a sample is a finite number >= 0")


# Tables whose shape no reader takes: the column names, the lines, the rows.
MALFORMED_TABLES = {
    "a column named twice": (b"a,a\n1,2\n", "column 'a' appears more than once"),
    "a unit column named twice": (b"x,t_s,y,t_s\n1,2,3,4\n", "column 't_s' appears more than once"),
    "two columns named twice": (b"a,b,a,b\n1,2,3,4\n", "'a', 'b' appears more than once"),
    "a column without a name": (b"a,,b\n1,2,3\n", "a column has no name"),
    "a blank column name": (b"a, \n1,2\n", "a column has no name"),
    "a blank line inside": (b"a\n1\n\n2\n", "line 3 is blank"),
    "a blank first line": (b"\na\n1\n", "line 1 is blank"),
    "a blank line of a carriage return": (b"a\r\n1\r\n\r\n", "line 3 is blank"),
    "a row too wide": (b"a,b\n1,2,3\n", "line 2 has 3 fields, the header 2"),
    "a row too narrow": (b"a,b,c\n1,2,3\n1\n", "line 3 has 1 fields, the header 3"),
    "a quoted field never closed": (b'a,b\n1,"2\n3,4\n', "a quoted field is never closed"),
    "a NUL byte": (b"a,b\n1,\x002\n", "line 2 holds a NUL byte"),
    "a NUL byte in the header": (b"a\x00,b\n1,2\n", "line 1 holds a NUL byte"),
    "bytes that are not UTF-8": (b"a,b\n1,\xff\n", "line 2 is not UTF-8 text"),
    "only comments": (b"#@format=netnoise-2\n# nothing else\n", "a table needs its header line"),
    "nothing at all": (b"", "a table needs its header line"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED_TABLES))
@pytest.mark.parametrize("name", [ANY_TABLE, RUNS, f"{bundle.EXPECTED}/{ANY_TABLE}"])
def test_a_table_of_a_shape_no_reader_takes_is_refused(tmp_path, case, name):
    data, message = MALFORMED_TABLES[case]
    refused = _verify_refuses(tmp_path, {name: data}, message)
    assert "\0" not in refused


def test_quoted_fields_spanning_lines_and_carriage_returns_pass(tmp_path):
    files = {ANY_TABLE: b'claim,value_s\r\n"a ""quoted""\nclaim, of two lines",1.5\r\nb,2\r\n'}
    assert bundle.verify(make_bundle(tmp_path / "b.tar.gz", files))


# JSON documents of a bundle: strict, as RFC 8259 has it.
DOUBLED_MANIFESTS = {
    "a top-level key twice": '{{"format": "x", {body}}}',
    "a file entry twice": (
        '{{{body}, "files": {{"config.yaml": {{"sha256": "{sha}", "bytes": 1}}}}}}'
    ),
    "a key twice inside git": (
        '{{{body}, "git": {{"sha": "{zero}", "sha": "{zero}", "dirty": false}}}}'
    ),
    "a key twice in an entry": (
        '{{{body}, "files": {{"config.yaml": {{"sha256": "{sha}", "sha256": "{sha}", '
        '"bytes": 1}}}}}}'
    ),
}


def _manifest_body(tmp_path) -> dict:
    # The manifest of a good bundle, as JSON text, to be doubled into.
    path = make_bundle(tmp_path / "good.tar.gz", {})
    with tarfile.open(path) as tar:
        return json.loads(tar.extractfile(bundle.MANIFEST).read())


@pytest.mark.parametrize("case", sorted(DOUBLED_MANIFESTS))
def test_a_manifest_with_a_key_twice_is_refused(tmp_path, case):
    record = _manifest_body(tmp_path)
    body = json.dumps(record)[1:-1]
    text = DOUBLED_MANIFESTS[case].format(
        body=body, sha=record["files"][bundle.CONFIG]["sha256"], zero="0" * 40
    )
    _verify_refuses(tmp_path, {}, "is given twice in one object", manifest=text.encode())


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_a_manifest_with_a_number_json_does_not_have_is_refused(tmp_path, constant):
    record = _manifest_body(tmp_path)
    record["files"][bundle.CONFIG]["bytes"] = "@"
    text = json.dumps(record).replace('"@"', constant)
    _verify_refuses(tmp_path, {}, f"{constant} is not a JSON number", manifest=text.encode())


@pytest.mark.parametrize(
    "document",
    [
        b'{"schema": "netnoise-provenance-1", "schema": "other"}',
        b'{"a": {"b": 1, "b": 2}}',
        b'[{"x": 1, "x": 1}]',
        b'{"value": NaN}',
        b"\xef\xbb\xbf{}",
    ],
)
@pytest.mark.parametrize("name", ["results/testbed/raw/a.csv.prov.json", "results/testbed/b.json"])
def test_a_json_member_that_is_not_strict_json_is_refused(tmp_path, document, name):
    _verify_refuses(tmp_path, {name: document}, f"{name}: not JSON")


# The archive: one gzip stream of one tar, read to its end.
def _append(data: bytes):
    def damage(path):
        with open(path, "ab") as fh:
            fh.write(data)

    return damage


def _inside_the_stream(extra: bytes):
    """The tar followed, inside its gzip stream, by ``extra``."""

    def damage(path):
        with gzip.open(path) as fh:
            tar = fh.read()
        path.write_bytes(gzip.compress(tar + extra))

    return damage


def _second_archive(path):
    with gzip.open(path) as fh:
        tar = fh.read()
    more = io.BytesIO()
    with tarfile.open(fileobj=more, mode="w") as second:
        bundle.add_member(second, "results/testbed/tidy/b.csv", b"b\n2\n")
    path.write_bytes(gzip.compress(tar + more.getvalue()))


def _flip_crc(path):
    data = bytearray(path.read_bytes())
    data[-8] ^= 0xFF
    path.write_bytes(bytes(data))


def _cut(keep: float):
    def damage(path):
        data = path.read_bytes()
        path.write_bytes(data[: int(len(data) * keep)])

    return damage


DAMAGED_ARCHIVES = {
    "text after the gzip stream": (_append(b"trailing words\n"), "after the end of its compressed"),
    "one byte after the gzip stream": (_append(b"\x01"), "after the end of its compressed"),
    "zeros after the gzip stream": (_append(b"\0" * 4096), "after the end of its compressed"),
    "a second gzip stream": (_append(gzip.compress(b"more")), "after the end of its compressed"),
    "a whole bundle appended": (
        lambda path: _append(path.read_bytes())(path),
        "after the end of its compressed",
    ),
    "text after the tar inside the stream": (
        _inside_the_stream(b"hidden text"),
        "after the end of its archive",
    ),
    "a second tar inside the stream": (_second_archive, "after the end of its archive"),
    "megabytes of zeros inside the stream": (
        _inside_the_stream(b"\0" * (4 << 20)),
        "after the end of its archive",
    ),
    "a wrong checksum of the stream": (_flip_crc, "damaged or not a bundle"),
    "cut at a tenth": (_cut(0.1), "damaged or not a bundle"),
    "cut at nine tenths": (_cut(0.9), "damaged or not a bundle"),
    "cut before its last byte": (_cut(0.9999), "damaged or not a bundle"),
    "not compressed": (
        lambda path: path.write_bytes(gzip.decompress(path.read_bytes())),
        "damaged",
    ),
    "compressed as zlib, not gzip": (
        lambda path: path.write_bytes(zlib.compress(gzip.decompress(path.read_bytes()))),
        "damaged",
    ),
}


@pytest.mark.parametrize("case", sorted(DAMAGED_ARCHIVES))
def test_an_archive_with_more_or_less_than_its_one_stream_is_refused(tmp_path, case):
    damage, message = DAMAGED_ARCHIVES[case]
    path = make_bundle(tmp_path / "b.tar.gz", {ANY_TABLE: b"a\n1\n" * 2000})
    assert bundle.verify(path)
    damage(path)
    with pytest.raises(BundleError, match=message):
        bundle.verify(path)
    with pytest.raises(BundleError):
        bundle.review(path, tmp_path / "review")
    assert not (tmp_path / "review").exists()


@pytest.mark.parametrize(
    "make",
    [os.mkfifo, os.mkdir, lambda path: os.symlink("/dev/zero", path), lambda path: None],
    ids=["FIFO", "directory", "device", "missing"],
)
def test_a_bundle_that_is_no_regular_file_is_named_for_what_it_is(tmp_path, make):
    path = tmp_path / "b.tar.gz"
    make(path)
    with pytest.raises(BundleError) as err:
        bundle.verify(path)
    message = str(err.value)
    if not os.path.lexists(path):
        assert "no such bundle" in message
    else:
        assert "no such bundle" not in message
        assert "a directory" in message or "not a regular file" in message


# Memory: a member is read a chunk at a time, whatever it unpacks to.
HUGE = 200 << 20
BOUNDED = {
    "a table of line ends": (ANY_TABLE, b"\n", "line 1 is blank"),
    "a table of one line": (ANY_TABLE, b"a", "longer than"),
    "a text of line ends": ("results/testbed/notes.txt", b"\n", None),
    "a JSON document": ("results/testbed/a.json", b" ", "larger than a document"),
}


def _huge_bundle(path, name: str, byte: bytes) -> None:
    """A bundle holding member ``name`` of :data:`HUGE` copies of ``byte``, packed
    without ever holding it whole."""
    config = b"{}\n"
    digest = hashlib.sha256()
    block = byte * (1 << 20)
    for _ in range(HUGE >> 20):
        digest.update(block)
    record = {
        "format": bundle.FORMAT,
        **MANIFEST_RECORD,
        "files": {
            bundle.CONFIG: {"sha256": bundle.sha256(config), "bytes": len(config)},
            name: {"sha256": digest.hexdigest(), "bytes": HUGE},
        },
    }

    class Repeated(io.RawIOBase):
        left = HUGE

        def readable(self):
            return True

        def readinto(self, buffer):
            n = min(len(buffer), self.left)
            buffer[:n] = byte * n
            self.left -= n
            return n

    with tarfile.open(path, "w:gz", compresslevel=1) as tar:
        bundle.add_member(tar, bundle.MANIFEST, json.dumps(record).encode())
        bundle.add_member(tar, bundle.CONFIG, config)
        info = tarfile.TarInfo(name)
        info.size = HUGE
        tar.addfile(info, io.BufferedReader(Repeated(), 1 << 20))


@pytest.mark.parametrize("case", sorted(BOUNDED))
def test_a_member_of_hundreds_of_megabytes_is_checked_within_a_memory_bound(tmp_path, case):
    name, byte, message = BOUNDED[case]
    path = tmp_path / "b.tar.gz"
    _huge_bundle(path, name, byte)
    code = (
        "import resource, sys\n"
        "from netnoise import bundle\n"
        "try:\n"
        "    bundle.verify(sys.argv[1]); print('verified')\n"
        "except bundle.BundleError as err:\n"
        "    print(err)\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True
    )
    *said, peak_kb = out.stdout.splitlines()
    assert (message or "verified") in " ".join(said), out.stdout
    baseline = subprocess.run(
        [sys.executable, "-c", "import resource; from netnoise import bundle; "
         "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    # The member is 200 MB; its check holds a few chunks of it.
    assert int(peak_kb) - int(baseline.stdout) < 64 << 10


# Results of more than one run: refused whatever the bundle's format, so never judged.
def _sidecar(sha: str, *, dirty: bool = False, config: dict | None = None) -> bytes:
    return json.dumps(
        {
            "schema": "netnoise-provenance-1",
            "result": {"path": "results/testbed/raw/a.csv", "sha256": "0" * 64},
            "git": {"sha": sha, "dirty": dirty},
            "software": {"hostname": "node"},
            "start": "2026-01-01T00:00:00+00:00",
            "config": config or {},
        }
    ).encode()


SIDE = "results/testbed/raw/{}.csv.prov.json"
NOT_ONE_RUN = {
    "two revisions": {SIDE.format("a"): _sidecar("0" * 40), SIDE.format("b"): _sidecar("1" * 40)},
    "three revisions": {SIDE.format(i): _sidecar(str(i) * 40) for i in range(3)},
    "a revision other than the manifest's": {SIDE.format("a"): _sidecar("2" * 40)},
    "a result of a dirty checkout": {SIDE.format("a"): _sidecar("0" * 40, dirty=True)},
    "a result of another config": {
        SIDE.format("a"): _sidecar("0" * 40, config={"network_noise": {"seed": 99}})
    },
}


@pytest.mark.parametrize("format_", bundle.READABLE_FORMATS)
@pytest.mark.parametrize("case", sorted(NOT_ONE_RUN))
def test_results_of_more_than_one_run_are_refused_in_every_format(tmp_path, capsys, case, format_):
    files = NOT_ONE_RUN[case]
    path = make_bundle(tmp_path / "b.tar.gz", files, manifest={"format": format_})
    with pytest.raises(BundleError, match="not one run"):
        bundle.verify(path)
    for argv in (["bundle", "verify", str(path)], ["claims", "--bundle", str(path)]):
        assert main(argv) == 2
        captured = capsys.readouterr()
        assert "reproduced" not in captured.out
        assert "not one run" in captured.err
    with pytest.raises(BundleError):
        bundle.review(path, tmp_path / "review")
    assert not (tmp_path / "review").exists()


def test_an_archive_changed_after_it_was_verified_is_not_unpacked(tmp_path):
    """What lands on disk is what was verified: each member is held to the
    verified manifest's checksum as it is unpacked."""
    first = make_bundle(tmp_path / "a.tar.gz", {ANY_TABLE: b"a\n1\n"})
    verified = bundle.verification.check(first)
    make_bundle(first, {ANY_TABLE: b"a\n2\n"})
    (tmp_path / "out").mkdir()
    with pytest.raises(BundleError, match="changed since it was verified"):
        bundle.verification.extract(first, verified, tmp_path / "out")
