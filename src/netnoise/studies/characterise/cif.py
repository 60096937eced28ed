"""The Congestion Impact Factors of a run, and the congestors' offered load.

A canary's figure in one phase is its average over every timed sample of
every canary rank, or its 99th percentile (the worst 1 %: the highest latency,
the lowest bandwidth). Its Congestion Impact Factor is the figure beside the
congestors over the figure alone, turned so that above 1 is worse (GPCNeT:
congested over isolated for a time, isolated over congested for a bandwidth).
The unit of replication is the round (the canaries alone, then beside the
congestors): the interval is a percentile bootstrap over rounds, each
resample's CIF the pooled figures' ratio, as GPCNeT pools its samples.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from netnoise.estimates import Estimate, bootstrap_estimate

ISOLATED, CONGESTED = "isolated", "congested"
#: The setting of the four congestors at once, in four groups (GPCNeT's load).
FOUR_GROUPS = "all"
#: The CPU-only control: FOUR_GROUPS with the canaries apart from the
#: congestors' links (on the first nodes), sharing only the cores with them.
APART = "all_apart"
PHASES = (ISOLATED, CONGESTED)
#: The canaries, with their unit and whether a larger value is better.
CANARIES = {"latency": ("µs", False), "bandwidth": ("MiB/s", True), "allreduce": ("µs", False)}
STATISTICS = ("average", "p99")
#: The congestors' offered-load rows: ``offered_<congestor>``.
OFFERED = "offered_"
#: The fewest rounds a CIF's interval is taken over (the schema's least
#: characterise.rounds): a run cut shorter by --max-seconds is refused.
MIN_ROUNDS = 3
#: A sample's value, in the unit of its test (CANARIES; the file's ``#@units``).
VALUE = "value_units"
#: Columns of the tidy table the CIF needs (one row per timed canary sample).
SAMPLE_COLUMNS = ("congestor", "phase", "test", "round", "rank", VALUE)


def figure(values: np.ndarray, statistic: str, higher_is_better: bool) -> float:
    """A canary's figure of ``values``: their average, or their worst 1 %."""
    if values.size == 0:
        return float("nan")
    if statistic == "average":
        return float(values.mean())
    return float(np.percentile(values, 1 if higher_is_better else 99))


def impact(isolated: float, congested: float, higher_is_better: bool) -> float:
    """The Congestion Impact Factor of two figures: above 1 is worse beside the congestors."""
    return isolated / congested if higher_is_better else congested / isolated


def _by_round(samples: pd.DataFrame) -> dict[int, dict[str, np.ndarray]]:
    """Each round's values, by phase."""
    return {
        int(r): {phase: group.loc[group["phase"] == phase, VALUE].to_numpy() for phase in PHASES}
        for r, group in samples.groupby("round", sort=True)
    }


def canary_impact(
    samples: pd.DataFrame, canary: str, statistic: str
) -> tuple[Estimate, float, float]:
    """One canary's CIF under one congestor setting, with its interval over
    rounds, and its isolated and congested figures (all rounds pooled)."""
    _, higher_is_better = CANARIES[canary]
    rounds = _by_round(samples)

    sums = {r: {phase: (v.sum(), v.size) for phase, v in by.items()} for r, by in rounds.items()}

    def pooled(picked: Sequence[int], phase: str) -> float:
        if statistic == "average":  # the mean of the pooled samples, from each round's sum
            total, count = np.sum([sums[r][phase] for r in picked], axis=0)
            return float(total / count) if count else float("nan")
        values = [rounds[r][phase] for r in picked]
        return figure(
            np.concatenate(values) if values else np.empty(0), statistic, higher_is_better
        )

    def cif(picked: Sequence[int]) -> float:
        return impact(pooled(picked, ISOLATED), pooled(picked, CONGESTED), higher_is_better)

    units = sorted(rounds)
    return bootstrap_estimate(units, cif), pooled(units, ISOLATED), pooled(units, CONGESTED)


def check_samples(tidy: pd.DataFrame) -> pd.DataFrame:
    """The canary samples of the tidy table, checked: every column there, every
    value finite and positive, both phases of every round."""
    missing = [c for c in SAMPLE_COLUMNS if c not in tidy.columns]
    if missing:
        raise ValueError(f"characterise samples lack columns {', '.join(missing)}")
    samples = tidy[tidy["test"].isin(CANARIES)]
    if samples.empty:
        raise ValueError("characterise samples hold no canary rows (latency, bandwidth, allreduce)")
    values = pd.to_numeric(samples[VALUE], errors="coerce")
    if not (np.isfinite(values) & (values > 0)).all():
        raise ValueError("characterise samples: every canary value must be a finite number above 0")
    phases = samples.groupby(["congestor", "test", "round"])["phase"].nunique()
    lacking = phases[phases < len(PHASES)]
    if not lacking.empty:
        congestor, test, r = lacking.index[0]
        raise ValueError(
            f"characterise samples: round {r} of {test} under congestor {congestor!r} "
            "lacks a phase (isolated and congested are both needed)"
        )
    rounds = samples.groupby("congestor")["round"].nunique()
    short = rounds[rounds < MIN_ROUNDS]
    if not short.empty:
        raise ValueError(
            f"characterise samples: the run under congestor {short.index[0]!r} measured "
            f"{int(short.iloc[0])} round(s), fewer than the {MIN_ROUNDS} an interval needs; "
            "raise characterise.max_seconds (or set it to 0) and run it again"
        )
    return samples.assign(**{VALUE: values})


def beyond_cpu_control(table: pd.DataFrame) -> pd.Series:
    """Per row of a CIF table, whether the four congestors' CIF is the network's:
    its interval above the CPU-only control's (APART, same canary and
    statistic). True or False on FOUR_GROUPS rows where the control was
    measured, None elsewhere."""
    control = table[table["congestor"] == APART].set_index(["canary", "statistic"])

    def judged(row: pd.Series) -> bool | None:
        key = (row["canary"], row["statistic"])
        if row["congestor"] != FOUR_GROUPS or key not in control.index:
            return None
        return bool(row["cif_ci_low"] > control.loc[key, "cif_ci_high"])

    return table.apply(judged, axis=1).astype(object)


def impact_table(tidy: pd.DataFrame) -> pd.DataFrame:
    """Every canary's CIF, as its average and its 99th percentile, per congestor
    setting: the figures alone and beside the congestors, the CIF with its 95 %
    interval over rounds, the rounds behind it and, where the CPU-only control
    ran, whether the four congestors' CIF is beyond it."""
    samples = check_samples(tidy)
    rows = []
    for congestor, runs in samples.groupby("congestor", sort=False):
        for canary, (unit, _) in CANARIES.items():
            of_canary = runs[runs["test"] == canary]
            if of_canary.empty:
                continue
            for statistic in STATISTICS:
                cif, isolated, congested = canary_impact(of_canary, canary, statistic)
                rows.append(
                    {
                        "congestor": congestor,
                        "canary": canary,
                        "statistic": statistic,
                        "unit": unit,
                        "isolated": isolated,
                        "congested": congested,
                        "cif": cif.value,
                        "cif_ci_low": cif.low,
                        "cif_ci_high": cif.high,
                        "rounds": cif.samples,
                    }
                )
    table = pd.DataFrame(rows)
    return table.assign(beyond_cpu_control=beyond_cpu_control(table))


def offered_load_table(tidy: pd.DataFrame) -> pd.DataFrame:
    """What each congestor put on the network: per congestor setting and
    pattern, the MiB/s per congestor rank (mean over ranks and rounds, its
    interval over rounds) and the ranks that ran it."""
    offered = tidy[tidy["test"].astype(str).str.startswith(OFFERED)]
    rows = []
    for (congestor, test), group in offered.groupby(["congestor", "test"], sort=False):
        per_round = group.groupby("round")[VALUE].mean()
        estimate = bootstrap_estimate(list(per_round), lambda units: float(np.mean(units)))
        rows.append(
            {
                "congestor": congestor,
                "pattern": str(test)[len(OFFERED) :],
                "mibps_per_rank": estimate.value,
                "mibps_per_rank_ci_low": estimate.low,
                "mibps_per_rank_ci_high": estimate.high,
                "ranks": int(group["rank"].nunique()),
                "rounds": estimate.samples,
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
            "congestor",
            "pattern",
            "mibps_per_rank",
            "mibps_per_rank_ci_low",
            "mibps_per_rank_ci_high",
            "ranks",
            "rounds",
        ],
    )


def canary_rounds_table(tidy: pd.DataFrame) -> pd.DataFrame:
    """Each canary's figures per congestor setting, round and phase: its
    average and 99th percentile, and the samples behind them."""
    samples = check_samples(tidy)
    rows = []
    keys = ["congestor", "test", "round", "phase"]
    for (congestor, canary, r, phase), group in samples.groupby(keys, sort=False):
        unit, higher_is_better = CANARIES[canary]
        values = group[VALUE].to_numpy()
        rows.append(
            {
                "congestor": congestor,
                "canary": canary,
                "round": int(r),
                "phase": phase,
                "unit": unit,
                "average": figure(values, "average", higher_is_better),
                "p99": figure(values, "p99", higher_is_better),
                "samples": int(values.size),
            }
        )
    return pd.DataFrame(rows)
