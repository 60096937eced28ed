"""Seed 004 Sec. 6–7: the statistics tables of the injected runs, on synthetic data
whose answers are known."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from netnoise.studies.latency_variation import analysis
from netnoise.studies.latency_variation.names import ZERO
from tests.latency_variation.synthetic import (
    PUBLISHED,
    points_frame,
    reports_for,
    runtimes_frame,
    std_grid,
)


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
    delays = analysis.injector_delays(reports_frame())
    by = delays.set_index("experiment")
    assert by.loc["tcpping", "ranks"] == 2  # the rank that injected nothing is left out
    assert by.loc["tcpping", "intended_mean_us"] == 100
    assert by.loc["tcpping", "drawn_mean_us"] == 100
    assert by.loc["tcpping", "achieved_mean_us"] == 110
    assert by.loc["cg_solver", "achieved_minus_intended_us"] == pytest.approx(30)
    assert by.loc["cg_solver", "late_share"] == pytest.approx(10 / 200)
    summary = analysis.injector_delay_summary(delays)
    assert summary["delays"].tolist() == [400]
    assert summary["achieved_mean_us"].iloc[0] == pytest.approx(120)
    assert summary["achieved_over_intended"].iloc[0] == pytest.approx(1.2)


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
    table = analysis.validation_table(pd.concat(frames, ignore_index=True), points_frame())
    probe = table[table["experiment"] == "tcpping"].set_index("distribution")
    assert probe.loc["uniform", "intended_mean_us"] == pytest.approx(
        probe.loc["zero", "mean_us"] + 50
    )
    assert probe.loc["uniform", "mean_us"] == pytest.approx(60, abs=0.3)
    assert probe.loc["lognorm", "rise_mean_us"] == pytest.approx(200, abs=0.3)
    assert probe.loc["zero", "table_mean_us"] == 0
    barrier = table[table["experiment"] == "barrier"]
    assert barrier["intended_mean_us"].isna().all()


def test_pooled_realised_std_over_ranks_against_a_hand_computed_value():
    """Rank 0: 100 delays of mean 100 µs, std 10; rank 1: 300 of mean 200, std 20.
    Pooled: mean 175, E[x²] = (100·10100 + 300·40400)/400 = 32825, var 2200."""
    reports = pd.DataFrame(
        {
            "experiment": "cg_solver",
            "level": 40,
            "distribution": "lognorm",
            "rank": [0, 1],
            "delays": [100, 300],
            "table_mean_ns": 150_000.0,
            "drawn_total_ns": [100 * 100_000, 300 * 200_000],
            "drawn_std_ns": [10_000.0, 20_000.0],
            "total_ns": [100 * 110_000, 300 * 210_000],
            "std_ns": [10_000.0, 20_000.0],
            "late_delays": 0,
        }
    )
    row = analysis.injector_delays(reports).iloc[0]
    assert row["drawn_mean_us"] == pytest.approx(175)
    assert row["drawn_std_us"] == pytest.approx(np.sqrt(2200))
    assert row["achieved_mean_us"] == pytest.approx(185)
    assert row["achieved_std_us"] == pytest.approx(np.sqrt(2200))
    # A report without the realised std (an older library) leaves it unknown.
    older = analysis.injector_delays(reports.drop(columns=["drawn_std_ns", "std_ns"]))
    assert older["drawn_std_us"].isna().all() and older["drawn_mean_us"].iloc[0] == 175
    partial = reports.assign(drawn_std_ns=[10_000.0, np.nan])
    assert analysis.injector_delays(partial)["drawn_std_us"].isna().all()


def test_correlation_runs_take_the_realised_latency_of_each_application():
    """Runtime follows the table's std (synthetic); the realised std of the widest
    distribution at level 70 is a quarter of the table's, as few draws from a heavy
    tail give: the runs carry the realised pair, and r_std falls with it."""
    runtimes, points = runtimes_frame(), points_frame()
    realised = {(70, "lognorm_scale25"): 200.0}
    delays = analysis.injector_delays(reports_for(runtimes, realised))
    runs = analysis.correlation_runs(runtimes, points, delays)
    assert (runs["latency_source"] == "realised").all()
    wide = runs[(runs["level"] == 70) & (runs["distribution"] == "lognorm_scale25")]
    assert (wide["latency_std_us"] == 200).all() and (wide["table_std_us"] == 800).all()
    lu = runs[runs["application"] == "lu_wavefront"]
    table = analysis.table4(runs, PUBLISHED).dropna(subset=["application"])
    row = table.set_index("application").loc["lu_wavefront"]
    assert row["r_std"] == pytest.approx(np.corrcoef(lu["runtime_s"], lu["latency_std_us"])[0, 1])
    assert row["r_std"] < 0.95
    assert row["r_mean_std"] == pytest.approx(
        np.corrcoef(lu["latency_mean_us"], lu["latency_std_us"])[0, 1]
    )
    assert row["r_mean_std_intended"] == pytest.approx(
        np.corrcoef(lu["table_mean_us"], lu["table_std_us"])[0, 1]
    )
    # Reports without the realised std: every run of that application keeps the
    # intended pair, never a mix.
    older = reports_for(runtimes).drop(columns=["drawn_std_ns", "std_ns"])
    runs = analysis.correlation_runs(runtimes, points, analysis.injector_delays(older))
    assert (runs["latency_source"] == "intended").all()
    assert (runs["latency_std_us"] == runs["table_std_us"]).all()


def test_table4_finds_runtime_follows_the_std_and_sits_beside_the_paper():
    runtimes = runtimes_frame()
    delays = analysis.injector_delays(reports_for(runtimes))
    runs = analysis.correlation_runs(runtimes, points_frame(), delays)
    assert ZERO not in set(runs["distribution"])
    assert len(runs) == 2 * 6 * 4
    table = analysis.table4(runs, PUBLISHED)
    assert table["paper_application"].tolist() == ["FT", "CG", "IS", "MG", "LU"]
    ours = table.dropna(subset=["application"]).set_index("application")
    for app in ("lu_wavefront", "cg_solver"):
        assert ours.loc[app, "n"] == 24
        assert ours.loc[app, "r_std"] > 0.95 > ours.loc[app, "r_mean"]
        assert ours.loc[app, "fisher_p"] < 1e-3
        assert ours.loc[app, "steiger_p"] < 1e-3
        assert ours.loc[app, "distributions"] == 6
        assert ours.loc[app, "runs_for_power"] == np.ceil(ours.loc[app, "n_for_power"] / 6)
        assert ours.loc[app, "latency_source"] == "realised"
    assert ours.loc["lu_wavefront", "paper_r_std"] == 0.97
    is_row = table[table["paper_application"] == "IS"].iloc[0]
    assert pd.isna(is_row["application"]) and is_row["paper_r_mean"] == 0.76


def test_fixed_mean_differences_relative_to_zero():
    runtimes = runtimes_frame()
    delays = analysis.injector_delays(reports_for(runtimes, {(70, "lognorm"): 150.0}))
    table = analysis.fixed_mean_table(runtimes, points_frame(), [70], delays)
    lu = table[table["application"] == "lu_wavefront"].set_index("distribution")
    assert lu.loc["lognorm", "realised_std_us"] == 150 and lu.loc["lognorm", "table_std_us"] == 200
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
    normality = analysis.normality_table(samples, runtimes).set_index(
        ["experiment", "distribution"]
    )
    assert normality.loc[("tcpping", "uniform"), "normal"]
    assert not normality.loc[("tcpping", "lognorm"), "normal"]
    mw = analysis.mann_whitney_table(samples, runtimes).set_index(["experiment", "level"])
    # A log-normal of median 120 and shape 1 exceeds 200 with probability
    # P(Z > ln(200/120)) = 0.305: it lies below the (near) constant 200 mostly.
    assert mw.loc[("tcpping", 70), "pvalue"] < 1e-6
    assert mw.loc[("tcpping", 70), "prob_lognorm_greater"] == pytest.approx(0.305, abs=0.04)
    assert mw.loc[("cg_solver", 70), "prob_lognorm_greater"] == 1.0


def test_fixed_mean_keeps_the_mean_preserving_set_beside_a_grid():
    """A grid of means × spreads at the same level is not part of Fig. 15–16."""
    points = points_frame()
    grid = pd.DataFrame(
        {
            "level": 70,
            "distribution": ["grid_m100_s0", "grid_m100_s400", "grid_m400_s400"],
            "table_mean_us": [100.0, 100.0, 400.0],
            "table_std_us": [0.0, 400.0, 400.0],
        }
    )
    points = pd.concat([points, grid], ignore_index=True)
    chosen = analysis.mean_preserving_points(points, 70)
    assert chosen["distribution"].tolist() == ["uniform", "lognorm", "lognorm_scale25"]
    runtimes = runtimes_frame()
    extra = runtimes[runtimes["distribution"] == "uniform"].assign(distribution="grid_m100_s0")
    table = analysis.fixed_mean_table(pd.concat([runtimes, extra]), points, [70])
    assert "grid_m100_s0" not in set(table["distribution"])
    with pytest.raises(ValueError, match="level 20: no uniform"):
        analysis.mean_preserving_points(points[points["distribution"] != "uniform"], 20)


def test_table4_on_a_grid_of_spreads_at_each_mean():
    """Distributions that differ by their std alone at the same mean (the grid of
    ``fit.stds_us``): mean and std uncorrelated by design, the std found."""
    points = std_grid(points_frame())
    runtimes = runtimes_frame(points=points)
    delays = analysis.injector_delays(reports_for(runtimes, points=points))
    runs = analysis.correlation_runs(runtimes, points, delays)
    assert (runs["latency_source"] == "realised").all()
    # Each level's constant delay and its three spreads: 2 means x 4 spreads.
    assert set(analysis.grid_runs(runs)["distribution"]) == {"uniform", "std0", "std100", "std400"}
    table = analysis.table4_grid(runs, PUBLISHED)
    assert table["paper_application"].tolist() == ["FT", "CG", "IS", "MG", "LU"]
    table = table.dropna(subset=["application"])
    assert len(table) == 2
    for row in table.itertuples():
        assert row.distributions == 8 and row.n == 32
        assert row.r_mean_std == pytest.approx(0, abs=1e-9)
        assert row.r_mean_std_intended == pytest.approx(0, abs=1e-9)
        assert abs(row.r_mean) < 0.3 < 0.95 < row.r_std
        assert row.steiger_p < 1e-3
    both = analysis.table4(runs, PUBLISHED).dropna(subset=["application"])
    assert (both["distributions"] == 12).all() and (both["steiger_p"] < 1e-3).all()
    # The grid shares the level's mean: Fig. 15-16 take it with the paper's set.
    fixed = analysis.fixed_mean_table(runtimes, points, [70], delays)
    lu = fixed[fixed["application"] == "lu_wavefront"].set_index("distribution")
    assert set(lu.index) == {"uniform", "lognorm", "lognorm_scale25", "std0", "std100", "std400"}
    assert lu.loc["std400", "realised_std_us"] == 400
    # 0.2 % per µs of std: 400 µs -> +80 %.
    assert lu.loc["std400", "difference_pct"] == pytest.approx(80, abs=2)
    assert lu["table_std_us"].is_monotonic_increasing


def test_table4_grid_without_a_grid_keeps_the_paper_rows_alone():
    """No spreads besides the constant, or one level: nothing to correlate."""
    runtimes = runtimes_frame()
    runs = analysis.correlation_runs(
        runtimes, points_frame(), analysis.injector_delays(reports_for(runtimes))
    )
    assert set(analysis.grid_runs(runs)["distribution"]) == {"uniform"}
    table = analysis.table4_grid(runs, PUBLISHED)
    assert table["application"].isna().all()
    assert table["paper_application"].tolist() == ["FT", "CG", "IS", "MG", "LU"]
    points = std_grid(points_frame())
    one_level = points[points["level"] == points["level"].max()]
    runtimes = runtimes_frame(points=one_level)
    runs = analysis.correlation_runs(
        runtimes, one_level, analysis.injector_delays(reports_for(runtimes, points=one_level))
    )
    assert analysis.table4_grid(runs, PUBLISHED)["application"].isna().all()


def test_grid_effects_find_the_cost_of_spread_at_a_fixed_mean():
    """Runtimes that rise 0.2 % per µs of std and not with the mean: per 100 µs,
    +0.2 s of spread for a 1 s application, +0.4 s for a 2 s one, no mean."""
    points = std_grid(points_frame())
    runtimes = runtimes_frame(points=points)
    runs = analysis.correlation_runs(
        runtimes, points, analysis.injector_delays(reports_for(runtimes, points=points))
    )
    effects = analysis.grid_effects(runs).set_index("application")
    assert list(effects.index) == ["lu_wavefront", "cg_solver"]
    for app, per_100us in (("lu_wavefront", 0.2), ("cg_solver", 0.4)):
        row = effects.loc[app]
        assert row["n"] == 32 and row["paper_application"] in ("LU", "CG")
        assert row["std_s_per_100us"] == pytest.approx(per_100us, rel=0.02)
        assert row["std_ci_low"] < per_100us < row["std_ci_high"]
        assert row["mean_ci_low"] < 0 < row["mean_ci_high"]
        assert row["r2"] > 0.99
    no_grid = analysis.correlation_runs(
        runtimes_frame(), points_frame(), analysis.injector_delays(reports_for(runtimes_frame()))
    )
    assert analysis.grid_effects(no_grid).empty
