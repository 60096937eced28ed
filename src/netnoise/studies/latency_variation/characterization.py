"""Seed 004 Sec. 5: latency under background load and the distributions fitted to it.

At every congestion level (a share of the link rate) ``loadgen`` pairs load
every involved node while a probe measures the round trip of the smallest
message: ``tcpping`` at the *packet level* (a plain TCP socket, no MPI: the
paper's ``ib_write_lat``) and ``pingpong`` at the *library level* (MPI).
Latency is half the round trip. The packet-level samples of each level are
fitted (:func:`netnoise.studies.latency_variation.level_fits.fit_levels`): a
log-normal, a constant delay of the same mean (the paper's "uniform") and
log-normals with the scale at 25/50/75 % of the fit and the same mean.

Tidy tables (CSV):

- samples: ``probe, level, pair, iteration, rtt_us, latency_us``;
- load: ``probe, level, rank, target_mbps, achieved_mbps``.

A platform that cannot run a probe beside a load (SimGrid: every launch is a
simulation of its own) takes both from a results bundle of one that can
(:func:`from_bundle`), and injects what that network showed.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from netnoise import bundle
from netnoise.io import read_tidy
from netnoise.studies.latency_variation import level_fits
from netnoise.summary import describe

SAMPLE_COLUMNS = ["probe", "level", "pair", "iteration", "rtt_us", "latency_us"]
LOAD_COLUMNS = ["probe", "level", "rank", "target_mbps", "achieved_mbps"]


def _read(records: Sequence[tuple[str, int, str]]) -> pd.DataFrame:
    probes, levels, paths = zip(*records, strict=True)
    return read_tidy(list(paths), probe=list(probes), level=[int(level) for level in levels])


def tidy_characterization(records: Sequence[tuple[str, int, str]]) -> pd.DataFrame:
    """One row per probe sample; records are (probe, level, result file)."""
    samples = _read(records)
    samples["latency_us"] = samples["rtt_us"] / 2
    return samples[SAMPLE_COLUMNS]


def tidy_load(records: Sequence[tuple[str, int, str]]) -> pd.DataFrame:
    """One row per loadgen rank: the load each probe ran beside; (probe, level, file)."""
    return _read(records)[LOAD_COLUMNS]


def from_bundle(
    path: str, levels: Sequence[int], field: str
) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """The samples and load of ``levels`` measured by the run of the bundle at
    ``path`` (config key ``field``), and where they come from in words; a level
    that run did not measure is refused."""
    samples, manifest = bundle.tidy_table(path, "latency_variation", "characterization")
    load, _ = bundle.tidy_table(path, "latency_variation", "load")
    missing = sorted(set(levels) - set(samples["level"]))
    if missing:
        raise ValueError(
            f"{field}: {path}'s run measured levels {sorted(set(samples['level']))}, not "
            f"{missing}; give latency_variation.characterize.levels among them"
        )
    source = (
        f"{bundle.shown(path)}: latency measured on {manifest['platform']} by netnoise "
        f"{manifest['netnoise_version']} ({manifest['git']['sha'][:12]})"
    )
    return (
        samples[samples["level"].isin(levels)][SAMPLE_COLUMNS],
        load[load["level"].isin(levels)][LOAD_COLUMNS],
        source,
    )


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
    stds_us: Sequence[float] = (),
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Sec. 5.3 on one probe's samples: (fits per level, the distributions per level:
    the paper's five and the grid of ``stds_us``)."""
    chosen = samples[samples["probe"] == probe]
    if chosen.empty:
        raise ValueError(f"no samples of probe {probe!r} to fit")
    fitted = level_fits.fit_levels(chosen[["level", "latency_us"]], fractions, mean_from=mean_from)
    fitted.insert(1, "probe", probe)
    return fitted, level_fits.distributions(fitted, stds_us)
