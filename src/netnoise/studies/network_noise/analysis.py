"""Seed 001 end to end: summaries of simulated runs and of the benchmark."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import scipy.stats

from netnoise.sim.congestion import summarize
from netnoise.sim.topology import describe


def point_name(figure: str, spec: str, ratio: float) -> str:
    """File-name-safe id of one simulated point."""
    safe = spec.replace(":", "-").replace(",", ".").replace("/", "_")
    return f"{figure}__{safe}__r{ratio:g}"


def dimensions(spec: str) -> int | None:
    """Number of torus dimensions of a SPEC, None for other topologies."""
    return len(spec.split(":", 1)[1].split("x")) if spec.startswith("torus:") else None


def simulation_summary(runs: list[pd.DataFrame], figures: list[str]) -> pd.DataFrame:
    """One row per simulated point: figure, topology, ratio, endpoints and the slowdown summary."""
    rows = []
    for frame, figure in zip(runs, figures, strict=True):
        first = frame.iloc[0]
        rows.append(
            {
                "figure": figure,
                "topology": first["topology"],
                "dimensions": dimensions(first["topology"]),
                "collective": first["collective"],
                "ratio": first["ratio"],
                "endpoints": first["endpoints"],
                "processes": first["processes"],
                **{f"slowdown_{k}": v for k, v in summarize(frame["slowdown"]).items()},
                "overhead_mean": frame["overhead"].mean(),
            }
        )
    return pd.DataFrame(rows).sort_values(["figure", "dimensions", "endpoints", "ratio"])


def topology_table(runs: list[pd.DataFrame], published: pd.DataFrame) -> pd.DataFrame:
    """Endpoints, switches and cables of every simulated topology beside the paper's counts.

    ``published`` has ``layout, endpoints, switches, spec, source``; rows are matched on
    the SPEC without its optional parallel-cable part (which the paper's counts ignore).
    """
    specs = sorted({frame["topology"].iloc[0] for frame in runs})
    rows = []
    for spec in specs:
        counts = describe(spec)
        base = "/".join(spec.split("/")[:2]) if spec.startswith("xgft:") else spec
        paper = published[published["spec"] == base]
        rows.append(
            {
                "topology": spec,
                **counts,
                "paper_layout": paper["layout"].iloc[0] if len(paper) else "",
                "paper_endpoints": paper["endpoints"].iloc[0] if len(paper) else None,
                "paper_switches": paper["switches"].iloc[0] if len(paper) else None,
            }
        )
    return pd.DataFrame(rows)


#: What the perturbing ranks of a benchmark point do (tidy column ``perturbation``):
#: exchange messages, or send nothing and keep cores busy (the CPU-only control), or
#: exchange the same messages on a layout where they share no link with the
#: collective (the unshared control, testbed only: every node on one switch), so
#: that what remains is the hosts' cost of moving them. A point at ratio 0 has no
#: perturbing ranks: it is the no-perturbation control.
PERTURBATIONS = ("network", "cpu", "unshared")
POINT_KEYS = ["collective", "ratio", "allocation", "perturbation"]
#: The perturbations that measure the network (the CPU control loads the cores).
NETWORK_MEASUREMENTS = ("network", "unshared")
#: The seed paper's numbers beside ours (001_9f0f9ede26bdffbe.txt, Sec. 2.1).
PAPER = {
    "splits": "128 (Sec. 2.1)",
    "max_slowdown_pct": "up to 150 (Sec. 2.1, Fig. 4: delays of up to 50 %)",
    "spearman_allocation": "rises with the allocation (Sec. 2.1, Fig. 5)",
    "allocation_rise": "grows with the processes, through a reproducible dent (Sec. 2.1, Fig. 5)",
}
BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED = 2000, 20090001


def with_perturbation(tidy: pd.DataFrame) -> pd.DataFrame:
    """The benchmark table with its ``perturbation`` column (``network`` where a
    table from before the CPU-only control has none); unknown values are an error."""
    if "perturbation" not in tidy.columns:
        return tidy.assign(perturbation="network")
    unknown = sorted(set(tidy["perturbation"]) - set(PERTURBATIONS))
    if unknown:
        raise ValueError(
            f"perturbation: unknown value(s) {unknown}; allowed: {', '.join(PERTURBATIONS)}"
        )
    return tidy


def is_measured(points: pd.DataFrame) -> pd.Series:
    """The points a claim is about: network perturbation at a ratio above 0 (not a
    control)."""
    return (points["perturbation"] == "network") & (points["ratio"] > 0)


def ratio_sweep(points: pd.DataFrame, perturbation: str = "network") -> pd.DataFrame:
    """The points of one perturbation's ratio sweep with the ratio-0 control (of
    either perturbation: without perturbing ranks they are the same run) as its
    first point."""
    return points[(points["perturbation"] == perturbation) | (points["ratio"] == 0)]


def split_slowdowns(tidy: pd.DataFrame) -> pd.DataFrame:
    """One row per point and random split: the split's mean perturbed and
    unperturbed times (over its repetitions) and its slowdown in %."""
    if "split" not in tidy.columns:
        raise ValueError("the benchmark table has no split column (one per random split)")
    tidy = with_perturbation(tidy)
    means = tidy.groupby([*POINT_KEYS, "split", "perturbed"])["time_us"].agg(["sum", "count"])
    wide = means.unstack("perturbed")
    table = pd.DataFrame(
        {
            "perturbed_sum_us": wide[("sum", 1)],
            "perturbed_count": wide[("count", 1)],
            "unperturbed_sum_us": wide[("sum", 0)],
            "unperturbed_count": wide[("count", 0)],
        }
    ).reset_index()
    table["slowdown_pct"] = (
        100
        * (table["perturbed_sum_us"] / table["perturbed_count"])
        / (table["unperturbed_sum_us"] / table["unperturbed_count"])
    )
    return table


def _pooled_slowdown(p_sum, p_count, u_sum, u_count, axis=-1):
    return (
        100
        * (np.sum(p_sum, axis=axis) / np.sum(p_count, axis=axis))
        / (np.sum(u_sum, axis=axis) / np.sum(u_count, axis=axis))
    )


def _pooled_added_us(p_sum, p_count, u_sum, u_count, axis=-1):
    perturbed = np.sum(p_sum, axis=axis) / np.sum(p_count, axis=axis)
    return perturbed - np.sum(u_sum, axis=axis) / np.sum(u_count, axis=axis)


_SPLIT_COLUMNS = ["perturbed_sum_us", "perturbed_count", "unperturbed_sum_us", "unperturbed_count"]


def slowdown_interval(splits: pd.DataFrame, seed: int = BOOTSTRAP_SEED) -> tuple[float, float]:
    """95 % percentile-bootstrap interval of one point's slowdown, resampling its
    random splits (each with its perturbed and unperturbed repetitions): the
    splits are the independent units, repetitions of one split share its
    placement. Fewer than two splits: (nan, nan)."""
    return _split_interval(splits, _pooled_slowdown, seed)


def added_time(splits: pd.DataFrame, seed: int = BOOTSTRAP_SEED) -> tuple[float, float, float]:
    """The time the perturbation adds to one point's collective call (µs: perturbed
    mean minus unperturbed mean) and its 95 % interval, resampled as
    ``slowdown_interval`` does. Unlike the slowdown it does not shrink as the
    collective's own time grows with its communicator."""
    value = float(_pooled_added_us(*(splits[c].to_numpy(float) for c in _SPLIT_COLUMNS)))
    return (value, *_split_interval(splits, _pooled_added_us, seed))


def _split_interval(splits: pd.DataFrame, statistic, seed: int) -> tuple[float, float]:
    if len(splits) < 2:
        return float("nan"), float("nan")
    result = scipy.stats.bootstrap(
        tuple(splits[c].to_numpy(float) for c in _SPLIT_COLUMNS),
        statistic,
        n_resamples=BOOTSTRAP_RESAMPLES,
        paired=True,
        vectorized=True,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


#: Each control of a measured point: what its run is, beside the point's
#: collective and allocation. The ratio-0 run serves every ratio (network
#: preferred, should both have run); the CPU-only and the unshared ones are at the
#: point's ratio.
CONTROL_RUNS = {
    "ratio0": lambda points, point: points[points["ratio"] == 0].sort_values(
        "perturbation", key=lambda p: p != "network"
    ),
    "cpu": lambda points, point: points[
        (points["perturbation"] == "cpu") & (points["ratio"] == point["ratio"])
    ],
    "unshared": lambda points, point: points[
        (points["perturbation"] == "unshared") & (points["ratio"] == point["ratio"])
    ],
}


def control_of(points: pd.DataFrame, point: pd.Series, control: str) -> pd.Series | None:
    """The ``control`` run (CONTROL_RUNS) of ``point``, or None where it did not run."""
    same = points[
        (points["collective"] == point["collective"])
        & (points["allocation"] == point["allocation"])
    ]
    found = CONTROL_RUNS[control](same, point)
    return found.iloc[0] if len(found) else None


def benchmark_slowdown(tidy: pd.DataFrame, clock: str = "wall") -> pd.DataFrame:
    """One row per point (collective, ratio, allocation, perturbation): its
    application communicator's size (nan where the table lacks it), the mean
    and median perturbed and unperturbed collective times, the slowdown (perturbed
    mean / unperturbed mean in %, Fig. 4 and 5) with its 95 % interval over the
    random splits, and one-sided Mann-Whitney p-values: of the perturbed times
    being larger than the unperturbed ones (Fig. 3's notches ask the same), and,
    for a measured point (network perturbation, ratio above 0), of its per-split
    slowdowns being larger than those of each of its control runs (CONTROL_RUNS:
    ``ratio0_*``, ``cpu_*``, ``unshared_*``; empty without that control). The
    ``clock`` column says how the times were taken: ``wall`` on real cores,
    ``simulated`` in a simulation (SimGrid), where no host core enters a run."""
    from scipy.stats import mannwhitneyu

    tidy = with_perturbation(tidy)
    splits = split_slowdowns(tidy)
    rows = []
    for key, group in tidy.groupby(POINT_KEYS):
        perturbed = group.loc[group["perturbed"] == 1, "time_us"]
        quiet = group.loc[group["perturbed"] == 0, "time_us"]
        mine = splits[(splits[POINT_KEYS] == pd.Series(key, index=POINT_KEYS)).all(axis=1)]
        low, high = slowdown_interval(mine)
        rows.append(
            {
                **dict(zip(POINT_KEYS, key, strict=True)),
                "application_ranks": (
                    group["application_ranks"].iloc[0]
                    if "application_ranks" in group.columns
                    else np.nan
                ),
                "splits": len(mine),
                "samples": len(perturbed),
                "perturbed_mean_us": perturbed.mean(),
                "unperturbed_mean_us": quiet.mean(),
                "perturbed_median_us": perturbed.median(),
                "unperturbed_median_us": quiet.median(),
                "slowdown_pct": 100 * perturbed.mean() / quiet.mean(),
                "slowdown_ci_low": low,
                "slowdown_ci_high": high,
                "p_perturbed_slower": mannwhitneyu(perturbed, quiet, alternative="greater").pvalue,
            }
        )
    table = pd.DataFrame(rows)
    by_split = splits.groupby(POINT_KEYS)["slowdown_pct"]
    for control in CONTROL_RUNS:
        slowdown, p_value = [], []
        for _, point in table.iterrows():
            found = control_of(table, point, control) if is_measured(point) else None
            if found is None:
                slowdown.append(np.nan)
                p_value.append(np.nan)
                continue
            ours = by_split.get_group(tuple(point[POINT_KEYS]))
            theirs = by_split.get_group(tuple(found[POINT_KEYS]))
            slowdown.append(found["slowdown_pct"])
            p_value.append(mannwhitneyu(ours, theirs, alternative="greater").pvalue)
        table[f"{control}_slowdown_pct"] = slowdown
        table[f"p_vs_{control}"] = p_value
    table["clock"] = clock
    return table


#: Up to this many points the rank correlation's p-value enumerates every ordering.
EXACT_SPEARMAN_POINTS = 8


def _spearman(x: pd.Series, y: pd.Series) -> tuple[float, float]:
    """Spearman's ρ and the one-sided p-value of a rank correlation at least this
    large arising by chance: exact (the share of the orderings of y's ranks that
    reach it) up to EXACT_SPEARMAN_POINTS points, else scipy's t approximation.
    With the few points of a sweep it matters: ρ = 1 over 4 points has p = 1/24."""
    rank_x, rank_y = scipy.stats.rankdata(x), scipy.stats.rankdata(y)
    if np.ptp(rank_x) == 0 or np.ptp(rank_y) == 0:
        return float("nan"), float("nan")
    rho = float(np.corrcoef(rank_x, rank_y)[0, 1])
    if len(x) > EXACT_SPEARMAN_POINTS:
        return rho, float(scipy.stats.spearmanr(x, y, alternative="greater").pvalue)
    orderings = np.array(list(itertools.permutations(rank_y)))
    centred_x = rank_x - rank_x.mean()
    centred = orderings - orderings.mean(axis=1, keepdims=True)
    rhos = centred @ centred_x / (np.linalg.norm(centred, axis=1) * np.linalg.norm(centred_x))
    return rho, float(np.mean(rhos >= rho - 1e-12))


CORRELATION_COLUMNS = [
    "perturbation",
    "against",
    "collective",
    "allocation",
    "ratio",
    "points",
    "spearman",
    "p",
]


def correlations(slowdown: pd.DataFrame, value: str = "slowdown_pct") -> pd.DataFrame:
    """Spearman correlation of the slowdown (or another column, ``value``) with the
    perturbation ratio (per perturbation, collective and allocation, the ratio-0
    control run as the curve's first point) and with the allocation (per
    perturbation, collective and ratio above 0), wherever at least three distinct
    values were measured: CORRELATION_COLUMNS. The CPU-only control's curves show
    how much of a trend the shared cores alone make."""
    slowdown = with_perturbation(slowdown)

    def trend(perturbation, against, collective, group, allocation=np.nan, ratio=np.nan):
        rho, p = _spearman(group[against], group[value])
        points = group[against].nunique()
        return [perturbation, against, collective, allocation, ratio, points, rho, p]

    rows = []
    for perturbation in sorted(set(slowdown["perturbation"])):
        sweep = ratio_sweep(slowdown, perturbation)
        for (collective, allocation), group in sweep.groupby(["collective", "allocation"]):
            if group["ratio"].nunique() >= 3:
                rows.append(trend(perturbation, "ratio", collective, group, allocation=allocation))
        perturbed = slowdown[(slowdown["perturbation"] == perturbation) & (slowdown["ratio"] > 0)]
        for (collective, ratio), group in perturbed.groupby(["collective", "ratio"]):
            if group["allocation"].nunique() >= 3:
                rows.append(trend(perturbation, "allocation", collective, group, ratio=ratio))
    return pd.DataFrame(rows, columns=CORRELATION_COLUMNS)


ALLOCATION_STEP_COLUMNS = [
    "collective",
    "ratio",
    "smaller",
    "larger",
    "slowdown_smaller_pct",
    "slowdown_larger_pct",
    "p_not_larger",
]


def allocation_steps(tidy: pd.DataFrame, seed: int = BOOTSTRAP_SEED) -> pd.DataFrame:
    """Each step of the network perturbation's allocation sweep (per collective and
    ratio above 0, consecutive allocations, then the smallest against the largest
    where the sweep has more than two): the two slowdowns and the one-sided
    bootstrap p-value of the larger allocation's being no higher, resampling each
    point's random splits independently (``p_not_larger``: the share of
    resamples where it is not higher; 1 / BOOTSTRAP_RESAMPLES at best). A
    Spearman ρ of 1 over three allocations says the direction with p = 1/6;
    this says which steps the splits resolve, and whether the sweep rises from
    end to end through a dent such as the paper's Fig. 5 has:
    ALLOCATION_STEP_COLUMNS."""
    splits = split_slowdowns(tidy)
    measured = splits[is_measured(splits)]
    rng = np.random.default_rng(seed)

    def resampled(point: pd.DataFrame) -> np.ndarray:
        draws = rng.integers(0, len(point), size=(BOOTSTRAP_RESAMPLES, len(point)))
        return _pooled_slowdown(*(point[c].to_numpy(float)[draws] for c in _SPLIT_COLUMNS))

    rows = []
    for (collective, ratio), sweep in measured.groupby(["collective", "ratio"]):
        points = dict(tuple(sweep.groupby("allocation")))
        allocations = sorted(points)
        ends = [(allocations[0], allocations[-1])] if len(allocations) > 2 else []
        for smaller, larger in [*itertools.pairwise(allocations), *ends]:
            low, high = points[smaller], points[larger]
            estimate = [
                float(_pooled_slowdown(*(p[c].to_numpy(float) for c in _SPLIT_COLUMNS)))
                for p in (low, high)
            ]
            p_value = max(np.mean(resampled(high) <= resampled(low)), 1 / BOOTSTRAP_RESAMPLES)
            rows.append([collective, ratio, smaller, larger, *estimate, float(p_value)])
    return pd.DataFrame(rows, columns=ALLOCATION_STEP_COLUMNS)


def baseline_variation(slowdown: pd.DataFrame) -> pd.DataFrame:
    """Coefficient of variation (sample standard deviation / mean) of the
    unperturbed mean time across the measured points of one collective and
    allocation, where there are at least two: ``collective, allocation, points,
    unperturbed_cv``."""
    slowdown = with_perturbation(slowdown)
    measured = slowdown[is_measured(slowdown)]
    grouped = measured.groupby(["collective", "allocation"])["unperturbed_mean_us"]
    table = grouped.agg(points="count", mean="mean", std="std").reset_index()
    table = table[table["points"] >= 2]
    table["unperturbed_cv"] = table["std"] / table["mean"]
    return table[["collective", "allocation", "points", "unperturbed_cv"]].reset_index(drop=True)


def baseline_by_size(slowdown: pd.DataFrame) -> pd.DataFrame:
    """Coefficient of variation of the unperturbed mean time across every point
    (controls included) whose application communicator has the same size, where
    there are at least two: ``collective, application_ranks, points,
    unperturbed_cv``. The ratio sweep's points of one allocation time the
    collective on communicators of different sizes (the paper's perturbation
    ratio shrinks the application's share), which ``baseline_variation`` mixes;
    here only the placement and the idle perturbing processes differ. The
    unshared control's points are left out: their layout is another."""
    slowdown = with_perturbation(slowdown)
    slowdown = slowdown[slowdown["perturbation"] != "unshared"]
    if "application_ranks" not in slowdown.columns:
        slowdown = slowdown.assign(application_ranks=np.nan)
    known = slowdown.dropna(subset=["application_ranks"])
    grouped = known.groupby(["collective", "application_ranks"])["unperturbed_mean_us"]
    table = grouped.agg(points="count", mean="mean", std="std").reset_index()
    table = table[table["points"] >= 2]
    table["unperturbed_cv"] = table["std"] / table["mean"]
    return table[["collective", "application_ranks", "points", "unperturbed_cv"]].reset_index(
        drop=True
    )
