"""Seed 000's claims table (tables/impact_compression/claims.csv): each claim of
the paper beside this run's value, its interval where resampling gives one,
and the target it is judged by."""

from __future__ import annotations

import numpy as np
import pandas as pd

from netnoise.claims import claim
from netnoise.studies.impact_compression.analysis import (
    CI_HALF_WIDTH_TARGET,
    CONFIG_PATTERN,
    ci_half_width,
    paper_text,
)


def _utilization_claims(utilization: pd.DataFrame) -> list[dict]:
    """How the CompressionB sweep spans utilisation (lowest, highest, the widest
    gap between neighbouring points from 0 up) and how precisely the largest
    application utilisation is known (its interval's half-width), in points."""
    is_config = utilization["component"].str.fullmatch(CONFIG_PATTERN)
    sweep = np.sort(utilization.loc[is_config, "utilization"].to_numpy(float)) * 100
    steps = np.diff(np.concatenate([[0.0], sweep]))
    widest = int(np.argmax(steps))
    apps = utilization[~is_config & (utilization["component"] != "idle")]
    half = ci_half_width(apps, "utilization") * 100
    loosest = apps["component"].iloc[int(np.argmax(half.to_numpy()))]
    return [
        claim("utilization_min", "compression", sweep[0], paper="26 (Fig. 6)", unit="%"),
        claim("utilization_max", "compression", sweep[-1], paper="92 (Fig. 6)", unit="%"),
        claim(
            "utilization_widest_gap",
            "compression",
            steps[widest],
            detail=f"between {(sweep[widest] - steps[widest]):.0f} and {sweep[widest]:.0f} %",
            unit="points",
        ),
        claim(
            "utilization_ci_half_width",
            "applications",
            float(half.max()),
            detail=f"largest, {loosest}; 95 % bootstrap interval",
            unit="points",
        ),
    ]


def claims(
    slowdowns: pd.DataFrame,
    summary: pd.DataFrame,
    published: pd.DataFrame,
    table1: pd.DataFrame,
    *,
    utilization: pd.DataFrame,
    idle_far_out: tuple[int, int],
    discordant: tuple[int, int],
    relativity: pd.DataFrame,
    saturated: float,
) -> pd.DataFrame:
    """Seed 000's numbers for the note, each with its target (issue 17's "done
    when") and the paper's value where it gives one: ``claim, scope, value, unit,
    relation, target, meets, paper, detail``; slowdowns, errors and interval
    half-widths in percentage points, shares as fractions.

    ``slowdowns``: measured_slowdowns; ``summary``: error_summary of every
    method and baseline, with its intervals; ``published``: published_scores; ``table1``: the
    paper's Table I; ``utilization``: utilization_table (the span of the
    CompressionB sweep, its widest gap, the applications' interval half-widths);
    ``idle_far_out``: (dropped, all) idle samples
    (queue.far_out); ``discordant``: queue.discordant_pairs of the p_A points;
    ``relativity``: relativity_violations; ``saturated``: saturated_share of the
    runs.
    """
    half = ci_half_width(slowdowns, "measured") * 100
    half_target = CI_HALF_WIDTH_TARGET * 100
    by_method = summary.set_index("method")
    queue_row = by_method.loc["queue"]
    paper = table1["slowdown_pct"]
    rows = [
        claim("pairings", "measured", len(slowdowns), ">=", 16, f"{len(table1)}", unit="pairings"),
        claim(
            "pairings_ci_within_3pts",
            "measured",
            int((half <= half_target).sum()),
            ">=",
            16,
            detail=f"of {len(slowdowns)}; 95 % interval within ±{half_target:g} points",
            unit="pairings",
        ),
        claim(
            "median_ci_half_width",
            "measured",
            float(half.median()),
            "<=",
            half_target,
            unit="points",
        ),
        claim("max_ci_half_width", "measured", float(half.max()), unit="points"),
        *(
            claim(
                f"{statistic}_slowdown",
                "measured",
                float(slowdowns["measured"].agg(statistic) * 100),
                paper=f"{paper.agg(statistic):.3g}",
                unit="%",
            )
            for statistic in ("mean", "max")
        ),
        claim(
            "within_10pct",
            "queue",
            queue_row["within_10pct"],
            ">=",
            0.75,
            paper_text(published, "queue", "within_10pct"),
            unit="share",
        ),
        claim(
            "mean_abs_error",
            "queue",
            queue_row["mean_abs_error"] * 100,
            "<",
            10,
            paper_text(published, "queue", "mean_abs_error", 100),
            unit="points",
        ),
        claim(
            "within_20pct",
            "queue",
            queue_row["within_20pct"],
            paper=paper_text(published, "queue", "within_20pct"),
            unit="share",
        ),
        claim("spearman", "queue", queue_row["spearman"], unit="rho"),
    ]
    for method, row in by_method.drop("queue").iterrows():
        rows.append(
            claim(
                "queue_mae_minus",
                method,
                (queue_row["mean_abs_error"] - row["mean_abs_error"]) * 100,
                "<",
                0,
                paper="; ".join(
                    f"{who} MAE {text}"
                    for who, text in (
                        ("queue", paper_text(published, "queue", "mean_abs_error", 100)),
                        (row["label"], paper_text(published, method, "mean_abs_error", 100)),
                    )
                    if text
                ),
                detail=(
                    f"queue model's MAE minus {row['label']}'s; 95 % interval"
                    f" {row['queue_mae_minus_ci_low'] * 100:.2f} to"
                    f" {row['queue_mae_minus_ci_high'] * 100:.2f};"
                    f" not lower in {row['queue_not_better']:.1%} of replicates"
                ),
                unit="points",
            )
        )
    rows += _utilization_claims(utilization)
    dropped, idle_samples = idle_far_out
    wrong, pairs = discordant
    rows += [
        claim(
            "idle_far_out_samples",
            "idle",
            dropped,
            detail=f"of {idle_samples}, left out of µ and Var(S)",
            unit="samples",
        ),
        claim(
            "p_a_discordant_pairs",
            "compression",
            wrong,
            detail=f"of {pairs} pairs of CompressionB points; p_A is fitted monotone",
            unit="pairs",
        ),
        *_relativity_claims(relativity),
        claim("cpu_saturated_share", "runs", saturated, "<=", 0.05, unit="share"),
    ]
    return pd.DataFrame(rows)


def _relativity_claims(relativity: pd.DataFrame) -> list[dict]:
    """How often a slowdown runs against its partners' utilisation beyond doubt
    (relativity_violations), per application and in the applications' mean, and
    the largest such case."""
    rows = []
    for scope, kept in (
        ("applications", relativity[relativity["application"] != "mean"]),
        ("mean", relativity[relativity["application"] == "mean"]),
    ):
        apart = kept[kept["utilization_minus_ci_low"] > 0]
        violated = apart[apart["verdict"] == "violated"]
        held = int((apart["verdict"] == "holds").sum())
        detail = (
            f"of {len(apart)} partner pairs whose utilisations differ beyond doubt"
            f" (paired bootstrap); {held} hold beyond doubt"
        )
        if len(violated):
            worst = violated.loc[violated["slowdown_minus"].idxmin()]
            detail += (
                f"; largest: {worst['application']} beside {worst['higher']} minus beside"
                f" {worst['lower']}: utilisation {100 * worst['utilization_minus']:+.1f}"
                f" points ({100 * worst['utilization_minus_ci_low']:+.1f} to"
                f" {100 * worst['utilization_minus_ci_high']:+.1f}), slowdown"
                f" {100 * worst['slowdown_minus']:+.2f} points"
                f" ({100 * worst['slowdown_minus_ci_low']:+.2f} to"
                f" {100 * worst['slowdown_minus_ci_high']:+.2f})"
            )
        rows.append(
            claim(
                "relativity_violations",
                scope,
                len(violated),
                paper="0 (performance relativity, Sec. I)",
                detail=detail,
                unit="pairs",
            )
        )
    return rows
