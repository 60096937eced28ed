"""Seed 001's headline claims judged on synthetic points, each on both sides of its target."""

from __future__ import annotations

import pandas as pd

from netnoise import verdicts as v
from netnoise.studies.network_noise.headline import headline_claims


def _points(slowdowns: dict[tuple[float, int], float], cpu: float, p_cpu: float) -> pd.DataFrame:
    rows = []
    for (ratio, allocation), pct in slowdowns.items():
        controlled = ratio > 0 and allocation == 8
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


GROWING = {(0.0, 8): 100, (0.25, 8): 140, (0.5, 8): 210, (0.5, 4): 150}
SIMULATION = pd.DataFrame(
    {
        "figure": ["fat_tree_size", "fat_tree_size"],
        "endpoints": [144, 1152],
        "slowdown_mean": [1.4, 1.7],
        "slowdown_mean_ci_low": [1.38, 1.68],
        "slowdown_mean_ci_high": [1.42, 1.72],
        "slowdown_runs": [100, 100],
    }
)


def _verdicts(frame: pd.DataFrame) -> dict[str, str]:
    return dict(zip(frame["claim_id"], frame["verdict"], strict=True))


def test_a_slowdown_beyond_the_cpu_only_control_is_reproduced():
    verdict = _verdicts(headline_claims(_points(GROWING, 105, 1e-6), SIMULATION))
    assert verdict == {
        "collective_factor_2": v.REPRODUCED,
        "rises_with_ratio": v.REPRODUCED,
        "rises_with_allocation": v.REPRODUCED,
        "simulated_growth_with_size": v.REPRODUCED,
    }


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


def test_a_small_or_flat_slowdown_is_not_reproduced():
    flat = {(0.0, 8): 100, (0.25, 8): 101, (0.5, 8): 101, (0.5, 4): 120}
    verdict = _verdicts(headline_claims(_points(flat, 100, 1e-6), None))
    assert verdict["collective_factor_2"] == v.NOT_REPRODUCED
    assert verdict["rises_with_allocation"] == v.NOT_REPRODUCED
    assert verdict["simulated_growth_with_size"] == v.NOT_MEASURABLE


def test_without_the_benchmark_its_claims_are_not_measurable():
    verdict = _verdicts(headline_claims(None, SIMULATION))
    assert verdict["collective_factor_2"] == v.NOT_MEASURABLE
    assert verdict["simulated_growth_with_size"] == v.REPRODUCED


def test_the_claims_words_name_the_targets_the_code_judges_by():
    from netnoise.studies.network_noise import headline

    assert f"≥ {headline.HALF_FACTOR_PCT:.3g} %" in headline.FACTOR_2.target
