"""Seed 004 Sec. 6–7: the fitted distributions injected into probes, barrier and applications.

Every fitted distribution becomes an injector table (512 × 8 delays) and a
seed file; the probes, ``barrier`` and the applications then run on the idle
network with ``libnnlatency.so`` delaying every send by a delay drawn from
the table. The ``zero`` table (every delay 0) is the reference "zero injected
latency" of Fig. 15–16: the same library, the same bookkeeping, no delay.

Tidy tables (CSV):

- injected samples: ``experiment, level, distribution, sample, value_us``
  (``value_us`` is the one-way latency of a probe, the slowest rank's time of
  a barrier);
- runtimes: ``application, level, distribution, run, runtime_s, comm_s``;
- reports: one row per rank and injected run, the injector's report.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from netnoise.atomic import write_csv
from netnoise.io import read_tidy
from netnoise.platform import Platform
from netnoise.run import Job, corun
from netnoise.studies.latency_variation import injector, level_fits, tables
from netnoise.studies.latency_variation.names import BARRIER, ZERO, parse_point, point_name

SAMPLE_COLUMNS = ["experiment", "level", "distribution", "sample", "value_us"]
RUNTIME_COLUMNS = ["application", "level", "distribution", "run", "runtime_s", "comm_s"]


def _seed(*words: int) -> int:
    """A 64-bit seed for the injector, independent for every tuple of words."""
    return int(np.random.SeedSequence([int(w) for w in words]).generate_state(1, np.uint64)[0])


# ------------------------------------------------------------ injector files


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
            summary = tables.write_distribution(
                level_fits.frozen_distribution(row), table, seed_file, unit, seed=_seed(seed, index)
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


# ------------------------------------------------------------------ runs


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
    sleep_margin_us: int | None = None,
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
            sleep_margin_us=sleep_margin_us,
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


# ------------------------------------------------------------------ tidy


def _read(records: Sequence[tuple[str, str, str]], name: str, **extra: list[Any]):
    """The result files of (``name``, point, file) records, tagged with the
    point's level and distribution (the zero table's level is None)."""
    names, points, paths = zip(*records, strict=True)
    parsed = [parse_point(point) for point in points]
    return read_tidy(
        list(paths),
        **{name: list(names)},
        level=[level for level, _ in parsed],
        distribution=[distribution for _, distribution in parsed],
        **extra,
    )


def tidy_injected_samples(records: Sequence[tuple[str, str, str]]) -> pd.DataFrame:
    """One row per sample of a probe or barrier run; records are (experiment, point, file)."""
    samples = _read(records, "experiment", file=list(range(len(records))))
    samples["sample"] = samples.groupby("file").cumcount()
    # A probe's one-way latency is half its round trip; a barrier's value is its time.
    samples["value_us"] = np.where(
        samples["experiment"] == BARRIER,
        samples.get("time_us", np.nan),
        samples.get("rtt_us", np.nan) / 2,
    ).astype(float)
    return samples[SAMPLE_COLUMNS]


def tidy_runtimes(records: Sequence[tuple[str, str, str]]) -> pd.DataFrame:
    """One row per application run; records are (application, point, file)."""
    return _read(records, "application")[RUNTIME_COLUMNS]


def tidy_reports(records: Sequence[tuple[str, str, str]]) -> pd.DataFrame:
    """Every rank's injector report; records are (experiment, point, reports CSV)."""
    frames = []
    for experiment, point, path in records:
        level, distribution = parse_point(point)
        # The report's own "level" is the injector's (mpi or tcp). Seeds span
        # 64 bits: as text they survive files whose seeds all fit int64 beside
        # files with larger ones (concatenated, both became float).
        frame = pd.read_csv(path, dtype={"seed": str}).rename(columns={"level": "injector_level"})
        frame.insert(0, "distribution", distribution)
        frame.insert(0, "level", level)
        frame.insert(0, "experiment", experiment)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)
