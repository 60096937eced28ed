"""Seed 004 end to end: latency under load, fitted distributions, injection, statistics.

Characterisation (Sec. 5). At every congestion level (a share of the link
rate) ``loadgen`` pairs load every involved node while a probe measures the
round trip of the smallest message: ``tcpping`` at the *packet level* (a
plain TCP socket, no MPI: the paper's ``ib_write_lat``) and ``pingpong`` at
the *library level* (MPI). Latency is half the round trip. The packet-level
samples of each level are fitted (:func:`netnoise.studies.latency_variation.fits.fit_levels`):
a log-normal, a constant delay of the same mean (the paper's "uniform") and
log-normals with the scale at 25/50/75 % of the fit and the same mean.

Injection (Sec. 6). Every fitted distribution becomes an injector table
(512 × 8 delays) and a seed file; the probes, ``barrier`` and the
applications then run on the idle network with ``libnnlatency.so``
delaying every send by a delay drawn from the table. The ``zero`` table
(every delay 0) is the reference "zero injected latency" of Fig. 15–16: the
same library, the same bookkeeping, no delay.

Statistics (Sec. 6–7). Kolmogorov–Smirnov normality of every sample,
Mann–Whitney U of uniform against log-normal, Pearson's r of application
runtime against the injected mean and standard deviation, Fisher's z of
r_mean against r_std (Table 4), and the fixed-mean comparisons of Fig. 15–16.

Tidy tables (all CSV, the only inputs of the figures):

- characterisation samples: ``probe, level, pair, iteration, rtt_us, latency_us``;
- load: ``probe, level, rank, target_mbps, achieved_mbps``;
- injected samples: ``experiment, level, distribution, sample, value_us``
  (``value_us`` is the one-way latency of a probe, the slowest rank's time of
  a barrier);
- runtimes: ``application, level, distribution, run, runtime_s, comm_s``;
- reports: one row per rank and injected run, the injector's report.
"""

from __future__ import annotations

import math
import os
import re
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from netnoise.atomic import write_csv
from netnoise.io import read_benchmark
from netnoise.platform import Platform
from netnoise.run import Job, corun
from netnoise.studies.latency_variation import fits as latency
from netnoise.studies.latency_variation import injector, stats
from netnoise.summary import describe

#: Latency probes: packet level (TCP socket) and library level (MPI).
PROBES = ("tcpping", "pingpong")
LEVEL_LABELS = {"tcpping": "packet level (tcpping)", "pingpong": "library level (MPI pingpong)"}
#: Library-level experiment beside the probes.
BARRIER = "barrier"
VALIDATION_EXPERIMENTS = (*PROBES, BARRIER)
#: The two distributions of Sec. 6 (Fig. 5–12).
VALIDATION_DISTRIBUTIONS = ("uniform", "lognorm")
#: The table of zero delays: the reference of Fig. 15–16.
ZERO = "zero"
#: Our proxy applications named by the NPB benchmark of Table 4 each stands for
#: (csrc/apps/README.md); NPB IS has no proxy.
PAPER_APPLICATIONS = {
    "fft_transpose": "FT",
    "cg_solver": "CG",
    "multigrid": "MG",
    "lu_wavefront": "LU",
}
_POINT = re.compile(r"^L(\d+)_([a-z][a-z0-9_]*)$")


# ------------------------------------------------------------------ names


def point_name(level: int, distribution: str) -> str:
    """File-name id of one injected distribution: ``L20_lognorm``, or ``zero``."""
    return ZERO if distribution == ZERO else f"L{int(level)}_{distribution}"


def parse_point(point: str) -> tuple[int | None, str]:
    """(level, distribution) of a :func:`point_name`; the zero table has no level."""
    if point == ZERO:
        return None, ZERO
    match = _POINT.match(point)
    if match is None:
        raise ValueError(f"{point!r} is not a point name such as L20_lognorm or zero")
    return int(match.group(1)), match.group(2)


def distribution_names(fractions: Iterable[float]) -> list[str]:
    """The five distributions of a level, in :func:`latency.distributions`' order."""
    tags = [f"lognorm_scale{100 * float(f):g}" for f in sorted(fractions, reverse=True)]
    return ["lognorm", "uniform", *tags]


# ---------------------------------------------------------- characterisation


def tidy_characterization(records: Sequence[tuple[str, int, str]]) -> pd.DataFrame:
    """One row per probe sample; records are (probe, level, result file)."""
    frames = []
    for probe, level, path in records:
        data = read_benchmark(path).data
        frames.append(
            pd.DataFrame(
                {
                    "probe": probe,
                    "level": int(level),
                    "pair": data["pair"],
                    "iteration": data["iteration"],
                    "rtt_us": data["rtt_us"],
                    "latency_us": data["rtt_us"] / 2,
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def tidy_load(records: Sequence[tuple[str, int, str]]) -> pd.DataFrame:
    """One row per loadgen rank: the load each probe ran beside; (probe, level, file)."""
    frames = []
    for probe, level, path in records:
        data = read_benchmark(path).data
        frames.append(
            pd.DataFrame(
                {
                    "probe": probe,
                    "level": int(level),
                    "rank": data["rank"],
                    "target_mbps": data["target_mbps"],
                    "achieved_mbps": data["achieved_mbps"],
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def characterization_table(samples: pd.DataFrame, load: pd.DataFrame) -> pd.DataFrame:
    """Fig. 2–3 as a table: latency statistics per probe and level, with the load achieved."""
    table = describe(samples, ["probe", "level"], "latency_us")
    achieved = load.groupby(["probe", "level"], as_index=False).agg(
        target_mbps=("target_mbps", "mean"), achieved_mbps=("achieved_mbps", "mean")
    )
    return table.merge(achieved, on=["probe", "level"], how="left")


def fit_characterization(
    samples: pd.DataFrame,
    probe: str,
    fractions: Sequence[float],
    mean_from: str,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Sec. 5.3 on one probe's samples: (fits per level, the five distributions per level)."""
    chosen = samples[samples["probe"] == probe]
    if chosen.empty:
        raise ValueError(f"no samples of probe {probe!r} to fit")
    fits = latency.fit_levels(chosen[["level", "latency_us"]], fractions, mean_from=mean_from)
    fits.insert(1, "probe", probe)
    return fits, latency.distributions(fits)


def _seed(*words: int) -> int:
    """A 64-bit seed for the injector, independent for every tuple of words."""
    return int(np.random.SeedSequence([int(w) for w in words]).generate_state(1, np.uint64)[0])


def write_injector_files(
    dists: pd.DataFrame, directory: str | os.PathLike[str], unit: str, seed: int
) -> pd.DataFrame:
    """Every distribution as ``<point>.tab`` and ``<point>.seed``, plus the zero table.

    Returns ``dists`` with the ``point`` name and what the table holds
    (``table_mean_us``, ``table_std_us``, ``table_min_us``, ``table_max_us``):
    the mean and spread the injector draws from, after rounding to ``unit``.
    """
    directory = Path(directory)
    rows = []
    records = [*dists.to_dict("records"), {"level": None, "distribution": ZERO}]
    for index, row in enumerate(records):
        point = point_name(row["level"], row["distribution"])
        table, seed_file = directory / f"{point}.tab", directory / f"{point}.seed"
        if row["distribution"] == ZERO:
            injector.write_table(injector.constant_table(0), table, unit=unit)
            injector.write_seed(seed_file, _seed(seed, index))
            summary = {"table_mean": 0.0, "table_std": 0.0, "table_min": 0.0, "table_max": 0.0}
            row = {**row, "family": "constant", "mean_us": 0.0, "std_us": 0.0}
        else:
            summary = latency.write_distribution(
                latency.frozen_distribution(row), table, seed_file, unit, seed=_seed(seed, index)
            )
        rows.append(
            {
                **row,
                "point": point,
                **{f"{k}_us": summary[k] for k in ("table_mean", "table_std", "table_min")},
                "table_max_us": summary["table_max"],
            }
        )
    return pd.DataFrame(rows)


# ------------------------------------------------------------------ injection


def rank_seed_files(seed_file: str | os.PathLike[str], ranks: int, directory: Path) -> str:
    """One seed file per rank (``seed.<rank>``), all derived from ``seed_file``.

    The injector reads ``NN_LATENCY_SEED`` with ``%r`` replaced by the rank;
    one seed for every rank would make all ranks draw the same delays in the
    same order. Returns the ``%r`` pattern.
    """
    base = injector.read_seed(seed_file)
    for rank in range(ranks):
        injector.write_seed(directory / f"seed.{rank}", _seed(base, rank))
    return str(directory / "seed.%r")


def run_with_injector(
    platform: Platform,
    job: Job,
    table: str | os.PathLike[str],
    seed_file: str | os.PathLike[str],
    reports_output: str | os.PathLike[str],
    *,
    library: str | os.PathLike[str],
    level: str,
    unit: str,
    wait: str,
    log: str | os.PathLike[str],
    timeout_s: float,
    config: dict[str, Any] | None = None,
    inputs: dict[str, str | os.PathLike[str]] | None = None,
) -> pd.DataFrame:
    """Run ``job`` with every send delayed from ``table``; keep every rank's report.

    The injector runs strictly (a bad table fails the run instead of
    disabling the library). Reports and per-rank seeds go to a scratch
    directory beside ``reports_output``, which every node of a cluster sees
    when the results directory is shared. The reports, one row per rank,
    are written to ``reports_output`` once the run succeeded.
    """
    out = Path(reports_output)
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".{out.name}.", dir=out.parent) as scratch:
        scratch = Path(scratch)
        env = injector.environment(
            table,
            rank_seed_files(seed_file, job.ranks, scratch),
            level=level,
            unit=unit,
            strict=True,
            report=scratch / "report.%r",
            library=library,
            wait=wait,
        )
        corun(
            platform,
            replace(job, env={**job.env, **env}),
            log=log,
            timeout_s=timeout_s,
            config=config,
            inputs=inputs,
        )
        reports = read_reports(scratch.glob("report.*"))
    if len(reports) != job.ranks:
        raise RuntimeError(
            f"{job.name}: {len(reports)} injector reports for {job.ranks} ranks; see {log}"
        )
    write_csv(out, reports)
    return reports


def read_reports(paths: Iterable[str | os.PathLike[str]]) -> pd.DataFrame:
    """The injector's reports as one row each, ordered by rank."""
    rows = [injector.read_report(p) for p in paths if not Path(p).name.startswith(".")]
    if not rows:
        return pd.DataFrame()
    return pd.DataFrame(rows).sort_values("rank", ignore_index=True)


def tidy_injected_samples(records: Sequence[tuple[str, str, str]]) -> pd.DataFrame:
    """One row per sample of a probe or barrier run; records are (experiment, point, file)."""
    frames = []
    for experiment, point, path in records:
        level, distribution = parse_point(point)
        data = read_benchmark(path).data
        values = data["time_us"] if experiment == BARRIER else data["rtt_us"] / 2
        frames.append(
            pd.DataFrame(
                {
                    "experiment": experiment,
                    "level": level,
                    "distribution": distribution,
                    "sample": np.arange(len(data)),
                    "value_us": values.to_numpy(float),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def tidy_runtimes(records: Sequence[tuple[str, str, str]]) -> pd.DataFrame:
    """One row per application run; records are (application, point, file)."""
    frames = []
    for application, point, path in records:
        level, distribution = parse_point(point)
        data = read_benchmark(path).data
        frames.append(
            pd.DataFrame(
                {
                    "application": application,
                    "level": level,
                    "distribution": distribution,
                    "run": data["run"],
                    "runtime_s": data["runtime_s"],
                    "comm_s": data["comm_s"],
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def tidy_reports(records: Sequence[tuple[str, str, str]]) -> pd.DataFrame:
    """Every rank's injector report; records are (experiment, point, reports CSV)."""
    frames = []
    for experiment, point, path in records:
        level, distribution = parse_point(point)
        # The report's own "level" is the injector's (mpi or tcp).
        frame = pd.read_csv(path).rename(columns={"level": "injector_level"})
        frame.insert(0, "distribution", distribution)
        frame.insert(0, "level", level)
        frame.insert(0, "experiment", experiment)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


# ------------------------------------------------------------------ analysis

REPORT_KEYS = ["experiment", "level", "distribution"]


def injector_delays(reports: pd.DataFrame) -> pd.DataFrame:
    """Achieved against intended mean delay per experiment, level and distribution.

    ``intended_mean_us`` is the table's mean, ``drawn_mean_us`` the mean of the
    entries the ranks drew, ``achieved_mean_us`` the time the ranks actually
    held their sends back (all delays of all ranks, weighted by count);
    ``late_share`` the share of waits that lost their core and overshot.
    """
    frame = reports[reports["delays"] > 0].copy()
    frame["drawn_ns"] = frame["drawn_total_ns"]
    grouped = frame.groupby(REPORT_KEYS, dropna=False)
    table = grouped.agg(
        ranks=("rank", "count"),
        delays=("delays", "sum"),
        intended_mean_ns=("table_mean_ns", "mean"),
        drawn_ns=("drawn_ns", "sum"),
        total_ns=("total_ns", "sum"),
        late_delays=("late_delays", "sum"),
    ).reset_index()
    table["intended_mean_us"] = table["intended_mean_ns"] / 1000
    table["drawn_mean_us"] = table["drawn_ns"] / table["delays"] / 1000
    table["achieved_mean_us"] = table["total_ns"] / table["delays"] / 1000
    table["achieved_minus_intended_us"] = table["achieved_mean_us"] - table["intended_mean_us"]
    table["late_share"] = table["late_delays"] / table["delays"]
    columns = [
        *REPORT_KEYS,
        "ranks",
        "delays",
        "intended_mean_us",
        "drawn_mean_us",
        "achieved_mean_us",
        "achieved_minus_intended_us",
        "late_share",
    ]
    return table[columns]


def injector_delay_summary(delays: pd.DataFrame) -> pd.DataFrame:
    """Achieved against intended mean delay per distribution and level, over all experiments."""
    frame = delays.assign(
        intended_total=delays["intended_mean_us"] * delays["delays"],
        drawn_total=delays["drawn_mean_us"] * delays["delays"],
        achieved_total=delays["achieved_mean_us"] * delays["delays"],
        late=delays["late_share"] * delays["delays"],
    )
    table = (
        frame.groupby(["level", "distribution"], dropna=False)[
            ["delays", "intended_total", "drawn_total", "achieved_total", "late"]
        ]
        .sum()
        .reset_index()
    )
    for name in ("intended", "drawn", "achieved"):
        table[f"{name}_mean_us"] = table.pop(f"{name}_total") / table["delays"]
    table["late_share"] = table.pop("late") / table["delays"]
    table["achieved_over_intended"] = table["achieved_mean_us"] / table["intended_mean_us"]
    return table


def validation_table(samples: pd.DataFrame, points: pd.DataFrame) -> pd.DataFrame:
    """Fig. 5–10 as a table: mean and median per experiment, level and distribution.

    For the two probes one delay holds each direction of a round trip, so the
    one-way latency should rise by the table's mean: ``intended_mean_us`` is
    the zero table's mean plus ``table_mean_us``. A barrier's critical path has
    no such simple count: it is compared with its zero-table value only.
    """
    table = (
        samples.groupby(["experiment", "level", "distribution"], dropna=False)["value_us"]
        .agg(samples="count", mean_us="mean", median_us="median", std_us="std")
        .reset_index()
    )
    zero = table[table["distribution"] == ZERO].set_index("experiment")
    table["zero_mean_us"] = table["experiment"].map(zero["mean_us"])
    table["zero_median_us"] = table["experiment"].map(zero["median_us"])
    injected = points[["level", "distribution", "table_mean_us", "table_std_us"]]
    table = table.merge(injected, on=["level", "distribution"], how="left")
    zero_rows = table["distribution"] == ZERO
    table.loc[zero_rows, ["table_mean_us", "table_std_us"]] = 0.0
    probe = table["experiment"].isin(PROBES)
    table["intended_mean_us"] = np.where(
        probe, table["zero_mean_us"] + table["table_mean_us"], np.nan
    )
    table["rise_mean_us"] = table["mean_us"] - table["zero_mean_us"]
    return table


def normality_table(samples: pd.DataFrame, runtimes: pd.DataFrame) -> pd.DataFrame:
    """Kolmogorov–Smirnov normality of every latency and runtime sample (Sec. 6)."""
    groups = [
        (experiment, level, dist, group["value_us"])
        for (experiment, level, dist), group in samples.groupby(
            ["experiment", "level", "distribution"], dropna=False
        )
    ]
    groups += [
        (app, level, dist, group["runtime_s"])
        for (app, level, dist), group in runtimes.groupby(
            ["application", "level", "distribution"], dropna=False
        )
    ]
    rows = []
    for experiment, level, dist, values in groups:
        row = {"experiment": experiment, "level": level, "distribution": dist}
        values = values.to_numpy(float)
        if len(values) < 3 or np.ptp(values) == 0:
            rows.append({**row, "n": len(values)})
            continue
        result = stats.ks_normality(values)
        rows.append(
            {
                **row,
                "n": result["n"],
                "statistic": result["statistic"],
                "pvalue": result["pvalue"],
                "normal": result["normal"],
            }
        )
    return pd.DataFrame(rows)


def mann_whitney_table(samples: pd.DataFrame, runtimes: pd.DataFrame) -> pd.DataFrame:
    """Mann–Whitney U of uniform against log-normal injection per experiment and level."""
    frames = [
        samples.rename(columns={"value_us": "value"}),
        runtimes.rename(columns={"application": "experiment", "runtime_s": "value"}),
    ]
    rows = []
    for frame in frames:
        for (experiment, level), group in frame.groupby(["experiment", "level"]):
            uniform = group.loc[group["distribution"] == "uniform", "value"]
            lognorm = group.loc[group["distribution"] == "lognorm", "value"]
            if uniform.empty or lognorm.empty:
                continue
            result = stats.mann_whitney(lognorm, uniform)
            rows.append(
                {
                    "experiment": experiment,
                    "level": level,
                    "n_lognorm": result["n_a"],
                    "n_uniform": result["n_b"],
                    "median_lognorm": result["median_a"],
                    "median_uniform": result["median_b"],
                    "u": result["u"],
                    "pvalue": result["pvalue"],
                    "prob_lognorm_greater": result["prob_superiority"],
                }
            )
    return pd.DataFrame(rows)


def correlation_runs(runtimes: pd.DataFrame, points: pd.DataFrame) -> pd.DataFrame:
    """Every application run under a fitted distribution with the injected mean and std.

    The zero table is the reference of Fig. 15–16, not one of the
    congestion levels' distributions, and stays out of the correlations.
    """
    injected = points[["level", "distribution", "table_mean_us", "table_std_us"]]
    runs = runtimes[runtimes["distribution"] != ZERO].merge(
        injected, on=["level", "distribution"], how="left", validate="many_to_one"
    )
    if runs["table_mean_us"].isna().any():
        missing = runs.loc[runs["table_mean_us"].isna(), ["level", "distribution"]]
        raise ValueError(f"runs without an injected distribution: {missing.drop_duplicates()}")
    return runs.rename(
        columns={"table_mean_us": "latency_mean_us", "table_std_us": "latency_std_us"}
    )


def table4(runs: pd.DataFrame, published: pd.DataFrame) -> pd.DataFrame:
    """Table 4 (r_mean, r_std, Fisher's p, n) per application beside the published row."""
    ours = stats.correlation_table(runs)
    ours.insert(1, "paper_application", ours["application"].map(PAPER_APPLICATIONS).fillna(""))
    paper = published.rename(
        columns={
            "application": "paper_application",
            "r_mean": "paper_r_mean",
            "r_std": "paper_r_std",
            "significant_p": "paper_p",
        }
    )[["paper_application", "paper_r_mean", "paper_r_std", "paper_p"]]
    return ours.merge(paper, on="paper_application", how="outer").sort_values(
        "paper_application", key=lambda s: s.map(_paper_order(published)), ignore_index=True
    )


def _paper_order(published: pd.DataFrame) -> dict[str, int]:
    return {name: i for i, name in enumerate(published["application"])}


def fixed_mean_table(runtimes: pd.DataFrame, points: pd.DataFrame, levels: Sequence[int]):
    """Fig. 15–16: mean runtime per distribution at fixed-mean levels, relative to zero."""
    zero = runtimes[runtimes["distribution"] == ZERO].groupby("application")["runtime_s"].mean()
    chosen = runtimes[runtimes["level"].isin(list(levels))]
    table = (
        chosen.groupby(["level", "application", "distribution"])["runtime_s"]
        .agg(runs="count", runtime_mean_s="mean", runtime_std_s="std")
        .reset_index()
    )
    table["zero_runtime_s"] = table["application"].map(zero)
    table["difference_pct"] = (table["runtime_mean_s"] / table["zero_runtime_s"] - 1) * 100
    injected = points[["level", "distribution", "table_mean_us", "table_std_us"]]
    table = table.merge(injected, on=["level", "distribution"], how="left")
    return table.sort_values(["level", "application", "table_std_us"], ignore_index=True)


def runtime_summary(runtimes: pd.DataFrame) -> pd.DataFrame:
    """Fig. 11–12 as a table: mean and std of runtime per application, level, distribution."""
    return (
        runtimes.groupby(["application", "level", "distribution"], dropna=False)["runtime_s"]
        .agg(runs="count", mean_s="mean", std_s="std", median_s="median")
        .reset_index()
    )


def level_order(values: Iterable[Any]) -> list[int]:
    """Levels in increasing order, without the zero table's missing level."""
    return sorted(int(v) for v in values if v is not None and not _is_nan(v))


def _is_nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)
