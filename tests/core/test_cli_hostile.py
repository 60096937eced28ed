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


def _simulate(topology="torus:4x4", collective="allreduce", *more):
    return ["simulate", "--topology", topology, "--collective", collective, "--ratio", "0.5", *more]


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


# case -> (argv, where FILE stands for a path that make(path) prepares; make; the
#          message, or a part of it, the error gives)
CASES = {
    # parse: benchmark result files
    "parse binary file": (["parse", "FILE"], _bytes(b"\x00\xff\xfe" * 100), "not a text file"),
    "parse directory": (["parse", "FILE"], _directory, "is a directory"),
    "parse missing file": (["parse", "FILE"], None, "No such file"),
    "parse empty file": (["parse", "FILE"], _text(""), "FILE"),
    "parse nan sample": (["parse", "FILE"], _text(HEADER + "0,nan\n#@end=1\n"), "nan"),
    "parse infinite sample": (["parse", "FILE"], _text(HEADER + "0,inf\n#@end=1\n"), "inf"),
    "parse negative sample": (["parse", "FILE"], _text(HEADER + "0,-1.5\n#@end=1\n"), "-1.5"),
    "parse duplicated column": (
        ["parse", "FILE"],
        _text(PREAMBLE + "pair,rtt_us,rtt_us\n0,1,2\n#@end=1\n"),
        "rtt_us",
    ),
    "parse row cut mid-number": (["parse", "FILE"], _text(HEADER + "0,1.5\n0,188."), "#@end"),
    "parse row cut after a comma": (["parse", "FILE"], _text(HEADER + "0,\n#@end=1\n"), "empty"),
    "parse wrong row count": (["parse", "FILE"], _text(HEADER + "0,1.5\n#@end=2\n"), "2"),
    "parse no end marker": (["parse", "FILE"], _text(HEADER + "0,1.5\n"), "#@end"),
    # config check
    "config malformed YAML": (["config", "check", "FILE"], _text("a: [b\n"), "malformed YAML"),
    "config key twice": (
        ["config", "check", "FILE"],
        _text("platform: {}\nplatform: {}\n"),
        "'platform' is given twice",
    ),
    "config nan timeout": (
        ["config", "check", "FILE"],
        _text("platform: {timeout_s: .nan}\n"),
        "platform.timeout_s",
    ),
    "config float repetitions": (
        ["config", "check", "FILE"],
        _text("baseline: {repetitions: 3.0}\n"),
        "baseline.repetitions",
    ),
    "config float node count": (
        ["config", "check", "FILE"],
        _text("platform: {testbed: {nodes: 8.0}}\n"),
        "platform.testbed.nodes",
    ),
    "config prefix with newline": (
        ["config", "check", "FILE"],
        _text('platform: {testbed: {prefix: "zq\\n"}}\n'),
        "platform.testbed.prefix",
    ),
    "config iterations beyond the programs": (
        ["config", "check", "FILE"],
        _text("baseline: {iterations: 1.0e+20}\n"),
        "baseline.iterations",
    ),
    "config empty xgft": (
        ["config", "check", "FILE"],
        _text("network_noise: {fat_trees: ['xgft:0,0/1']}\n"),
        "network_noise.fat_trees",
    ),
    "config huge torus": (
        ["config", "check", "FILE"],
        _text("network_noise: {torus_2d: 'torus:100000x100000'}\n"),
        "torus",
    ),
    "config deeply nested": (["config", "check", "FILE"], _text("a: " + "[" * 5000), "FILE"),
    "config a list": (["config", "check", "FILE"], _text("- 1\n- 2\n"), "FILE"),
    "config missing file": (["config", "check", "FILE"], None, "No such file"),
    "config binary file": (["config", "check", "FILE"], _bytes(b"\xff\xfe\x00\x01" * 50), "FILE"),
    "config alias bomb in mpirun_args": (
        ["config", "check", "FILE"],
        _text(_alias_bomb(["platform", "mpirun_args"])),
        "values once its aliases",
    ),
    "config alias bomb as the platform kind": (
        ["config", "check", "FILE"],
        _text(_alias_bomb(["platform", "kind"])),
        "values once its aliases",
    ),
    "config alias bomb in an application's args": (
        ["config", "check", "FILE"],
        _text(_alias_bomb(["applications", "pingpong", "args"])),
        "values once its aliases",
    ),
    "config long list": (
        ["config", "check", "FILE"],
        _text("platform: {mpirun_args: [" + ",".join(["1"] * 110_000) + "]}\n"),
        "more than 20000 values",
    ),
    "config 100 MB comment": (
        ["config", "check", "FILE"],
        lambda path: path.write_bytes(b"#" * (100 << 20)) or path,
        "larger than a config file",
    ),
    "config FIFO": (["config", "check", "FILE"], _fifo, "not a regular file"),
    "config device": (["config", "check", "/dev/zero"], None, "not a regular file"),
    "parse FIFO": (["parse", "FILE"], _fifo, "not a regular file"),
    "parse device": (["parse", "/dev/zero"], None, "not a regular file"),
    # commands that write: refused before anything is made
    "review into an empty-text workdir": (
        ["review", "--bundle", "FILE", "--workdir", ""],
        _bundle(config={}),
        "empty text",
    ),
    "review into the bundle's directory": (
        ["review", "--bundle", "FILE/b.tar.gz", "--workdir", "FILE"],
        lambda path: _bundle(config={})(_directory(path) / "b.tar.gz"),
        "lies inside the working directory",
    ),
    "review under a missing directory": (
        ["review", "--bundle", "FILE", "--workdir", "FILE.absent/wd"],
        _bundle(config={}),
        "its parent directory does not exist",
    ),
    "review into a file": (
        ["review", "--bundle", "FILE", "--workdir", "FILE"],
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
    # bundles
    "bundle alias bomb in the config": (
        ["bundle", "verify", "FILE"],
        _bundle(config=_alias_bomb(["platform", "mpirun_args"])),
        "values once its aliases",
    ),
    "bundle truncated": (["bundle", "verify", "FILE"], _truncated_bundle, "damaged"),
    "bundle manifest a list": (
        ["bundle", "verify", "FILE"],
        _bundle(manifest=[1], config={}),
        "JSON list",
    ),
    "bundle files a list": (
        ["bundle", "verify", "FILE"],
        _bundle(listed=["config.yaml"], config={}),
        "'files' must map",
    ),
    "bundle malformed config": (
        ["bundle", "verify", "FILE"],
        _bundle(config="platform: [x\n"),
        "malformed YAML",
    ),
    "bundle nested config": (
        ["bundle", "verify", "FILE"],
        _bundle(config="platform: " + "[" * 5000 + "]" * 5000 + "\n"),
        "nested too deeply",
    ),
    "bundle not gzipped": (["bundle", "verify", "FILE"], _uncompressed_bundle, "damaged"),
    "bundle without manifest": (
        ["bundle", "verify", "FILE"],
        _tar_without_manifest,
        "not a netnoise bundle",
    ),
    "bundle missing": (["bundle", "verify", "FILE"], None, "no such bundle"),
    "review of a damaged bundle": (
        ["review", "--bundle", "FILE", "--workdir", "FILE.review"],
        _truncated_bundle,
        "damaged",
    ),
    # the congestion simulator
    "simulate too many runs": (
        _simulate("torus:4x4", "allreduce", "--runs", "1e12"),
        None,
        "--runs",
    ),
    "simulate runs beyond the bound": (
        _simulate("torus:4x4", "allreduce", "--runs", "10000000"),
        None,
        "--runs",
    ),
    "simulate zero runs": (
        _simulate("torus:4x4", "allreduce", "--runs", "0"),
        None,
        "--runs",
    ),
    "simulate negative seed": (
        _simulate("torus:4x4", "allreduce", "--seed", "-1"),
        None,
        "--seed",
    ),
    "simulate empty torus": (
        _simulate("torus:0x0", "allreduce", "--runs", "1"),
        None,
        "torus",
    ),
    "simulate huge torus": (
        _simulate("torus:100000x100000", "allreduce"),
        None,
        "torus",
    ),
    "simulate unknown topology": (
        _simulate("mesh:3", "allreduce"),
        None,
        "mesh:3",
    ),
    "simulate unknown collective": (
        _simulate("torus:4x4", "gossip"),
        None,
        "--collective",
    ),
    "simulate ratio above one": (
        ["simulate", "--topology", "torus:4x4", "--collective", "allreduce", "--ratio", "2"],
        None,
        "--ratio",
    ),
    "simulate output under a file": (
        _simulate("torus:4x4", "allreduce", "--runs", "2", "--out", "FILE/runs.csv"),
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
