"""Seed 000 end to end: from raw ImpactB/CompressionB/application runs to predictions.

Tidy inputs (built by the workflow from raw benchmark files):

- impact: one row per ImpactB sample: ``component`` (``idle``, an application
  name or a CompressionB configuration id), ``latency_us`` (half the round trip,
  the paper's packet latency);
- runtimes: one row per application run: ``application``, ``partner_kind``
  (``none``, ``compression``, ``application``), ``partner`` (empty alone, else
  a configuration id or an application name), ``run``, ``runtime_s``, ``comm_s``.

Performance degradation is (runtime with interference − runtime alone) /
runtime alone (Sec. III-D), from mean runtimes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from netnoise.io import read_tidy
from netnoise.studies.impact_compression import lookup, queue

METHODS = {
    "average": "AverageLT",
    "average_stdev": "AverageStDevLT",
    "pdf": "PDFLT",
    "queue": "Queue model",
}

# What an application ran beside (``partner_kind``).
ALONE, COMPRESSION, APPLICATION = "none", "compression", "application"
# A CompressionB configuration id (see config_id).
CONFIG_PATTERN = r"p\d+_m\d+_b\d+"


def config_id(partners: int, messages: int, sleep_cycles: float) -> str:
    """Name of a CompressionB configuration, safe in file names: ``p4_m10_b2500000``."""
    return f"p{partners}_m{messages}_b{round(sleep_cycles)}"


def parse_config_id(config: str) -> dict[str, float]:
    p, m, b = config.split("_")
    return {"partners": int(p[1:]), "messages": int(m[1:]), "sleep_cycles": float(b[1:])}


def tidy_impact(files: dict[str, str]) -> pd.DataFrame:
    """One row per ImpactB sample, tagged with the component running beside it.

    ``files`` maps a component to its ImpactB result file.
    """
    data = read_tidy(list(files.values()), component=list(files))
    data["latency_us"] = data["rtt_us"] / 2
    return data[["component", "pair", "time_s", "latency_us"]]


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
    return data.reindex(columns=columns)


def _alone(runtimes: pd.DataFrame) -> pd.Series:
    alone = runtimes[runtimes["partner_kind"] == ALONE]
    if alone.empty:
        raise ValueError("no runs of the applications alone: degradation needs a baseline")
    return alone.groupby("application")["runtime_s"].mean()


def _relative(runtimes: pd.DataFrame, kind: str) -> pd.DataFrame:
    base = _alone(runtimes)
    rows = runtimes[runtimes["partner_kind"] == kind]
    mean = rows.groupby(["application", "partner"], as_index=False)["runtime_s"].mean()
    missing = sorted(set(mean["application"]) - set(base.index))
    if missing:
        raise ValueError(f"no runs alone of {missing}")
    mean["runtime_alone_s"] = mean["application"].map(base)
    mean["degradation"] = mean["runtime_s"] / mean["runtime_alone_s"] - 1
    return mean


def degradation(runtimes: pd.DataFrame) -> pd.DataFrame:
    """``application, config, degradation`` of every application beside every configuration."""
    table = _relative(runtimes, COMPRESSION).rename(columns={"partner": "config"})
    return table[["application", "config", "runtime_s", "runtime_alone_s", "degradation"]]


def measured_slowdowns(runtimes: pd.DataFrame) -> pd.DataFrame:
    """``application, partner, measured``: the slowdown of each application beside each one."""
    table = _relative(runtimes, APPLICATION).rename(columns={"degradation": "measured"})
    return table[["application", "partner", "runtime_s", "runtime_alone_s", "measured"]]


def utilization_table(impact: pd.DataFrame) -> pd.DataFrame:
    """Mean, spread and queue utilisation of every ImpactB component (Fig. 3, 6)."""
    stats = impact.groupby("component")["latency_us"].agg(
        samples="count", mean_latency_us="mean", std_latency_us="std", min_latency_us="min"
    )
    u = queue.utilizations(impact).set_index("component")["utilization"]
    return stats.join(u).reset_index()


def predictions(impact: pd.DataFrame, runtimes: pd.DataFrame) -> pd.DataFrame:
    """Every method's prediction of every measured pairing, next to the measurement."""
    measured = measured_slowdowns(runtimes)
    compression = degradation(runtimes)[["application", "config", "degradation"]]
    pairs = measured[["application", "partner"]]
    frames = [lookup.predict(impact, compression, pairs, m) for m in lookup.METHODS]
    frames.append(queue.predict(impact, compression, pairs))
    predicted = pd.concat(frames, ignore_index=True)
    table = predicted.merge(measured[["application", "partner", "measured"]], how="left")
    table["error"] = table["measured"] - table["predicted"]
    return table


def error_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per method: mean absolute error, quartiles of the error and the paper's claims.

    Errors are in slowdown points (0.10 = 10 percentage points), as Fig. 8-9.
    """
    rows = []
    for method, group in table.groupby("method", sort=False):
        err = group["error"].to_numpy(float)
        absolute = np.abs(err)
        q = np.quantile(err, [0, 0.25, 0.5, 0.75, 1])
        rows.append(
            {
                "method": method,
                "label": METHODS[method],
                "pairings": len(err),
                "mean_abs_error": absolute.mean(),
                "within_10pct": float(np.mean(absolute < 0.10)),
                "within_20pct": float(np.mean(absolute < 0.20)),
                "min": q[0],
                "q1": q[1],
                "median": q[2],
                "q3": q[3],
                "max": q[4],
            }
        )
    return pd.DataFrame(rows)


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
