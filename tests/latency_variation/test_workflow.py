"""Every rule of seed 004, from loadgen and the probes to Table 4, on localhost."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest
import yaml

from netnoise.studies.latency_variation import injector
from netnoise.studies.latency_variation.names import ZERO
from tests.conftest import snakemake


@pytest.mark.mpi
@pytest.mark.slow
def test_workflow_reproduces_the_study_on_localhost(tmp_path):
    """Every rule of seed 004, from loadgen and the probes to Table 4, on localhost."""
    if shutil.which("mpicc") is None:
        pytest.skip("Open MPI not installed")
    (tmp_path / "config").mkdir()
    config = {
        "platform": {"kind": "localhost", "timeout_s": 120},
        "impact_compression": {"enabled": False},
        "network_noise": {"enabled": False, "benchmark": {"enabled": False}},
        "latency_variation": {
            "nodes": 2,
            "characterize": {
                "levels": [0, 50],
                "link_mbit": 100,
                "duration_s": 0.5,
                "iterations": 400,
                "gap_us": 200,
                "warmup": 5,
            },
            "fit": {"scale_fractions": [0.5]},
            "injection": {
                "levels": [0, 50],
                "fixed_mean_levels": [0, 50],
                "applications": ["lu_wavefront", "cg_solver"],
                "runs": 2,
                "probe_iterations": 30,
                "warmup": 2,
            },
        },
    }
    (tmp_path / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    results = tmp_path / "results" / "localhost"
    targets = [
        f"results/localhost/figures/latency_variation/{name}.png"
        for name in ("fig2_latency_mean", "table4_correlations")
    ]
    out = snakemake("--cores", "2", *targets, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-4000:]

    table4 = pd.read_csv(results / "tables" / "latency_variation" / "table4.csv")
    ours = table4.dropna(subset=["application"]).set_index("application")
    # 2 levels x 3 distributions (lognorm, uniform, scale50) x 2 runs; zero stays out.
    assert ours.loc["lu_wavefront", "n"] == 2 * 3 * 2
    assert ours.loc["lu_wavefront", "paper_application"] == "LU"
    delays = pd.read_csv(results / "tables" / "latency_variation" / "injector_delay.csv")
    assert set(delays["experiment"]) == {"tcpping", "pingpong", "barrier", *ours.index}
    # A wait never ends early: the time spent covers the delays drawn.
    assert (delays["achieved_mean_us"] >= delays["drawn_mean_us"]).all()
    injected = delays[delays["distribution"] != ZERO]
    assert (injected["intended_mean_us"] > 0).all()
    table = injector.read_table(
        results / "models" / "latency_variation" / "injector" / "L50_lognorm_scale50.tab"
    )
    assert len(table) == 4096
    figures_dir = results / "figures" / "latency_variation"
    assert len(list(figures_dir.glob("*.svg"))) == 16
