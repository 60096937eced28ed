"""Seed 000 models on synthetic data whose answer is known."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from netnoise.studies.impact_compression import lookup, queue


def mg1_mean_time(lam: float, service: np.ndarray, rng: np.random.Generator) -> float:
    """Mean time in system of an M/G/1 queue simulated with Lindley's recursion."""
    gaps = rng.exponential(1 / lam, size=len(service))
    wait = np.zeros(len(service))
    for i in range(1, len(service)):
        wait[i] = max(0.0, wait[i - 1] + service[i - 1] - gaps[i])
    return float((wait + service).mean())


@pytest.mark.parametrize("rho", [0.1, 0.4, 0.7, 0.85])
def test_pollaczek_khinchine_inversion_recovers_utilization_of_a_simulated_queue(rho):
    rng = np.random.default_rng(1)
    # Service: a fixed 1.0 plus a gamma tail, so Var(S) > 0 and min(S) ~ 1/mu.
    service = 1.0 + rng.gamma(2.0, 0.05, size=200_000)
    mu, var = 1 / service.mean(), service.var()
    w = mg1_mean_time(rho * mu, service, rng)
    assert queue.utilization(w, mu, var) == pytest.approx(rho, abs=0.03)


def test_inversion_is_exact_against_the_forward_formula():
    mu, var = 2.0, 0.01
    lam = np.linspace(0.0, 1.9, 20)
    w = queue.mean_time_in_system(lam, mu, var)
    assert queue.arrival_rate(w, mu, var) == pytest.approx(lam)
    assert queue.utilization(1 / mu * 0.9, mu, var) == 0.0  # faster than service: idle


def synthetic_study():
    """Impact samples of idle, 3 compression configs and 2 apps; degradations linear in ρ.

    µ and Var(S) are what the method reads off the idle samples (µ from their
    minimum), and every other component's latencies have the mean eq. 1 gives
    for its utilisation, so utilisations are recovered exactly."""
    rng = np.random.default_rng(7)
    idle = 1.0 + rng.gamma(1.0, 0.05, size=4000)
    mu, var = queue.idle_service(pd.Series(idle))
    rows = [{"component": "idle", "latency_us": v} for v in idle]

    def component(name, rho):
        s = 1.0 + rng.gamma(1.0, 0.05, size=4000)
        w = queue.mean_time_in_system(rho * mu, mu, var)
        rows.extend({"component": name, "latency_us": v} for v in s - s.mean() + w)

    configs = {"c_low": 0.2, "c_mid": 0.5, "c_high": 0.8}
    for name, rho in configs.items():
        component(name, rho)
    component("appA", 0.5)
    component("appB", 0.65)
    impact = pd.DataFrame(rows)
    # Truth: A degrades by 100 % x ρ of its partner, B by 20 % x ρ.
    slope = {"appA": 1.0, "appB": 0.2}
    degradation = pd.DataFrame(
        [
            {"application": a, "config": c, "degradation": slope[a] * rho}
            for a in slope
            for c, rho in configs.items()
        ]
    )
    return impact, degradation, slope


def test_queue_model_predicts_the_known_slowdowns():
    impact, degradation, slope = synthetic_study()
    pairs = pd.DataFrame(
        {"application": ["appA", "appA", "appB"], "partner": ["appB", "appA", "appA"]}
    )
    predicted = queue.predict(impact, degradation, pairs).set_index(["application", "partner"])
    u = queue.utilizations(impact).set_index("component")["utilization"]
    assert u[["c_low", "c_mid", "c_high", "appA", "appB"]].tolist() == pytest.approx(
        [0.2, 0.5, 0.8, 0.5, 0.65]
    )
    # The idle switch's mean exceeds its minimum, so the method reads it as lightly used.
    assert 0 < u["idle"] < u["c_low"]
    assert predicted.loc[("appA", "appB"), "predicted"] == pytest.approx(slope["appA"] * 0.65)
    assert predicted.loc[("appA", "appA"), "predicted"] == pytest.approx(0.5)
    assert predicted.loc[("appB", "appA"), "predicted"] == pytest.approx(0.2 * 0.5)


@pytest.mark.parametrize("method", lookup.METHODS)
def test_lookup_methods_pick_the_config_that_looks_like_the_partner(method):
    impact, degradation, _ = synthetic_study()
    pairs = pd.DataFrame({"application": ["appB", "appA"], "partner": ["appA", "appA"]})
    out = lookup.predict(impact, degradation, pairs, method)
    # appA impacts like c_mid (both at ρ = 0.5): every method must find it.
    assert out["config"].tolist() == ["c_mid", "c_mid"]
    assert out["predicted"].tolist() == pytest.approx([0.2 * 0.5, 1.0 * 0.5])


def test_average_stdev_without_overlap_falls_back_to_the_closest_mean():
    impact = pd.DataFrame(
        {
            "component": ["b"] * 3 + ["c1"] * 3 + ["c2"] * 3,
            "latency_us": [10, 10.1, 9.9, 20, 20.1, 19.9, 30, 30.1, 29.9],
        }
    )
    assert lookup.choose_configs(impact, ["b"], ["c1", "c2"], "average_stdev") == {"b": "c1"}


def test_bad_inputs_are_named():
    impact, degradation, _ = synthetic_study()
    with pytest.raises(ValueError, match="use one of average, average_stdev, pdf"):
        lookup.choose_configs(impact, ["appA"], ["c_low"], "median")
    pairs = pd.DataFrame({"application": ["appA"], "partner": ["ghost"]})
    with pytest.raises(ValueError, match="ghost"):
        queue.predict(impact, degradation, pairs)
    with pytest.raises(ValueError, match="no 'idle' component"):
        queue.utilizations(impact[impact.component != "idle"])


def test_idle_service_ignores_far_out_host_delays():
    """Service times 20 µs + gamma(4, 2 µs): Var(S) = 4 x 2^2 = 16 µs^2, min near 20 µs.
    Ten host delays of 0.3-2 ms (as on the testbed) would multiply the variance by
    ~100; the fences drop them and nothing of the service time itself."""
    rng = np.random.default_rng(3)
    service = 20 + rng.gamma(4.0, 2.0, size=4000)
    delays = np.array([300, 310, 450, 460, 870, 880, 2020, 2030, 290, 300.0])
    latency = pd.Series(np.concatenate([service, delays]))
    mu, var = queue.idle_service(latency)
    assert var == pytest.approx(16, rel=0.08)
    assert mu == 1 / service.min()
    assert latency.var() > 100 * 16
    assert queue.far_out(latency.to_numpy()).sum() == len(delays)


def test_far_out_keeps_the_tail_of_a_skewed_service_time():
    """10 µs + an exponential of mean 5 µs: the upper fence lies near 55 µs, beyond
    which the exponential has e^-9 ~ 1.2e-4 of its mass."""
    rng = np.random.default_rng(4)
    exponential = 10 + rng.exponential(5.0, size=10_000)
    assert queue.far_out(exponential).sum() <= 3
    _, var = queue.idle_service(pd.Series(exponential))
    assert var == pytest.approx(exponential.var(ddof=1), rel=0.02)
    with pytest.raises(ValueError, match="idle latencies must be positive"):
        queue.idle_service(pd.Series([0.0, 1.0, 2.0]))


def test_utilization_intervals_cover_the_estimate_and_narrow_with_samples():
    impact, _, _ = synthetic_study()
    samples = impact.groupby("component").head(1000)
    u = queue.utilizations(samples).set_index("component")["utilization"]
    wide = queue.utilization_intervals(samples).set_index("component")
    assert (wide["utilization_ci_low"] <= u).all()
    assert (u <= wide["utilization_ci_high"]).all()
    # A quarter of the samples: the intervals about twice as wide.
    quarter = samples.groupby("component").head(250)
    quartered = queue.utilization_intervals(quarter).set_index("component")
    width = wide["utilization_ci_high"] - wide["utilization_ci_low"]
    quarter_width = quartered["utilization_ci_high"] - quartered["utilization_ci_low"]
    ratio = (quarter_width / width)[["c_low", "c_mid", "c_high", "appA"]]
    assert ratio.to_numpy() == pytest.approx([2, 2, 2, 2], rel=0.3)
    # Deterministic: the same table gives the same intervals.
    pd.testing.assert_frame_equal(queue.utilization_intervals(samples).set_index("component"), wide)


def test_degradation_curve_is_monotone_and_anchored_at_zero():
    """Truth: d = 0.5 u^2. Noisy points run the wrong way in places; the isotonic
    curve never falls, starts at (0, 0), and lies closer to the truth."""
    rng = np.random.default_rng(5)
    u = np.linspace(0.1, 0.95, 12)
    truth = 0.5 * u**2
    noisy = truth + rng.normal(0, 0.04, size=u.size)
    configs = [f"c{i}" for i in range(u.size)]
    degradation = pd.DataFrame({"application": "a", "config": configs, "degradation": noisy})
    utilization = pd.Series(u, index=configs)
    wrong, pairs = queue.discordant_pairs(degradation, utilization)
    assert pairs == 66 and wrong > 0  # the noise makes some pairs run the wrong way
    xs, ys = queue.degradation_curve(degradation, utilization, "a")
    assert (xs[0], ys[0]) == (0.0, 0.0)
    assert np.all(np.diff(ys) >= 0)
    fitted = np.interp(u, xs, ys)
    assert np.sqrt(np.mean((fitted - truth) ** 2)) < np.sqrt(np.mean((noisy - truth) ** 2))
    assert queue.discordant_pairs(degradation.assign(degradation=truth), utilization) == (0, 66)


def test_degradation_curve_pools_a_point_running_the_wrong_way():
    utilization = pd.Series([0.2, 0.4, 0.6, 0.8], index=["c1", "c2", "c3", "c4"])
    degradation = pd.DataFrame(
        {
            "application": "a",
            "config": ["c1", "c2", "c3", "c4"],
            # c1 below zero (noise around an unaffected application), c3 below c2.
            "degradation": [-0.02, 0.30, 0.10, 0.50],
        }
    )
    xs, ys = queue.degradation_curve(degradation, utilization, "a")
    # (0, 0) and c1 pool to -0.01, bounded to 0; c2 and c3 pool to their mean 0.2.
    assert np.interp([0.0, 0.2, 0.4, 0.6, 0.8], xs, ys) == pytest.approx([0, 0, 0.2, 0.2, 0.5])
    assert queue.discordant_pairs(degradation, utilization) == (1, 6)
