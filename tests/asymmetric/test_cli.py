"""`netnoise predict asymmetric` (cli.py): the pattern and platform files it reads,
its output, and its errors naming file and line."""

from __future__ import annotations

import argparse
import io
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from netnoise.studies.asymmetric import cli as asymmetric_cli
from netnoise.studies.asymmetric import files as asymmetric_files
from netnoise.studies.asymmetric import model as am
from tests.asymmetric.table1 import (
    NIC,
    TABLE1,
    TABLE1_PATTERN,
    TABLE1_PLATFORM,
    TABLE1_PLATFORM_DICT,
    TABLE1_PRED_S,
    truncate,
)
from tests.conftest import REPO


def test_table1_fixture_files_match_the_example():
    platform = asymmetric_files.load_platform(TABLE1_PLATFORM)
    assert platform.nic_bps == NIC and platform.backbone_bps == am.PAPER_COPPER_BPS
    assert asymmetric_files.load_pattern(TABLE1_PATTERN, platform).equals(TABLE1)


def cli_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="netnoise")
    asymmetric_cli.register(parser.add_subparsers(dest="command", required=True))
    return parser


def run_cli(argv: list[str], capsys) -> tuple[int, str, str]:
    args = cli_parser().parse_args(argv)
    code = args.func(args)
    out, err = capsys.readouterr()
    return code, out, err


def cli_argv(platform: Path, pattern: Path, *extra: str) -> list[str]:
    return ["predict", "asymmetric", "--platform", str(platform), "--pattern", str(pattern), *extra]


@pytest.mark.parametrize("model", am.MODELS)
def test_cli_prints_one_row_per_link_in_input_order(model, capsys):
    code, out, err = run_cli(cli_argv(TABLE1_PLATFORM, TABLE1_PATTERN, "--model", model), capsys)
    assert code == 0 and err == ""
    got = pd.read_csv(io.StringIO(out))
    assert list(got.columns) == ["src", "dst", "bytes", "time_s"]
    assert got[["src", "dst", "bytes"]].equals(TABLE1)
    expected = am.predict(TABLE1_PLATFORM_DICT, TABLE1, model)["time_s"]
    assert got["time_s"].tolist() == expected.tolist()  # full precision


def test_cli_default_model_is_asymmetric(tmp_path, capsys):
    (tmp_path / "p.csv").write_text(
        "src,dst,bytes\nn1,n0,10000000\nn2,n0,10000000\nn0,n3,10000000\n"
    )
    (tmp_path / "x.yaml").write_text(
        "racks: {R: [n0, n1, n2, n3]}\nnic_bps: 940e6\nbackbone_bps: 9.4e9\n"
    )
    _, out, _ = run_cli(cli_argv(tmp_path / "x.yaml", tmp_path / "p.csv"), capsys)
    assert pd.read_csv(io.StringIO(out))["time_s"].tolist() == pytest.approx([80 / 470] * 3)
    _, out, _ = run_cli(
        cli_argv(tmp_path / "x.yaml", tmp_path / "p.csv", "--model", "fairness"), capsys
    )
    assert pd.read_csv(io.StringIO(out))["time_s"].iloc[2] == pytest.approx(80 / 940)


def test_register_joins_an_existing_predict_command():
    parser = argparse.ArgumentParser(prog="netnoise")
    sub = parser.add_subparsers(dest="command", required=True)
    other = sub.add_parser("predict").add_subparsers(dest="action", required=True)
    other.add_parser("queue").set_defaults(func=lambda args: 0)
    asymmetric_cli.register(sub)
    args = parser.parse_args(cli_argv(TABLE1_PLATFORM, TABLE1_PATTERN))
    assert args.func is asymmetric_cli.run and args.model == "asymmetric"
    assert parser.parse_args(["predict", "queue"]).func(None) == 0


GOOD_PATTERN = "src,dst,bytes\nX1,Y1,1000\n"
BAD_PATTERNS = [
    ("src,dst,size\nX1,Y1,1000\n", ":1: wrong header"),
    ("", ":1: wrong header"),
    ("src,dst,bytes\nX1,Y1,1000\nX1,Q7,1000\n", ":3: unknown node 'Q7'"),
    ("src,dst,bytes\n\n# comment\nX2,X2,1000\n", ":4: src == dst"),
    ("src,dst,bytes\nX1,Y1,ten\n", ":2: bad number for bytes"),
    ("src,dst,bytes\nX1,Y1,-5\n", ":2: bad number for bytes"),
    ("src,dst,bytes\nX1,Y1,1.5\n", ":2: bad number for bytes"),
    ("src,dst,bytes\nX1,Y1\n", ":2: expected 3 fields"),
    ("src,dst,bytes\n", ": no links"),
]
GOOD_PLATFORM = "racks:\n  X: [X1, X2]\n  Y: [Y1]\nnic_bps: 940e6\nbackbone_bps: 9.4e9\n"
BAD_PLATFORMS = [
    ("racks:\n  X: [X1, X2]\n  Y: [Y1]\nnic_bps: 940e6\n", ":1: missing key 'backbone_bps'"),
    ("racks:\n  X: [X1]\nnic_bps: fast\nbackbone_bps: 1e9\n", ":3: bad number for nic_bps"),
    ("racks:\n  X: [X1]\nnic_bps: 1e9\nbackbone_bps: -2\n", ":4: bad number for backbone_bps"),
    ("racks:\n  X: [X1]\n  Y: [X1]\nnic_bps: 1\nbackbone_bps: 1\n", ":3: node 'X1'"),
    ("racks:\n  X: []\nnic_bps: 1\nbackbone_bps: 1\n", ":2: rack 'X' must be a non-empty"),
    ("racks: [X1]\nnic_bps: 1\nbackbone_bps: 1\n", ":1: racks must map"),
    ("racks:\n  X: [X1]\nnic_bps: 1\nbackbone_bps: 1\nspeed: 3\n", ":5: unknown key 'speed'"),
    ("racks:\n  X: [X1\nnic_bps: 1\n", "not valid YAML"),
    ("- just a list\n", ":1: expected a mapping"),
]


@pytest.mark.parametrize(
    ("bad", "text", "message"),
    [("pattern.csv", text, message) for text, message in BAD_PATTERNS]
    + [("platform.yaml", text, message) for text, message in BAD_PLATFORMS],
)
def test_cli_bad_file_names_file_and_line(bad, text, message, tmp_path, capsys):
    files = {"platform.yaml": GOOD_PLATFORM, "pattern.csv": GOOD_PATTERN, bad: text}
    for name, content in files.items():
        (tmp_path / name).write_text(content)
    code, out, err = run_cli(cli_argv(tmp_path / "platform.yaml", tmp_path / "pattern.csv"), capsys)
    assert code == 2 and out == ""
    assert err.startswith(f"netnoise: {tmp_path / bad}")
    assert message in err


def test_cli_missing_file(tmp_path, capsys):
    code, _, err = run_cli(cli_argv(tmp_path / "none.yaml", TABLE1_PATTERN), capsys)
    assert code == 2 and "none.yaml: cannot read" in err


def run_module(module: str, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", module, *argv],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_cli_contract_in_a_real_process(tmp_path):
    done = run_module("netnoise.studies.asymmetric.cli", *cli_argv(TABLE1_PLATFORM, TABLE1_PATTERN))
    assert done.returncode == 0, done.stderr
    got = pd.read_csv(io.StringIO(done.stdout))
    assert truncate(got["time_s"], 3) == TABLE1_PRED_S
    (tmp_path / "bad.csv").write_text("src,dst,bytes\nX1,Y1,5\nX1,Nowhere,5\n")
    done = run_module(
        "netnoise.studies.asymmetric.cli", *cli_argv(TABLE1_PLATFORM, tmp_path / "bad.csv")
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip() == (
        f"netnoise: {tmp_path / 'bad.csv'}:3: unknown node 'Nowhere' "
        "(not in any rack of the platform)"
    )


def test_netnoise_command_predict_asymmetric(tmp_path):
    done = run_module("netnoise", *cli_argv(TABLE1_PLATFORM, TABLE1_PATTERN))
    assert done.returncode == 0, done.stderr
    assert truncate(pd.read_csv(io.StringIO(done.stdout))["time_s"], 3) == TABLE1_PRED_S
    (tmp_path / "bad.csv").write_text("src,dst,bytes\nX1,X1,5\n")
    done = run_module("netnoise", *cli_argv(TABLE1_PLATFORM, tmp_path / "bad.csv"))
    assert done.returncode == 2 and ":2: src == dst" in done.stderr
