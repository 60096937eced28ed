"""Every command of ``netnoise``, each of its file arguments given a missing
file, a directory, a FIFO, a device and a dangling link (an output given a
directory, a FIFO and a path under a file), and every command run with an empty
PATH: each ends at once in ``netnoise: <message>`` naming what is wrong, with no
traceback, nothing written where it was not asked to write, and no wait on a
FIFO; the environment's own oddities (an ASCII-only output, a full disk) end
the same way or do not matter."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys

import pytest

from netnoise import bundle
from netnoise.cli import main
from tests.conftest import REPO
from tests.core.test_io import PREAMBLE

SHIPPED = str(bundle.SHIPPED)
CONFIG = str(REPO / "config" / "config.yaml")
RESULT = "RESULT"  # a benchmark result file the test writes
SMALL = "SMALL"  # a config of a small testbed of the test's own names

# Commands with FILE where a file they read stands; IN stands for a good input.
READERS = {
    "claims of results": ["claims", "FILE"],
    "claims of a bundle": ["claims", "--bundle", "FILE"],
    "claims beside a bundle": ["claims", "--bundle", SHIPPED, "--beside", "FILE"],
    "claims updating a document": ["claims", "--bundle", SHIPPED, "--update", "FILE"],
    "config check": ["config", "check", "FILE"],
    "config check of an overlay": ["config", "check", CONFIG, "FILE"],
    "config check --show": ["config", "check", "--show", "FILE"],
    "testbed status": ["testbed", "--config", "FILE", "status"],
    "testbed down": ["testbed", "--config", "FILE", "down"],
    "testbed env": ["testbed", "--config", "FILE", "env"],
    "testbed up": ["testbed", "--config", "FILE", "up"],
    "testbed exec": ["testbed", "--config", "FILE", "exec", "1", "--", "true"],
    "testbed mpirun": ["testbed", "--config", "FILE", "mpirun", "-n", "2", "--", "true"],
    "predict of a platform": ["predict", "asymmetric", "--platform", "FILE", "--pattern", "IN"],
    "predict of a pattern": ["predict", "asymmetric", "--platform", "IN.yaml", "--pattern", "FILE"],
    "variability metrics": ["variability", "metrics", "FILE"],
    "variability estimate of a run": ["variability", "estimate", "FILE", "--model", "IN.npz"],
    "variability estimate with a model": ["variability", "estimate", "IN.d", "--model", "FILE"],
    "variability train": ["variability", "train", "FILE", "--model", "OUT.npz"],
    "bundle create from a workdir": ["bundle", "create", "-o", "OUT.tar.gz", "--workdir", "FILE"],
    "bundle create with a config": [
        "bundle", "create", "-o", "OUT.tar.gz", "--workdir", "IN.w", "--configfile", "FILE",
    ],
    "bundle verify": ["bundle", "verify", "FILE"],
    "bundle describe": ["bundle", "describe", "FILE"],
    "review": ["review", "--bundle", "FILE", "--workdir", "OUT.review"],
    "report from a workdir": ["report", "--workdir", "FILE", "--output", "OUT.html"],
    "report with a config": [
        "report", "--workdir", "IN.w", "--output", "OUT.html", "--configfile", "FILE",
    ],
    "bench cpu with a config": ["bench", "cpu", "--config", "FILE", "--policies", ""],
    "bench cpu with programs": ["bench", "cpu", "--bin", "FILE", "--policies", ""],
    "bench injector": ["bench", "injector", "--bin", "FILE"],
    "parse": ["parse", "FILE"],
}  # fmt: skip

# Where FILE stands for a directory (a run's, programs'), an empty one is a good
# input, refused or not by what it lacks.
DIRECTORIES = {
    "bench cpu with programs", "bench injector", "bundle create from a workdir",
    "claims of results", "report from a workdir", "variability estimate of a run",
    "variability metrics", "variability train",
}  # fmt: skip

# Commands with FILE where a file they write stands.
WRITERS = {
    "claims updating a document": ["claims", "--bundle", SHIPPED, "--update", "FILE"],
    "config docs": ["config", "docs", "--output", "FILE"],
    "simulate": [
        "simulate", "--topology", "torus:4x4", "--collective", "bcast", "--ratio", "0.5",
        "--runs", "2", "--out", "FILE",
    ],
    "bundle describe": ["bundle", "describe", SHIPPED, "--update", "FILE"],
    "report": ["report", "--workdir", "IN.w", "--output", "FILE"],
    "bundle create": ["bundle", "create", "-o", "FILE", "--workdir", "IN.w"],
    "review": ["review", "--bundle", "IN.tar.gz", "--workdir", "FILE"],
}  # fmt: skip


def _missing(path):
    return path


def _directory(path):
    path.mkdir()
    return path


def _fifo(path):
    os.mkfifo(path)
    return path


def _device(path):
    os.symlink("/dev/zero", path)
    return path


def _dangling(path):
    os.symlink(path.with_name("nowhere"), path)
    return path


def _under_a_file(path):
    path.write_text("a file\n")
    return path / "inside"


BAD_INPUTS = {
    "missing": _missing,
    "a directory": _directory,
    "a FIFO": _fifo,
    "a device": _device,
    "a dangling link": _dangling,
}
BAD_OUTPUTS = {"a directory": _directory, "a FIFO": _fifo, "under a file": _under_a_file}


def _inputs(tmp_path) -> None:
    """The good inputs IN... stand for."""
    (tmp_path / "IN").write_text("src,dst,bytes\nn0,n1,1000\n")
    (tmp_path / "IN.yaml").write_text("racks: {R: [n0, n1]}\nnic_bps: 940e6\nbackbone_bps: 9.4e9\n")
    (tmp_path / "IN.npz").write_bytes(b"")
    run = tmp_path / "IN.d"
    run.mkdir()
    (run / "run.json").write_text('{"nodes": ["n1"], "runtime_s": 1.0}')
    (run / "counters.csv").write_text("time_s,device,port,role,counter,value\n")
    (tmp_path / "IN.w").mkdir()
    os.symlink(SHIPPED, tmp_path / "IN.tar.gz")


class _Hung(Exception):
    pass


def _run(argv, capsys):
    """``main(argv)``: its status and stderr; a command still running after a
    minute (a read blocked on a FIFO) fails the test instead of hanging it."""

    def hung(*_):
        raise _Hung

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(60)
    try:
        status = main(argv)
    except SystemExit as exit_:
        status = exit_.code
    except _Hung:
        pytest.fail(f"{argv} still runs after a minute")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _one_clear_line(status, err, path):
    assert status not in (0, None), err
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("netnoise: "), err
    assert "unexpected" not in last, err
    assert "\0" not in err
    assert ".tmp" not in last, last  # never a temporary file's name
    return last


def _contents(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.mark.parametrize(
    ("command", "kind"),
    [
        (command, kind)
        for command in sorted(READERS)
        for kind in sorted(BAD_INPUTS)
        if not (kind == "a directory" and command in DIRECTORIES)
    ],
)
def test_every_command_refuses_an_input_that_is_no_file_in_one_line(
    tmp_path, capsys, command, kind
):
    _inputs(tmp_path)
    path = BAD_INPUTS[kind](tmp_path / "input")
    before = _contents(tmp_path)
    argv = [
        arg.replace("FILE", str(path))
        .replace("IN", str(tmp_path / "IN"))
        .replace("OUT", str(tmp_path / "OUT"))
        for arg in READERS[command]
    ]
    status, _, err = _run(argv, capsys)
    last = _one_clear_line(status, err, path)
    if command.startswith("claims updating"):
        assert str(path) in last
    assert _contents(tmp_path) == before, "something was written"


@pytest.mark.parametrize(
    ("command", "kind"),
    [
        (command, kind)
        for command in sorted(WRITERS)
        for kind in sorted(BAD_OUTPUTS)
        # an empty directory is a review's working directory
        if not (command == "review" and kind == "a directory")
    ],
)
def test_every_command_refuses_an_output_it_cannot_write_in_one_line(
    tmp_path, capsys, command, kind
):
    _inputs(tmp_path)
    path = BAD_OUTPUTS[kind](tmp_path / "output")
    before = _contents(tmp_path)
    argv = [
        arg.replace("FILE", str(path)).replace("IN", str(tmp_path / "IN"))
        for arg in WRITERS[command]
    ]
    status, _, err = _run(argv, capsys)
    _one_clear_line(status, err, path)
    assert _contents(tmp_path) == before, "something was written"


# With an empty PATH: what needs no program runs, the rest ends in one line.
EMPTY_PATH = {
    "version": ["version"],
    "studies": ["studies"],
    "config check": ["config", "check", CONFIG],
    "parse": ["parse", RESULT],
    "simulate": [
        "simulate", "--topology", "torus:4x4", "--collective", "bcast", "--ratio", "0.5",
        "--runs", "2",
    ],
    "bundle verify": ["bundle", "verify", SHIPPED],
    "claims of a bundle": ["claims", "--bundle", SHIPPED],
    "review": ["review", "--bundle", SHIPPED, "--workdir", "OUT.review", "--no-report"],
    "report": ["report", "--workdir", "OUT.w", "--output", "OUT.html"],
    "bundle create": ["bundle", "create", "-o", "OUT.tar.gz", "--workdir", "OUT.w"],
    "testbed status": ["testbed", "--config", SMALL, "status"],
    "testbed down": ["testbed", "--config", SMALL, "down"],
    "testbed up": ["testbed", "--config", SMALL, "up"],
    "testbed exec": ["testbed", "--config", SMALL, "exec", "1", "--", "true"],
    "testbed mpirun": ["testbed", "--config", SMALL, "mpirun", "-n", "2", "--", "true"],
    "bench injector": ["bench", "injector", "--bin", "OUT.w"],
}  # fmt: skip


@pytest.mark.parametrize("command", sorted(EMPTY_PATH))
def test_every_command_with_an_empty_path_runs_or_ends_in_one_line(
    tmp_path, capsys, monkeypatch, command
):
    (tmp_path / "OUT.w").mkdir()
    (tmp_path / "RESULT").write_text(PREAMBLE + "pair,rtt_us\n0,1.5\n#@end=1\n")
    (tmp_path / "SMALL").write_text("platform: {testbed: {nodes: 2, prefix: zqpa}}\n")
    argv = [
        arg.replace("OUT", str(tmp_path / "OUT"))
        .replace(RESULT, str(tmp_path / "RESULT"))
        .replace(SMALL, str(tmp_path / "SMALL"))
        for arg in EMPTY_PATH[command]
    ]
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", "")
    status, out, err = _run(argv, capsys)
    assert "Traceback" not in err + out
    if status not in (0, None):
        _one_clear_line(status, err, None)
    assert not (tmp_path / "OUT.review").exists() or status == 0


@pytest.mark.parametrize(
    "environment",
    [{"PYTHONIOENCODING": "ascii"}, {"LC_ALL": "C", "LANG": "C"}, {"PYTHONIOENCODING": "latin-1"}],
    ids=["ascii", "C locale", "latin-1"],
)
@pytest.mark.parametrize(
    "argv",
    [["bundle", "describe", SHIPPED], ["claims", "--bundle", SHIPPED], ["studies"]],
    ids=["bundle describe", "claims", "studies"],
)
def test_valid_output_survives_an_output_encoding_without_its_characters(environment, argv):
    out = subprocess.run(
        [sys.executable, "-m", "netnoise.cli", *argv],
        capture_output=True,
        env={**os.environ, **environment},
        timeout=300,
        check=False,
    )
    assert out.returncode == 0, out.stderr.decode(errors="replace")[-2000:]
    assert b"Traceback" not in out.stderr
    assert out.stdout


@pytest.mark.parametrize("error", [errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EROFS])
def test_a_write_that_fails_names_the_users_file_not_a_temporary_one(
    tmp_path, capsys, monkeypatch, error
):
    real_replace = os.replace

    def failing(src, dst, *args, **kwargs):
        if str(dst).endswith("docs.md"):
            raise OSError(error, os.strerror(error))
        return real_replace(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", failing)
    target = tmp_path / "docs.md"
    status, _, err = _run(["config", "docs", "--output", str(target)], capsys)
    last = _one_clear_line(status, err, target)
    assert f"{target}: {os.strerror(error)}" in last
    assert list(tmp_path.iterdir()) == []


def test_an_update_writes_through_a_symbolic_link(tmp_path, capsys):
    document = tmp_path / "README.md"
    document.write_text(
        "# Title\n\n<!-- claims-summary:start -->\nold\n<!-- claims-summary:end -->\n"
    )
    link = tmp_path / "link.md"
    link.symlink_to(document)
    status, _, err = _run(["config", "docs", "--output", str(link)], capsys)
    assert status == 0, err
    assert link.is_symlink() and link.resolve() == document
    assert document.read_text().startswith("# Configuration")


@pytest.mark.parametrize("cores", ["-1", "0", "two", "1.5", ""])
def test_review_refuses_a_core_count_that_is_none(tmp_path, capsys, cores):
    status, _, err = _run(
        ["review", "--bundle", SHIPPED, "--workdir", str(tmp_path / "r"), "--cores", cores], capsys
    )
    assert status == 2
    assert "--cores" in err and "whole number of cores" in err
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("name", ["a\x00b", "a\x07b", "a\x1b[31mb"])
def test_a_message_never_carries_a_raw_control_character(tmp_path, capsys, name):
    config = tmp_path / "c.yaml"
    config.write_text(
        f'platform: {{testbed: {{prefix: "{name.encode("unicode_escape").decode()}"}}}}\n'
    )
    status, _, err = _run(["config", "check", str(config)], capsys)
    assert status == 2
    assert not any(ord(c) < 32 and c not in "\n\t" for c in err), repr(err)
