"""Seed 000 end to end: from raw ImpactB/CompressionB/application runs to predictions.

Tidy inputs (built by the workflow from raw benchmark files):

- impact: one row per ImpactB sample: ``component`` (``idle``, an application
  name or a CompressionB configuration id), ``latency_us`` (half the round trip,
  the paper's packet latency), every sample from the timed region of its
  co-run (tidy_impact);
- runtimes: one row per application run: ``application``, ``partner_kind``
  (``none``, ``compression``, ``application``), ``partner`` (empty alone, else
  a configuration id or an application name), ``run``, ``runtime_s``, ``comm_s``.

Both carry ``cpu_saturated`` of the run they come from (its provenance).

Performance degradation is (runtime with interference − runtime alone) /
runtime alone (Sec. III-D), from mean runtimes, with a 95 % bootstrap interval
(ci.interval) over the runs of both.

Predictions are judged beside the paper's criterion (the share within 10
points) by their mean absolute error, the shares within 10 and 20 points and
the Spearman rank correlation with the measurements, and against two
baselines that use no model: "predict 0" and "predict A's mean slowdown beside
its other partners" (leave-one-out, so it never sees the pairing it predicts).
On the paper's own Table I, "predict 0" already has 30 of 36 pairings within 10
points (published_scores).
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import scipy.stats

from netnoise.io import read_tidy
from netnoise.provenance import read_sidecar, sidecar_path
from netnoise.studies.impact_compression import ci, lookup, queue

MODELS = {
    "average": "AverageLT",
    "average_stdev": "AverageStDevLT",
    "pdf": "PDFLT",
    "queue": "Queue model",
}
BASELINES = {
    "zero": "Predict 0",
    "partner_mean": "A's mean (leave-one-out)",
}
METHODS = {**MODELS, **BASELINES}

# What an application ran beside (``partner_kind``): nothing, CompressionB, another
# application, or the CPU-only control (cpuhog ranks, no network traffic).
ALONE, COMPRESSION, APPLICATION, CPU_CONTROL = "none", "compression", "application", "cpu"
# What identifies one result file of application runs.
RUN_KEYS = ["application", "partner_kind", "partner"]
# A CompressionB configuration id (see config_id).
CONFIG_PATTERN = r"p\d+_m\d+_b\d+"
# The bar for a pairing's precision: a 95 % interval within ±3 points.
CI_HALF_WIDTH_TARGET = 0.03
# Replicates of mae_intervals: each predicts every pairing again with every
# method, so fewer than ci.RESAMPLES; 500 put a one-sided p on a 0.002 grid.
COMPARISON_RESAMPLES = 500
# What mae_intervals says of the queue model's lead over another method.
LEAD_COLUMNS = (
    "queue_mae_minus", "queue_mae_minus_ci_low", "queue_mae_minus_ci_high", "queue_not_better",
)  # fmt: skip


def config_id(partners: int, messages: int, sleep_cycles: float) -> str:
    """Name of a CompressionB configuration, safe in file names: ``p4_m10_b2500000``."""
    return f"p{partners}_m{messages}_b{round(sleep_cycles)}"


def parse_config_id(config: str) -> dict[str, float]:
    p, m, b = config.split("_")
    return {"partners": int(p[1:]), "messages": int(m[1:]), "sleep_cycles": float(b[1:])}


def impactb_was_measured(path: str) -> bool:
    """Whether the ImpactB result ``path`` was the measured job of its co-run (its
    provenance sidecar's command is the co-run's last, measured, one) or ran alone."""
    try:
        record = read_sidecar(path)
    except FileNotFoundError:
        raise ValueError(
            f"{path}: no provenance sidecar {sidecar_path(path).name}; it says whether "
            "ImpactB was the measured job of its co-run"
        ) from None
    corun = record.get("corun")
    return not corun or corun[-1]["command"] == record["command"]


def tidy_impact(files: dict[str, str]) -> pd.DataFrame:
    """One row per ImpactB sample, tagged with the component running beside it.

    ``files`` maps a component to the result file ImpactB wrote in that co-run:
    alone on the idle switch, or the measured job beside a looping application
    or CompressionB configuration, with a fixed sample count. The co-run
    handshake holds its samples (taken after its warm-up) inside the timed
    region, while the component runs in its steady state. A file of ImpactB
    run as a background job is refused: its samples also cover the measured
    job's launch, warm-up and teardown, and nothing places that job's timed
    region on ImpactB's clock (diluting the load by up to a third on the
    testbed).
    """
    background = [c for c, path in files.items() if not impactb_was_measured(path)]
    if background:
        raise ValueError(
            f"ImpactB ran as a background job for {', '.join(background)}: its samples "
            "include the measured job's launch and teardown. Measure ImpactB (a fixed "
            "sample count) with the component looping beside it"
        )
    data = read_tidy(list(files.values()), component=list(files))
    data["latency_us"] = data["rtt_us"] / 2
    return data[["component", "pair", "time_s", "latency_us", "cpu_saturated"]]


def tidy_runtimes(records: list[tuple[str, str, str, str]]) -> pd.DataFrame:
    """One row per application run; records are (application, partner_kind, partner, path).

    ``comm_s`` is empty for programs that do not time their communication (a
    real application run through netnoise.external writes only ``runtime_s``).
    """
    if not records:
        raise ValueError("no application runs to tidy")
    applications, kinds, partners, paths = (list(column) for column in zip(*records, strict=True))
    data = read_tidy(paths, application=applications, partner_kind=kinds, partner=partners)
    columns = ["application", "partner_kind", "partner", "run", "runtime_s", "comm_s"]
    return data.reindex(columns=[*columns, "cpu_saturated"])


def _alone(runtimes: pd.DataFrame) -> dict[str, np.ndarray]:
    alone = runtimes[runtimes["partner_kind"] == ALONE]
    if alone.empty:
        raise ValueError("no runs of the applications alone: degradation needs a baseline")
    return {app: g.to_numpy(float) for app, g in alone.groupby("application")["runtime_s"]}


def _relative(
    runtimes: pd.DataFrame, kind: str, name: str, *, intervals: bool = True
) -> pd.DataFrame:
    """Mean runtime beside each partner of ``kind``, alone, and ``name`` = their
    relative change with (``intervals``) its 95 % interval (``name_ci_low``,
    ``name_ci_high``)."""
    base = _alone(runtimes)
    rows = runtimes[runtimes["partner_kind"] == kind]
    missing = sorted(set(rows["application"]) - set(base))
    if missing:
        raise ValueError(f"no runs alone of {missing}")
    out = []
    for (app, partner), group in rows.groupby(["application", "partner"]):
        beside, alone = group["runtime_s"].to_numpy(float), base[app]
        row = {
            "application": app,
            "partner": partner,
            "runs": len(beside),
            "runtime_s": beside.mean(),
            "runtime_alone_s": alone.mean(),
            name: float(ci.relative_change(beside, alone)),
        }
        if intervals:
            low, high = ci.interval([beside, alone], ci.relative_change, f"{app} {kind} {partner}")
            row |= {f"{name}_ci_low": low, f"{name}_ci_high": high}
        out.append(row)
    return pd.DataFrame(out)


def degradation(runtimes: pd.DataFrame, *, intervals: bool = True) -> pd.DataFrame:
    """``application, config, runs, runtime_s, runtime_alone_s, degradation`` and
    (``intervals``) its 95 % interval, of every application beside every configuration."""
    return _relative(runtimes, COMPRESSION, "degradation", intervals=intervals).rename(
        columns={"partner": "config"}
    )


def measured_slowdowns(runtimes: pd.DataFrame, *, intervals: bool = True) -> pd.DataFrame:
    """``application, partner, runs, runtime_s, runtime_alone_s, measured`` and
    (``intervals``) its 95 % interval (``measured_ci_low``, ``measured_ci_high``):
    the slowdown of each application beside each one; then ``cpu_control``, the
    application's slowdown beside its CPU-only control, and ``p_vs_cpu``, the
    one-sided Mann–Whitney p that its runs beside the partner are no slower than
    beside the control (both nan where no control was measured)."""
    slowdowns = _relative(runtimes, APPLICATION, "measured", intervals=intervals)
    controls = runtimes[runtimes["partner_kind"] == CPU_CONTROL]
    if controls.empty:
        return slowdowns.assign(cpu_control=np.nan, p_vs_cpu=np.nan)
    control = _relative(runtimes, CPU_CONTROL, "cpu_control", intervals=False)
    slowdowns = slowdowns.merge(
        control[["application", "cpu_control"]], on="application", how="left"
    )
    beside = runtimes[runtimes["partner_kind"] == APPLICATION]
    by_app = {app: g.to_numpy(float) for app, g in controls.groupby("application")["runtime_s"]}
    slowdowns["p_vs_cpu"] = [
        scipy.stats.mannwhitneyu(
            beside.loc[
                (beside["application"] == app) & (beside["partner"] == partner), "runtime_s"
            ].to_numpy(float),
            by_app[app],
            alternative="greater",
        ).pvalue
        if app in by_app
        else np.nan
        for app, partner in zip(slowdowns["application"], slowdowns["partner"], strict=True)
    ]
    return slowdowns


def ci_half_width(table: pd.DataFrame, column: str) -> pd.Series:
    """The larger distance from ``column`` to either end of its interval."""
    value = table[column]
    return np.maximum(value - table[f"{column}_ci_low"], table[f"{column}_ci_high"] - value)


def offered_load(config: str, grid: dict, link_mbit: float) -> float:
    """The share of a ``link_mbit`` link each node offers in CompressionB
    configuration ``config``: M messages of the grid's ``size`` per partner, then
    B sleep cycles at ``cycle_hz`` (above 1 the link saturates)."""
    point = parse_config_id(config)
    seconds = point["sleep_cycles"] / grid["cycle_hz"]
    return point["messages"] * grid["size"] * 8 / (seconds * link_mbit * 1e6)


def utilization_table(
    impact: pd.DataFrame, grid: dict | None = None, link_mbit: float | None = None
) -> pd.DataFrame:
    """Mean, spread and queue utilisation (with its 95 % interval) of every ImpactB
    component (Fig. 3, 6); with the CompressionB ``grid`` and the ``link_mbit`` its
    offered loads are shares of, each configuration's ``offered_load`` (else nan)."""
    stats = impact.groupby("component")["latency_us"].agg(
        samples="count", mean_latency_us="mean", std_latency_us="std", min_latency_us="min"
    )
    u = queue.utilizations(impact).set_index("component")[["utilization"]]
    intervals = queue.utilization_intervals(impact).set_index("component")
    table = stats.join(u).join(intervals).reset_index()
    table["offered_load"] = [
        offered_load(c, grid, link_mbit)
        if link_mbit is not None and re.fullmatch(CONFIG_PATTERN, c)
        else np.nan
        for c in table["component"]
    ]
    return table


def baseline_predictions(measured: pd.DataFrame) -> pd.DataFrame:
    """The baselines' predictions of every pairing of ``measured`` (``application,
    partner, measured``): 0, and A's mean slowdown beside its other partners
    (empty when A has no other partner)."""
    rows = []
    for app, group in measured.groupby("application", sort=False):
        values = group.set_index("partner")["measured"]
        for partner in values.index:
            others = values.drop(partner)
            rows.append(
                {"application": app, "partner": partner, "method": "zero", "predicted": 0.0}
            )
            rows.append(
                {
                    "application": app,
                    "partner": partner,
                    "method": "partner_mean",
                    "predicted": others.mean() if len(others) else np.nan,
                }
            )
    return pd.DataFrame(rows)


def predictions(
    impact: pd.DataFrame, runtimes: pd.DataFrame, *, intervals: bool = True
) -> pd.DataFrame:
    """Every method's and baseline's prediction of every measured pairing, next to
    the measurement and (``intervals``) its interval; ``error`` is measured −
    predicted."""
    measured = measured_slowdowns(runtimes, intervals=intervals)
    compression = degradation(runtimes, intervals=False)[["application", "config", "degradation"]]
    pairs = measured[["application", "partner"]]
    frames = [lookup.predict(impact, compression, pairs, m) for m in lookup.METHODS]
    frames.append(queue.predict(impact, compression, pairs))
    frames.append(baseline_predictions(measured))
    predicted = pd.concat(frames, ignore_index=True)
    columns = ["application", "partner", "measured"]
    if intervals:
        columns += ["measured_ci_low", "measured_ci_high"]
    table = predicted.merge(measured[columns], how="left")
    table["error"] = table["measured"] - table["predicted"]
    return table


def _spearman(predicted: np.ndarray, measured: np.ndarray) -> float:
    """Rank correlation; undefined (nan) when either side is constant, e.g. "predict 0"."""
    if len(predicted) < 2 or np.ptp(predicted) == 0 or np.ptp(measured) == 0:
        return float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", scipy.stats.ConstantInputWarning)
        return float(scipy.stats.spearmanr(predicted, measured).statistic)


def scores(predicted: np.ndarray, measured: np.ndarray) -> dict[str, float]:
    """mean_abs_error, within_10pct, within_20pct (shares of |error| < 0.10, 0.20)
    and spearman of predictions against measurements (fractions, 0.10 = 10 points)."""
    absolute = np.abs(np.asarray(measured, float) - np.asarray(predicted, float))
    return {
        "mean_abs_error": absolute.mean(),
        "within_10pct": float(np.mean(absolute < 0.10)),
        "within_20pct": float(np.mean(absolute < 0.20)),
        "spearman": _spearman(np.asarray(predicted, float), np.asarray(measured, float)),
    }


SCORE_NAMES = ("mean_abs_error", "within_10pct", "within_20pct", "spearman")


def published_scores(table1: pd.DataFrame, claims: pd.DataFrame) -> pd.DataFrame:
    """What the paper gives for each method: ``method, quantity, relation, value, source``.

    ``claims`` (resources/reference/impact_compression/claims.csv) holds its
    statements about the four methods (bounds such as "> 0.75"); the baselines'
    scores are computed on its Table I (``application, partner, slowdown_pct``),
    as ours are on our measurements.
    """
    measured = table1.assign(measured=table1["slowdown_pct"] / 100)
    base = baseline_predictions(measured).merge(measured[["application", "partner", "measured"]])
    source = "computed from Table I (" + table1["source"].iloc[0] + ")"
    rows = [
        {"method": method, "quantity": q, "relation": "=", "value": v, "source": source}
        for method, group in base.groupby("method", sort=False)
        for q, v in scores(group["predicted"], group["measured"]).items()
        if not np.isnan(v)
    ]
    return pd.concat([claims, pd.DataFrame(rows)], ignore_index=True)


def paper_text(published: pd.DataFrame, method: str, quantity: str, scale: float = 1) -> str:
    """The paper's value of one score as text ("> 0.75", "0.833"), values times ``scale``."""
    rows = published[(published["method"] == method) & (published["quantity"] == quantity)]
    return "; ".join(
        f"{r.value * scale:.3g}" if r.relation == "=" else f"{r.relation} {r.value * scale:.3g}"
        for r in rows.itertuples()
    )


def error_summary(
    table: pd.DataFrame,
    published: pd.DataFrame | None = None,
    intervals: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Per method and baseline: scores, quartiles of the error, with ``intervals``
    (mae_intervals) the bootstrap intervals of the MAE and of the queue model's
    lead over the method and, with ``published`` (published_scores), the paper's
    value of each score as text.

    Errors are in slowdown points (0.10 = 10 percentage points), as Fig. 8-9;
    a pairing a baseline cannot predict (no other partner) is left out.
    """
    rows = []
    for method in [m for m in METHODS if m in set(table["method"])]:
        group = table[(table["method"] == method) & table["predicted"].notna()]
        err = group["error"].to_numpy(float)
        q = np.quantile(err, [0, 0.25, 0.5, 0.75, 1])
        row = {
            "method": method,
            "label": METHODS[method],
            "kind": "model" if method in MODELS else "baseline",
            "pairings": len(err),
            **scores(group["predicted"], group["measured"]),
            "min": q[0],
            "q1": q[1],
            "median": q[2],
            "q3": q[3],
            "max": q[4],
        }
        if intervals is not None:
            row |= intervals.set_index("method").loc[method].to_dict()
        if published is not None:
            row |= {f"paper_{s}": paper_text(published, method, s) for s in SCORE_NAMES}
        rows.append(row)
    return pd.DataFrame(rows)


def _mean_abs_errors(table: pd.DataFrame) -> pd.Series:
    """Each method's mean |error| over the pairings it predicts (predictions)."""
    kept = table[table["predicted"].notna()]
    return kept["error"].abs().groupby(kept["method"]).mean()


def _resampled(values: np.ndarray, groups: list[np.ndarray], rng: np.random.Generator):
    """``values`` with the entries of each group (positions) drawn with replacement
    from that group's."""
    out = values.copy()
    for index in groups:
        out[index] = values[index[rng.integers(0, len(index), size=len(index))]]
    return out


def _replicates(impact: pd.DataFrame, runtimes: pd.DataFrame, count: int, name: str):
    """``count`` bootstrap replicates (impact, runtimes) of the whole study: each
    component's ImpactB latencies and each result's runs (RUN_KEYS) resampled with
    replacement, from the generator called ``name``.

    A replicate resamples every set once, so a set that several quantities share
    (the idle switch's latencies, an application's runs alone) moves them together
    and cancels in their differences."""
    # Grouped by a categorical column, the study's analysis of a replicate (16
    # pairings) takes ~0.15 s rather than ~0.2 s.
    impact = impact.astype({"component": "category"})
    latency = impact["latency_us"].to_numpy(float)
    runtime = runtimes["runtime_s"].to_numpy(float)
    impact_groups = list(impact.groupby("component").indices.values())
    run_groups = list(runtimes.groupby(RUN_KEYS).indices.values())
    rng = ci.generator(name)
    for _ in range(count):
        yield (
            impact.assign(latency_us=_resampled(latency, impact_groups, rng)),
            runtimes.assign(runtime_s=_resampled(runtime, run_groups, rng)),
        )


def mae_intervals(
    impact: pd.DataFrame, runtimes: pd.DataFrame, count: int = COMPARISON_RESAMPLES
) -> pd.DataFrame:
    """The 95 % bootstrap interval of every method's and baseline's mean absolute
    error, and of the queue model's MAE minus each other one's.

    Every replicate resamples with replacement the runs of each result (an
    application alone, beside a configuration, beside an application) and the
    ImpactB latencies of each component, then predicts every pairing again with
    every method: an interval holds the noise of p_A, of the partners'
    utilisations and of the slowdowns being predicted, and a difference pairs
    the methods on the same replicate, as they share those measurements.
    ``queue_not_better`` is the share of replicates in which the queue model's MAE
    is not below the other's (a one-sided bootstrap p of "the queue model is
    better").

    Returns ``method, mean_abs_error_ci_low, mean_abs_error_ci_high,
    queue_mae_minus, queue_mae_minus_ci_low, queue_mae_minus_ci_high,
    queue_not_better``; the differences are nan on the queue model's own row.
    """
    point = _mean_abs_errors(predictions(impact, runtimes, intervals=False))
    replicates = pd.DataFrame(
        [
            _mean_abs_errors(predictions(*replicate, intervals=False))
            for replicate in _replicates(impact, runtimes, count, "method comparison")
        ]
    )
    rows = []
    for method in point.index:
        low, high = ci.percentile_interval(replicates[method])
        row = {"method": method, "mean_abs_error_ci_low": low, "mean_abs_error_ci_high": high}
        if method == "queue":
            row |= dict.fromkeys(LEAD_COLUMNS, np.nan)
        else:
            minus = replicates["queue"] - replicates[method]
            low, high = ci.percentile_interval(minus)
            row |= {
                "queue_mae_minus": point["queue"] - point[method],
                "queue_mae_minus_ci_low": low,
                "queue_mae_minus_ci_high": high,
                "queue_not_better": float(np.mean(minus >= 0)),
            }
        rows.append(row)
    return pd.DataFrame(rows)


def _beside(runtimes: pd.DataFrame) -> pd.DataFrame:
    """Slowdown of each application (rows) beside each partner (columns): the
    other applications and the CompressionB configurations."""
    return pd.concat(
        [
            _relative(runtimes, kind, "slowdown", intervals=False)
            for kind in (APPLICATION, COMPRESSION)
        ]
    ).pivot(index="application", columns="partner", values="slowdown")


def _partner_state(impact: pd.DataFrame, runtimes: pd.DataFrame):
    return queue.utilizations(impact).set_index("component")["utilization"], _beside(runtimes)


def relativity_violations(
    impact: pd.DataFrame, runtimes: pd.DataFrame, count: int = COMPARISON_RESAMPLES
) -> pd.DataFrame:
    """Where the performance-relativity assumption (Sec. I: a partner that slows
    ImpactB more slows an application more) is contradicted beyond doubt.

    For every pair of partners (applications and CompressionB configurations),
    the one of higher utilisation first, a row per application beside both and
    one for their mean over those applications (``application`` ``mean``):
    ``higher, lower, utilization_minus, slowdown_minus`` (beside the higher
    minus beside the lower), each with its 95 % interval, and ``verdict``:
    ``violated`` when the utilisations differ beyond doubt (the interval above 0)
    and the slowdowns the other way (below 0), ``holds`` when both lie above 0,
    else ``unresolved``.

    The intervals are paired: in every replicate (_replicates) the idle switch's
    statistics, common to all utilisations, and an application's runs alone,
    common to its slowdowns, cancel in the differences, which the intervals of
    the single quantities cannot show (theirs hold those shared terms).
    """
    u, beside = _partner_state(impact, runtimes)
    partners = [p for p in beside.columns if p in u.index]
    u, beside = u[partners], beside[partners]
    replicates = [
        _partner_state(*replicate)
        for replicate in _replicates(impact, runtimes, count, "relativity")
    ]
    u_reps = np.array([r[0][partners].to_numpy(float) for r in replicates])
    s_reps = np.array([r[1].loc[beside.index, partners].to_numpy(float) for r in replicates])
    where = {p: i for i, p in enumerate(partners)}
    rows = []
    for higher in partners:
        for lower in partners:
            both = beside[[higher, lower]].notna().all(axis=1).to_numpy()
            if u[higher] <= u[lower] or not both.any():
                continue
            du = u_reps[:, where[higher]] - u_reps[:, where[lower]]
            ds = s_reps[:, both, where[higher]] - s_reps[:, both, where[lower]]
            point = (beside[higher] - beside[lower])[both]
            victims = [*beside.index[both], "mean"]
            diffs = [*ds.T, ds.mean(axis=1)]
            for app, value, replicate in zip(victims, [*point, point.mean()], diffs, strict=True):
                rows.append(
                    _ordered_pair(app, higher, lower, u[higher] - u[lower], du, value, replicate)
                )
    columns = [
        "application", "higher", "lower", "utilization_minus", "utilization_minus_ci_low",
        "utilization_minus_ci_high", "slowdown_minus", "slowdown_minus_ci_low",
        "slowdown_minus_ci_high", "verdict",
    ]  # fmt: skip
    return pd.DataFrame(rows, columns=columns)


def _ordered_pair(app, higher, lower, du_point, du, ds_point, ds) -> dict:
    """One row of relativity_violations from the point differences of utilisation
    and slowdown and their replicates."""
    du_low, du_high = ci.percentile_interval(du)
    ds_low, ds_high = ci.percentile_interval(ds)
    verdict = "unresolved"
    if du_low > 0 and ds_high < 0:
        verdict = "violated"
    elif du_low > 0 and ds_low > 0:
        verdict = "holds"
    return {
        "application": app,
        "higher": higher,
        "lower": lower,
        "utilization_minus": du_point,
        "utilization_minus_ci_low": du_low,
        "utilization_minus_ci_high": du_high,
        "slowdown_minus": ds_point,
        "slowdown_minus_ci_low": ds_low,
        "slowdown_minus_ci_high": ds_high,
        "verdict": verdict,
    }


def slowdown_matrix(measured: pd.DataFrame) -> pd.DataFrame:
    """Table I layout: rows the application, columns the partner, percent slowdown."""
    matrix = measured.pivot(index="application", columns="partner", values="measured") * 100
    order = sorted(matrix.index)
    return matrix.reindex(index=order, columns=order)


def fit_lines(degr: pd.DataFrame, utilization: pd.DataFrame) -> pd.DataFrame:
    """Least-squares line of degradation vs utilisation per application (Fig. 7)."""
    u = utilization.set_index("component")["utilization"]
    rows = []
    for app, group in degr.groupby("application"):
        x = u.loc[group["config"]].to_numpy(float)
        y = group["degradation"].to_numpy(float)
        slope, intercept = np.polyfit(x, y, 1) if len(x) > 1 else (np.nan, y.mean())
        rows.append({"application": app, "slope": slope, "intercept": intercept})
    return pd.DataFrame(rows)


def saturated_share(impact: pd.DataFrame, runtimes: pd.DataFrame) -> float:
    """Share of the result files (one per impact component, one per application and
    partner) whose co-run's timed region was CPU-saturated (``cpu_saturated`` of
    their provenance); nan when none records it (tables tidied before they did)."""
    per_file = [
        table.groupby(keys)["cpu_saturated"].first()
        for table, keys in ((impact, ["component"]), (runtimes, RUN_KEYS))
        if "cpu_saturated" in table.columns
    ]
    flags = pd.concat(per_file).astype(str).str.lower() if per_file else pd.Series()
    known = flags.isin(["true", "false"])
    if not known.any():
        return float("nan")
    return float(flags[known].eq("true").mean())
