"""Claims tables for reading: counts per study, a terminal summary, Markdown for
the README and the report, and several platforms' claims side by side.

Every view shows, beside our value and its interval, the band the claim was
judged by (:func:`netnoise.verdicts.band_text`), so that a reader sees what
"reproduced" was measured against.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TextIO

import pandas as pd

from netnoise import verdicts
from netnoise.estimates import Estimate


def claims_csv(claims: pd.DataFrame, out: TextIO) -> None:
    """The claims table as CSV, its columns in :data:`netnoise.verdicts.COLUMNS`'
    order after the platform's (a table of one run has one platform)."""
    columns = ["platform", *verdicts.COLUMNS] if "platform" in claims else list(verdicts.COLUMNS)
    claims[columns].to_csv(out, index=False)


def summarise(claims: pd.DataFrame) -> pd.DataFrame:
    """Per study: its headline claims and how many hold, are refuted, undecided
    or not measurable; a last row ``all`` adds them up."""
    missing = set(verdicts.COLUMNS) - set(claims.columns)
    if missing:
        raise ValueError(f"claims table lacks the columns {', '.join(sorted(missing))}")
    kind = claims["verdict"].str.split(":").str[0]
    counts = (
        pd.DataFrame(
            {
                "study": claims["study"],
                "claims": 1,
                "reproduced": kind.eq(verdicts.REPRODUCED),
                "not_reproduced": kind.eq(verdicts.NOT_REPRODUCED),
                "inconclusive": kind.eq("inconclusive"),
                "not_measurable": kind.eq(verdicts.NOT_MEASURABLE),
            }
        )
        .groupby("study", sort=False)
        .sum()
        .reset_index()
    )
    total = counts.drop(columns="study").sum().to_frame().T
    total.insert(0, "study", "all")
    return pd.concat([counts, total], ignore_index=True).astype(
        {c: int for c in counts.columns if c != "study"}
    )


def headline_sentence(claims: pd.DataFrame, platform: str) -> str:
    """``"2 of 16 headline claims reproduced on testbed"``."""
    total = summarise(claims).iloc[-1]
    return f"{total['reproduced']} of {total['claims']} headline claims reproduced on {platform}"


def _unit(row: pd.Series | Mapping) -> str:
    return "" if pd.isna(row["unit"]) else str(row["unit"])


def ours_text(row: pd.Series | Mapping) -> str:
    """A row's value with its interval and unit, or that nothing was measured."""
    estimate = Estimate.from_row(row, "value", 0, "ci_low", "ci_high")
    return estimate.text(_unit(row)) if estimate.measured else "—"


def band(row: pd.Series | Mapping) -> str:
    """The band a row was judged by, in words."""
    return verdicts.band_text(
        float(row["target_low"]), float(row["target_high"]), _unit(row), str(row["kind"])
    )


def cpu_record(row: pd.Series | Mapping) -> str:
    """A study's row of the cpu_summary table as a sentence: how many of its
    results were CPU-saturated, or that its results took simulated time."""
    results, simulated = int(row["results"]), int(row.get("simulated", 0) or 0)
    if simulated == results:
        return f"CPU record: not applicable, all {results} results in simulated time"
    return (
        f"CPU record: {int(row['saturated'])} of {results} measured results CPU-saturated, "
        f"median {row['runnable_median']:.2g} runnable tasks"
        + (f"; {simulated} in simulated time" if simulated else "")
    )


def cpu_records(cpu_summary: pd.DataFrame | None) -> dict[str, str]:
    """Per study, its measurements' CPU record (the run's cpu_summary table): how
    many were CPU-saturated, so a reader weighs its claims by it."""
    if cpu_summary is None:
        return {}
    return {row["study"]: cpu_record(row) for _, row in cpu_summary.iterrows()}


def summary_lines(
    claims: pd.DataFrame,
    platform: str,
    numbers: Mapping[str, str],
    cpu: Mapping[str, str] | None = None,
) -> list[str]:
    """The cross-study summary for a terminal: the count, then per claim its
    verdict, paper, claim, the paper's value, ours and the band, and its
    reason, each study closed by its CPU record (``cpu``, :func:`cpu_records`).
    ``numbers`` gives each study's seed number."""
    lines = [headline_sentence(claims, platform)]
    for study, rows in claims.groupby("study", sort=False):
        for _, row in rows.iterrows():
            lines.append(
                f"  {row['verdict']:<36} {numbers.get(row['study'], '')} {row['claim']}"
                f" (paper {row['paper_value']}, {row['paper_where']}; ours {ours_text(row)};"
                f" band {band(row)})"
            )
            lines.append(f"      {row['reason']}")
        if cpu and study in cpu:
            lines.append(f"  {numbers.get(study, study)} {cpu[study]}")
    lines += [f"  contradiction: {found}" for found in verdicts.contradictions(claims)]
    lines += [f"  error: {found}" for found in verdicts.outside_band(claims)]
    return lines


def brief_lines(claims: pd.DataFrame, platform: str, numbers: Mapping[str, str]) -> list[str]:
    """:func:`summary_lines` without the reasons and CPU records: the count,
    then one line per claim (verdict, seed, ours and the band, the claim)."""
    lines = [headline_sentence(claims, platform)]
    lines += [
        f"  {row['verdict']:<36} {numbers.get(row['study'], '')} ours {ours_text(row)};"
        f" band {band(row)} · {row['claim']}"
        for _, row in claims.iterrows()
    ]
    lines += [f"  contradiction: {found}" for found in verdicts.contradictions(claims)]
    lines += [f"  error: {found}" for found in verdicts.outside_band(claims)]
    return lines


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|")


def summary_markdown(claims: pd.DataFrame, platform: str, numbers: Mapping[str, str]) -> str:
    """The cross-study summary as a Markdown table under its count sentence."""
    lines = [
        f"**{headline_sentence(claims, platform)}.**",
        "",
        "| Seed | Claim | Ours (95 % interval) | Band | Verdict |",
        "| --- | --- | --- | --- | --- |",
    ]
    for _, row in claims.iterrows():
        lines.append(
            f"| {numbers.get(row['study'], row['study'])} | {_cell(row['claim'])}"
            f" | {_cell(ours_text(row))} | {_cell(band(row))} | {row['verdict']} |"
        )
    return "\n".join(lines) + "\n"


#: What a platform that did not judge a claim shows for it (its study did not
#: run there, or its tables lack the claim).
NOT_RUN = "not run"


def beside(by_platform: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Each claim once, with its band and the value (95 % interval) and verdict
    of every platform side by side (``<platform>`` and ``<platform> verdict``),
    in the order the platforms and their claims come; a claim a platform did
    not judge reads :data:`NOT_RUN` there."""
    if not by_platform:
        raise ValueError("no platform's claims to put side by side")
    words = ["study", "claim_id", "claim", "paper_value", "paper_where"]
    first = pd.concat(list(by_platform.values()), ignore_index=True).drop_duplicates(
        ["study", "claim_id"]
    )
    rows = first[words].assign(band=first.apply(band, axis=1)).set_index(["study", "claim_id"])
    for platform, claims in by_platform.items():
        judged = claims.set_index(["study", "claim_id"])
        ours = judged.apply(ours_text, axis=1) if len(judged) else pd.Series(dtype=str)
        rows[platform] = ours.reindex(rows.index).fillna("—")
        rows[f"{platform} verdict"] = judged["verdict"].reindex(rows.index).fillna(NOT_RUN)
    return rows.reset_index()


def beside_markdown(by_platform: Mapping[str, pd.DataFrame], numbers: Mapping[str, str]) -> str:
    """:func:`beside` as a Markdown table under each platform's count sentence;
    ``numbers`` gives each study's seed number."""
    table = beside(by_platform)
    platforms = list(by_platform)
    lines = [f"**{headline_sentence(claims, p)}.**  " for p, claims in by_platform.items()]
    lines[-1] = lines[-1].rstrip()
    lines += [
        "",
        "| Seed | Claim | Paper | Band | " + " | ".join(platforms) + " |",
        "| --- | --- | --- | --- | " + " | ".join("---" for _ in platforms) + " |",
    ]
    for _, row in table.iterrows():
        cells = [f"{_cell(row[p])}: {row[f'{p} verdict']}" for p in platforms]
        lines.append(
            f"| {numbers.get(row['study'], row['study'])} | {_cell(row['claim'])}"
            f" | {_cell(row['paper_value'])} | {_cell(row['band'])} | " + " | ".join(cells) + " |"
        )
    return "\n".join(lines) + "\n"


#: The lines around a document's generated claims summary (the README's status).
SECTION_BEGIN = "<!-- claims-summary:begin -->"
SECTION_END = "<!-- claims-summary:end -->"


def with_section(document: str, markdown: str) -> str:
    """``document`` with the text between its claims-summary markers replaced by
    ``markdown``; a document without both markers is refused."""
    begin, end = document.find(SECTION_BEGIN), document.find(SECTION_END)
    if begin < 0 or end < begin:
        raise ValueError(
            f"the document has no {SECTION_BEGIN} … {SECTION_END} section for the claims summary"
        )
    head = document[: begin + len(SECTION_BEGIN)]
    return f"{head}\n{markdown}{document[end:]}"
