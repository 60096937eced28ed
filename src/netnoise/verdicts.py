"""Headline claims: whether each paper's central statements hold in the data.

Every study states the three to six claims its paper's abstract and conclusions
rest on as rows of one schema (``COLUMNS``): the claim in plain words, the
paper's value and where it says so, our value with its 95 % interval, the target
it is judged by, the verdict and a one-line reason that names the evidence. The
verdict is computed here from the numbers, never written by hand:

- ``reproduced``: the whole interval lies on the target's side and, for an
  effect the paper ascribes to the network, the network perturbation beats the
  CPU-only control (a job that loads the cores but not the links);
- ``not reproduced``: the whole interval lies on the wrong side, a control
  explains the effect, or the claim holds only outside the paper's regime;
- ``inconclusive: too few samples``: the interval straddles the target; the
  reason gives the samples a study would need for 80 % power;
- ``inconclusive: no CPU-only control``: the effect is there, but no control
  shows that the network rather than the cores caused it;
- ``not measurable here``: nothing was measured (the platform cannot, or the
  config left it out).

Where a paper's claim is a magnitude ("up to 45 %", "a factor of 2") the target
is half the paper's effect: small enough to allow for a smaller machine, large
enough that the effect is of the paper's kind. The studies' ``headline.py``
modules choose the evidence; this module judges it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from netnoise import project
from netnoise.claims import RELATIONS

REPRODUCED = "reproduced"
NOT_REPRODUCED = "not reproduced"
INCONCLUSIVE = "inconclusive: too few samples"
UNCONTROLLED = "inconclusive: no CPU-only control"
NOT_MEASURABLE = "not measurable here"
VERDICTS = (REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE, UNCONTROLLED, NOT_MEASURABLE)

COLUMNS = (
    "study",
    "claim_id",
    "claim",
    "paper_value",
    "paper_where",
    "value",
    "ci_low",
    "ci_high",
    "unit",
    "target",
    "verdict",
    "reason",
)
#: Significance of every test behind a verdict, and the power a sample-size
#: estimate aims for.
ALPHA = 0.05
POWER = 0.80
Z_INTERVAL = stats.norm.ppf(1 - ALPHA / 2)
_Z_POWER = stats.norm.ppf(POWER)


@dataclass(frozen=True)
class Estimate:
    """A measured value with its 95 % interval and the samples behind it."""

    value: float
    low: float
    high: float
    samples: int

    @classmethod
    def from_row(
        cls,
        row: Mapping[str, Any],
        value: str,
        samples: str | int,
        low: str | None = None,
        high: str | None = None,
    ) -> Estimate:
        """The estimate a table's row holds: the value in column ``value``, its interval
        in ``low`` and ``high`` (by default ``value`` + ``_ci_low``, ``_ci_high``), its
        samples in column ``samples`` or, given a number, that many."""
        return cls(
            float(row[value]),
            float(row[low or f"{value}_ci_low"]),
            float(row[high or f"{value}_ci_high"]),
            int(row[samples] if isinstance(samples, str) else samples),
        )

    @property
    def measured(self) -> bool:
        return not math.isnan(self.value)

    def text(self, unit: str = "", digits: int = 3) -> str:
        """``"9.46 % (7.37 to 11.6)"``; without an interval, the value alone."""
        space = "" if unit in ("", "×") else " "
        value = f"{self.value:.{digits}g}{space}{unit}"
        if math.isnan(self.low) or math.isnan(self.high):
            return value
        return f"{value} ({self.low:.{digits}g} to {self.high:.{digits}g})"

    def scaled(self, factor: float) -> Estimate:
        """The estimate in another unit (a share as a percentage)."""
        return Estimate(self.value * factor, self.low * factor, self.high * factor, self.samples)


NOTHING = Estimate(math.nan, math.nan, math.nan, 0)


def mean_estimate(values: Iterable[float]) -> Estimate:
    """The mean of ``values`` with its Student-t 95 % interval."""
    array = np.asarray([v for v in values if not math.isnan(v)], dtype=float)
    if array.size == 0:
        return NOTHING
    mean = float(array.mean())
    if array.size == 1:
        return Estimate(mean, math.nan, math.nan, 1)
    half = stats.t.ppf(1 - ALPHA / 2, array.size - 1) * array.std(ddof=1) / math.sqrt(array.size)
    return Estimate(mean, mean - half, mean + half, int(array.size))


def share_estimate(successes: int, trials: int) -> Estimate:
    """A share with its Wilson 95 % interval (sound at 0 and 1, where a normal
    interval collapses)."""
    if trials <= 0:
        return NOTHING
    share = successes / trials
    z2 = Z_INTERVAL**2
    centre = (share + z2 / (2 * trials)) / (1 + z2 / trials)
    half = (Z_INTERVAL / (1 + z2 / trials)) * math.sqrt(
        share * (1 - share) / trials + z2 / (4 * trials**2)
    )
    return Estimate(share, max(0.0, centre - half), min(1.0, centre + half), trials)


def samples_for_power(estimate: Estimate, target: float) -> float:
    """Samples for a 95 % interval to exclude ``target`` with 80 % power, if the
    effect stays what it is: n·((z₀.₉₇₅ + z₀.₈)·se / gap)², the standard error
    read from the interval's half-width on the target's side. Infinite where
    the value sits on the target."""
    gap = abs(estimate.value - target)
    if gap == 0 or estimate.samples <= 0:
        return math.inf
    near = estimate.low if target < estimate.value else estimate.high
    se = abs(estimate.value - near) / Z_INTERVAL
    return estimate.samples * ((Z_INTERVAL + _Z_POWER) * se / gap) ** 2


@dataclass(frozen=True)
class Judgement:
    verdict: str
    reason: str


def judge_bound(
    estimate: Estimate, relation: str, target: float, *, unit: str = "", samples: str = "samples"
) -> Judgement:
    """Whether ``estimate relation target`` (``>=``, ``>``, ``<=``, ``<``) holds
    beyond doubt: the whole interval on the target's side, the whole interval on
    the wrong side, or neither (with the ``samples`` 80 % power needs). An
    estimate without an interval is judged by its value alone."""
    if relation not in (">=", ">", "<=", "<"):
        raise ValueError(f"relation must be one of >=, >, <=, <, not {relation!r}")
    if not estimate.measured:
        return Judgement(NOT_MEASURABLE, "nothing was measured")
    above = relation.startswith(">")
    low, high = estimate.low, estimate.high
    if math.isnan(low) or math.isnan(high):
        low = high = estimate.value
    passing, failing = (low, high) if above else (high, low)

    def beyond(value: float) -> bool:
        return bool(RELATIONS[relation](value, target))

    ours = estimate.text(unit)
    goal = f"{relation} {target:.3g}{'' if unit in ('', '×') else ' '}{unit}"
    if beyond(passing):
        return Judgement(REPRODUCED, f"{ours}: the whole interval is {goal}")
    if not beyond(failing):
        return Judgement(NOT_REPRODUCED, f"{ours}: the whole interval misses {goal}")
    needed = samples_for_power(estimate, target)
    need = "no sample size" if math.isinf(needed) else f"about {math.ceil(needed)} {samples}"
    return Judgement(
        INCONCLUSIVE,
        f"{ours} straddles {goal}: {estimate.samples} {samples}; {need} for 80 % power",
    )


@dataclass(frozen=True)
class Control:
    """How the network perturbation compares with a control at the same point:
    the control's effect and the one-sided p that the perturbation is no worse."""

    name: str
    ours: float
    control: float
    p_value: float
    unit: str = "%"

    @property
    def beaten(self) -> bool:
        return self.p_value < ALPHA and self.ours > self.control

    def text(self) -> str:
        return (
            f"{self.name} {self.control:.3g} {self.unit} against {self.ours:.3g} {self.unit}"
            f" (p = {self.p_value:.2g})"
        )


def network_gate(judgement: Judgement, controls: Iterable[Control] | None) -> Judgement:
    """A reproduced effect stays reproduced only if the network perturbation
    beats every CPU-only control measured beside it; ``None`` means the study
    measured no such control, which leaves the effect not shown to be the
    network's."""
    if judgement.verdict != REPRODUCED:
        return judgement
    if controls is None:
        return Judgement(
            UNCONTROLLED,
            f"{judgement.reason}; no CPU-only control was measured, so the cores may explain it",
        )
    unbeaten = [c for c in controls if not c.beaten]
    if not unbeaten:
        return judgement
    worst = max(unbeaten, key=lambda c: c.p_value)
    return Judgement(
        NOT_REPRODUCED,
        f"{judgement.reason}, but the {worst.name} slows it as much: {worst.text()}",
    )


#: Which of several judgements a claim over all of them takes: the first kind
#: in this order that any of them has.
_SEVERITY = (NOT_REPRODUCED, INCONCLUSIVE, UNCONTROLLED, NOT_MEASURABLE, REPRODUCED)


def worst_of(judgements: Iterable[tuple[str, Judgement]]) -> tuple[str, Judgement]:
    """A claim that must hold in every case (each labelled): the case with the
    most severe verdict, its reason prefixed with the label."""
    cases = list(judgements)
    if not cases:
        return "", Judgement(NOT_MEASURABLE, "nothing was measured")
    label, worst = min(cases, key=lambda case: _SEVERITY.index(case[1].verdict))
    held = sum(judgement.verdict == REPRODUCED for _, judgement in cases)
    return label, Judgement(
        worst.verdict, f"holds in {held} of {len(cases)}; {label}: {worst.reason}"
    )


def with_context(judgement: Judgement, context: str) -> Judgement:
    """The judgement with ``context`` (what limits the measurement) after its reason."""
    return Judgement(
        judgement.verdict, f"{judgement.reason}; {context}" if context else judgement.reason
    )


def regime_gate(judgement: Judgement, outside: str | None) -> Judgement:
    """A claim that holds only because the measurement lies outside the paper's
    regime (``outside`` says how) is not reproduced."""
    if judgement.verdict != REPRODUCED or not outside:
        return judgement
    return Judgement(NOT_REPRODUCED, f"outside the paper's regime: {outside}")


@dataclass(frozen=True)
class Claim:
    """A paper's headline claim: what it says, the paper's value and where, the
    unit ours is given in and the target it is judged by."""

    study: str
    claim_id: str
    claim: str
    paper_value: str
    paper_where: str
    unit: str
    target: str

    def row(self, estimate: Estimate, judgement: Judgement) -> dict:
        """The claim judged: one row of the claims schema (``COLUMNS``)."""
        if judgement.verdict not in VERDICTS:
            raise ValueError(
                f"verdict must be one of {', '.join(VERDICTS)}, not {judgement.verdict!r}"
            )
        return {
            "study": self.study,
            "claim_id": self.claim_id,
            "claim": self.claim,
            "paper_value": self.paper_value,
            "paper_where": self.paper_where,
            "value": estimate.value,
            "ci_low": estimate.low,
            "ci_high": estimate.high,
            "unit": self.unit,
            "target": self.target,
            "verdict": judgement.verdict,
            "reason": judgement.reason,
        }

    def unmeasured(self, why: str) -> dict:
        """The claim where this run measured nothing for it (``why``)."""
        return self.row(NOTHING, Judgement(NOT_MEASURABLE, why))


#: The columns of a study's claims in words (resources/reference/<key>/headline_claims.csv).
CLAIM_WORDS = ("claim_id", "claim", "paper_value", "paper_where", "unit", "target")


def read_claims(study: str) -> dict[str, Claim]:
    """Study ``study``'s headline claims in words, by id: what each says, the
    paper's value and where, our unit and the target (reference data, beside the
    paper's other published values)."""
    path = project.path("resources", "reference", study, "headline_claims.csv")
    words = pd.read_csv(path, dtype=str, keep_default_na=False)
    if tuple(words.columns) != CLAIM_WORDS:
        raise ValueError(f"{path}: its columns must be {', '.join(CLAIM_WORDS)}")
    return {row["claim_id"]: Claim(study, **row) for row in words.to_dict("records")}


def table(rows: Iterable[dict]) -> pd.DataFrame:
    """Rows as a claims table with the schema's columns in order."""
    return pd.DataFrame(list(rows), columns=list(COLUMNS))


def summarise(claims: pd.DataFrame) -> pd.DataFrame:
    """Per study: its headline claims and how many hold, are refuted, undecided
    or not measurable; a last row ``all`` adds them up."""
    missing = set(COLUMNS) - set(claims.columns)
    if missing:
        raise ValueError(f"claims table lacks the columns {', '.join(sorted(missing))}")
    kind = claims["verdict"].str.split(":").str[0]
    counts = (
        pd.DataFrame(
            {
                "study": claims["study"],
                "claims": 1,
                "reproduced": kind.eq(REPRODUCED),
                "not_reproduced": kind.eq(NOT_REPRODUCED),
                "inconclusive": kind.eq("inconclusive"),
                "not_measurable": kind.eq(NOT_MEASURABLE),
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


def ours_text(row: pd.Series | dict) -> str:
    """A row's value with its interval and unit, or that nothing was measured."""
    estimate = Estimate.from_row(row, "value", 0, "ci_low", "ci_high")
    unit = "" if pd.isna(row["unit"]) else str(row["unit"])
    return estimate.text(unit) if estimate.measured else "—"


def simulated_clock(table: pd.DataFrame) -> bool:
    """Whether every row of a table was timed in simulated time (its ``clock``
    column; a table without one was timed on real cores), where no host core
    enters a run and a claim needs no CPU-only control."""
    return "clock" in table.columns and bool((table["clock"] == "simulated").all())


def cpu_record(row: pd.Series | dict) -> str:
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
    verdict, paper, claim, the paper's value and ours, and its reason, each
    study closed by its CPU record (``cpu``, :func:`cpu_records`). ``numbers``
    gives each study's seed number."""
    lines = [headline_sentence(claims, platform)]
    for study, rows in claims.groupby("study", sort=False):
        for _, row in rows.iterrows():
            lines.append(
                f"  {row['verdict']:<33} {numbers.get(row['study'], '')} {row['claim']}"
                f" (paper {row['paper_value']}, {row['paper_where']}; ours {ours_text(row)})"
            )
            lines.append(f"      {row['reason']}")
        if cpu and study in cpu:
            lines.append(f"  {numbers.get(study, study)} {cpu[study]}")
    return lines


def summary_markdown(claims: pd.DataFrame, platform: str, numbers: Mapping[str, str]) -> str:
    """The cross-study summary as a Markdown table under its count sentence."""
    cell = lambda text: str(text).replace("|", "\\|")  # noqa: E731
    lines = [
        f"**{headline_sentence(claims, platform)}.**",
        "",
        "| Seed | Claim | Paper | Ours (95 % interval) | Verdict |",
        "| --- | --- | --- | --- | --- |",
    ]
    for _, row in claims.iterrows():
        lines.append(
            f"| {numbers.get(row['study'], row['study'])} | {cell(row['claim'])}"
            f" | {cell(row['paper_value'])} ({cell(row['paper_where'])})"
            f" | {cell(ours_text(row))} | {row['verdict']} |"
        )
    return "\n".join(lines) + "\n"


#: What a platform that did not judge a claim shows for it (its study did not
#: run there, or its tables lack the claim).
NOT_RUN = "not run"


def beside(by_platform: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Each claim once, with the value (95 % interval) and verdict of every
    platform side by side (``<platform>`` and ``<platform> verdict``), in the
    order the platforms and their claims come; a claim a platform did not judge
    reads :data:`NOT_RUN` there."""
    if not by_platform:
        raise ValueError("no platform's claims to put side by side")
    words = ["study", "claim_id", "claim", "paper_value", "paper_where"]
    rows = (
        pd.concat([claims[words] for claims in by_platform.values()], ignore_index=True)
        .drop_duplicates(["study", "claim_id"])
        .set_index(["study", "claim_id"])
    )
    for platform, claims in by_platform.items():
        judged = claims.set_index(["study", "claim_id"])
        ours = judged.apply(ours_text, axis=1) if len(judged) else pd.Series(dtype=str)
        rows[platform] = ours.reindex(rows.index).fillna("—")
        rows[f"{platform} verdict"] = judged["verdict"].reindex(rows.index).fillna(NOT_RUN)
    return rows.reset_index()


def beside_markdown(by_platform: Mapping[str, pd.DataFrame], numbers: Mapping[str, str]) -> str:
    """:func:`beside` as a Markdown table under each platform's count sentence;
    ``numbers`` gives each study's seed number."""
    cell = lambda text: str(text).replace("|", "\\|")  # noqa: E731
    table = beside(by_platform)
    platforms = list(by_platform)
    lines = [f"**{headline_sentence(claims, p)}.**  " for p, claims in by_platform.items()]
    lines[-1] = lines[-1].rstrip()
    lines += [
        "",
        "| Seed | Claim | Paper | " + " | ".join(platforms) + " |",
        "| --- | --- | --- | " + " | ".join("---" for _ in platforms) + " |",
    ]
    for _, row in table.iterrows():
        cells = [f"{cell(row[p])}: {row[f'{p} verdict']}" for p in platforms]
        lines.append(
            f"| {numbers.get(row['study'], row['study'])} | {cell(row['claim'])}"
            f" | {cell(row['paper_value'])} | " + " | ".join(cells) + " |"
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
