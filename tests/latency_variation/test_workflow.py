"""Every rule of seed 004, from loadgen and the probes to Table 4, on localhost."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

from netnoise.studies.latency_variation import injector
from netnoise.studies.latency_variation.names import ZERO
from tests.conftest import small_config, snakemake


@pytest.mark.mpi
@pytest.mark.slow
def test_workflow_reproduces_the_study_on_localhost(tmp_path):
    """Every rule of seed 004, from loadgen and the probes to Table 4, on localhost."""
    if shutil.which("mpicc") is None:
        pytest.skip("Open MPI not installed")
    small_config("latency_variation", tmp_path)
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
    # No fit.stds_us in the small config: the grid is each level's constant alone.
    grid = pd.read_csv(results / "tables" / "latency_variation" / "table4_grid.csv")
    assert grid["application"].isna().all() and len(grid) == len(table4)
    effects = pd.read_csv(results / "tables" / "latency_variation" / "grid_effects.csv")
    assert effects.empty and "std_s_per_100us" in effects.columns
    delays = pd.read_csv(results / "tables" / "latency_variation" / "injector_delay.csv")
    assert set(delays["experiment"]) == {"tcpping", "pingpong", "barrier", *ours.index}
    # A wait never ends early: the time spent covers the delays drawn.
    assert (delays["achieved_mean_us"] >= delays["drawn_mean_us"]).all()
    reports = pd.read_csv(results / "tidy" / "latency_variation" / "injector_reports.csv")
    # The configured margin (40 µs, not the library's 100) reached every rank's injector.
    assert set(reports["wait"]) == {"sleep"} and set(reports["sleep_margin_us"]) == {40}
    injected = delays[delays["distribution"] != ZERO]
    assert (injected["intended_mean_us"] > 0).all()
    table = injector.read_table(
        results / "models" / "latency_variation" / "injector" / "L50_lognorm_scale50.tab"
    )
    assert len(table) == 4096
    figures_dir = results / "figures" / "latency_variation"
    assert len(list(figures_dir.glob("*.svg"))) == 16
