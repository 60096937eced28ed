"""Bad command-line input, as a new user or a hostile one gives it: every case ends
in ``netnoise: <message>`` naming what is wrong, with a non-zero status, never a
traceback and never a result."""

from __future__ import annotations

import gzip
import os
import tarfile

import pytest

from netnoise.cli import main
from netnoise.platform.testbed import TestbedPlatform
from tests.core.test_bundle import make_bundle
from tests.core.test_io import PREAMBLE

HEADER = PREAMBLE + "pair,rtt_us\n"


def _simulate(*more, topology="torus:4x4", collective="allreduce", ratio="0.5"):
    return ["simulate", "--topology", topology, "--collective", collective, "--ratio", ratio, *more]


def _review(workdir, bundle="FILE"):
    return ["review", "--bundle", bundle, "--workdir", workdir]


def _text(text):
    return lambda path: path.write_text(text) or path


def _bytes(data):
    return lambda path: path.write_bytes(data) or path


def _directory(path):
    path.mkdir()
    return path


def _truncated_bundle(path):
    make_bundle(path, {"results/testbed/tidy/a.csv": b"a\n1\n"}, config={})
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    return path


def _bundle(**options):
    return lambda path: make_bundle(path, {"results/testbed/tidy/a.csv": b"a\n1\n"}, **options)


def _uncompressed_bundle(path):
    _bundle(config={})(path)
    with gzip.open(path) as fh:
        path.write_bytes(fh.read())
    return path


def _fifo(path):
    os.mkfifo(path)
    return path


def _run_dir(path):
    """A run directory of two samples of one node's NIC."""
    path.mkdir()
    (path / "run.json").write_text('{"nodes": ["n1"], "runtime_s": 1.0}')
    (path / "counters.csv").write_text(
        "time_s,device,port,role,counter,value\n0,n1,eth0,node_nic,tx_bytes,0\n"
        "1,n1,eth0,node_nic,tx_bytes,1000\n"
    )
    return path


def _alias_bomb(key_path):
    """A config whose value at ``key_path`` (keys, outermost first) is nine lists of
    nine, nine levels deep: 500 bytes that expand to 9**9 strings."""
    levels = ['&a0 ["xxxxxxxx", "xxxxxxxx", "xxxxxxxx"]']
    levels += [f"&a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
    anchors = "".join(f"  - {level}\n" for level in levels)
    head = "".join(f"{'  ' * depth}{key}:\n" for depth, key in enumerate(key_path[:-1]))
    value = f"{'  ' * (len(key_path) - 1)}{key_path[-1]}: *a9\n"
    return f"x-anchors:\n{anchors}{head}{value}"


def _tar_without_manifest(path):
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo("readme.txt")
        tar.addfile(info)
    return path


# Cases of one command, ``argv``, in which FILE stands for a path: name -> (what
# FILE holds, or make(path) that prepares it, or None; the message, or a part of
# it, the error gives).
PARSE_CASES = {
    "binary file": (_bytes(b"\x00\xff\xfe" * 100), "not a text file"),
    "directory": (_directory, "is a directory"),
    "missing file": (None, "No such file"),
    "empty file": ("", "FILE"),
    "nan sample": (HEADER + "0,nan\n#@end=1\n", "nan"),
    "infinite sample": (HEADER + "0,inf\n#@end=1\n", "inf"),
    "negative sample": (HEADER + "0,-1.5\n#@end=1\n", "-1.5"),
    "duplicated column": (PREAMBLE + "pair,rtt_us,rtt_us\n0,1,2\n#@end=1\n", "rtt_us"),
    "row cut mid-number": (HEADER + "0,1.5\n0,188.", "#@end"),
    "row cut after a comma": (HEADER + "0,\n#@end=1\n", "empty"),
    "wrong row count": (HEADER + "0,1.5\n#@end=2\n", "2"),
    "no end marker": (HEADER + "0,1.5\n", "#@end"),
    "FIFO": (_fifo, "not a regular file"),
}
CONFIG_CHECK_CASES = {
    "malformed YAML": ("a: [b\n", "malformed YAML"),
    "key twice": ("platform: {}\nplatform: {}\n", "'platform' is given twice"),
    "nan timeout": ("platform: {timeout_s: .nan}\n", "platform.timeout_s"),
    "float repetitions": ("baseline: {repetitions: 3.0}\n", "baseline.repetitions"),
    "float node count": ("platform: {testbed: {nodes: 8.0}}\n", "platform.testbed.nodes"),
    "prefix with newline": ('platform: {testbed: {prefix: "zq\\n"}}\n', "platform.testbed.prefix"),
    "iterations beyond the programs": ("baseline: {iterations: 1.0e+20}\n", "baseline.iterations"),
    "empty xgft": ("network_noise: {fat_trees: ['xgft:0,0/1']}\n", "network_noise.fat_trees"),
    "huge torus": ("network_noise: {torus_2d: 'torus:100000x100000'}\n", "torus"),
    "deeply nested": ("a: " + "[" * 5000, "FILE"),
    "a list": ("- 1\n- 2\n", "FILE"),
    "missing file": (None, "No such file"),
    "binary file": (_bytes(b"\xff\xfe\x00\x01" * 50), "FILE"),
    **{
        f"alias bomb at {'.'.join(keys)}": (_alias_bomb(keys), "values once its aliases")
        for keys in (
            ["platform", "mpirun_args"],
            ["platform", "kind"],
            ["applications", "pingpong", "args"],
        )
    },
    "long list": (
        "platform: {mpirun_args: [" + ",".join(["1"] * 110_000) + "]}\n",
        "more than 20000 values",
    ),
    "100 MB comment": (
        lambda path: path.write_bytes(b"#" * (100 << 20)) or path,
        "larger than a config file",
    ),
    "FIFO": (_fifo, "not a regular file"),
}
BUNDLE_VERIFY_CASES = {
    "alias bomb in the config": (
        _bundle(config=_alias_bomb(["platform", "mpirun_args"])),
        "values once its aliases",
    ),
    "truncated": (_truncated_bundle, "damaged"),
    "manifest a list": (_bundle(manifest=[1], config={}), "JSON list"),
    "files a list": (_bundle(listed=["config.yaml"], config={}), "'files' must map"),
    "malformed config": (_bundle(config="platform: [x\n"), "malformed YAML"),
    "nested config": (
        _bundle(config="platform: " + "[" * 5000 + "]" * 5000 + "\n"),
        "nested too deeply",
    ),
    "not gzipped": (_uncompressed_bundle, "damaged"),
    "without manifest": (_tar_without_manifest, "not a netnoise bundle"),
    "missing": (None, "no such bundle"),
}


def _cases_of(argv: list[str], cases: dict) -> dict:
    """``cases`` of the command line ``argv`` as CASES holds them, each name
    preceded by the command's."""
    return {
        f"{argv[0]} {name}": (argv, _text(made) if isinstance(made, str) else made, message)
        for name, (made, message) in cases.items()
    }


# case -> (argv, where FILE stands for a path that make(path) prepares; make; the
#          message, or a part of it, the error gives)
CASES = {
    **_cases_of(["parse", "FILE"], PARSE_CASES),
    **_cases_of(["config", "check", "FILE"], CONFIG_CHECK_CASES),
    **_cases_of(["bundle", "verify", "FILE"], BUNDLE_VERIFY_CASES),
    "config device": (["config", "check", "/dev/zero"], None, "not a regular file"),
    "parse device": (["parse", "/dev/zero"], None, "not a regular file"),
    # commands that write: refused before anything is made
    "review into an empty-text workdir": (_review(""), _bundle(config={}), "empty text"),
    "review into the bundle's directory": (
        _review("FILE", bundle="FILE/b.tar.gz"),
        lambda path: _bundle(config={})(_directory(path) / "b.tar.gz"),
        "lies inside the working directory",
    ),
    "review under a missing directory": (
        _review("FILE.absent/wd"),
        _bundle(config={}),
        "its parent directory does not exist",
    ),
    "review into a file": (
        _review("FILE"),
        _bundle(config={}),
        "lies inside the working directory",
    ),
    "report of a missing workdir": (
        ["report", "--workdir", "FILE/wd", "--output", "FILE/r.html"],
        None,
        "no such directory",
    ),
    "bundle create from a missing workdir": (
        ["bundle", "create", "-o", "FILE.tar.gz", "--workdir", "FILE/wd"],
        None,
        "no such directory",
    ),
    "review of a damaged bundle": (_review("FILE.review"), _truncated_bundle, "damaged"),
    # the congestion simulator
    "simulate too many runs": (_simulate("--runs", "1e12"), None, "--runs"),
    "simulate runs beyond the bound": (_simulate("--runs", "10000000"), None, "--runs"),
    "simulate zero runs": (_simulate("--runs", "0"), None, "--runs"),
    "simulate negative seed": (_simulate("--seed", "-1"), None, "--seed"),
    "simulate empty torus": (_simulate("--runs", "1", topology="torus:0x0"), None, "torus"),
    "simulate huge torus": (_simulate(topology="torus:100000x100000"), None, "torus"),
    "simulate unknown topology": (_simulate(topology="mesh:3"), None, "mesh:3"),
    "simulate unknown collective": (_simulate(collective="gossip"), None, "--collective"),
    "simulate ratio above one": (_simulate(ratio="2"), None, "--ratio"),
    "simulate output under a file": (
        _simulate("--runs", "2", "--out", "FILE/runs.csv"),
        _text("a file, not a directory\n"),
        "cannot write",
    ),
    "topology describe bad spec": (["topology", "describe", "xgft:0,0/1"], None, "xgft"),
    # variability
    "variability metrics of a missing run": (["variability", "metrics", "FILE"], None, "FILE"),
    "variability train bound level above one": (
        ["variability", "train", "FILE", "--model", "FILE.npz", "--bound-level", "2"],
        _directory,
        "(0, 1)",
    ),
    "variability train without folds": (
        ["variability", "train", "FILE", "--model", "FILE.npz", "--cv", "0"],
        _directory,
        "2 folds or more",
    ),
    "variability estimate of a negative node count": (
        ["variability", "estimate", "FILE", "--model", "FILE.npz", "--node-count", "-1"],
        _text("time_s,device,port,role,counter,value\n0,n1,eth0,node_nic,tx_bytes,0\n"),
        "node count is 1 or more",
    ),
    "variability metrics of nodes without names": (
        ["variability", "metrics", "FILE", "--nodes", ""],
        _text("time_s,device,port,role,counter,value\n0,n1,eth0,node_nic,tx_bytes,0\n"),
        "each with a name",
    ),
    "variability estimate with a FIFO model": (
        ["variability", "estimate", "FILE.d", "--model", "FILE"],
        lambda path: _fifo(path) and _run_dir(path.with_suffix(".d")),
        "not a regular file",
    ),
    "variability metrics of a run description that is a FIFO": (
        ["variability", "metrics", "FILE"],
        lambda path: (
            _fifo(_directory(path) / "run.json")
            and (path / "counters.csv").write_text("time_s,device,port,role,counter,value\n")
        ),
        "missing",
    ),
    "variability train on a file": (
        ["variability", "train", "FILE", "--model", "FILE.npz"],
        _text("not a run directory\n"),
        "FILE",
    ),
    # benchmarks
    "bench cpu sleepers not numbers": (
        ["bench", "cpu", "--policies", "", "--sleepers", "20,fast"],
        None,
        "--sleepers",
    ),
    "bench cpu sleep of zero": (
        ["bench", "cpu", "--policies", "", "--sleepers", "0"],
        None,
        "1-1e6",
    ),
    "bench injector without programs": (
        ["bench", "injector", "--bin", "FILE"],
        _directory,
        "lacks pingpong",
    ),
    "predict a FIFO pattern": (
        ["predict", "asymmetric", "--platform", "FILE.yaml", "--pattern", "FILE"],
        lambda path: (
            _fifo(path)
            .with_suffix(".yaml")
            .write_text("racks: {R: [n0, n1]}\nnic_bps: 940e6\nbackbone_bps: 9.4e9\n")
        ),
        "not a regular file",
    ),
    # usage errors
    "unknown command": (["frobnicate"], None, "invalid choice"),
    "unknown option": (["parse", "--frobnicate", "x"], None, "unrecognized arguments"),
    "unknown study": (["studies", "--files", "nope"], None, "nope"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_ends_in_one_clear_line(tmp_path, capsys, case):
    argv, make, message = CASES[case]
    path = tmp_path / "input"
    if make is not None:
        make(path)
    argv = [arg.replace("FILE", str(path)) for arg in argv]
    try:
        status = main(argv)
    except SystemExit as exit_:
        status = exit_.code
    captured = capsys.readouterr()
    assert status not in (0, None), captured.out
    assert "Traceback" not in captured.err
    last = captured.err.strip().splitlines()[-1]
    assert last.startswith("netnoise: "), captured.err
    assert message.replace("FILE", str(path)) in last, captured.err
    assert "unexpected" not in last, captured.err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["exec", "999", "--", "true"], "no testbed node '999'"),
        (["exec", "", "--", "true"], "no testbed node ''"),
        (["mpirun", "-n", "-5", "--", "true"], "'-5': give a whole number of MPI ranks"),
        (["mpirun", "-n", "0", "--", "true"], "'0': give a whole number of MPI ranks"),
        (["mpirun", "-n", "2", "--nodes", "", "--", "true"], "no testbed node ''"),
        (["mpirun", "-n", "2", "--nodes", "1,99", "--", "true"], "no testbed node '99'"),
    ],
)
def test_a_node_or_rank_count_the_cluster_lacks_is_refused_before_it_is_brought_up(
    tmp_path, monkeypatch, capsys, argv, message
):
    def brought_up(self):
        raise AssertionError("the testbed was brought up for a command it refuses")

    monkeypatch.setattr(TestbedPlatform, "check", brought_up)
    (tmp_path / "config.yaml").write_text("{}\n")
    try:
        status = main(["testbed", "--config", str(tmp_path / "config.yaml"), *argv])
    except SystemExit as exit_:
        status = exit_.code
    err = capsys.readouterr().err
    assert status == 2, err
    assert message in err.strip().splitlines()[-1]
