"""Study 100's Congestion Impact Factors (studies/characterise/cif.py) on
synthetic samples whose factor is known."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from netnoise.studies.characterise import cif

BASE = {"latency": 50.0, "bandwidth": 10.0, "allreduce": 100.0}


def samples(factors: dict[str, float], rounds: int = 6, seed: int = 1) -> pd.DataFrame:
    """Tidy canary samples: each congestor setting slows every canary by its
    factor (a time grows, a bandwidth shrinks), log-normal noise around it."""
    rng = np.random.default_rng(seed)
    frames = []
    for congestor, factor in factors.items():
        for r in range(rounds):
            for phase in cif.PHASES:
                slow = factor if phase == cif.CONGESTED else 1.0
                for test, base in BASE.items():
                    n = 400
                    scale = 1 / slow if test == "bandwidth" else slow
                    frames.append(
                        pd.DataFrame(
                            {
                                "congestor": congestor,
                                "phase": phase,
                                "test": test,
                                "round": r,
                                "ring": 0,
                                "rank": rng.integers(0, 2, n),
                                "iteration": np.arange(n),
                                "value_units": base * scale * rng.lognormal(0, 0.2, n),
                            }
                        )
                    )
    return pd.concat(frames, ignore_index=True)


def test_the_factor_of_the_congestors_is_found_with_an_interval_over_rounds():
    table = cif.impact_table(samples({"all": 3.0, "none": 1.0}))
    assert len(table) == 2 * 3 * 2  # settings × canaries × (average, p99)
    on = table[table["congestor"] == "all"]
    assert np.allclose(on["cif"], 3.0, rtol=0.1)
    assert ((on["cif_ci_low"] > 2.5) & (on["cif_ci_high"] < 3.5)).all()
    off = table[table["congestor"] == "none"]
    assert ((off["cif_ci_low"] < 1.05) & (off["cif_ci_high"] > 0.95)).all()
    assert (table["rounds"] == 6).all()
    assert set(table["unit"]) == {"µs", "MiB/s"}


def test_a_factor_is_the_networks_only_beyond_the_cpu_only_control():
    network = cif.impact_table(samples({"all": 3.0, "none": 1.0, cif.APART: 1.05}))
    assert network.loc[network["congestor"] == "all", "beyond_cpu_control"].tolist() == [True] * 6
    assert network.loc[network["congestor"] != "all", "beyond_cpu_control"].isna().all()
    cores = cif.impact_table(samples({"all": 1.5, "none": 1.0, cif.APART: 1.5}))
    assert not cores.loc[cores["congestor"] == "all", "beyond_cpu_control"].any()
    uncontrolled = cif.impact_table(samples({"all": 3.0, "none": 1.0}))
    assert uncontrolled["beyond_cpu_control"].isna().all()


def test_a_bandwidth_that_falls_is_a_cif_above_one_and_its_tail_is_the_lowest_one_percent():
    values = np.arange(1.0, 101.0)
    assert cif.figure(values, "p99", higher_is_better=True) == pytest.approx(1.99)
    assert cif.figure(values, "p99", higher_is_better=False) == pytest.approx(99.01)
    assert cif.impact(10.0, 5.0, higher_is_better=True) == 2.0
    assert cif.impact(10.0, 5.0, higher_is_better=False) == 0.5


def test_a_faster_congested_phase_is_a_cif_below_one_not_hidden():
    table = cif.impact_table(samples({"all": 0.5}))
    assert (table["cif"] < 0.6).all() and (table["cif_ci_high"] < 1).all()


def test_bad_samples_are_refused_naming_what_is_wrong():
    good = samples({"all": 2.0}, rounds=3)
    with pytest.raises(ValueError, match="lack columns round"):
        cif.impact_table(good.drop(columns="round"))
    with pytest.raises(ValueError, match="finite number above 0"):
        holed = good["value_units"].where(good.index != 5, np.nan)
        cif.impact_table(good.assign(value_units=holed))
    with pytest.raises(ValueError, match="finite number above 0"):
        cif.impact_table(good.assign(value_units=-good["value_units"]))
    lacking = good[~((good["round"] == 1) & (good["phase"] == cif.CONGESTED))]
    with pytest.raises(ValueError, match=r"round 1 of .* lacks a phase"):
        cif.impact_table(lacking)
    with pytest.raises(ValueError, match=r"measured 2 round\(s\), fewer than the 3"):
        cif.impact_table(good[good["round"] < 2])
    with pytest.raises(ValueError, match="no canary rows"):
        cif.impact_table(good.assign(test="offered_a2a"))


def test_the_rounds_table_and_the_offered_load():
    tidy = samples({"all": 2.0}, rounds=3)
    offered = pd.DataFrame(
        {
            "congestor": "all",
            "phase": cif.CONGESTED,
            "test": ["offered_a2a", "offered_a2a", "offered_incast", "offered_incast"] * 3,
            "round": np.repeat([0, 1, 2], 4),
            "ring": 0,
            "rank": [2, 3, 4, 5] * 3,
            "iteration": -1,
            "value_units": [10.0, 12.0, 5.0, 7.0] * 3,
        }
    )
    tidy = pd.concat([tidy, offered], ignore_index=True)
    rounds = cif.canary_rounds_table(tidy)
    assert len(rounds) == 3 * 3 * 2 and (rounds["samples"] == 400).all()
    load = cif.offered_load_table(tidy).set_index("pattern")
    assert load.loc["a2a", "mibps_per_rank"] == pytest.approx(11.0)
    assert load.loc["incast", "ranks"] == 2 and (load["rounds"] == 3).all()
    assert cif.offered_load_table(samples({"none": 1.0}, rounds=3)).empty


def test_the_cif_figure_draws_every_point_and_its_legend_covers_none():
    from netnoise.figures import legend_problems
    from netnoise.studies.characterise.figures import fig_cif

    table = cif.impact_table(samples({"all": 3.0, "none": 1.0}, rounds=3))
    fig = fig_cif(table)
    lines = [line for ax in fig.axes for line in ax.lines if line.get_marker() == "o"]
    assert len(lines) == 2 * 2  # a series per congestor setting in each panel
    assert all(len(line.get_xdata()) == 3 for line in lines)
    assert legend_problems(fig) == []
