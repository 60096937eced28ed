"""The M/G/1 view of a switch (seed 000, Sec. IV-B) and the queue-model prediction (Sec. V-B).

A switch is an M/G/1 queue: packets arrive at rate λ, are served at rate µ
with service-time variance Var(S). The Pollaczek-Khinchine formula gives the
mean time W a packet spends in the switch (eq. 1):

    W = (ρ + λ µ Var(S)) / (2 (µ − λ)) + 1/µ,     ρ = λ/µ,

and solved for λ (eq. 3; the extracted text garbles it, this is the algebra):

    λ = (2 − 2 W µ) / (−2 W + 1/µ − µ Var(S)).

µ comes from the minimum latency on an idle switch, Var(S) from the spread of
idle latencies, W from the mean ImpactB latency while a component runs.

Idle service statistics are robust: a handful of idle samples delayed by the
host (a scheduler hiccup, the first exchange of a connection) are no service
time of the switch, yet they would set the variance on their own (on the
testbed, 10 of 400 idle samples of 0.3-2 ms, in pairs at the same instants,
beside a median of 26 µs multiplied it by ~200). Samples beyond Tukey's
far-out fences of the log latencies, more than 3 interquartile ranges outside
the quartiles, are dropped before µ and Var(S) are read. Log scale, because
latencies are positive and skewed: the fences then scale with the latencies
and leave a service time's own right tail nearly alone (they drop about 2 in
a million samples of a log-normal service time, about 1 in 10 000 of 10 µs
plus an exponential of mean 5 µs).

The mapping p_A from a partner's utilisation to A's degradation is the
isotonic (non-decreasing) regression of A's CompressionB points, anchored at
zero degradation for an idle switch: more load on a queue never helps, so a
point running the other way is noise, and the curve pools it with its
neighbours instead of bending through it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.isotonic import IsotonicRegression

from netnoise.studies.impact_compression import ci

# Utilisation stays below 1: at ρ → 1 the waiting time diverges.
MAX_UTILIZATION = 0.999
# Tukey's "far out": more than this many interquartile ranges beyond a quartile.
FAR_OUT_IQR = 3.0


def arrival_rate(mean_latency, service_rate, service_var):
    """λ from eq. 3 (same units as 1/latency); arrays broadcast."""
    w = np.asarray(mean_latency, dtype=float)
    mu = np.asarray(service_rate, dtype=float)
    var = np.asarray(service_var, dtype=float)
    return (2 - 2 * w * mu) / (-2 * w + 1 / mu - mu * var)


def utilization(mean_latency, service_rate, service_var):
    """ρ = λ/µ from eq. 3, clipped to [0, MAX_UTILIZATION].

    A mean latency at or below the pure service time 1/µ means an idle switch
    (ρ = 0); the clip only absorbs measurement noise around that point.
    """
    rho = arrival_rate(mean_latency, service_rate, service_var) / np.asarray(service_rate)
    return np.clip(rho, 0.0, MAX_UTILIZATION)


def mean_time_in_system(arrival, service_rate, service_var):
    """W from eq. 1, the forward direction (used to test the inversion)."""
    lam = np.asarray(arrival, dtype=float)
    mu = float(service_rate)
    rho = lam / mu
    return (rho + lam * mu * float(service_var)) / (2 * (mu - lam)) + 1 / mu


def far_out(latency: np.ndarray) -> np.ndarray:
    """True where a (positive) latency lies beyond Tukey's far-out fences of the log
    latencies of its row (last axis)."""
    log = np.log(latency)
    q1, q3 = np.quantile(log, [0.25, 0.75], axis=-1, keepdims=True)
    reach = FAR_OUT_IQR * (q3 - q1)
    return (log < q1 - reach) | (log > q3 + reach)


def _service(idle_latency: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(µ, Var(S)) along the last axis, from the idle latencies inside the fences."""
    kept = np.where(far_out(idle_latency), np.nan, idle_latency)
    return 1.0 / np.nanmin(kept, axis=-1), np.nanvar(kept, axis=-1, ddof=1)


def idle_service(idle_latency: pd.Series) -> tuple[float, float]:
    """(µ, Var(S)) of the idle switch: µ from the minimum latency, as the paper, and
    Var(S) from the spread, both of the samples inside Tukey's far-out fences."""
    values = idle_latency.to_numpy(dtype=float)
    if len(values) < 2:
        raise ValueError("the idle switch needs at least two latency samples")
    if (values <= 0).any():
        raise ValueError("idle latencies must be positive")
    mu, var = _service(values)
    return float(mu), float(var)


def _latencies(impact: pd.DataFrame, idle: str) -> dict[str, np.ndarray]:
    if idle not in set(impact["component"]):
        raise ValueError(f"the impact table has no {idle!r} component (the idle switch)")
    return {c: g.to_numpy(float) for c, g in impact.groupby("component")["latency_us"]}


def utilizations(impact: pd.DataFrame, idle: str = "idle") -> pd.DataFrame:
    """Queue utilisation of every component of a tidy impact table.

    ``impact`` has one row per ImpactB sample: ``component``, ``latency_us``;
    every sample must come from the timed region of its co-run
    (analysis.tidy_impact). Returns ``component, mean_latency_us, utilization``.
    """
    latencies = _latencies(impact, idle)
    mu, var = idle_service(pd.Series(latencies[idle]))
    means = np.array([latency.mean() for latency in latencies.values()])
    return pd.DataFrame(
        {
            "component": list(latencies),
            "mean_latency_us": means,
            "utilization": utilization(means, mu, var),
        }
    )


def utilization_intervals(impact: pd.DataFrame, idle: str = "idle") -> pd.DataFrame:
    """``component, utilization_ci_low, utilization_ci_high``: the 95 % bootstrap
    interval of every component's utilisation (ci).

    One set of resamples of the idle latencies gives µ and Var(S) of every
    replicate; each component's latencies are resampled on their own for its
    mean W (the idle component's own replicates use the idle resamples for
    both). A component with fewer than two samples has no interval.
    """
    latencies = _latencies(impact, idle)
    idle_resamples = ci.resamples(latencies[idle], ci.generator(idle))
    mu, var = _service(idle_resamples)
    rows = []
    for component, latency in latencies.items():
        if component == idle:
            means = idle_resamples.mean(axis=-1)
        elif len(latency) >= 2:
            means = ci.resamples(latency, ci.generator(component)).mean(axis=-1)
        else:
            means = None
        low, high = (
            ci.percentile_interval(utilization(means, mu, var))
            if means is not None
            else (np.nan, np.nan)
        )
        rows.append(
            {"component": component, "utilization_ci_low": low, "utilization_ci_high": high}
        )
    return pd.DataFrame(rows)


def degradation_points(
    degradation: pd.DataFrame, config_utilization: pd.Series, application: str
) -> tuple[np.ndarray, np.ndarray]:
    """(utilisation, degradation) of one application's CompressionB points, sorted by
    utilisation; configs measured more than once, or at the same utilisation (e.g.
    every saturating one at MAX_UTILIZATION), are averaged.

    ``degradation`` rows: ``application, config, degradation``.
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


def degradation_curve(
    degradation: pd.DataFrame, config_utilization: pd.Series, application: str
) -> tuple[np.ndarray, np.ndarray]:
    """p_A: the breakpoints (utilisation, degradation) of one application's monotone
    curve, starting at (0, 0).

    The isotonic regression of the points of degradation_points and the anchor
    (0, 0), bounded below by 0: a load can slow an application down, never
    speed it up, so the curve starts at zero degradation for an idle switch and
    never falls. Between breakpoints the curve is linear (predict).
    """
    u, d = degradation_points(degradation, config_utilization, application)
    x, y = np.concatenate([[0.0], u]), np.concatenate([[0.0], d])
    fit = IsotonicRegression(y_min=0.0, increasing=True, out_of_bounds="clip").fit(x, y)
    return fit.X_thresholds_, fit.y_thresholds_


def discordant_pairs(degradation: pd.DataFrame, config_utilization: pd.Series) -> tuple[int, int]:
    """(wrong way, all): of every pair of one application's CompressionB points at
    different utilisations, how many show less degradation at the higher one,
    summed over the applications."""
    wrong = pairs = 0
    for app in sorted(degradation["application"].unique()):
        _, d = degradation_points(degradation, config_utilization, app)
        earlier, later = np.triu_indices(len(d), k=1)
        wrong += int(np.sum(d[later] < d[earlier]))
        pairs += len(later)
    return wrong, pairs


def predict(
    impact: pd.DataFrame, degradation: pd.DataFrame, pairs: pd.DataFrame, idle: str = "idle"
) -> pd.DataFrame:
    """Predict the slowdown of A beside B as p_A(U_B) (Sec. V-B).

    ``pairs`` rows: ``application`` (A), ``partner`` (B); every application and
    partner must be an impact component, every compression config too.
    p_A is the monotone curve of degradation_curve, linear between its
    breakpoints and constant beyond the highest measured utilisation.
    """
    u = utilizations(impact, idle).set_index("component")["utilization"]
    curves = {}
    rows = []
    for app, partner in pairs[["application", "partner"]].itertuples(index=False):
        if partner not in u.index:
            raise ValueError(f"no impact measurement of partner {partner!r}")
        if app not in curves:
            curves[app] = degradation_curve(degradation, u, app)
        xs, ys = curves[app]
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
