"""Seed 004 Sec. 6–7: fits to injector files, per-rank seeds, the tidy tables of the
injected runs, and one real injected run through the platform
(job env -> mpirun -x -> libnnlatency.so)."""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest

from netnoise.run import Job
from netnoise.studies.latency_variation import characterization, injection, injector
from netnoise.studies.latency_variation.names import ZERO
from tests.latency_variation.synthetic import write_result

PROBE_COLUMNS = "pair,iteration,size_bytes,rtt_us"
BARRIER_COLUMNS = "iteration,time_us,rank0_us"
APP_COLUMNS = "run,runtime_s,comm_s,compute_s"


def test_fits_become_injector_files_with_one_mean_per_level(tmp_path):
    """Two levels of log-normal latency: every table has 4096 delays, the five
    distributions of a level share the fitted mean, spreads grow as the scale
    shrinks, the zero table is all zeros and every seed differs."""
    rng = np.random.default_rng(7)
    frames = [
        pd.DataFrame(
            {"probe": "tcpping", "level": level, "latency_us": 10 + rng.lognormal(mu, 0.6, 3000)}
        )
        for level, mu in ((0, np.log(3.0)), (50, np.log(30.0)))
    ]
    samples = pd.concat(frames, ignore_index=True)
    fits, dists = characterization.fit_characterization(
        samples, "tcpping", [0.25, 0.5, 0.75], "fit"
    )
    points = injection.write_injector_files(dists, tmp_path, "ns", seed=1)
    assert len(points) == 11 and points["point"].iloc[-1] == "zero"
    assert points["point"].iloc[0] == "L0_lognorm"
    seeds = set()
    for row in points.itertuples():
        table = injector.read_table(tmp_path / f"{row.point}.tab", unit="ns")
        assert len(table) == 4096
        assert np.mean(table) / 1000 == pytest.approx(row.table_mean_us, abs=1e-6)
        seeds.add(injector.read_seed(tmp_path / f"{row.point}.seed"))
    assert len(seeds) == 11
    assert injector.read_table(tmp_path / "zero.tab") == [0] * 4096
    for level, group in points[points["distribution"] != ZERO].groupby("level"):
        fit_mean = fits.loc[fits["level"] == level, "fit_mean_us"].iloc[0]
        assert group["table_mean_us"].to_numpy() == pytest.approx(fit_mean, rel=2e-3)
        spread = group.set_index("distribution")["table_std_us"]
        assert spread["uniform"] == 0
        assert spread["lognorm"] < spread["lognorm_scale75"] < spread["lognorm_scale25"]
    # The same seed writes the same seed files again.
    (tmp_path / "again").mkdir()
    injection.write_injector_files(dists, tmp_path / "again", "ns", seed=1)
    assert injector.read_seed(tmp_path / "again" / "zero.seed") == injector.read_seed(
        tmp_path / "zero.seed"
    )


def test_rank_seed_files_differ_and_repeat(tmp_path):
    injector.write_seed(tmp_path / "base.seed", 42)
    for run in ("a", "b"):
        (tmp_path / run).mkdir()
        pattern = injection.rank_seed_files(tmp_path / "base.seed", 3, tmp_path / run)
        assert pattern == str(tmp_path / run / "seed.%r")
    first = [injector.read_seed(tmp_path / "a" / f"seed.{r}") for r in range(3)]
    again = [injector.read_seed(tmp_path / "b" / f"seed.{r}") for r in range(3)]
    assert first == again and len(set(first)) == 3


def test_tidy_injected_samples_of_probes_and_barrier(tmp_path):
    """A probe's value is half its round trip, a barrier's its time; samples
    count from 0 in every file; the zero table has no level."""
    probe = write_result(tmp_path / "tcp.csv", PROBE_COLUMNS, ["0,0,1,20", "0,1,1,30", "0,2,1,50"])
    zero = write_result(tmp_path / "tcp0.csv", PROBE_COLUMNS, ["0,0,1,8"])
    barrier = write_result(
        tmp_path / "bar.csv", BARRIER_COLUMNS, ["0,7,1.5", "1,9,1.5"], tool="barrier"
    )
    samples = injection.tidy_injected_samples(
        [("tcpping", "L20_uniform", probe), ("tcpping", "zero", zero), ("barrier", "zero", barrier)]
    )
    assert list(samples.columns) == injection.SAMPLE_COLUMNS
    assert samples["value_us"].tolist() == [10.0, 15.0, 25.0, 4.0, 7.0, 9.0]
    assert samples["sample"].tolist() == [0, 1, 2, 0, 0, 1]
    assert samples["distribution"].tolist() == ["uniform"] * 3 + ["zero"] * 3
    assert samples["level"].tolist()[:3] == [20, 20, 20]
    assert samples["level"].iloc[3:].isna().all()
    only_barrier = injection.tidy_injected_samples([("barrier", "L40_lognorm", barrier)])
    assert only_barrier["value_us"].tolist() == [7.0, 9.0]
    assert only_barrier["level"].tolist() == [40, 40]


def test_tidy_runtimes_and_reports(tmp_path):
    app = write_result(
        tmp_path / "cg.csv", APP_COLUMNS, ["0,1.5,0.5,1.0", "1,1.25,0.5,0.75"], tool="cg_solver"
    )
    runtimes = injection.tidy_runtimes([("cg_solver", "L70_lognorm_scale25", app)])
    assert list(runtimes.columns) == injection.RUNTIME_COLUMNS
    assert runtimes["runtime_s"].tolist() == [1.5, 1.25]
    assert runtimes[["level", "distribution"]].iloc[0].tolist() == [70, "lognorm_scale25"]
    report = tmp_path / "cg.injector.csv"
    pd.DataFrame({"rank": [0, 1], "level": ["tcp", "tcp"], "delays": [5, 6]}).to_csv(
        report, index=False
    )
    reports = injection.tidy_reports(
        [("cg_solver", "L70_uniform", report), ("tcpping", "zero", report)]
    )
    assert list(reports.columns) == [
        "experiment",
        "level",
        "distribution",
        "rank",
        "injector_level",
        "delays",
    ]
    assert reports["experiment"].tolist() == ["cg_solver"] * 2 + ["tcpping"] * 2
    assert reports["injector_level"].tolist() == ["tcp"] * 4
    assert reports["level"].tolist()[:2] == [70, 70] and reports["level"].iloc[2:].isna().all()


@pytest.mark.mpi
def test_injected_run_delays_every_send_of_the_ranks(tmp_path, built_programs, localhost_platform):
    """The job's environment reaches the ranks through mpirun -x: a 300 µs constant
    table at the tcp level holds every tcpping send, and each rank reports."""
    if shutil.which("mpirun") is None:
        pytest.skip("Open MPI not installed")
    table, seed = tmp_path / "c.tab", tmp_path / "c.seed"
    injector.write_table(injector.constant_table(300), table, unit="us")
    injector.write_seed(seed, 9)
    job = Job(
        "tcpping",
        [str(built_programs / "tcpping"), "--iterations", "40", "--warmup", "5"],
        2,
        tmp_path / "tcpping.csv",
    )
    reports = injection.run_with_injector(
        localhost_platform,
        job,
        table,
        seed,
        tmp_path / "tcpping.injector.csv",
        library=built_programs / injector.LIBRARY,
        level="tcp",
        unit="us",
        wait="sleep",
        log=tmp_path / "log",
        timeout_s=120,
    )
    assert reports["rank"].tolist() == [0, 1]
    assert (reports["enabled"] == 1).all()
    assert (reports["delays"] >= 45).all()  # one send per round trip and rank
    assert (reports["table_mean_ns"] == 300_000).all()
    assert reports["seed"].nunique() == 2
    assert (reports["wait"] == "sleep").all()
    saved = pd.read_csv(tmp_path / "tcpping.injector.csv")
    assert saved["delays"].tolist() == reports["delays"].tolist()
    samples = injection.tidy_injected_samples([("tcpping", "L20_uniform", str(job.output))])
    assert len(samples) == 40
    assert samples["value_us"].min() >= 300  # one delay each way: rtt >= 600 µs
    assert not list(tmp_path.glob(".tcpping.injector.csv.*"))  # scratch removed
