"""Seed 004 pipeline: names, tidy tables, fits to injector files, the injected runs'
statistics and figures, on synthetic data whose answers are known; and one real
injected run through the platform (job env -> mpirun -x -> libnnlatency.so)."""

from __future__ import annotations

import shutil

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
import yaml

from netnoise.run import Job
from netnoise.studies.latency_variation import figures, injector
from netnoise.studies.latency_variation import study as lv
from tests.conftest import snakemake

PUBLISHED = pd.DataFrame(
    {
        "application": ["FT", "CG", "IS", "MG", "LU"],
        "r_mean": [0.70, 0.73, 0.76, 0.73, 0.76],
        "r_std": [0.89, 0.91, 0.93, 0.95, 0.97],
        "significant_p": [7.89e-33, 4.94e-39, 8.89e-50, 1.31e-93, 5.24e-148],
    }
)


def write_result(path, columns: str, rows: list[str], tool: str = "pingpong") -> str:
    """A result file in the benchmarks' #@ format."""
    meta = {
        "format": "netnoise-1",
        "tool": tool,
        "version": "0",
        "git_sha": "x",
        "argv": tool,
        "seed": "1",
        "ranks": "2",
        "hosts": "a,b",
        "date": "2026-01-01T00:00:00Z",
    }
    text = "".join(f"#@{k}={v}\n" for k, v in meta.items()) + columns + "\n"
    path.write_text(text + "".join(r + "\n" for r in rows))
    return str(path)


def test_point_names_round_trip():
    assert lv.point_name(20, "lognorm_scale25") == "L20_lognorm_scale25"
    assert lv.parse_point("L20_lognorm_scale25") == (20, "lognorm_scale25")
    assert lv.point_name(None, lv.ZERO) == lv.parse_point(lv.ZERO)[1] == "zero"
    assert lv.parse_point("zero") == (None, "zero")
    with pytest.raises(ValueError, match="'20_uniform' is not a point name"):
        lv.parse_point("20_uniform")


def test_distribution_names_are_the_fitted_ones():
    rng = np.random.default_rng(3)
    samples = pd.DataFrame(
        {"level": 0, "latency_us": 5 + rng.lognormal(np.log(2.0), 0.5, 2000), "probe": "tcpping"}
    )
    _, dists = lv.fit_characterization(samples, "tcpping", [0.25, 0.5, 0.75], "fit")
    assert dists["distribution"].tolist() == lv.distribution_names([0.5, 0.25, 0.75])
    assert lv.distribution_names([0.25, 0.5, 0.75]) == [
        "lognorm",
        "uniform",
        "lognorm_scale75",
        "lognorm_scale50",
        "lognorm_scale25",
    ]


def test_tidy_characterization_halves_the_round_trip(tmp_path):
    pp = write_result(
        tmp_path / "pp.csv", "pair,iteration,size_bytes,rtt_us", ["0,0,1,20.0", "0,1,1,30.0"]
    )
    lg = write_result(
        tmp_path / "lg.csv",
        "rank,peer,messages_count,sent_bytes,received_bytes,elapsed_s,target_mbps,achieved_mbps",
        ["0,1,5,10,10,1.0,20.0,19.0", "1,0,5,10,10,1.0,20.0,21.0"],
        tool="loadgen",
    )
    samples = lv.tidy_characterization([("pingpong", 40, pp)])
    assert samples["latency_us"].tolist() == [10.0, 15.0]
    assert (samples["level"] == 40).all()
    load = lv.tidy_load([("pingpong", 40, lg)])
    table = lv.characterization_table(samples, load)
    row = table.iloc[0]
    assert (row["samples"], row["mean"], row["achieved_mbps"]) == (2, 12.5, 20.0)


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
    fits, dists = lv.fit_characterization(samples, "tcpping", [0.25, 0.5, 0.75], "fit")
    # The generating parameters come back (loc 10, scale e^mu, shape 0.6).
    assert fits["shape"].tolist() == pytest.approx([0.6, 0.6], rel=0.1)
    assert fits["scale_us"].tolist() == pytest.approx([3.0, 30.0], rel=0.15)
    points = lv.write_injector_files(dists, tmp_path, "ns", seed=1)
    assert len(points) == 11 and points["point"].iloc[-1] == "zero"
    seeds = set()
    for row in points.itertuples():
        table = injector.read_table(tmp_path / f"{row.point}.tab", unit="ns")
        assert len(table) == 4096
        assert np.mean(table) / 1000 == pytest.approx(row.table_mean_us, abs=1e-6)
        seeds.add(injector.read_seed(tmp_path / f"{row.point}.seed"))
    assert len(seeds) == 11
    assert injector.read_table(tmp_path / "zero.tab") == [0] * 4096
    for level, group in points[points["distribution"] != lv.ZERO].groupby("level"):
        fit_mean = fits.loc[fits["level"] == level, "fit_mean_us"].iloc[0]
        assert group["table_mean_us"].to_numpy() == pytest.approx(fit_mean, rel=2e-3)
        spread = group.set_index("distribution")["table_std_us"]
        assert spread["uniform"] == 0
        assert spread["lognorm"] < spread["lognorm_scale75"] < spread["lognorm_scale25"]


def test_rank_seed_files_differ_and_repeat(tmp_path):
    injector.write_seed(tmp_path / "base.seed", 42)
    for run in ("a", "b"):
        (tmp_path / run).mkdir()
        pattern = lv.rank_seed_files(tmp_path / "base.seed", 3, tmp_path / run)
        assert pattern.endswith("seed.%r")
    first = [injector.read_seed(tmp_path / "a" / f"seed.{r}") for r in range(3)]
    again = [injector.read_seed(tmp_path / "b" / f"seed.{r}") for r in range(3)]
    assert first == again and len(set(first)) == 3


def reports_frame():
    """Two experiments at one point: 3 ranks with known delays."""
    rows = []
    for experiment, achieved in (("tcpping", 110_000), ("cg_solver", 130_000)):
        for rank in range(2):
            rows.append(
                {
                    "experiment": experiment,
                    "level": 20,
                    "distribution": "uniform",
                    "rank": rank,
                    "delays": 100,
                    "table_mean_ns": 100_000.0,
                    "drawn_total_ns": 100 * 100_000,
                    "total_ns": 100 * achieved,
                    "late_delays": 10 * rank,
                }
            )
    rows.append({**rows[0], "rank": 2, "delays": 0, "total_ns": 0, "drawn_total_ns": 0})
    return pd.DataFrame(rows)


def test_injector_delays_achieved_against_intended():
    delays = lv.injector_delays(reports_frame())
    by = delays.set_index("experiment")
    assert by.loc["tcpping", "ranks"] == 2  # the rank that injected nothing is left out
    assert by.loc["tcpping", "intended_mean_us"] == 100
    assert by.loc["tcpping", "drawn_mean_us"] == 100
    assert by.loc["tcpping", "achieved_mean_us"] == 110
    assert by.loc["cg_solver", "achieved_minus_intended_us"] == pytest.approx(30)
    assert by.loc["cg_solver", "late_share"] == pytest.approx(10 / 200)
    summary = lv.injector_delay_summary(delays)
    assert summary["delays"].tolist() == [400]
    assert summary["achieved_mean_us"].iloc[0] == pytest.approx(120)
    assert summary["achieved_over_intended"].iloc[0] == pytest.approx(1.2)


def points_frame():
    rows = [
        {"level": level, "distribution": dist, "table_mean_us": mean, "table_std_us": std}
        for level, mean in ((20, 50.0), (70, 200.0))
        for dist, std in (("uniform", 0.0), ("lognorm", mean), ("lognorm_scale25", 4 * mean))
    ]
    rows.append({"level": None, "distribution": "zero", "table_mean_us": 0.0, "table_std_us": 0.0})
    return pd.DataFrame(rows)


def test_validation_table_intends_the_zero_run_plus_the_injected_mean():
    rng = np.random.default_rng(1)
    frames = [
        pd.DataFrame(
            {
                "experiment": "tcpping",
                "level": level,
                "distribution": dist,
                "value_us": 10 + shift + rng.normal(0, 1, 500),
            }
        )
        for level, dist, shift in ((None, "zero", 0), (20, "uniform", 50), (70, "lognorm", 200))
    ]
    frames.append(frames[0].assign(experiment="barrier", value_us=40.0))
    table = lv.validation_table(pd.concat(frames, ignore_index=True), points_frame())
    probe = table[table["experiment"] == "tcpping"].set_index("distribution")
    assert probe.loc["uniform", "intended_mean_us"] == pytest.approx(
        probe.loc["zero", "mean_us"] + 50
    )
    assert probe.loc["uniform", "mean_us"] == pytest.approx(60, abs=0.3)
    assert probe.loc["lognorm", "rise_mean_us"] == pytest.approx(200, abs=0.3)
    assert probe.loc["zero", "table_mean_us"] == 0
    barrier = table[table["experiment"] == "barrier"]
    assert barrier["intended_mean_us"].isna().all()


def runtimes_frame(seed=0):
    """Runtimes that follow the injected std, not the mean, plus the zero runs."""
    rng = np.random.default_rng(seed)
    rows = []
    for app, base in (("lu_wavefront", 1.0), ("cg_solver", 2.0)):
        for point in points_frame().itertuples():
            for run in range(4):
                runtime = base * (1 + 0.002 * point.table_std_us) + rng.normal(0, 0.01)
                rows.append(
                    {
                        "application": app,
                        "level": point.level,
                        "distribution": point.distribution,
                        "run": run,
                        "runtime_s": runtime,
                        "comm_s": runtime / 2,
                    }
                )
    return pd.DataFrame(rows)


def test_table4_finds_runtime_follows_the_std_and_sits_beside_the_paper():
    runs = lv.correlation_runs(runtimes_frame(), points_frame())
    assert lv.ZERO not in set(runs["distribution"])
    assert len(runs) == 2 * 6 * 4
    table = lv.table4(runs, PUBLISHED)
    assert table["paper_application"].tolist() == ["FT", "CG", "IS", "MG", "LU"]
    ours = table.dropna(subset=["application"]).set_index("application")
    for app in ("lu_wavefront", "cg_solver"):
        assert ours.loc[app, "n"] == 24
        assert ours.loc[app, "r_std"] > 0.95 > ours.loc[app, "r_mean"]
        assert ours.loc[app, "fisher_p"] < 1e-3
    assert ours.loc["lu_wavefront", "paper_r_std"] == 0.97
    is_row = table[table["paper_application"] == "IS"].iloc[0]
    assert pd.isna(is_row["application"]) and is_row["paper_r_mean"] == 0.76


def test_fixed_mean_differences_relative_to_zero():
    table = lv.fixed_mean_table(runtimes_frame(), points_frame(), [70])
    lu = table[table["application"] == "lu_wavefront"].set_index("distribution")
    # 0.2 % per µs of std: 200 µs -> +40 %, 800 µs -> +160 %, uniform +0 %.
    assert lu.loc["lognorm", "difference_pct"] == pytest.approx(40, abs=2)
    assert lu.loc["lognorm_scale25", "difference_pct"] == pytest.approx(160, abs=3)
    assert lu.loc["uniform", "difference_pct"] == pytest.approx(0, abs=2)
    assert list(lu.index) == ["uniform", "lognorm", "lognorm_scale25"]  # by spread


def test_normality_and_mann_whitney():
    rng = np.random.default_rng(5)
    samples = pd.concat(
        [
            pd.DataFrame(
                {
                    "experiment": "tcpping",
                    "level": 70,
                    "distribution": dist,
                    "value_us": values,
                }
            )
            for dist, values in (
                ("uniform", 200 + rng.normal(0, 5, 400)),
                ("lognorm", rng.lognormal(np.log(120), 1.0, 400)),
            )
        ],
        ignore_index=True,
    )
    runtimes = runtimes_frame()
    normality = lv.normality_table(samples, runtimes).set_index(["experiment", "distribution"])
    assert normality.loc[("tcpping", "uniform"), "normal"]
    assert not normality.loc[("tcpping", "lognorm"), "normal"]
    mw = lv.mann_whitney_table(samples, runtimes).set_index(["experiment", "level"])
    # A log-normal of median 120 and shape 1 exceeds 200 with probability
    # P(Z > ln(200/120)) = 0.305: it lies below the (near) constant 200 mostly.
    assert mw.loc[("tcpping", 70), "pvalue"] < 1e-6
    assert mw.loc[("tcpping", 70), "prob_lognorm_greater"] == pytest.approx(0.305, abs=0.04)
    assert mw.loc[("cg_solver", 70), "prob_lognorm_greater"] == 1.0


def test_figures_draw_what_the_tables_hold():
    table = pd.DataFrame(
        {
            "probe": ["tcpping"] * 3 + ["pingpong"] * 3,
            "level": [0, 50, 100] * 2,
            "mean": [10, 20, 400, 50, 70, 900],
            "std": [1, 5, 300, 4, 9, 800],
        }
    )
    fig = figures.latency_vs_load(table, "mean")
    lines = fig.axes[0].get_lines()
    assert [list(line.get_ydata()) for line in lines] == [[10, 20, 400], [50, 70, 900]]
    plt.close(fig)

    runs = lv.correlation_runs(runtimes_frame(), points_frame())
    t4 = lv.table4(runs, PUBLISHED)
    fig = figures.runtime_vs_latency(runs, t4, "std")
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels == ["cg_solver (r = 1.00)", "lu_wavefront (r = 1.00)"]
    plt.close(fig)
    fig = figures.fixed_mean(lv.fixed_mean_table(runtimes_frame(), points_frame(), [70]), 70)
    assert len(fig.axes[0].patches) == 3 * 2  # three distributions, two applications
    plt.close(fig)
    fig = figures.table4_figure(t4)
    assert fig.axes[0].tables
    plt.close(fig)

    summary = lv.runtime_summary(runtimes_frame())
    fig = figures.runtimes_by_level(summary, "lognorm_scale25")
    lu = next(line for line in fig.axes[0].get_lines() if line.get_label() == "lu_wavefront")
    # 1 + 0.002 × 4 × mean: 1.4 at 20 (mean 50 µs) and 2.6 at 70 (mean 200 µs).
    assert list(lu.get_ydata()) == pytest.approx([1.4, 2.6], abs=0.02)
    plt.close(fig)


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
    injected = delays[delays["distribution"] != lv.ZERO]
    assert (injected["intended_mean_us"] > 0).all()
    table = injector.read_table(
        results / "models" / "latency_variation" / "injector" / "L50_lognorm_scale50.tab"
    )
    assert len(table) == 4096
    figures_dir = results / "figures" / "latency_variation"
    assert len(list(figures_dir.glob("*.svg"))) == 16


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
    reports = lv.run_with_injector(
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
    samples = lv.tidy_injected_samples([("tcpping", "L20_uniform", str(job.output))])
    assert len(samples) == 40
    assert samples["value_us"].min() >= 300  # one delay each way: rtt >= 600 µs
    assert not list(tmp_path.glob(".tcpping.injector.csv.*"))  # scratch removed
