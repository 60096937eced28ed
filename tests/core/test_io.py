from __future__ import annotations

import pytest

from netnoise.io import BenchmarkFormatError, column_unit, read_benchmark, read_tidy, tidy

PREAMBLE = """#@format=netnoise-1
#@tool=pingpong
#@version=0.1.0
#@git_sha=abc
#@argv=pingpong --size 8
#@seed=3
#@mpi_library=Open MPI v4.1.4
#@ranks=2
#@hosts=node1,node2
#@date=2026-01-01T00:00:00Z
#@size_bytes=8
"""


def write(tmp_path, text, name="r.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_reads_preamble_and_numeric_rows(tmp_path):
    path = write(tmp_path, PREAMBLE + "pair,iteration,rtt_us\n0,0,1.5\n0,1,2.5\n")
    result = read_benchmark(path)
    assert result.meta["hosts"] == "node1,node2"
    assert result.meta["size_bytes"] == "8"
    assert list(result.data.columns) == ["pair", "iteration", "rtt_us"]
    assert result.data["rtt_us"].tolist() == [1.5, 2.5]
    assert result.data["rtt_us"].dtype.kind == "f"


def test_tidy_adds_identifiers_and_meta(tmp_path):
    result = read_benchmark(write(tmp_path, PREAMBLE + "pair,rtt_us\n0,1\n"))
    frame = tidy(result, rep=4)
    assert frame.loc[0, "rep"] == 4
    assert frame.loc[0, "tool"] == "pingpong"
    assert frame.loc[0, "hosts"] == "node1,node2"


def test_read_tidy_tags_each_file(tmp_path):
    a = write(tmp_path, PREAMBLE + "pair,rtt_us\n0,1\n0,2\n", "a.csv")
    b = write(tmp_path, PREAMBLE + "pair,rtt_us\n0,3\n", "b.csv")
    frame = read_tidy([a, b], rep=[0, 1])
    assert frame.groupby("rep")["rtt_us"].sum().to_dict() == {0: 3, 1: 3}
    with pytest.raises(ValueError, match="rep: 1 values for 2 paths"):
        read_tidy([a, b], rep=[0])


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (PREAMBLE.replace("#@tool=pingpong\n", ""), "preamble lacks tool"),
        (PREAMBLE.replace("netnoise-1", "other-2"), "format 'other-2', expected 'netnoise-1'"),
        (PREAMBLE, "no header line"),
        (PREAMBLE + "pair,rtt_us\n0,1\n0\n", ":14: 1 fields, the header has 2"),
        (
            PREAMBLE + "pair,rtt_us\n0,1\n0,fast\n",
            ":14: column rtt_us expects a number, got 'fast'",
        ),
        (PREAMBLE + "Pair,RTT\n", "bad column name"),
        (PREAMBLE + "pair,rtt_us\n#@late=1\n", ":13: preamble line after the header"),
        ("#@novalue\n", ":1: preamble line '#@novalue' has no key="),
    ],
)
def test_rejects_malformed_files_naming_the_line(tmp_path, body, message):
    with pytest.raises(BenchmarkFormatError) as err:
        read_benchmark(write(tmp_path, body))
    assert message in str(err.value)


def test_column_units():
    assert column_unit("rtt_us") == "µs"
    assert column_unit("size_bytes") == "bytes"
    assert column_unit("pair") is None
    assert column_unit("split_id") is None
