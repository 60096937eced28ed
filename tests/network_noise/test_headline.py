"""Seed 001's headline claims judged on synthetic points, each on both sides of its band."""

from __future__ import annotations

import pandas as pd

from netnoise import verdicts as v
from netnoise.studies.network_noise.headline import headline_claims


def _points(slowdowns: dict[tuple[float, int], float], cpu: float, p_cpu: float) -> pd.DataFrame:
    rows = []
    for (ratio, allocation), pct in slowdowns.items():
        controlled = ratio > 0
        rows.append(
            {
                "collective": "allreduce",
                "ratio": ratio,
                "allocation": allocation,
                "perturbation": "network",
                "splits": 128,
                "slowdown_pct": pct,
                "slowdown_ci_low": pct - 5,
                "slowdown_ci_high": pct + 5,
                "ratio0_slowdown_pct": 100.0 if ratio > 0 else None,
                "p_vs_ratio0": 1e-9 if ratio > 0 else None,
                "cpu_slowdown_pct": cpu if controlled else None,
                "p_vs_cpu": p_cpu if controlled else None,
            }
        )
    return pd.DataFrame(rows)


#: Ratios 0 to 0.5 on 8 nodes, and ratio 0.5 on 2, 4 and 8 nodes.
GROWING = {
    (0.0, 8): 100,
    (0.25, 8): 150,
    (0.375, 8): 180,
    (0.5, 8): 210,
    (0.5, 2): 150,
    (0.5, 4): 180,
}


def _simulation(fat_trees: list[float], two_d: list[float], three_d: list[float]) -> pd.DataFrame:
    rows = [
        {
            "figure": "fat_tree_size",
            "topology": "xgft",
            "dimensions": None,
            "ratio": 0.5,
            "endpoints": e,
            "slowdown_mean": s,
        }
        for e, s in zip((144, 288, 576, 1152), fat_trees, strict=True)
    ]
    for dimensions, slowdowns, name in (
        (2.0, two_d, "torus:32x32"),
        (3.0, three_d, "torus:10x10x10"),
    ):
        rows += [
            {
                "figure": "torus_ratio",
                "topology": name,
                "dimensions": dimensions,
                "ratio": r,
                "endpoints": 1000,
                "slowdown_mean": s,
                "collective": "bcast",
            }
            for r, s in zip((0.1, 0.5, 0.9), slowdowns, strict=True)
        ]
    frame = pd.DataFrame(rows)
    return frame.assign(
        slowdown_mean_ci_low=frame["slowdown_mean"] - 0.02,
        slowdown_mean_ci_high=frame["slowdown_mean"] + 0.02,
        slowdown_runs=100,
    )


SIMULATION = _simulation([1.4, 1.5, 1.6, 1.7], [1.5, 4.0, 9.0], [1.3, 2.0, 3.0])


def _verdicts(frame: pd.DataFrame) -> dict[str, str]:
    return dict(zip(frame["claim_id"], frame["verdict"], strict=True))


def test_a_slowdown_beyond_the_cpu_only_control_is_reproduced():
    verdict = _verdicts(headline_claims(_points(GROWING, 105, 1e-6), SIMULATION))
    assert verdict == {
        "collective_factor_2": v.REPRODUCED,
        "rises_with_ratio": v.REPRODUCED,
        "rises_with_allocation": v.REPRODUCED,
        "torus_orders_of_magnitude": v.NOT_MEASURABLE,
        "simulated_growth_with_size": v.REPRODUCED,
        "torus_tree_up_to_12": v.REPRODUCED,
        "torus_3d_less_than_2d": v.REPRODUCED,
    }


def test_ten_times_the_papers_slowdown_is_not_the_papers_factor_of_2():
    huge = {**GROWING, (0.5, 8): 1100}
    claims = headline_claims(_points(huge, 105, 1e-6), SIMULATION).set_index("claim_id")
    assert claims.loc["collective_factor_2", "verdict"] == v.NOT_REPRODUCED
    assert "larger than the paper's" in claims.loc["collective_factor_2", "reason"]


def test_a_cpu_only_control_that_slows_it_as_much_refutes_every_benchmark_claim():
    claims = headline_claims(_points(GROWING, 212, 0.6), SIMULATION)
    verdict = _verdicts(claims)
    assert {verdict[c] for c in list(verdict)[:3]} == {v.NOT_REPRODUCED}
    assert "CPU-only control 212 % against" in claims["reason"].iloc[0]


def test_in_simulated_time_no_cpu_only_control_is_needed_but_on_cores_it_is():
    """Without a CPU-only control, a slowdown measured on real cores may be the
    cores'; one taken in simulated time (SimGrid) cannot be."""
    uncontrolled = _points(GROWING, 105, 1e-6).assign(cpu_slowdown_pct=None, p_vs_cpu=None)
    on_cores = _verdicts(headline_claims(uncontrolled.assign(clock="wall"), SIMULATION))
    assert on_cores["collective_factor_2"] == v.UNCONTROLLED
    assert _verdicts(headline_claims(uncontrolled, SIMULATION)) == on_cores
    simulated = _verdicts(headline_claims(uncontrolled.assign(clock="simulated"), SIMULATION))
    assert simulated["collective_factor_2"] == simulated["rises_with_ratio"] == v.REPRODUCED


def test_no_slowdown_at_the_top_ratio_cannot_rise_with_the_ratio():
    """The ratio-0 level stays in the trend, so a flat sweep is no rise, and the
    table holds no two rows that contradict each other."""
    flat = {
        (0.0, 8): 100,
        (0.25, 8): 100.5,
        (0.375, 8): 100.2,
        (0.5, 8): 100.3,
        (0.5, 2): 100,
        (0.5, 4): 100.1,
    }
    claims = headline_claims(_points(flat, 100, 0.5).assign(clock="simulated"), SIMULATION)
    verdict = _verdicts(claims)
    assert verdict["collective_factor_2"] == v.NOT_REPRODUCED
    assert verdict["rises_with_ratio"] == v.NOT_REPRODUCED
    assert v.contradictions(claims) == []


def test_a_falling_allocation_trend_is_not_reproduced_and_no_contradiction():
    """The allocation sweep has no unperturbed level, so a slowdown that
    shrinks with the allocation says nothing against the ratio trend's."""
    falling = {**GROWING, (0.5, 2): 260, (0.5, 4): 240}
    table = headline_claims(_points(falling, 105, 1e-6), SIMULATION)
    claims = table.set_index("claim_id")
    assert claims.loc["rises_with_allocation", "verdict"] == v.NOT_REPRODUCED
    assert claims.loc["rises_with_allocation", "reason"].startswith("falls:")
    assert claims.loc["rises_with_ratio", "verdict"] == v.REPRODUCED
    assert v.contradictions(table) == []


def test_a_three_dimensional_torus_hit_harder_than_a_two_dimensional_one_is_refuted():
    swapped = _simulation([1.4, 1.5, 1.6, 1.7], [1.3, 2.0, 3.0], [1.5, 4.0, 9.0])
    verdict = _verdicts(headline_claims(_points(GROWING, 105, 1e-6), swapped))
    assert verdict["torus_3d_less_than_2d"] == v.NOT_REPRODUCED
    assert verdict["torus_tree_up_to_12"] == v.REPRODUCED


def test_a_disabled_part_leaves_its_claims_not_measurable():
    verdict = _verdicts(headline_claims(None, None))
    assert set(verdict.values()) == {v.NOT_MEASURABLE}
    assert len(verdict) == 7


def test_a_benchmark_on_a_torus_is_judged_against_orders_of_magnitude():
    on_torus = _points(GROWING, 105, 1e-6).assign(topology="torus:8x8x8")
    claims = headline_claims(on_torus, SIMULATION).set_index("claim_id")
    assert claims.loc["torus_orders_of_magnitude", "verdict"] == v.NOT_REPRODUCED
    huge = _points({**GROWING, (0.5, 8): 50000}, 105, 1e-6).assign(topology="torus:8x8x8")
    claims = headline_claims(huge, SIMULATION).set_index("claim_id")
    assert claims.loc["torus_orders_of_magnitude", "verdict"] == v.REPRODUCED


def test_in_simulated_time_the_ratio_0_control_still_decides():
    """A simulated slowdown no larger than at ratio 0 is not the perturbation's."""
    points = _points(GROWING, 105, 1e-6).assign(
        cpu_slowdown_pct=None, p_vs_cpu=None, clock="simulated", p_vs_ratio0=0.6
    )
    points.loc[points["ratio"] == 0, "p_vs_ratio0"] = None
    row = headline_claims(points, SIMULATION).set_index("claim_id").loc["collective_factor_2"]
    assert row["verdict"] == v.NOT_REPRODUCED
    assert "ratio-0 control" in row["reason"]
