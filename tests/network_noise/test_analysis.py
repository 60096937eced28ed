"""Seed 001's summaries on small hand-computed inputs.

Definitions checked against the seed paper (001_9f0f9ede26bdffbe.txt):
- the perturbation ratio is the share of the allocation that perturbs ("a perturbation
  ratio of 0.1 in an allocation of 100 processes means that 10 of the processes execute
  a perturbation communication"; Fig. 2: 5 of 8 processes, ratio 5/8 = 0.625);
- the benchmark's slowdown is "relative to unperturbed run [%]" of the average times
  (Fig. 4, 5: "each data-point represents the average time of 128 measurements"), so
  100 * perturbed mean / unperturbed mean, 100 % meaning no effect;
- the simulator's slowdown is the ratio perturbed / unperturbed time of one run
  ("delay ... by up to 12 times"), averaged over runs.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from netnoise.studies.network_noise.analysis import (
    BOOTSTRAP_RESAMPLES,
    added_time,
    allocation_steps,
    baseline_by_size,
    baseline_variation,
    benchmark_slowdown,
    correlations,
    dimensions,
    point_name,
    simulation_summary,
    slowdown_interval,
    split_slowdowns,
    topology_table,
)
from netnoise.studies.network_noise.claims_table import benchmark_claims
from netnoise.studies.network_noise.netgauge import (
    PERTURB_BYTES,
    application_sizes,
    comparison,
    parse_collvsnoise,
    size_problems,
)


@pytest.mark.parametrize(
    ("figure", "spec", "ratio", "name"),
    [
        ("fat_tree_size", "xgft:12,12/1,6/1,2", 0.5, "fat_tree_size__xgft-12.12_1.6_1.2__r0.5"),
        ("torus_ratio", "torus:32x32", 0.1, "torus_ratio__torus-32x32__r0.1"),
        ("torus_size", "torus:10x10x10", 0.5, "torus_size__torus-10x10x10__r0.5"),
        ("fabric_ratio", "fabric:maps/chic.topo", 0.9, "fabric_ratio__fabric-maps_chic.topo__r0.9"),
        ("torus_ratio", "torus:4x4", 1 / 3, "torus_ratio__torus-4x4__r0.333333"),
    ],
)
def test_point_name_is_file_name_safe(figure, spec, ratio, name):
    assert point_name(figure, spec, ratio) == name
    assert not set(":,/") & set(name)


@pytest.mark.parametrize(
    ("spec", "dims"),
    [
        ("torus:32x32", 2),
        ("torus:10x10x10", 3),
        ("torus:4x4x4x4", 4),
        ("xgft:12,12/1,6", None),
        ("fabric:maps/torus.topo", None),
    ],
)
def test_dimensions_of_tori_only(spec, dims):
    assert dimensions(spec) == dims


def _runs(topology, ratio, slowdowns, overheads, endpoints, processes):
    return pd.DataFrame(
        {
            "topology": topology,
            "collective": "bcast",
            "ratio": ratio,
            "endpoints": endpoints,
            "processes": processes,
            "slowdown": slowdowns,
            "overhead": overheads,
        }
    )


def test_simulation_summary_one_row_per_point():
    runs = [
        _runs("torus:4x4", 0.5, [1.0, 2.0, 3.0], [0.0, 2.0, 4.0], 16, 8),
        _runs("torus:4x4", 0.25, [1.0, 1.0, 1.0, 1.5], [0.0, 0.0, 0.0, 1.0], 16, 12),
        _runs("xgft:4,4/1,2", 0.5, [1.5, 2.5], [1.0, 3.0], 16, 8),
    ]
    summary = simulation_summary(runs, ["torus_ratio", "torus_ratio", "fat_tree_size"])
    # Sorted by figure, then dimensions, endpoints and ratio.
    assert summary["figure"].tolist() == ["fat_tree_size", "torus_ratio", "torus_ratio"]
    assert summary["ratio"].tolist() == [0.5, 0.25, 0.5]
    assert summary["dimensions"].isna().tolist() == [True, False, False]
    assert summary["processes"].tolist() == [8, 12, 8]

    row = summary.iloc[2].to_dict()
    assert row["topology"] == "torus:4x4"
    assert row["dimensions"] == 2
    assert row["collective"] == "bcast"
    assert row["endpoints"] == 16
    # Slowdowns 1, 2, 3: mean and median 2; linear percentiles at positions 0.05 and 1.95;
    # sample sd 1, so the mean's 95 % interval is 2 -/+ 1.959964 / sqrt(3).
    assert row["slowdown_mean"] == 2.0
    assert row["slowdown_median"] == 2.0
    assert row["slowdown_p2.5"] == pytest.approx(1.05)
    assert row["slowdown_p97.5"] == pytest.approx(2.95)
    half = 1.959964 / math.sqrt(3)
    assert row["slowdown_mean_ci_low"] == pytest.approx(2 - half)
    assert row["slowdown_mean_ci_high"] == pytest.approx(2 + half)
    assert row["slowdown_runs"] == 3
    assert row["overhead_mean"] == 2.0

    quarter = summary.iloc[1]
    assert quarter["slowdown_mean"] == pytest.approx(1.125)
    assert quarter["overhead_mean"] == pytest.approx(0.25)


def test_simulation_summary_needs_a_figure_per_point():
    runs = [_runs("torus:4x4", 0.5, [1.0, 2.0], [0.0, 1.0], 16, 8)]
    with pytest.raises(ValueError):
        simulation_summary(runs, [])


def test_topology_table_counts_beside_the_papers():
    runs = [
        _runs("xgft:4,4/1,2/1,2", 0.5, [1.0], [0.0], 16, 8),
        _runs("torus:3x3", 0.5, [1.0], [0.0], 9, 5),
        _runs("torus:3x3", 0.1, [1.0], [0.0], 9, 8),
    ]
    published = pd.DataFrame(
        {
            "layout": ["XGFT(2,4,2)", "10-ary 2-cube"],
            "spec": ["xgft:4,4/1,2", "torus:10x10"],
            "endpoints": [16, 100],
            "switches": [6, 100],
            "source": ["test", "test"],
        }
    )
    table = topology_table(runs, published).set_index("topology")
    # One row per topology, whatever its ratios.
    assert sorted(table.index) == ["torus:3x3", "xgft:4,4/1,2/1,2"]
    # XGFT(2; 4,4; 1,2) with 2 cables per top link: 4 x 4 endpoints, 4 leaf + 2 top
    # switches; 16 endpoint cables and 4 leaves x 2 tops x 2 cables.
    tree = table.loc["xgft:4,4/1,2/1,2"]
    assert (tree["endpoints"], tree["switches"], tree["links"]) == (16, 6, 32)
    # Matched on the SPEC without the parallel-cable part.
    assert tree["paper_layout"] == "XGFT(2,4,2)"
    assert (tree["paper_endpoints"], tree["paper_switches"]) == (16, 6)
    # 3-ary 2-cube: 9 switches with one endpoint each, 2 ring links per switch.
    torus = table.loc["torus:3x3"]
    assert (torus["endpoints"], torus["switches"], torus["links"]) == (9, 9, 27)
    assert torus["paper_layout"] == ""
    assert pd.isna(torus["paper_endpoints"]) and pd.isna(torus["paper_switches"])


def _tidy(collective, ratio, allocation, quiet, perturbed, perturbation=None):
    """One point: split i holds the i-th quiet and the i-th perturbed time."""
    times = [*quiet, *perturbed]
    table = pd.DataFrame(
        {
            "split": [*range(len(quiet)), *range(len(perturbed))],
            "collective": collective,
            "ratio": ratio,
            "allocation": allocation,
            "perturbed": [0] * len(quiet) + [1] * len(perturbed),
            "time_us": times,
        }
    )
    return table if perturbation is None else table.assign(perturbation=perturbation)


def test_benchmark_slowdown_is_perturbed_over_unperturbed_mean_in_percent():
    tidy = pd.concat(
        [
            _tidy("bcast", 0.25, 8, quiet=[95.0, 105.0], perturbed=[80.0, 120.0]),
            _tidy("allreduce", 0.5, 8, quiet=[90.0, 100.0, 110.0], perturbed=[140.0, 150.0, 160.0]),
        ]
    )
    table = benchmark_slowdown(tidy)
    # A table from before the CPU-only control: every point perturbs the network.
    assert table[["collective", "ratio", "allocation", "perturbation"]].values.tolist() == [
        ["allreduce", 0.5, 8, "network"],
        ["bcast", 0.25, 8, "network"],
    ]
    allreduce, bcast = table.iloc[0], table.iloc[1]
    # Times taken on real cores, unless the table is told they were simulated.
    assert (table["clock"] == "wall").all()
    assert (benchmark_slowdown(tidy, "simulated")["clock"] == "simulated").all()
    # Quiet mean 100 us, perturbed mean 150 us: 150 % of the unperturbed time.
    assert (allreduce["samples"], allreduce["splits"]) == (3, 3)
    assert allreduce["unperturbed_mean_us"] == 100.0
    assert allreduce["perturbed_mean_us"] == 150.0
    assert allreduce["unperturbed_median_us"] == 100.0
    assert allreduce["perturbed_median_us"] == 150.0
    assert allreduce["slowdown_pct"] == pytest.approx(150.0)
    # Every perturbed time above every quiet one: the exact one-sided Mann-Whitney
    # p-value of 3 against 3 is 1 / C(6, 3) = 0.05.
    assert allreduce["p_perturbed_slower"] == pytest.approx(0.05)
    # Same mean, half the pairs each way: 100 %; U = 2 of 4, p = P(U >= 2) = 4/6.
    assert bcast["slowdown_pct"] == pytest.approx(100.0)
    assert bcast["p_perturbed_slower"] == pytest.approx(4 / 6)
    # Splits resampled: 150/90, 150/100 ... span the interval; no control ran.
    assert allreduce["slowdown_ci_low"] < 150 < allreduce["slowdown_ci_high"]
    assert table[["ratio0_slowdown_pct", "p_vs_ratio0", "p_vs_cpu"]].isna().all().all()


def test_split_slowdowns_pool_each_splits_repetitions():
    tidy = pd.DataFrame(
        {
            "split": [0, 0, 0, 0, 1, 1],
            "collective": "reduce",
            "ratio": 0.5,
            "allocation": 8,
            "perturbed": [0, 0, 1, 1, 0, 1],
            "time_us": [100.0, 110.0, 150.0, 160.0, 50.0, 40.0],
        }
    )
    table = split_slowdowns(tidy)
    assert table["perturbation"].tolist() == ["network", "network"]
    assert table["perturbed_count"].tolist() == [2, 1]
    assert table["slowdown_pct"].tolist() == pytest.approx([100 * 155 / 105, 80.0])
    # The point's slowdown pools the splits: 100 x mean(150, 160, 40) / mean(100, 110, 50).
    point = benchmark_slowdown(tidy).iloc[0]
    assert point["slowdown_pct"] == pytest.approx(100 * (350 / 3) / (260 / 3))


def test_every_point_is_compared_with_its_controls():
    """Per-split slowdowns of the point (150, 160, 170 %) all above those of the
    ratio-0 run at ratio 0 (100-102 %): exact one-sided p = 1 / C(6, 3) = 0.05. The
    CPU-only control at the point's own ratio is as slow as the point: no evidence."""
    tidy = pd.concat(
        [
            _tidy("allreduce", 0.5, 8, [100.0] * 3, [150.0, 160.0, 170.0], "network"),
            _tidy("allreduce", 0.25, 8, [100.0] * 3, [110.0, 100.0, 90.0], "network"),
            _tidy("allreduce", 0.0, 8, [100.0] * 3, [100.0, 101.0, 102.0], "network"),
            _tidy("allreduce", 0.5, 8, [100.0] * 3, [150.0, 160.0, 170.0], "cpu"),
            _tidy("allreduce", 0.5, 8, [100.0] * 3, [110.0, 111.0, 112.0], "unshared"),
            # Another allocation's ratio-0 run is not this point's control.
            _tidy("allreduce", 0.0, 4, [100.0] * 3, [200.0] * 3, "network"),
        ]
    )
    table = benchmark_slowdown(tidy).set_index(["allocation", "ratio", "perturbation"])
    point = table.loc[(8, 0.5, "network")]
    assert point["ratio0_slowdown_pct"] == pytest.approx(101.0)
    assert point["p_vs_ratio0"] == pytest.approx(0.05)
    assert point["cpu_slowdown_pct"] == pytest.approx(160.0)
    assert point["p_vs_cpu"] > 0.4
    assert point["unshared_slowdown_pct"] == pytest.approx(111.0)
    assert point["p_vs_unshared"] == pytest.approx(0.05)
    # Ratio 1/4 (110, 100, 90 %) is no slower than the ratio-0 run; no CPU control at 1/4.
    assert table.loc[(8, 0.25, "network"), "p_vs_ratio0"] > 0.5
    assert pd.isna(table.loc[(8, 0.25, "network"), "p_vs_cpu"])
    # Controls are not compared with controls.
    for control in [(8, 0.5, "cpu"), (8, 0.5, "unshared"), (8, 0.0, "network")]:
        assert table.loc[control, ["p_vs_ratio0", "p_vs_cpu", "p_vs_unshared"]].isna().all()
    with pytest.raises(ValueError, match=r"perturbation: unknown value\(s\) \['idle'\]"):
        benchmark_slowdown(_tidy("allreduce", 0.5, 8, [1.0], [1.0], "idle"))
    with pytest.raises(ValueError, match="no split column"):
        benchmark_slowdown(_tidy("allreduce", 0.5, 8, [1.0], [1.0]).drop(columns="split"))


def test_slowdown_interval_covers_the_true_slowdown_at_the_nominal_rate():
    """32 splits of 3 repetitions each; each split has its own placement factor
    (log-normal, shared by its quiet and perturbed times) and the perturbation
    multiplies the mean time by 1.3: the true slowdown is 130 %. The interval over
    splits must contain it in about 95 % of 150 experiments (binomial sd 1.8 %)."""
    data = np.random.default_rng(21)
    noise = np.exp(0.1**2 / 2)  # mean of the per-repetition log-normal factor
    hits = 0
    for _ in range(150):
        placement = data.lognormal(0, 0.3, size=(32, 1))
        quiet = 100 * placement * data.lognormal(0, 0.1, size=(32, 3)) / noise
        perturbed = 130 * placement * data.lognormal(0, 0.1, size=(32, 3)) / noise
        splits = pd.DataFrame(
            {
                "perturbed_sum_us": perturbed.sum(axis=1),
                "perturbed_count": 3,
                "unperturbed_sum_us": quiet.sum(axis=1),
                "unperturbed_count": 3,
            }
        )
        low, high = slowdown_interval(splits)
        hits += low <= 130 <= high
    assert 0.89 <= hits / 150 <= 0.99


def test_added_time_is_the_pooled_difference_with_its_interval_over_splits():
    data = np.random.default_rng(5)
    placement = data.lognormal(0, 0.3, size=(64, 1))
    quiet = 200 * placement * data.lognormal(0, 0.1, size=(64, 3))
    perturbed = quiet + 500 + data.normal(0, 50, size=(64, 3))  # 0.5 ms added to each call
    splits = pd.DataFrame(
        {
            "perturbed_sum_us": perturbed.sum(axis=1),
            "perturbed_count": 3,
            "unperturbed_sum_us": quiet.sum(axis=1),
            "unperturbed_count": 3,
        }
    )
    value, low, high = added_time(splits)
    assert value == pytest.approx(perturbed.mean() - quiet.mean())
    assert low < value < high and low < 500 < high and high - low < 40
    assert np.isnan(added_time(splits.head(1))[1:]).all()


def test_correlations_of_slowdown_with_ratio_and_allocation():
    rows = [("allreduce", r, 8, "network", s) for r, s in [(0.25, 120), (0.5, 130), (0.75, 150)]]
    rows += [("allreduce", 0.0, 8, "network", 100.0)]  # the sweeps' ratio-0 point
    rows += [("allreduce", 0.5, n, "network", s) for n, s in [(4, 140), (6, 135)]]
    rows += [("bcast", r, 8, "network", s) for r, s in [(0.25, 110), (0.5, 105)]]  # too few
    # The CPU-only control's sweep: flat, then falling.
    rows += [("allreduce", r, 8, "cpu", s) for r, s in [(0.25, 103), (0.5, 102), (0.75, 101)]]
    slowdown = pd.DataFrame(
        rows, columns=["collective", "ratio", "allocation", "perturbation", "slowdown_pct"]
    )
    table = correlations(slowdown).set_index(["perturbation", "against"])
    cpu = table.loc[("cpu", "ratio")]
    # 100, 103, 102, 101 % at ratios 0 to 3/4: rho = 0.2 over 4 points.
    assert (cpu["points"], cpu["spearman"]) == (4, pytest.approx(0.2))
    assert len(table.loc["cpu"]) == 1  # one allocation only: no trend with it
    table = table.loc["network"]
    by_ratio = table.loc["ratio"]
    assert (by_ratio["collective"], by_ratio["allocation"], by_ratio["points"]) == (
        "allreduce",
        8,
        4,
    )
    # Rising over 4 ratios: rho = 1, exact one-sided p = 1 / 4! = 1/24.
    assert (by_ratio["spearman"], by_ratio["p"]) == (pytest.approx(1.0), pytest.approx(1 / 24))
    # Allocations 4, 6, 8 at ratio 1/2: 140, 135, 130 %, falling: rho = -1, p = 1.
    by_size = table.loc["allocation"]
    assert (by_size["ratio"], by_size["points"], by_size["spearman"]) == (0.5, 3, pytest.approx(-1))
    assert by_size["p"] == pytest.approx(1.0)


def test_baseline_variation_across_points_of_one_allocation():
    slowdown = pd.DataFrame(
        {
            "collective": ["allreduce"] * 5,
            "allocation": [8, 8, 8, 8, 4],
            "ratio": [0.25, 0.5, 0.0, 0.5, 0.5],
            "perturbation": ["network", "network", "network", "cpu", "network"],
            "unperturbed_mean_us": [90.0, 110.0, 500.0, 400.0, 70.0],
        }
    )
    table = baseline_variation(slowdown)
    # 90 and 110 us: sd sqrt(200), mean 100; the controls are not points; one point has no CV.
    assert table.to_dict("records") == [
        {
            "collective": "allreduce",
            "allocation": 8,
            "points": 2,
            "unperturbed_cv": pytest.approx(math.sqrt(200) / 100),
        }
    ]


def test_baseline_by_size_compares_points_of_one_application_size():
    slowdown = pd.DataFrame(
        {
            "collective": ["allreduce"] * 6 + ["bcast"],
            "allocation": [8, 8, 4, 8, 6, 8, 8],
            "ratio": [0.5, 0.5, 0.0, 0.25, 0.0, 0.5, 0.5],
            "perturbation": [
                "network",
                "cpu",
                "network",
                "network",
                "network",
                "unshared",
                "network",
            ],
            "application_ranks": [4, 4, 4, 6, 6, 4, 4],
            "unperturbed_mean_us": [90.0, 100.0, 110.0, 300.0, 300.0, 20.0, 50.0],
        }
    )
    table = baseline_by_size(slowdown)
    # Size 4: 90, 100, 110 us over a point, its CPU control and a ratio-0 run: sd 10,
    # mean 100 (the unshared control's 20 us, on one switch, is another layout's).
    # Size 6: no spread. bcast's single point has no CV.
    assert table.to_dict("records") == [
        {"collective": "allreduce", "application_ranks": 4, "points": 3,
         "unperturbed_cv": pytest.approx(0.1)},
        {"collective": "allreduce", "application_ranks": 6, "points": 2, "unperturbed_cv": 0.0},
    ]  # fmt: skip
    # A table without the sizes (from before they were kept) has nothing to compare.
    assert baseline_by_size(slowdown.drop(columns="application_ranks")).empty


def test_benchmark_claims_state_each_target():
    tidy = pd.concat(
        [
            _tidy(
                "allreduce", r, 8, [100.0 * f] * 3, [s * f - 1, s * f, s * f + 1], "network"
            ).assign(cpu_saturated=False)
            for r, s, f in [(0.25, 120.0, 1.0), (0.5, 140.0, 1.1), (0.75, 160.0, 0.9)]
        ]
        + [
            _tidy("allreduce", 0.0, 8, [100.0] * 3, [99.0, 100.0, 101.0], "network").assign(
                cpu_saturated=True
            )
        ]
    )
    slowdown = benchmark_slowdown(tidy)
    claims = benchmark_claims(tidy, slowdown).set_index(["claim", "scope"])
    splits = claims.loc[("splits_per_point", "every point")]
    assert (splits["value"], splits["meets"], splits["paper"]) == (3, False, "128 (Sec. 2.1)")
    assert claims.loc[("ratios", "allreduce, 8 nodes"), "value"] == 4  # with the ratio-0 run
    rho = claims.loc[("spearman_ratio", "allreduce, 8 nodes")]
    assert (rho["value"], rho["meets"]) == (pytest.approx(1.0), True)
    assert rho["detail"] == "over 4 ratios, p = 0.0417"
    # Every point's three splits (119-161 %) above the ratio-0 run's (99-101 %): with
    # three splits each the smallest one-sided p is 1 / C(6, 3) = 0.05, not below it.
    beats = claims.loc[("beats_ratio0_control", "every point")]
    assert (beats["value"], beats["meets"]) == (0.0, False)
    assert beats["detail"] == "share of 3 points with Mann-Whitney p < 0.05; largest p = 0.05"
    assert pd.isna(claims.loc[("beats_cpu_control", "every point"), "value"])
    assert pd.isna(claims.loc[("beats_unshared_control", "every point"), "value"])
    assert "shared_link_share_of_added_time" not in claims.index.get_level_values("claim")
    # Unperturbed 100, 110, 90 us: CV 0.1.
    cv = claims.loc[("baseline_cv", "allreduce, 8 nodes")]
    assert (cv["value"], cv["meets"]) == (pytest.approx(0.1), True)
    assert claims.loc[("max_slowdown_pct", "every point"), "value"] == pytest.approx(160.0)
    # One of the four result files (the control) was CPU-saturated.
    saturated = claims.loc[("cpu_saturated_share", "network measurements")]
    assert (saturated["value"], saturated["meets"]) == (pytest.approx(0.25), False)
    # Without a CPU control there is nothing to say of one.
    assert ("cpu_saturated_share", "CPU control") not in claims.index


def test_a_saturated_cpu_control_is_told_apart_from_the_network_measurements():
    tidy = pd.concat(
        [
            _tidy("allreduce", 0.5, 8, [100.0] * 3, [150.0, 160.0, 170.0], p).assign(
                cpu_saturated=p == "cpu"
            )
            for p in ("network", "unshared", "cpu")
        ]
        + [
            _tidy("allreduce", 0.0, 8, [100.0] * 3, [100.0] * 3, "network").assign(
                cpu_saturated=False
            )
        ]
    )
    claims = benchmark_claims(tidy, benchmark_slowdown(tidy)).set_index(["claim", "scope"])
    network = claims.loc[("cpu_saturated_share", "network measurements")]
    assert (network["value"], network["meets"]) == (0.0, True)
    cpu = claims.loc[("cpu_saturated_share", "CPU control")]
    assert cpu["value"] == 1.0 and pd.isna(cpu["target"])
    assert "by design" in cpu["detail"]


def test_claims_give_the_allocation_trend_of_the_added_time_beside_the_slowdowns():
    # The unperturbed time doubles with each allocation and the perturbation adds
    # less than twice as much: the slowdown falls while the added time rises.
    tidy = pd.concat(
        [
            _tidy("allreduce", 0.5, n, [q - 1, q, q + 1], [p - 1, p, p + 1], "network")
            for n, q, p in [(4, 20.0, 400.0), (6, 40.0, 760.0), (8, 80.0, 1440.0)]
        ]
    ).assign(cpu_saturated=False)
    claims = benchmark_claims(tidy, benchmark_slowdown(tidy)).set_index(["claim", "scope"])
    slowdown = claims.loc[("spearman_allocation", "allreduce, ratio 0.5")]
    assert (slowdown["value"], slowdown["meets"]) == (pytest.approx(-1.0), False)
    added = claims.loc[("spearman_allocation_added_time", "allreduce, ratio 0.5")]
    # 380, 720, 1360 us: rising, and no target of its own.
    assert added["value"] == pytest.approx(1.0) and added["meets"] is None
    assert added["detail"].endswith("over 3 allocations, p = 0.167")


def _sweep_point(data, allocation, slowdown, perturbation="network", ratio=0.5, splits=32):
    """A point of 3 repetitions per split whose perturbed mean is ``slowdown`` % of
    the unperturbed one, each split with its own placement factor."""
    placement = data.lognormal(0, 0.3, size=(splits, 1))
    quiet = 100 * placement * data.lognormal(0, 0.1, size=(splits, 3))
    perturbed = slowdown * placement * data.lognormal(0, 0.1, size=(splits, 3))
    rows = [
        (split, phase, rep, times[split, rep])
        for phase, times in ((0, quiet), (1, perturbed))
        for split in range(splits)
        for rep in range(3)
    ]
    table = pd.DataFrame(rows, columns=["split", "perturbed", "rep", "time_us"])
    return table.assign(
        collective="allreduce", ratio=ratio, allocation=allocation, perturbation=perturbation
    )


def _allocation_sweep(data, slowdowns, *controls):
    """Fig. 5's points, one per allocation: slowdown; then ``controls``."""
    return pd.concat([*(_sweep_point(data, n, s) for n, s in slowdowns.items()), *controls])


def test_allocation_steps_compare_consecutive_allocations_of_the_network_sweep():
    data = np.random.default_rng(17)
    tidy = _allocation_sweep(
        data,
        {4: 200.0, 6: 210.0, 8: 400.0},
        # Controls are not steps of the sweep, whatever their slowdowns.
        _sweep_point(data, 8, 900.0, perturbation="cpu"),
        _sweep_point(data, 8, 100.0, ratio=0.0),
    )
    steps = allocation_steps(tidy)
    assert steps[["collective", "ratio", "smaller", "larger"]].values.tolist() == [
        ["allreduce", 0.5, 4, 6],
        ["allreduce", 0.5, 6, 8],
        ["allreduce", 0.5, 4, 8],
    ]
    rise = steps.iloc[1]
    assert rise["slowdown_smaller_pct"] == pytest.approx(210, rel=0.1)
    assert rise["slowdown_larger_pct"] == pytest.approx(400, rel=0.1)
    # Nearly doubled: no resample of the larger point falls below the smaller's.
    assert rise["p_not_larger"] == 1 / BOOTSTRAP_RESAMPLES
    claims = benchmark_claims(tidy, benchmark_slowdown(tidy)).set_index(["claim", "scope"])
    step = claims.loc[("allocation_step", "allreduce, ratio 0.5, 6 to 8 nodes")]
    assert step["value"] == pytest.approx(
        rise["slowdown_larger_pct"] - rise["slowdown_smaller_pct"]
    )
    assert step["meets"] is None and "bootstrap p = 0.0005" in step["detail"]
    rise = claims.loc[("allocation_rise", "allreduce, ratio 0.5, 4 to 8 nodes")]
    assert (rise["value"], rise["meets"]) == (1 / BOOTSTRAP_RESAMPLES, True)


def test_a_sweep_that_does_not_rise_from_end_to_end_fails_its_claim():
    tidy = _allocation_sweep(np.random.default_rng(5), {4: 300.0, 6: 400.0, 8: 290.0})
    claims = benchmark_claims(tidy, benchmark_slowdown(tidy)).set_index(["claim", "scope"])
    rise = claims.loc[("allocation_rise", "allreduce, ratio 0.5, 4 to 8 nodes")]
    assert rise["value"] > 0.05 and rise["meets"] is False
    ends = allocation_steps(tidy).iloc[-1]
    assert (ends["smaller"], ends["larger"]) == (4, 8)
    assert rise["value"] == ends["p_not_larger"]
    expected = f"({ends['slowdown_larger_pct']:,.0f} against {ends['slowdown_smaller_pct']:,.0f} %)"
    assert rise["detail"].endswith(expected)


def test_allocation_step_p_value_is_below_5_percent_in_5_percent_of_ties():
    """Two allocations with the same true slowdown (200 %), 150 experiments: the
    one-sided p falls below 0.05 in about 5 % of them (binomial sd 1.8 %)."""
    data = np.random.default_rng(3)
    p = [
        allocation_steps(
            pd.concat([_sweep_point(data, 4, 200.0), _sweep_point(data, 6, 200.0)]), seed=i
        )["p_not_larger"].iloc[0]
        for i in range(150)
    ]
    assert 0.01 <= np.mean(np.array(p) < 0.05) <= 0.11


def test_parse_collvsnoise_reads_exponents_and_the_papers_ratio():
    # Fig. 2 of the paper: 8 processes, 3 in the application communicator, 5 perturbing.
    table = parse_collvsnoise(
        "# Info: noise\n# acc: 8 3 8 :: 1.0e+03 (9.5e2), 1500 (1400.5)\nnot a summary\n"
    )
    assert table.to_dict("records") == [
        {
            "allocation": 8,
            "application_ranks": 3,
            "ratio": 0.625,
            "size_bytes": 8,
            # Netgauge prints the time of 10 back-to-back collectives.
            "unperturbed_mean_us": 100.0,
            "unperturbed_median_us": 95.0,
            "perturbed_mean_us": 150.0,
            "perturbed_median_us": 140.05,
        }
    ]


def test_noise_rounds_half_perturbers_up():
    # noise perturbs lround(ratio x ranks): 2.5 -> 3 of 10 ranks, 0.5 -> 1 of 4.
    assert application_sizes(10, [0.25]) == [7]
    assert application_sizes(4, [0.125]) == [3]
    assert application_sizes(8, [0.75, 0.25, 0.5, 0.5]) == [2, 4, 6]


def test_size_problems_name_both_netgauge_limits():
    # 8 ranks at 1/4 and 3/8: application sizes 6 and 5, 3 perturbing ranks.
    assert size_problems(8, [0.25, 0.375]) == [
        "application communicator sizes [5, 6] (of 8 ranks) mix odd and even, "
        "but Netgauge steps the size by 2",
        "perturbing ranks [3] (of 8) are odd, but Netgauge pairs them",
    ]


def _ours(rows):
    return pd.DataFrame(
        rows,
        columns=[
            "collective",
            "ratio",
            "allocation",
            "unperturbed_mean_us",
            "perturbed_mean_us",
            "slowdown_pct",
        ],
    )


def _netgauge(rows):
    return pd.DataFrame(
        rows,
        columns=[
            "allocation",
            "application_ranks",
            "ratio",
            "unperturbed_mean_us",
            "perturbed_mean_us",
        ],
    )


def test_comparison_pairs_allreduce_at_the_same_split():
    ours = _ours(
        [
            ("allreduce", 0.5, 8, 100.0, 150.0, 150.0),
            ("allreduce", 0.5, 4, 80.0, 100.0, 125.0),
            ("bcast", 0.25, 8, 50.0, 60.0, 120.0),
        ]
    )
    theirs = _netgauge(
        [
            (8, 4, 0.5, 200.0, 260.0),
            # Same ratio, another allocation: no partner in ours.
            (16, 8, 0.5, 10.0, 20.0),
            # bcast is not compared.
            (8, 6, 0.25, 10.0, 20.0),
        ]
    )
    table = comparison(ours, theirs, 1 << 20)
    assert table.to_dict("records") == [
        {
            "allocation": 8,
            "ratio": 0.5,
            "netnoise_unperturbed_mean_us": 100.0,
            "netnoise_perturbed_mean_us": 150.0,
            "netnoise_slowdown_pct": 150.0,
            "netnoise_perturb_bytes": 1 << 20,
            "netgauge_unperturbed_mean_us": 200.0,
            "netgauge_perturbed_mean_us": 260.0,
            "netgauge_slowdown_pct": pytest.approx(130.0),
            "netgauge_perturb_bytes": PERTURB_BYTES,
            "netgauge_cpu_mean_runnable": pytest.approx(float("nan"), nan_ok=True),
            "netgauge_cpu_saturated": pytest.approx(float("nan"), nan_ok=True),
        }
    ]
    assert PERTURB_BYTES == 10 * 1024 * 1024


def test_comparison_pairs_a_rounded_ratio_with_the_split_netgauge_ran():
    # Ratio 0.3 of 12 ranks: noise perturbs lround(3.6) = 4 ranks, Netgauge's
    # 8-rank application communicator leaves the same 4 (its ratio 1/3).
    ours = _ours([("allreduce", 0.3, 12, 100.0, 120.0, 120.0)])
    theirs = _netgauge([(12, 8, 4 / 12, 100.0, 110.0)])
    table = comparison(ours, theirs, 1024)
    assert table["ratio"].tolist() == [pytest.approx(1 / 3)]
    assert table["netnoise_slowdown_pct"].tolist() == [120.0]
    assert table["netgauge_slowdown_pct"].tolist() == [pytest.approx(110.0)]


def test_comparison_without_common_split_is_empty():
    ours = _ours([("allreduce", 0.5, 8, 100.0, 150.0, 150.0)])
    assert comparison(ours, _netgauge([(8, 6, 0.25, 1.0, 2.0)]), 1024).empty
    assert comparison(ours.iloc[0:0], _netgauge([(8, 4, 0.5, 1.0, 2.0)]), 1024).empty


def test_claims_give_the_share_of_the_added_time_the_shared_links_make():
    """The perturbation adds 40 us a call (100 to 140 us); on one switch the same
    traffic adds 10 us (100 to 110): the shared links make three quarters."""
    tidy = pd.concat(
        [
            _tidy("allreduce", 0.0, 8, [100.0] * 3, [100.0, 101.0, 99.0], "network"),
            _tidy("allreduce", 0.5, 8, [100.0] * 3, [139.0, 140.0, 141.0], "network"),
            _tidy("allreduce", 0.5, 8, [100.0] * 3, [109.0, 110.0, 111.0], "unshared"),
        ]
    )
    claims = benchmark_claims(tidy, benchmark_slowdown(tidy)).set_index(["claim", "scope"])
    share = claims.loc[("shared_link_share_of_added_time", "allreduce, ratio 0.5, 8 nodes")]
    assert share["value"] == pytest.approx(0.75)
    assert share["detail"] == "adds 40 us a call; the same traffic on no shared link adds 10 us"
    beats = claims.loc[("beats_unshared_control", "every point")]
    assert beats["detail"] == "share of 1 points with Mann-Whitney p < 0.05; largest p = 0.05"
