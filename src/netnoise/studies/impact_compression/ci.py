"""Seeded percentile-bootstrap confidence intervals of seed 000's utilisations and slowdowns.

Every measured quantity of the study is a statistic of independent sets of
samples: a slowdown of two sets of runs (beside something, alone), a
utilisation of two sets of ImpactB latencies (beside something, on the idle
switch). Each set is resampled with replacement on its own, the statistic
recomputed on every resample, and the 2.5th and 97.5th percentiles of the
replicates bound the 95 % interval. Generators are seeded from a fixed seed
and the name of what is resampled, so a table is the same on every run and
one quantity's interval does not change when another is added.

Percentile intervals are a little short with few samples: for a slowdown of
normal runtimes they covered the truth in 88 % of 1000 experiments of 5 runs
each, 94 % with 10 or 30 runs (tests/impact_compression/test_ci.py checks 30).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence

import numpy as np

RESAMPLES = 2000
SEED = 20130000
LEVEL = 0.95


def generator(name: str, seed: int = SEED) -> np.random.Generator:
    """The generator that resamples the set called ``name``."""
    return np.random.default_rng([seed, zlib.crc32(name.encode())])


def resamples(values: np.ndarray, rng: np.random.Generator, count: int = RESAMPLES) -> np.ndarray:
    """``count`` resamples of ``values`` with replacement, one per row."""
    values = np.asarray(values, dtype=float)
    return values[rng.integers(0, len(values), size=(count, len(values)))]


def percentile_interval(replicates: np.ndarray) -> tuple[float, float]:
    """The central ``LEVEL`` range of bootstrap replicates."""
    tail = (1 - LEVEL) / 2 * 100
    low, high = np.percentile(replicates, [tail, 100 - tail])
    return float(low), float(high)


def interval(
    samples: Sequence[np.ndarray],
    statistic: Callable[..., np.ndarray],
    name: str,
    *,
    count: int = RESAMPLES,
    seed: int = SEED,
) -> tuple[float, float]:
    """(low, high) of the 95 % percentile-bootstrap interval of ``statistic``.

    ``statistic(*samples)`` must reduce along the last axis: it is called once
    on every set's resamples, one per row. ``name`` says what is resampled (it
    seeds the generator). A set with fewer than two values has no spread to
    resample: the interval is (nan, nan).
    """
    if any(len(s) < 2 for s in samples):
        return float("nan"), float("nan")
    rng = generator(name, seed)
    return percentile_interval(statistic(*(resamples(s, rng, count) for s in samples)))


def relative_change(changed, base):
    """mean(changed) / mean(base) - 1 along the last axis: a slowdown or a degradation
    from two sets of runtimes."""
    return np.mean(changed, axis=-1) / np.mean(base, axis=-1) - 1
