from __future__ import annotations

import shutil

import pandas as pd
import pytest
import yaml

from netnoise.provenance import read_sidecar
from tests.conftest import REPO, snakemake


@pytest.mark.parametrize("name", ["config.yaml", "paper.yaml"])
def test_dry_run(name):
    out = snakemake("-n", "--forceall", "--configfile", str(REPO / "config" / name))
    assert out.returncode == 0, out.stderr[-3000:]
    assert "measure_baseline_latency" in out.stdout


def test_paper_grid_is_larger_than_the_quick_one():
    quick = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    paper = yaml.safe_load((REPO / "config" / "paper.yaml").read_text())
    assert paper["platform"]["kind"] == "slurm"
    assert len(paper["baseline"]["sizes"]) > len(quick["baseline"]["sizes"])
    assert paper["baseline"]["iterations"] > quick["baseline"]["iterations"]


@pytest.mark.mpi
@pytest.mark.slow
def test_small_real_run_end_to_end(tmp_path):
    """Build, measure, tidy, tabulate and plot in a scratch working directory."""
    if shutil.which("mpicc") is None:
        pytest.skip("Open MPI not installed")
    (tmp_path / "config").mkdir()
    config = {
        "platform": {"kind": "localhost", "timeout_s": 120},
        "baseline": {"sizes": [8, 4096], "iterations": 50, "warmup": 5, "repetitions": 2},
        "impact_compression": {"enabled": False},
        "network_noise": {"enabled": False, "benchmark": {"enabled": False}},
    }
    (tmp_path / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    out = snakemake("--cores", "1", cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-4000:]

    results = tmp_path / "results" / "localhost"
    table = pd.read_csv(results / "tables" / "baseline_latency.csv")
    assert table["size_bytes"].tolist() == [8, 4096]
    assert (table["samples"] == 100).all()
    assert (table["median"] > 0).all()
    assert (table["p95"] >= table["median"]).all()
    for suffix in ("svg", "png"):
        assert (results / "figures" / f"baseline_latency.{suffix}").stat().st_size > 1000
    raw = results / "raw" / "baseline" / "pingpong_size8_rep0.csv"
    record = read_sidecar(raw)
    assert record["exit_status"] == 0
    assert record["config"]["baseline"]["iterations"] == 50
    assert (results / "logs" / "baseline" / "pingpong_size8_rep0.log").exists()
    assert (results / "benchmarks" / "baseline" / "pingpong_size8_rep0.tsv").exists()

    report = tmp_path / "report.html"
    out = snakemake("--report", str(report), cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-4000:]
    assert report.stat().st_size > 10_000
