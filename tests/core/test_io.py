from __future__ import annotations

import pandas as pd
import pytest

from netnoise.io import (
    BenchmarkFormatError,
    column_unit,
    read_benchmark,
    read_tidy,
    tidy,
    write_benchmark,
)

PREAMBLE = """#@format=netnoise-2
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
    path = write(tmp_path, PREAMBLE + "pair,iteration,rtt_us\n0,0,1.5\n0,1,2.5\n#@end=2\n")
    result = read_benchmark(path)
    assert result.meta["hosts"] == "node1,node2"
    assert result.meta["size_bytes"] == "8"
    assert list(result.data.columns) == ["pair", "iteration", "rtt_us"]
    assert result.data["rtt_us"].tolist() == [1.5, 2.5]
    assert result.data["rtt_us"].dtype.kind == "f"


def test_tidy_adds_identifiers_and_meta(tmp_path):
    result = read_benchmark(write(tmp_path, PREAMBLE + "pair,rtt_us\n0,1\n#@end=1\n"))
    frame = tidy(result, rep=4)
    assert frame.loc[0, "rep"] == 4
    assert frame.loc[0, "tool"] == "pingpong"
    assert frame.loc[0, "hosts"] == "node1,node2"


def test_read_tidy_tags_each_file(tmp_path):
    a = write(tmp_path, PREAMBLE + "pair,rtt_us\n0,1\n0,2\n#@end=2\n", "a.csv")
    b = write(tmp_path, PREAMBLE + "pair,rtt_us\n0,3\n#@end=1\n", "b.csv")
    frame = read_tidy([a, b], rep=[0, 1])
    assert frame.groupby("rep")["rtt_us"].sum().to_dict() == {0: 3, 1: 3}
    with pytest.raises(ValueError, match="rep: 1 values for 2 paths"):
        read_tidy([a, b], rep=[0])


HEADER = "pair,iteration,size_bytes,rtt_us\n"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (PREAMBLE.replace("#@tool=pingpong\n", ""), "preamble lacks tool"),
        (PREAMBLE.replace("netnoise-2", "other-2"), "format 'other-2', expected 'netnoise-2'"),
        (
            PREAMBLE.replace("netnoise-2", "netnoise-1") + "pair,rtt_us\n0,1\n",
            "format 'netnoise-1', expected 'netnoise-2' (results of an earlier netnoise",
        ),
        (PREAMBLE, "no header line"),
        (PREAMBLE + "pair,rtt_us\n0,1\n0\n#@end=2\n", ":14: 1 fields, the header has 2"),
        (
            PREAMBLE + "pair,rtt_us\n0,1\n0,fast\n#@end=2\n",
            ":14: column rtt_us expects a number, got 'fast'",
        ),
        (PREAMBLE + "Pair,RTT\n#@end=0\n", "bad column name"),
        (PREAMBLE + "pair,rtt_us\n#@late=1\n", ":13: preamble line after the header"),
        ("#@novalue\n", ":1: preamble line '#@novalue' has no key="),
        # Cut short: no end-of-data line, a row cut in its last number or after a comma.
        (
            PREAMBLE + HEADER + "0,0,8,187.5\n0,1,8,188.",
            ":14: no end-of-data line '#@end=<rows>' after 2 rows: the file was cut short",
        ),
        (PREAMBLE + HEADER + "0,0,8,187.5\n0,1,8,", ":14: empty field in column rtt_us"),
        (PREAMBLE + HEADER, ":12: no end-of-data line"),
        (
            PREAMBLE + HEADER + "0,0,8,187.5\n#@end=2\n",
            ":14: the end-of-data line counts 2 rows, the file has 1",
        ),
        (PREAMBLE + HEADER + "0,0,8,187.5\n#@end=1", ":14: the end-of-data line is cut short"),
        (PREAMBLE + HEADER + "0,0,8,187.5\n#@end=one\n", ":14: preamble line after the header"),
        (PREAMBLE + HEADER + "0,0,8,1.5\n#@end=1\n0,1,8,1.5\n", ":15: data after the end-of-data"),
        # Samples a unit makes impossible.
        (
            PREAMBLE + HEADER + "0,0,8,nan\n#@end=1\n",
            ":13: column rtt_us holds nan: a sample in µs must be a finite number >= 0",
        ),
        (PREAMBLE + HEADER + "0,0,8,inf\n#@end=1\n", ":13: column rtt_us holds inf"),
        (PREAMBLE + HEADER + "0,0,8,-3.5\n#@end=1\n", ":13: column rtt_us holds -3.5"),
        (PREAMBLE + HEADER + "0,0,-8,3.5\n#@end=1\n", ":13: column size_bytes holds -8"),
        (PREAMBLE + "pair,rtt_us,rtt_us\n0,1,2\n#@end=1\n", ":12: column(s) rtt_us repeated"),
        (PREAMBLE + 'pair,rtt_us\n"0,1\n#@end=1\n', "1 fields, the header has 2"),
    ],
)
def test_rejects_malformed_files_naming_the_line(tmp_path, body, message):
    with pytest.raises(BenchmarkFormatError) as err:
        read_benchmark(write(tmp_path, body))
    assert message in str(err.value)


def test_refuses_what_is_not_a_readable_text_file(tmp_path):
    binary = tmp_path / "binary.csv"
    binary.write_bytes(b"#@format=netnoise-2\n\xff\xfe\x00garbage")
    with pytest.raises(BenchmarkFormatError, match="not a text file"):
        read_benchmark(binary)
    with pytest.raises(BenchmarkFormatError, match="is a directory"):
        read_benchmark(tmp_path)
    with pytest.raises(BenchmarkFormatError, match="cannot read: No such file"):
        read_benchmark(tmp_path / "absent.csv")


def test_signed_and_text_identifiers_stay_as_written(tmp_path):
    """Columns without a unit (pair, peer, checksum) are not measurements: a negative
    value there is data, kept as it is."""
    body = "peer,name,checksum,rtt_us\n-1,a,7,1.5\n2,b,-1e300,2.5\n#@end=2\n"
    data = read_benchmark(write(tmp_path, PREAMBLE + body)).data
    assert data["peer"].tolist() == [-1, 2]
    assert data["name"].tolist() == ["a", "b"]
    assert data["checksum"].iloc[1] == -1e300


def test_written_files_read_back(tmp_path):
    meta = {k: "x" for k in ("tool", "version", "git_sha", "argv", "seed", "ranks", "hosts")}
    table = pd.DataFrame({"run": [0, 1], "runtime_s": [0.25, 1 / 3]})
    write_benchmark(tmp_path / "r.csv", {**meta, "date": "today", "note": "two\nlines"}, table)
    text = (tmp_path / "r.csv").read_text()
    assert text.startswith("#@format=netnoise-2\n") and text.endswith("#@end=2\n")
    result = read_benchmark(tmp_path / "r.csv")
    assert result.meta["note"] == "two lines"
    pd.testing.assert_frame_equal(result.data, table)
    write_benchmark(tmp_path / "empty.csv", {**meta, "date": "today"}, table.iloc[:0])
    assert read_benchmark(tmp_path / "empty.csv").data.empty
    with pytest.raises(ValueError, match="the preamble needs date"):
        write_benchmark(tmp_path / "bad.csv", meta, table)


def test_column_units():
    assert column_unit("rtt_us") == "µs"
    assert column_unit("size_bytes") == "bytes"
    assert column_unit("pair") is None
    assert column_unit("split_id") is None
