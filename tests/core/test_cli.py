from __future__ import annotations

import argparse

import pytest

from netnoise import studies
from netnoise.cli import main


def test_version(capsys):
    assert main(["version"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("netnoise ")
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out == printed


def test_studies_lists_every_study(capsys):
    assert main(["studies"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[:3] for line in lines] == [
        [study.key, "seed" if study.reproduces else "new", study.number]
        for study in studies.STUDIES
    ]
    assert "Hoefler et al., 2009" in lines[1]


def test_config_check_reports_errors(tmp_path, capsys):
    bad = tmp_path / "c.yaml"
    bad.write_text("platform:\n  kind: cloud\n")
    assert main(["config", "check", str(bad)]) == 2
    assert "platform.kind: 'cloud' is not allowed" in capsys.readouterr().err


def test_config_check_shows_defaults(tmp_path, capsys):
    good = tmp_path / "c.yaml"
    good.write_text("{}\n")
    assert main(["config", "check", str(good), "--show"]) == 0
    assert "launcher: srun --mpi=pmix" in capsys.readouterr().out


def test_parse_prints_tidy_csv(tmp_path, capsys):
    from tests.core.test_io import PREAMBLE

    path = tmp_path / "r.csv"
    path.write_text(PREAMBLE + "pair,rtt_us\n0,1.5\n#@end=1\n")
    assert main(["parse", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("pair,rtt_us,tool")
    assert main(["parse", str(tmp_path / "missing.csv")]) == 2


def test_claims_without_a_run_judges_the_shipped_bundle_and_says_so(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["claims"]) == 0
    printed = capsys.readouterr()
    assert "no run under results/: the shipped bundle's claims" in printed.err
    assert "headline claims reproduced on testbed" in printed.out
    # A folder the user names must hold a run: no bundle stands in for it.
    (tmp_path / "empty").mkdir()
    assert main(["claims", "empty"]) == 2
    assert "no results of a run" in capsys.readouterr().err


def test_every_argument_of_every_command_has_help():
    from netnoise.cli import build_parser

    def unexplained(parser, command):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    yield from unexplained(sub, [*command, name])
            elif action.help is None and not isinstance(action, argparse._HelpAction):
                yield " ".join(
                    [*command, action.option_strings[0] if action.option_strings else action.dest]
                )

    assert list(unexplained(build_parser(), [])) == []
