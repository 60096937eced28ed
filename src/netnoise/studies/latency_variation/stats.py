"""The statistics of seed 004 (Sec. 6–7): normality, Mann–Whitney U, correlations.

- Sec. 6 tests the packet- and library-level latencies for normality with the
  Kolmogorov–Smirnov test ("p=0.0, α = .05") and, finding them non-normal,
  compares distributions with the Mann–Whitney U test; application runtimes
  pass as normal (:func:`ks_normality`, :func:`mann_whitney`).
- Sec. 7 correlates the runtime of every NPB application with the mean and
  with the standard deviation of the injected latency (Pearson's r,
  :func:`pearson`) and tests ``r_mean < r_std`` (Table 4,
  :func:`correlation_table`): with Steiger's Z as the primary test, the
  paper's Fisher z beside it, and the power of Steiger's test at the
  measured effect (:func:`steiger_power`, :func:`steiger_sample_size`).
  Where mean and spread vary independently, the slopes of runtime on both
  together (:func:`two_slopes`) say what each µs of either costs, which the
  correlations mix with the ranges the design gives them.

Which Fisher test. The paper prints (the extracted formulas are clean here)

    p = (1/√(2π)) ∫_{−∞}^{z} e^{−t²/2} dt = Φ(z),
    z = (arctanh(r_mean) − arctanh(r_std)) / √(2/(n − 3)),

the test for two correlations from *independent* samples of equal size n
(``√(1/(n₁−3) + 1/(n₂−3))`` with n₁ = n₂ = n), with the one-sided lower-tail
p-value Φ(z) (alternative ρ_mean < ρ_std). Table 4 is consistent with it: with
r rounded to 0.01 as printed, one common n between about 930 and 1040 runs
per application reproduces all five p-values (tests/latency_variation/test_stats.py
checks n = 1000). The paper does not state n.

Both correlations are computed on the same n runs and share the runtime
variable, so they are dependent; the independent form ignores the
correlation between latency mean and latency std across the runs. The
paper's form is :func:`fisher_z_independent` and is what Table 4's
"Significant?" column reproduces; the dependent-correlation tests for this
design (one shared variable) are exposed beside it:
:func:`steiger_z` (Steiger 1980, eq. 14, pooled r̄) and :func:`williams_t`
(Williams' T2, Steiger 1980, eq. 7). :func:`correlation_table` reports all
three; Steiger's Z is the primary one: it holds its level where the
latency mean and std correlate across the runs, where the independent form
is far too conservative (tests/latency_variation/test_stats.py, 4,000
simulations).

Power. Under the alternative, Steiger's Z is approximately normal with unit
variance around its value at the population correlations,
``δ = (arctanh ρ12 − arctanh ρ13) √(n − 3) / √(2 − 2c)``; the power of the
one-sided test ρ12 < ρ13 at level α is ``Φ(z_α − δ)`` and the n that reaches
power P is ``3 + (z_{1−α} + z_P)² (2 − 2c) / (arctanh ρ12 − arctanh ρ13)²``.
Simulations of trivariate normal runs check both (3,000 per design in the
tests).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

ALTERNATIVES = ("less", "greater", "two-sided")

LILLIEFORS_CAVEAT = (
    "The sample is standardised with its own mean and standard deviation, so the "
    "Kolmogorov-Smirnov null distribution no longer applies: the p-value is too large "
    "(conservative); Lilliefors' correction (Monte Carlo here) gives the right one. A "
    "rejection stands; a non-rejection is weaker evidence of normality than it looks."
)


def _finite(values: Any) -> np.ndarray:
    x = np.asarray(values, dtype=float).ravel()
    return x[np.isfinite(x)]


def _scalar(x):
    """A 0-d array as its scalar; arrays stay arrays."""
    return x[()] if np.ndim(x) == 0 else x


def _p_value(distribution, statistic, alternative: str):
    """The p-value of ``statistic`` under ``distribution`` (SciPy's, e.g. ``stats.t(df)``)."""
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative {alternative!r}: use one of {', '.join(ALTERNATIVES)}")
    x = np.asarray(statistic, dtype=float)
    if alternative == "less":
        p = distribution.cdf(x)
    elif alternative == "greater":
        p = distribution.sf(x)
    else:
        p = 2 * distribution.sf(np.abs(x))
    return _scalar(np.asarray(p))


def _z_test(test: str, z, alternative: str) -> dict[str, Any]:
    z = _scalar(z)
    return {
        "test": test,
        "alternative": alternative,
        "z": z,
        "pvalue": _p_value(stats.norm, z, alternative),
    }


# ---------------------------------------------------------------- Sec. 6


def ks_normality(
    sample: Any, alpha: float = 0.05, lilliefors_mc: int = 0, seed: int | None = 0
) -> dict[str, Any]:
    """Kolmogorov–Smirnov test of normality, as in Sec. 6.

    The sample is standardised with its mean and standard deviation
    (``ddof=1``) and compared with the standard normal by
    ``scipy.stats.kstest``. ``lilliefors_mc > 0`` also computes the
    Lilliefors-corrected p-value by Monte Carlo
    (``scipy.stats.goodness_of_fit`` with the normal's parameters refitted to
    every simulated sample; its statistic uses the ML standard deviation,
    ``ddof=0``). ``caveat`` says why the plain p-value is conservative.
    """
    x = _finite(sample)
    if len(x) < 3:
        raise ValueError("the KS normality test needs at least three finite values")
    mean, std = float(x.mean()), float(x.std(ddof=1))
    if std == 0:
        raise ValueError("the sample is constant: nothing to standardise")
    res = stats.kstest((x - mean) / std, "norm")
    out: dict[str, Any] = {
        "test": "kolmogorov-smirnov normality",
        "n": len(x),
        "mean": mean,
        "std": std,
        "statistic": float(res.statistic),
        "pvalue": float(res.pvalue),
        "alpha": alpha,
        "normal": bool(res.pvalue >= alpha),
        "lilliefors_statistic": math.nan,
        "lilliefors_pvalue": math.nan,
        "caveat": LILLIEFORS_CAVEAT,
    }
    if lilliefors_mc > 0:
        gof = stats.goodness_of_fit(
            stats.norm, x, statistic="ks", n_mc_samples=lilliefors_mc, rng=seed
        )
        out["lilliefors_statistic"] = float(gof.statistic)
        out["lilliefors_pvalue"] = float(gof.pvalue)
        out["normal"] = bool(gof.pvalue >= alpha)
    return out


def mann_whitney(a: Any, b: Any, alternative: str = "two-sided") -> dict[str, Any]:
    """Mann–Whitney U test of ``a`` against ``b`` (Sec. 6).

    H0: neither sample stochastically dominates the other. ``u`` is the
    statistic of ``a``; ``prob_superiority`` = U/(n_a n_b) estimates
    P(A > B) + P(A = B)/2 (0.5 under H0).
    """
    x, y = _finite(a), _finite(b)
    if len(x) == 0 or len(y) == 0:
        raise ValueError("both samples need finite values")
    res = stats.mannwhitneyu(x, y, alternative=alternative)
    return {
        "test": "mann-whitney u",
        "alternative": alternative,
        "n_a": len(x),
        "n_b": len(y),
        "median_a": float(np.median(x)),
        "median_b": float(np.median(y)),
        "u": float(res.statistic),
        "pvalue": float(res.pvalue),
        "prob_superiority": float(res.statistic) / (len(x) * len(y)),
    }


# ---------------------------------------------------------------- Sec. 7


def pearson(x: Any, y: Any, alternative: str = "two-sided") -> dict[str, Any]:
    """Pearson's r with its p-value and 95 % confidence interval (Fisher z).

    Pairs with a non-finite value are dropped. A constant variable has no
    correlation: r, p and the interval are NaN.
    """
    xa, ya = np.asarray(x, dtype=float).ravel(), np.asarray(y, dtype=float).ravel()
    if xa.shape != ya.shape:
        raise ValueError("x and y differ in length")
    keep = np.isfinite(xa) & np.isfinite(ya)
    xa, ya = xa[keep], ya[keep]
    n = len(xa)
    out = {"n": n, "r": math.nan, "pvalue": math.nan, "ci_low": math.nan, "ci_high": math.nan}
    if n < 3 or np.ptp(xa) == 0 or np.ptp(ya) == 0:
        return out
    res = stats.pearsonr(xa, ya, alternative=alternative)
    out["r"], out["pvalue"] = float(res.statistic), float(res.pvalue)
    if n > 3 and abs(out["r"]) < 1:
        ci = res.confidence_interval(0.95)
        out["ci_low"], out["ci_high"] = float(ci.low), float(ci.high)
    return out


def two_slopes(y: Any, x1: Any, x2: Any, level: float = 0.95) -> dict[str, Any]:
    """Least squares ``y = b0 + b1 x1 + b2 x2``: each slope with its two-sided
    ``level`` t interval, R² and n.

    Rows with a non-finite value are dropped. With fewer than 4 rows, or x1
    and x2 not independent (a constant, or one a linear function of the
    other), the slopes are not identified: NaN.
    """
    _check_level(1 - level)
    data = np.column_stack([np.asarray(v, dtype=float).ravel() for v in (y, x1, x2)])
    data = data[np.isfinite(data).all(axis=1)]
    n = len(data)
    out = {"n": n, "r2": math.nan}
    for name in ("b1", "b2"):
        out |= {name: math.nan, f"{name}_low": math.nan, f"{name}_high": math.nan}
    design = np.column_stack([np.ones(n), data[:, 1:]])
    if n < 4 or np.linalg.matrix_rank(design) < 3:
        return out
    coef, *_ = np.linalg.lstsq(design, data[:, 0], rcond=None)
    resid = data[:, 0] - design @ coef
    dof = n - 3
    cov = resid @ resid / dof * np.linalg.inv(design.T @ design)
    half = stats.t.ppf(0.5 + level / 2, dof) * np.sqrt(np.diag(cov))
    total = ((data[:, 0] - data[:, 0].mean()) ** 2).sum()
    out["r2"] = float(1 - resid @ resid / total) if total > 0 else math.nan
    for i, name in ((1, "b1"), (2, "b2")):
        out |= {
            name: float(coef[i]),
            f"{name}_low": float(coef[i] - half[i]),
            f"{name}_high": float(coef[i] + half[i]),
        }
    return out


def fisher_z_independent(r1, r2, n1, n2=None, alternative: str = "less") -> dict[str, Any]:
    """Fisher's z for two correlations from independent samples (the paper's test).

    ``z = (arctanh r1 − arctanh r2) / √(1/(n1−3) + 1/(n2−3))``; with
    ``n2 = n1 = n`` the denominator is the paper's ``√(2/(n−3))``. The
    default ``alternative="less"`` gives Φ(z), the paper's "Significant?"
    p-value for ``r1 = r_mean``, ``r2 = r_std``. Arguments may be arrays.
    """
    n1 = np.asarray(n1, dtype=float)
    n2 = n1 if n2 is None else np.asarray(n2, dtype=float)
    if np.any(n1 <= 3) or np.any(n2 <= 3):
        raise ValueError("Fisher's z needs more than three observations per correlation")
    se = np.sqrt(1 / (n1 - 3) + 1 / (n2 - 3))
    z = (np.arctanh(np.asarray(r1, dtype=float)) - np.arctanh(np.asarray(r2, dtype=float))) / se
    return _z_test("fisher z (independent)", z, alternative)


def _check_dependent(r12, r13, r23, n):
    r12, r13, r23 = (np.asarray(v, dtype=float) for v in (r12, r13, r23))
    n = np.asarray(n, dtype=float)
    if np.any(n <= 3):
        raise ValueError("dependent-correlation tests need more than three observations")
    return r12, r13, r23, n


def _steiger_c(r12, r13, r23):
    """Steiger's (1980) c: the covariance of the two z-transformed correlations."""
    rbar2 = ((r12 + r13) / 2) ** 2
    psi = r23 * (1 - 2 * rbar2) - 0.5 * rbar2 * (1 - 2 * rbar2 - r23**2)
    return psi / (1 - rbar2) ** 2


def steiger_z(r12, r13, r23, n, alternative: str = "less") -> dict[str, Any]:
    """Steiger's (1980) Z for ρ12 = ρ13, two correlations sharing variable 1.

    Variable 1 is the runtime, 2 the latency mean, 3 the latency std; ``r23``
    is their correlation across the same n runs. With r̄ = (r12 + r13)/2 and
    ``ψ = r23 (1 − 2r̄²) − r̄² (1 − 2r̄² − r23²)/2``, ``c = ψ/(1 − r̄²)²``:
    ``Z = (arctanh r12 − arctanh r13) √(n − 3) / √(2 − 2c)``. With r23 = 0
    and r̄ = 0 it is the independent form.
    """
    r12, r13, r23, n = _check_dependent(r12, r13, r23, n)
    c = _steiger_c(r12, r13, r23)
    z = (np.arctanh(r12) - np.arctanh(r13)) * np.sqrt(n - 3) / np.sqrt(2 - 2 * c)
    return _z_test("steiger z (dependent)", z, alternative)


def _check_level(alpha: float, power: float | None = None) -> None:
    for name, value in (("alpha", alpha), ("power", power)):
        if value is not None and not 0 < value < 1:
            raise ValueError(f"{name} {value!r}: must lie strictly between 0 and 1")


def steiger_power(r12, r13, r23, n, alpha: float = 0.05, alternative: str = "less"):
    """Power of :func:`steiger_z` at level ``alpha`` for population correlations.

    ``r12`` (runtime–mean), ``r13`` (runtime–std) and ``r23`` (mean–std, the
    design's) are the correlations assumed true, ``n`` the runs. Normal
    approximation of Z around ``δ`` (module docstring); arrays broadcast.
    """
    _check_level(alpha)
    r12, r13, r23, n = _check_dependent(r12, r13, r23, n)
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative {alternative!r}: use one of {', '.join(ALTERNATIVES)}")
    c = _steiger_c(r12, r13, r23)
    delta = (np.arctanh(r12) - np.arctanh(r13)) * np.sqrt(n - 3) / np.sqrt(2 - 2 * c)
    norm = stats.norm
    if alternative == "less":
        power = norm.cdf(norm.ppf(alpha) - delta)
    elif alternative == "greater":
        power = norm.sf(norm.isf(alpha) - delta)
    else:
        z = norm.isf(alpha / 2)
        power = norm.cdf(-z - delta) + norm.sf(z - delta)
    return _scalar(np.asarray(power))


def steiger_sample_size(
    r12, r13, r23, power: float = 0.8, alpha: float = 0.05, alternative: str = "less"
) -> float:
    """The fewest runs at which :func:`steiger_power` reaches ``power`` (an integer ≥ 4).

    ``math.inf`` where no n does: the correlations are equal or ordered
    against a one-sided alternative. Closed form for one side (module
    docstring), then the smallest integer whose power reaches the target.
    """
    _check_level(alpha, power)
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative {alternative!r}: use one of {', '.join(ALTERNATIVES)}")
    if not all(math.isfinite(v) and -1 < v < 1 for v in (r12, r13, r23)):
        return math.nan
    d = math.atanh(r12) - math.atanh(r13)
    if d == 0 or (alternative == "less" and d > 0) or (alternative == "greater" and d < 0):
        return math.inf
    one_sided_alpha = alpha / 2 if alternative == "two-sided" else alpha
    spread = 2 - 2 * float(_steiger_c(r12, r13, r23))
    if not spread > 0:
        return math.nan
    z = stats.norm.isf(one_sided_alpha) + stats.norm.ppf(power)
    n = max(4, math.ceil(3 + z**2 * spread / d**2))
    while n > 4 and steiger_power(r12, r13, r23, n - 1, alpha, alternative) >= power:
        n -= 1
    while steiger_power(r12, r13, r23, n, alpha, alternative) < power:
        n += 1
    return float(n)


def williams_t(r12, r13, r23, n, alternative: str = "less") -> dict[str, Any]:
    """Williams' T2 for ρ12 = ρ13 (Steiger 1980, eq. 7), t with n − 3 df.

    ``|R| = 1 − r12² − r13² − r23² + 2 r12 r13 r23``, r̄ = (r12 + r13)/2,
    ``t = (r12 − r13) √((n−1)(1+r23) / (2 |R| (n−1)/(n−3) + r̄² (1−r23)³))``.
    """
    r12, r13, r23, n = _check_dependent(r12, r13, r23, n)
    det = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    rbar2 = ((r12 + r13) / 2) ** 2
    t = (r12 - r13) * np.sqrt(
        (n - 1) * (1 + r23) / (2 * det * (n - 1) / (n - 3) + rbar2 * (1 - r23) ** 3)
    )
    t, df = _scalar(t), _scalar(n - 3)
    return {
        "test": "williams t2 (dependent)",
        "alternative": alternative,
        "t": t,
        "df": df,
        "pvalue": _p_value(stats.t(df), t, alternative),
    }


#: Level and target power of the power columns of Table 4.
ALPHA = 0.05
TARGET_POWER = 0.8


def compare_correlations(
    runtime: Any, latency_mean: Any, latency_std: Any, alternative: str = "less"
) -> dict[str, Any]:
    """Table 4 for one application: r_mean, r_std and the three tests of r_mean vs r_std.

    ``steiger_power`` is the power of Steiger's test at level ``ALPHA`` were
    the measured correlations the true ones, ``n_for_power`` the runs it
    needs for ``TARGET_POWER`` (inf: the measured effect points the other way
    or is nil).
    """
    y = np.asarray(runtime, dtype=float).ravel()
    m = np.asarray(latency_mean, dtype=float).ravel()
    s = np.asarray(latency_std, dtype=float).ravel()
    keep = np.isfinite(y) & np.isfinite(m) & np.isfinite(s)
    y, m, s = y[keep], m[keep], s[keep]
    rm, rs, rms = pearson(y, m), pearson(y, s), pearson(m, s)
    n = len(y)
    out: dict[str, Any] = {
        "n": n,
        "r_mean": rm["r"],
        "p_r_mean": rm["pvalue"],
        "r_std": rs["r"],
        "p_r_std": rs["pvalue"],
        "r_mean_std": rms["r"],
        "fisher_z": math.nan,
        "fisher_p": math.nan,
        "steiger_z": math.nan,
        "steiger_p": math.nan,
        "williams_t": math.nan,
        "williams_p": math.nan,
        "steiger_power": math.nan,
        "n_for_power": math.nan,
    }
    if n <= 3 or not (math.isfinite(rm["r"]) and math.isfinite(rs["r"])):
        return out
    f = fisher_z_independent(rm["r"], rs["r"], n, alternative=alternative)
    out["fisher_z"], out["fisher_p"] = float(f["z"]), float(f["pvalue"])
    if math.isfinite(rms["r"]):
        st = steiger_z(rm["r"], rs["r"], rms["r"], n, alternative=alternative)
        wt = williams_t(rm["r"], rs["r"], rms["r"], n, alternative=alternative)
        out["steiger_z"], out["steiger_p"] = float(st["z"]), float(st["pvalue"])
        out["williams_t"], out["williams_p"] = float(wt["t"]), float(wt["pvalue"])
        if all(abs(r) < 1 for r in (rm["r"], rs["r"], rms["r"])):
            out["steiger_power"] = float(
                steiger_power(rm["r"], rs["r"], rms["r"], n, ALPHA, alternative)
            )
            out["n_for_power"] = steiger_sample_size(
                rm["r"], rs["r"], rms["r"], TARGET_POWER, ALPHA, alternative
            )
    return out


TABLE4_COLUMNS = (
    "application",
    "n",
    "r_mean",
    "r_std",
    "r_mean_std",
    "steiger_z",
    "steiger_p",
    "williams_t",
    "williams_p",
    "fisher_z",
    "fisher_p",
    "p_r_mean",
    "p_r_std",
    "steiger_power",
    "n_for_power",
)


def correlation_table(runs: pd.DataFrame, alternative: str = "less") -> pd.DataFrame:
    """Table 4: one row per application, in order of first appearance.

    ``runs`` has one row per application run: ``application, runtime_s,
    latency_mean_us, latency_std_us`` (the mean and standard deviation of
    the latency injected into it). ``r_mean``, ``r_std`` and ``fisher_p`` are
    the paper's three columns ("Significant?" is ``fisher_p``, one-sided, see
    the module docstring); ``steiger_p`` is the primary test, ``r_mean_std``
    the design's correlation of mean and std across the runs, and
    ``steiger_power``, ``n_for_power`` the power analysis of
    :func:`compare_correlations`; ``n`` is the number of runs with all three
    values.
    """
    need = {"application", "runtime_s", "latency_mean_us", "latency_std_us"}
    missing = need - set(runs.columns)
    if missing:
        raise ValueError(f"runs lack column(s) {', '.join(sorted(missing))}")
    rows = []
    for app, g in runs.groupby("application", sort=False):
        res = compare_correlations(
            g["runtime_s"], g["latency_mean_us"], g["latency_std_us"], alternative
        )
        rows.append({"application": app, **res})
    return pd.DataFrame(rows, columns=list(TABLE4_COLUMNS))
