"""One pattern file drives p2p_concurrent and ``netnoise predict asymmetric``: both
readers take the same files to the same links and refuse the same others,
whatever editor wrote them (a byte-order mark, CRLF line ends, spaces, tabs,
comments) and whatever is odd in them (signs, leading zeros, suffixes, NUL
bytes, bytes that are not UTF-8)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from netnoise.studies.asymmetric.cli import load_pattern, load_platform
from tests.conftest import REPO

RANKS = 4
HEADER = "src,dst,bytes\n"

# case -> the file's bytes
FILES = {
    "plain": HEADER.encode() + b"0,1,100\n1,2,200\n",
    "byte-order mark": b"\xef\xbb\xbf" + HEADER.encode() + b"0,1,100\n",
    "CRLF": b"src,dst,bytes\r\n0,1,100\r\n2,3,5\r\n",
    "byte-order mark and CRLF": b"\xef\xbb\xbfsrc,dst,bytes\r\n0,1,100\r\n\r\n3,0,9\r\n",
    "no final line end": HEADER.encode() + b"0,1,100",
    "spaces and tabs around fields": b" src , dst ,\tbytes \n 0 ,\t1 , 100 \n",
    "blank lines of spaces and tabs": HEADER.encode() + b"0,1,100\n  \n\t\n\n1,0,7\n",
    "comments, indented too": HEADER.encode() + b"# a\n  # b\n\t#c\n0,1,100\n",
    "a comment of non-ASCII text": HEADER.encode() + "# µs é 漢字\n0,1,100\n".encode(),
    "a long line": HEADER.encode() + b" " * 10_000 + b"0,1,100\n",
    "largest message": HEADER.encode() + b"0,1,1073741824\n",
    "leading zeros in bytes": HEADER.encode() + b"0,1,007\n",
    # refused by both
    "message beyond 2^30": HEADER.encode() + b"0,1,1073741825\n",
    "no links": HEADER.encode() + b"# nothing\n",
    "empty": b"",
    "header only, no line end": b"src,dst,bytes",
    "header in capitals": b"SRC,DST,BYTES\n0,1,100\n",
    "header of two columns": b"src,dst\n0,1\n",
    "header after a blank line": b"\nsrc,dst,bytes\n0,1,100\n",
    "a trailing comma": HEADER.encode() + b"0,1,100,\n",
    "an empty field": HEADER.encode() + b"0,,100\n",
    "four fields": HEADER.encode() + b"0,1,100,2\n",
    "a rank with a leading zero": HEADER.encode() + b"01,1,100\n",
    "a signed rank": HEADER.encode() + b"+0,1,100\n",
    "a negative rank": HEADER.encode() + b"-1,1,100\n",
    "a rank beyond the ranks": HEADER.encode() + b"0,4,100\n",
    "a link to itself": HEADER.encode() + b"2,2,100\n",
    "a signed byte count": HEADER.encode() + b"0,1,+100\n",
    "a byte count with a suffix": HEADER.encode() + b"0,1,1K\n",
    "a byte count with separators": HEADER.encode() + b"0,1,1_000\n",
    "a byte count with an exponent": HEADER.encode() + b"0,1,1e3\n",
    "a byte count of zero": HEADER.encode() + b"0,1,0\n",
    "a byte count of Arabic digits": HEADER.encode() + "0,1,١٠٠\n".encode(),
    "a no-break space around a field": HEADER.encode() + "0,1,\u00a0100\n".encode(),
    "a NUL byte": HEADER.encode() + b"0,1,100\x00\n",
    "a NUL byte after a link": HEADER.encode() + b"0,1,100\n\x00\n",
    "bytes that are not UTF-8": HEADER.encode() + b"# \xff\xfe\n0,1,100\n",
    "an overlong UTF-8 form": HEADER.encode() + b"# \xc0\xaf\n0,1,100\n",
    "a UTF-8 surrogate": HEADER.encode() + b"# \xed\xa0\x80\n0,1,100\n",
    "a lone carriage return": HEADER.encode() + b"0,1,100\r1,0,5\n",
    "two carriage returns": HEADER.encode() + b"0,1,100\r\r\n",
    "a form feed": HEADER.encode() + b"0,1,100\x0c\n",
    "a byte-order mark on a later line": HEADER.encode() + b"\xef\xbb\xbf0,1,100\n",
    "UTF-16": "src,dst,bytes\n0,1,100\n".encode("utf-16"),
}


@pytest.fixture(scope="module")
def c_reader(tmp_path_factory):
    if shutil.which("cc") is None:
        pytest.skip("no C compiler")
    build = tmp_path_factory.mktemp("pattern")
    subprocess.run(
        ["make", "-s", "-C", str(REPO / "csrc"), f"BUILD={build}", f"{build}/test_pattern"],
        check=True,
        capture_output=True,
    )
    return build / "test_pattern"


@pytest.fixture(scope="module")
def platform(tmp_path_factory):
    path = tmp_path_factory.mktemp("platform") / "platform.yaml"
    nodes = ", ".join(f'"{i}"' for i in range(RANKS))
    path.write_text(f"racks: {{R: [{nodes}]}}\nnic_bps: 940e6\nbackbone_bps: 9.4e9\n")
    return load_platform(path)


def test_the_family_holds_both_outcomes():
    assert len(FILES) >= 40


@pytest.mark.parametrize("case", sorted(FILES))
def test_p2p_concurrent_and_predict_read_a_pattern_alike(tmp_path, c_reader, platform, case):
    path = tmp_path / "pattern.csv"
    path.write_bytes(FILES[case])
    c = subprocess.run(
        [str(c_reader), str(path), str(RANKS)], capture_output=True, text=True, timeout=30
    )
    try:
        frame = load_pattern(path, platform)
        python = "\n".join(f"{r.src},{r.dst},{r.bytes}" for r in frame.itertuples())
    except ValueError as err:
        python = None
        python_error = str(err)
    if c.returncode == 0:
        assert python is not None, f"C read it, predict refused: {python_error}"
        assert c.stdout.splitlines()[1:] == python.splitlines()
    else:
        assert c.returncode == 2, c.stderr
        assert python is None, f"predict read it, C refused: {c.stderr}"
        assert str(path) in c.stderr and str(path) in python_error
