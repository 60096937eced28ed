"""The M/G/1 view of a switch (seed 000, Sec. IV-B) and the queue-model prediction (Sec. V-B).

A switch is an M/G/1 queue: packets arrive at rate λ, are served at rate µ
with service-time variance Var(S). The Pollaczek-Khinchine formula gives the
mean time W a packet spends in the switch (eq. 1):

    W = (ρ + λ µ Var(S)) / (2 (µ − λ)) + 1/µ,     ρ = λ/µ,

and solved for λ (eq. 3; the extracted text garbles it, this is the algebra):

    λ = (2 − 2 W µ) / (−2 W + 1/µ − µ Var(S)).

µ comes from the minimum latency on an idle switch, Var(S) from the spread of
idle latencies, W from the mean ImpactB latency while a component runs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

# Utilisation stays below 1: at ρ → 1 the waiting time diverges.
MAX_UTILIZATION = 0.999


def arrival_rate(mean_latency, service_rate, service_var):
    """λ from eq. 3 (same units as 1/latency)."""
    w = np.asarray(mean_latency, dtype=float)
    mu = float(service_rate)
    return (2 - 2 * w * mu) / (-2 * w + 1 / mu - mu * float(service_var))


def utilization(mean_latency, service_rate, service_var):
    """ρ = λ/µ from eq. 3, clipped to [0, MAX_UTILIZATION].

    A mean latency at or below the pure service time 1/µ means an idle switch
    (ρ = 0); the clip only absorbs measurement noise around that point.
    """
    rho = arrival_rate(mean_latency, service_rate, service_var) / float(service_rate)
    return np.clip(rho, 0.0, MAX_UTILIZATION)


def mean_time_in_system(arrival, service_rate, service_var):
    """W from eq. 1, the forward direction (used to test the inversion)."""
    lam = np.asarray(arrival, dtype=float)
    mu = float(service_rate)
    rho = lam / mu
    return (rho + lam * mu * float(service_var)) / (2 * (mu - lam)) + 1 / mu


def idle_service(idle_latency: pd.Series) -> tuple[float, float]:
    """(µ, Var(S)) of the idle switch: µ from the minimum latency, as the paper."""
    values = idle_latency.to_numpy(dtype=float)
    if len(values) < 2:
        raise ValueError("the idle switch needs at least two latency samples")
    return 1.0 / values.min(), float(values.var(ddof=1))


def utilizations(impact: pd.DataFrame, idle: str = "idle") -> pd.DataFrame:
    """Queue utilisation of every component of a tidy impact table.

    ``impact`` has one row per ImpactB sample: ``component``, ``latency_us``.
    Returns ``component, mean_latency_us, utilization``.
    """
    if idle not in set(impact["component"]):
        raise ValueError(f"the impact table has no {idle!r} component (the idle switch)")
    mu, var = idle_service(impact.loc[impact["component"] == idle, "latency_us"])
    means = impact.groupby("component", sort=True)["latency_us"].mean()
    return pd.DataFrame(
        {
            "component": means.index,
            "mean_latency_us": means.to_numpy(),
            "utilization": utilization(means.to_numpy(), mu, var),
        }
    )


def degradation_curve(
    degradation: pd.DataFrame, config_utilization: pd.Series, application: str
) -> tuple[np.ndarray, np.ndarray]:
    """p_A: (utilisation, degradation) points of one application, sorted by utilisation.

    ``degradation`` rows: ``application, config, degradation``; configs measured
    more than once are averaged.
    """
    rows = degradation[degradation["application"] == application]
    if rows.empty:
        raise ValueError(f"no compression measurements for application {application!r}")
    per_config = rows.groupby("config")["degradation"].mean()
    missing = set(per_config.index) - set(config_utilization.index)
    if missing:
        raise ValueError(f"no utilisation for compression config(s) {sorted(missing)}")
    points = pd.DataFrame(
        {"u": config_utilization.loc[per_config.index].to_numpy(), "d": per_config.to_numpy()}
    )
    points = points.groupby("u", as_index=False)["d"].mean().sort_values("u")
    return points["u"].to_numpy(), points["d"].to_numpy()


def predict(
    impact: pd.DataFrame, degradation: pd.DataFrame, pairs: pd.DataFrame, idle: str = "idle"
) -> pd.DataFrame:
    """Predict the slowdown of A beside B as p_A(U_B) (Sec. V-B).

    ``pairs`` rows: ``application`` (A), ``partner`` (B); every application and
    partner must be an impact component, every compression config too.
    Interpolation is piecewise linear in utilisation, constant beyond the
    measured range.
    """
    u = utilizations(impact, idle).set_index("component")["utilization"]
    rows = []
    for app, partner in pairs[["application", "partner"]].itertuples(index=False):
        if partner not in u.index:
            raise ValueError(f"no impact measurement of partner {partner!r}")
        xs, ys = degradation_curve(degradation, u, app)
        rows.append(
            {
                "application": app,
                "partner": partner,
                "method": "queue",
                "partner_utilization": float(u[partner]),
                "predicted": float(np.interp(u[partner], xs, ys)),
            }
        )
    return pd.DataFrame(rows)
