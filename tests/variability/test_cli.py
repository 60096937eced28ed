"""``netnoise variability estimate|metrics|train`` on run directories whose truth is known."""

from __future__ import annotations

import argparse
import dataclasses
import json

import numpy as np
import pandas as pd
import pytest

from netnoise.studies.variability import cli as variability_cli
from netnoise.studies.variability import model as v
from netnoise.studies.variability import model_file
from netnoise.studies.variability.metrics import metrics_of
from tests.variability.conftest import counter_rows


def write_run(path, *, app: str, volume: float, sens: float, c: float, b: float, seed: int):
    """A run directory whose counters follow latent congestion c and background b."""
    rng = np.random.default_rng(seed)
    runtime = 100.0 * (1 + sens * (0.6 * c**1.5 + 1.5 * np.sin(np.pi * b)))
    runtime *= 1 + 0.01 * rng.standard_normal()
    nodes = [f"nn-n0{i}" for i in range(1, 5)]
    end = []
    for i, node in enumerate(nodes, 1):
        sent = volume * (1 + 0.02 * rng.standard_normal())
        end += [(node, "eth0", "node_nic", "tx_bytes", sent)]
        end += [(node, "eth0", "node_nic", "tx_packets", sent / 1500)]
        port_bytes = volume * (1 + 3 * b) * (1 + 0.02 * rng.standard_normal())
        packets = port_bytes / 1500
        stalls = packets * (0.02 + 0.05 * c) * (1 + 0.02 * rng.standard_normal())
        end += [
            ("nn-fabric", f"nnp0{i}", "switch_port", "tx_bytes", port_bytes),
            ("nn-fabric", f"nnp0{i}", "switch_port", "tx_packets", packets),
            ("nn-fabric", f"nnp0{i}", "switch_port", "qdisc_overlimits", stalls),
        ]
    start = [(d, p, r, k, 0) for d, p, r, k, _ in end]
    frame = pd.DataFrame(counter_rows(0.0, start) + counter_rows(runtime, end))
    path.mkdir(parents=True)
    frame.to_csv(path / "counters.csv", index=False)
    info = {"nodes": nodes, "runtime_s": runtime, "application": app}
    (path / "run.json").write_text(json.dumps(info))
    return path


def cli(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="netnoise")
    variability_cli.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(list(argv))
    return args.func(args)


@pytest.fixture(scope="module")
def cli_model(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    rng = np.random.default_rng(11)
    dirs = []
    for app, volume, sens in (("milc", 4e8, 0.15), ("nekbone", 1e8, 0.08)):
        for k in range(20):
            c, b = rng.gamma(2.0, 0.5), rng.uniform()
            dirs.append(
                write_run(root / f"{app}{k}", app=app, volume=volume, sens=sens, c=c, b=b, seed=k)
            )
    model = root / "model.npz"
    assert cli("variability", "train", *map(str, dirs), "--model", str(model), "--cv", "5") == 0
    return root, model


def test_cli_estimate_prints_the_models_estimate(cli_model, capsys):
    root, model = cli_model
    capsys.readouterr()
    run = write_run(root / "new", app="milc", volume=4e8, sens=0.15, c=1.0, b=0.5, seed=99)
    assert cli("variability", "estimate", str(run), "--model", str(model)) == 0
    text = capsys.readouterr().out
    expected = v.estimate(model_file.load_model(model), metrics_of(run))
    assert str(run) in text and "milc, 4 nodes" in text
    if expected["z"] is None:
        assert "no prediction can be given" in text
    else:
        assert f"{expected['z']:+.2f} ± {expected['bound']:.2f}" in text
    assert cli("variability", "estimate", str(run), "--model", str(model), "--json") == 0
    out = json.loads(capsys.readouterr().out)
    assert out["z"] == (None if expected["z"] is None else pytest.approx(expected["z"]))
    assert out["application"] == "milc"
    assert cli("variability", "metrics", str(run)) == 0
    metrics = json.loads(capsys.readouterr().out)
    assert metrics["nodes"] == 4 and metrics["network_ports"] == 4


def test_cli_estimate_reads_a_counters_csv_alone(cli_model, tmp_path, capsys):
    """The counters CSV of a run gives the run directory's estimate: its nodes are its
    node_nic devices and its runtime the span of its samples."""
    root, model = cli_model
    run = write_run(root / "csv", app="milc", volume=4e8, sens=0.15, c=2.0, b=0.3, seed=42)
    csv = run / "counters.csv"
    capsys.readouterr()
    assert cli("variability", "estimate", str(run), "--model", str(model), "--json") == 0
    from_dir = json.loads(capsys.readouterr().out)
    assert cli("variability", "estimate", str(csv), "--model", str(model), "--json") == 0
    from_csv = json.loads(capsys.readouterr().out)
    for key in ("z", "bound", "svr", "rf", "rf_bound", "verdict"):
        assert from_csv[key] == (None if from_dir[key] is None else pytest.approx(from_dir[key]))
    assert from_csv["run"] == str(csv) and from_csv["application"] is None
    assert cli("variability", "estimate", str(csv), "--model", str(model)) == 0
    assert f"{csv} (4 nodes)" in capsys.readouterr().out
    # Nodes and runtime can be given: one node's bytes over the given runtime.
    assert cli("variability", "metrics", str(csv), "--runtime-s", "50", "--nodes", "nn-n01") == 0
    metrics = json.loads(capsys.readouterr().out)
    assert metrics["nodes"] == 1 and metrics["runtime_s"] == 50.0
    counters = pd.read_csv(csv)
    sent = counters.query("device == 'nn-n01' and counter == 'tx_bytes'")["value"].max()
    assert metrics["injection_rate_total"] == pytest.approx(sent / 50)


def test_cli_counters_csv_errors_say_what_is_wrong(cli_model, tmp_path, capsys):
    _, model = cli_model
    run = write_run(tmp_path / "run", app="milc", volume=4e8, sens=0.15, c=1.0, b=0.5, seed=5)
    csv = run / "counters.csv"
    capsys.readouterr()

    def fails(path, *options: str, match: str) -> None:
        assert cli("variability", "estimate", str(path), *options, "--model", str(model)) == 2
        assert match in capsys.readouterr().err

    fails(run, "--runtime-s", "3", match="--runtime-s: for a counters CSV only")
    binary = tmp_path / "binary.csv"
    binary.write_bytes(bytes(range(256)) * 4)
    fails(binary, match="not a counter CSV")
    (tmp_path / "empty.csv").write_text("")
    fails(tmp_path / "empty.csv", match="empty file")
    (tmp_path / "columns.csv").write_text("time,device\n0,a\n")
    fails(tmp_path / "columns.csv", match="missing column(s) time_s, port, counter, value")
    frame = pd.read_csv(csv)
    frame[frame["time_s"] == 0].to_csv(tmp_path / "start.csv", index=False)
    fails(tmp_path / "start.csv", match="all samples at one time")
    frame[frame["role"] != "node_nic"].to_csv(tmp_path / "fabric.csv", index=False)
    fails(tmp_path / "fabric.csv", match="no node_nic rows")
    frame.assign(value="x").to_csv(tmp_path / "text.csv", index=False)
    fails(tmp_path / "text.csv", match="value is not a number")


def test_cli_says_when_no_prediction_can_be_given(cli_model, tmp_path, capsys):
    _, model = cli_model
    # A zero bound: no SVR prediction can fall inside the forest's interval.
    strict = dataclasses.replace(model_file.load_model(model), bound_scale=0.0)
    model_file.save_model(tmp_path / "strict.npz", strict)
    run = write_run(tmp_path / "run", app="milc", volume=4e8, sens=0.15, c=1.0, b=0.5, seed=5)
    capsys.readouterr()
    assert cli("variability", "estimate", str(run), "--model", str(tmp_path / "strict.npz")) == 0
    assert "no prediction can be given: SVR prediction" in capsys.readouterr().out


def test_cli_bad_input_gives_a_message_and_exit_code_2(cli_model, tmp_path, capsys):
    _, model = cli_model
    run = write_run(tmp_path / "run", app="milc", volume=4e8, sens=0.15, c=1.0, b=0.5, seed=5)
    capsys.readouterr()

    def fails(*argv: str, match: str) -> None:
        assert cli("variability", *argv) == 2
        assert match in capsys.readouterr().err

    fails("estimate", str(tmp_path / "nowhere"), "--model", str(model), match="no such file")
    fails("estimate", str(run), "--model", str(tmp_path / "none.npz"), match="none.npz")
    (tmp_path / "junk.npz").write_text("x")
    fails("estimate", str(run), "--model", str(tmp_path / "junk.npz"), match="not a")
    info = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps(info | {"runtime_s": -1}))
    fails("estimate", str(run), "--model", str(model), match="'runtime_s' must be")
    (run / "run.json").write_text("{nodes")
    fails("metrics", str(run), match="not valid JSON")
    (run / "run.json").write_text(json.dumps(info | {"nodes": []}))
    fails("metrics", str(run), match="'nodes'")
    (run / "run.json").write_text(json.dumps(info))
    pd.read_csv(run / "counters.csv").drop(columns="counter").to_csv(run / "counters.csv")
    fails("estimate", str(run), "--model", str(model), match="missing column")
    (run / "counters.csv").unlink()
    fails("metrics", str(run), match="counters.csv: missing")
    no_app = write_run(tmp_path / "noapp", app="", volume=1e8, sens=0.1, c=1.0, b=0.5, seed=1)
    fails("train", str(no_app), "--model", str(tmp_path / "m.npz"), match="'application'")
