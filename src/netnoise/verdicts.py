"""Headline claims as pre-registered tests of the papers' own words.

Every study's claims are written down before any data are seen, in
``resources/reference/<key>/headline_claims.csv`` (:data:`SPEC_COLUMNS`): the
paper's words verbatim (``quote``), the kind of claim, the band or bound it is
judged by (``target_low``, ``target_high``, in the claim's unit), the unit of
replication its interval is taken over and why the band is what it is. A claim
may have several parts (rows with one ``claim_id``), each its own test: the
claim holds only if every part does. The studies' ``headline.py`` modules
compute the evidence; this module judges it, by kind:

- ``magnitude``: the whole interval inside the band (by default half to twice
  the paper's effect); wholly above it is *larger than the paper's*, wholly
  below *smaller than the paper's*;
- ``threshold``: the paper's words are one-sided ("below 10 %"): the whole
  interval on the bound's side;
- ``trend``: a slope over all levels (at least three), its whole interval at or
  above the spec's minimum effect;
- ``comparison``: the difference the paper states, its whole interval on the
  stated side, every part of a two-part claim;
- ``shape``: a goodness-of-fit contrast against the alternatives the paper
  names, its whole interval in favour of the paper's shape.

A result whose interval straddles an edge is inconclusive and says which way it
leans (its point estimate inside the band or not) and the units of replication
80 % power would need. An effect the paper ascribes to the network must also beat
the CPU-only control (a job that loads the cores but not the links), and one
that holds only outside the paper's regime is not reproduced.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from netnoise import project
from netnoise.estimates import ALPHA, NOTHING, Estimate, Trend, samples_for_power, unit_suffix

REPRODUCED = "reproduced"
NOT_REPRODUCED = "not reproduced"
LEANS_REPRODUCED = "inconclusive: leans reproduced"
LEANS_NOT_REPRODUCED = "inconclusive: leans not reproduced"
UNCONTROLLED = "inconclusive: no CPU-only control"
NOT_MEASURABLE = "not measurable here"
VERDICTS = (
    REPRODUCED,
    NOT_REPRODUCED,
    LEANS_REPRODUCED,
    LEANS_NOT_REPRODUCED,
    UNCONTROLLED,
    NOT_MEASURABLE,
)
KINDS = ("magnitude", "threshold", "trend", "comparison", "shape")
#: What a claim's interval may be taken over.
UNITS_OF_REPLICATION = (
    "pairings",
    "applications",
    "configurations",
    "patterns",
    "link groups",
    "runs",
    "splits",
    "simulation runs",
    "iterations",
    "latency samples",
)

#: One row of a study's claims spec: a claim, or one part of it.
SPEC_COLUMNS = (
    "claim_id",
    "part",
    "claim",
    "quote",
    "paper_where",
    "paper_value",
    "kind",
    "statistic",
    "unit",
    "paper_number",
    "null_value",
    "target_low",
    "target_high",
    "unit_of_replication",
    "effect",
    "band_reason",
)
#: Spec columns whose value is a number (empty where it does not apply).
_NUMBERS = ("paper_number", "null_value", "target_low", "target_high")

#: One judged claim of a claims table.
COLUMNS = (
    "study",
    "claim_id",
    "claim",
    "quote",
    "kind",
    "paper_value",
    "paper_where",
    "value",
    "ci_low",
    "ci_high",
    "unit",
    "target_low",
    "target_high",
    "unit_of_replication",
    "samples",
    "samples_needed",
    "effect",
    "null_value",
    "verdict",
    "reason",
)


@dataclass(frozen=True)
class Judgement:
    verdict: str
    reason: str
    samples_needed: float = math.nan


@dataclass(frozen=True)
class Test:
    """One part of a claim: what is computed, the band it is judged by and the
    units of replication its interval is taken over."""

    part: str
    quote: str
    paper_value: str
    kind: str
    statistic: str
    unit: str
    paper_number: float
    null_value: float
    target_low: float
    target_high: float
    unit_of_replication: str
    band_reason: str

    @property
    def band(self) -> str:
        """The band in words: ``"22.5 to 90 %"``, ``"≥ 75 %"``, ``"≤ 10 points"``."""
        return band_text(self.target_low, self.target_high, self.unit, self.kind)

    def judge(self, estimate: Estimate) -> Judgement:
        """The estimate against this part's band (see the module's rules)."""
        if not estimate.measured:
            return Judgement(NOT_MEASURABLE, "nothing was measured")
        low, high = (
            (estimate.low, estimate.high) if estimate.has_interval else (estimate.value,) * 2
        )
        lower, upper = self.target_low, self.target_high
        ours = estimate.text(self.unit)
        band = self.band
        over = f"{estimate.samples} {self.unit_of_replication}"
        if self._within(low) and self._within(high):
            where = f"within {band}" if self.kind == "magnitude" else band
            return Judgement(REPRODUCED, f"{ours} over {over}: the whole interval is {where}")
        if not math.isnan(upper) and low > upper:
            return Judgement(
                NOT_REPRODUCED, f"{ours} over {over}: {self._beyond('above')} ({band})"
            )
        if not math.isnan(lower) and high < lower:
            return Judgement(
                NOT_REPRODUCED, f"{ours} over {over}: {self._beyond('below')} ({band})"
            )
        inside = self._within(estimate.value)
        edges = [e for e in (lower, upper) if not math.isnan(e) and low <= e <= high]
        edge = min(edges, key=lambda e: abs(e - estimate.value))
        needed = samples_for_power(estimate, edge)
        need = (
            "no sample size decides it"
            if math.isinf(needed)
            else f"about {math.ceil(needed)} {self.unit_of_replication} for 80 % power"
        )
        return Judgement(
            LEANS_REPRODUCED if inside else LEANS_NOT_REPRODUCED,
            f"{ours} over {over} straddles {edge:.3g}{unit_suffix(self.unit)} ({band}); {need}",
            needed,
        )

    def _within(self, value: float) -> bool:
        """Whether ``value`` lies in the band: a magnitude's ends belong to it;
        a bound of any other kind is one the value must pass."""
        lower, upper = self.target_low, self.target_high
        if self.kind == "magnitude":
            return lower <= value <= upper
        return (math.isnan(lower) or value > lower) and (math.isnan(upper) or value < upper)

    def judge_trend(self, trend: Trend) -> Judgement:
        """A trend: the slope over all its levels (at least three) against the
        spec's minimum effect (the part's unit is the slope's, per level)."""
        if trend.levels < 3:
            return Judgement(
                NOT_MEASURABLE, f"a trend needs at least 3 levels; this run has {trend.levels}"
            )
        judgement = with_context(
            self.judge(trend.slope),
            f"over {trend.levels} levels, Spearman ρ of the level means {trend.spearman:.2f}",
        )
        if trend.slope.has_interval and trend.slope.high < 0:
            return Judgement(judgement.verdict, f"falls: {judgement.reason}")
        return judgement

    def _beyond(self, side: str) -> str:
        if self.kind == "magnitude":
            return f"{'larger' if side == 'above' else 'smaller'} than the paper's"
        return f"the whole interval is {side} the bound"


def band_text(low: float, high: float, unit: str, kind: str) -> str:
    """A band in words, from its ends (either may be nan, one-sided): a
    magnitude's ends belong to it, any other kind's bound is to be passed."""
    suffix = unit_suffix(unit)
    if math.isnan(low) and math.isnan(high):
        return "no band"
    if kind == "magnitude" or not (math.isnan(low) or math.isnan(high)):
        return f"{low:.3g} to {high:.3g}{suffix}"
    if math.isnan(high):
        return f"> {low:.3g}{suffix}"
    return f"< {high:.3g}{suffix}"


@dataclass(frozen=True)
class Claim:
    """A paper's headline claim: its words, where the paper says it, and its
    parts (one for most claims), each a :class:`Test`."""

    study: str
    claim_id: str
    claim: str
    paper_where: str
    effect: str
    tests: Mapping[str, Test] = field(default_factory=dict)

    @property
    def test(self) -> Test:
        """The claim's only part (a claim of several parts names the one it judges)."""
        if len(self.tests) != 1:
            raise ValueError(f"{self.claim_id} has the parts {', '.join(self.tests)}: name one")
        return next(iter(self.tests.values()))

    def row(self, estimate: Estimate, judgement: Judgement, part: str | None = None) -> dict:
        """The claim judged: one row of the claims table (``COLUMNS``), with the
        band and words of ``part`` (the deciding one of several)."""
        if judgement.verdict not in VERDICTS:
            raise ValueError(
                f"verdict must be one of {', '.join(VERDICTS)}, not {judgement.verdict!r}"
            )
        test = self.test if part is None else self.tests[part]
        return {
            "study": self.study,
            "claim_id": self.claim_id,
            "claim": self.claim,
            "quote": test.quote,
            "kind": test.kind,
            "paper_value": test.paper_value,
            "paper_where": self.paper_where,
            "value": estimate.value,
            "ci_low": estimate.low,
            "ci_high": estimate.high,
            "unit": test.unit,
            "target_low": test.target_low,
            "target_high": test.target_high,
            "unit_of_replication": test.unit_of_replication,
            "samples": estimate.samples,
            "samples_needed": judgement.samples_needed,
            "effect": self.effect,
            "null_value": test.null_value,
            "verdict": judgement.verdict,
            "reason": judgement.reason,
        }

    def judged(
        self, estimate: Estimate, *gates, context: str = "", part: str | None = None
    ) -> dict:
        """The row of ``part`` (or the only one) judged by its test, then by each
        of ``gates`` (functions of a judgement), with ``context`` after its reason."""
        test = self.test if part is None else self.tests[part]
        return self._gated(estimate, test.judge(estimate), gates, context, part)

    def judged_trend(
        self, trend: Trend, *gates, context: str = "", part: str | None = None
    ) -> dict:
        """As :meth:`judged`, for a trend's slope over its levels."""
        test = self.test if part is None else self.tests[part]
        return self._gated(trend.slope, test.judge_trend(trend), gates, context, part)

    def _gated(self, estimate, judgement, gates, context, part) -> dict:
        for gate in gates:
            judgement = gate(judgement)
        return self.row(estimate, with_context(judgement, context), part)

    def unmeasured(self, why: str) -> dict:
        """The claim where this run measured nothing for it (``why``)."""
        first = next(iter(self.tests))
        return self.row(NOTHING, Judgement(NOT_MEASURABLE, why), first)

    def all_parts(self, judged: Mapping[str, tuple[Estimate, Judgement]]) -> dict:
        """A claim of several parts: every part must hold, so the row is the
        most severe part's, its reason naming each part's result."""
        if set(judged) != set(self.tests):
            raise ValueError(
                f"{self.claim_id}: judge every part ({', '.join(self.tests)}),"
                f" not {', '.join(judged)}"
            )
        part, (estimate, worst) = min(
            judged.items(), key=lambda item: _SEVERITY.index(item[1][1].verdict)
        )
        held = sum(j.verdict == REPRODUCED for _, j in judged.values())
        reasons = "; ".join(f"{name}: {j.reason}" for name, (_, j) in judged.items())
        return self.row(
            estimate,
            Judgement(
                worst.verdict,
                f"{held} of {len(judged)} parts hold (deciding: {part}); {reasons}",
                worst.samples_needed,
            ),
            part,
        )


def spec_path(study: str) -> Path:
    """Where study ``study``'s claims spec is."""
    return project.path("resources", "reference", study, "headline_claims.csv")


def read_claims(study: str, path: Path | None = None) -> dict[str, Claim]:
    """Study ``study``'s claims spec (at ``path``, by default its own), by claim
    id, checked: every column present, a kind and a unit of replication from
    the allowed ones, numbers where numbers go, and a band that suits the kind."""
    path = spec_path(study) if path is None else path
    rows = pd.read_csv(path, dtype=str, keep_default_na=False)
    if tuple(rows.columns) != SPEC_COLUMNS:
        raise ValueError(f"{path}: its columns must be {', '.join(SPEC_COLUMNS)}")
    claims: dict[str, Claim] = {}
    for line, row in enumerate(rows.to_dict("records"), start=2):
        test = _test(row, f"{path}, line {line}")
        found = claims.get(row["claim_id"])
        if found is None:
            claims[row["claim_id"]] = Claim(
                study,
                row["claim_id"],
                row["claim"],
                row["paper_where"],
                row["effect"],
                {test.part: test},
            )
            continue
        if (
            (found.claim, found.paper_where, found.effect)
            != (
                row["claim"],
                row["paper_where"],
                row["effect"],
            )
            or test.part in found.tests
            or "" in (test.part, *found.tests)
        ):
            raise ValueError(
                f"{path}, line {line}: the parts of {row['claim_id']} must share its claim,"
                " paper_where and effect, and each needs a part name of its own"
            )
        claims[row["claim_id"]] = Claim(
            study,
            found.claim_id,
            found.claim,
            found.paper_where,
            found.effect,
            {**found.tests, test.part: test},
        )
    return claims


def _test(row: Mapping[str, str], where: str) -> Test:
    def number(name: str) -> float:
        text = row[name].strip()
        if not text:
            return math.nan
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"{where}: {name} must be a number or empty, not {text!r}") from None

    values = {name: number(name) for name in _NUMBERS}
    if row["kind"] not in KINDS:
        raise ValueError(f"{where}: kind must be one of {', '.join(KINDS)}, not {row['kind']!r}")
    if row["unit_of_replication"] not in UNITS_OF_REPLICATION:
        raise ValueError(
            f"{where}: unit_of_replication must be one of {', '.join(UNITS_OF_REPLICATION)},"
            f" not {row['unit_of_replication']!r}"
        )
    for name in ("claim_id", "claim", "quote", "paper_where", "statistic", "band_reason"):
        if not row[name].strip():
            raise ValueError(f"{where}: {name} is empty")
    low, high = values["target_low"], values["target_high"]
    sides = (not math.isnan(low)) + (not math.isnan(high))
    if row["kind"] == "magnitude" and sides != 2:
        raise ValueError(f"{where}: a magnitude needs both target_low and target_high")
    if row["kind"] != "magnitude" and sides == 0:
        raise ValueError(f"{where}: a {row['kind']} needs target_low or target_high")
    if row["kind"] == "threshold" and sides != 1:
        raise ValueError(f"{where}: a threshold is one-sided: give target_low or target_high")
    if sides == 2 and low > high:
        raise ValueError(f"{where}: target_low {low:g} is above target_high {high:g}")
    return Test(
        part=row["part"],
        quote=row["quote"],
        paper_value=row["paper_value"],
        kind=row["kind"],
        statistic=row["statistic"],
        unit=row["unit"],
        unit_of_replication=row["unit_of_replication"],
        band_reason=row["band_reason"],
        **values,
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


def network_gate(controls: Iterable[Control] | None):
    """A gate for :meth:`Claim.judged`: a reproduced effect stays reproduced
    only if the network perturbation beats every CPU-only control measured
    beside it; ``None`` means the study measured no such control, which leaves
    the effect not shown to be the network's."""

    def gate(judgement: Judgement) -> Judgement:
        if judgement.verdict != REPRODUCED:
            return judgement
        if controls is None:
            return Judgement(
                UNCONTROLLED,
                f"{judgement.reason}; no CPU-only control was measured, so the cores may"
                " explain it",
            )
        unbeaten = [c for c in controls if not c.beaten]
        if not unbeaten:
            return judgement
        worst = max(unbeaten, key=lambda c: c.p_value)
        return Judgement(
            NOT_REPRODUCED,
            f"{judgement.reason}, but the {worst.name} slows it as much: {worst.text()}",
        )

    return gate


def regime_gate(outside: str | None):
    """A gate for :meth:`Claim.judged`: a claim that holds only because the
    measurement lies outside the paper's regime (``outside`` says how) is not
    reproduced."""

    def gate(judgement: Judgement) -> Judgement:
        if judgement.verdict != REPRODUCED or not outside:
            return judgement
        return Judgement(NOT_REPRODUCED, f"outside the paper's regime: {outside}")

    return gate


#: Which of several judgements a claim over all of them takes: the first kind
#: in this order that any of them has.
_SEVERITY = (
    NOT_REPRODUCED,
    LEANS_NOT_REPRODUCED,
    LEANS_REPRODUCED,
    UNCONTROLLED,
    NOT_MEASURABLE,
    REPRODUCED,
)


def worst_of(
    cases: Iterable[tuple[str, Estimate, Judgement]],
) -> tuple[str, Estimate, Judgement]:
    """A claim that must hold in every case (each labelled): the case with the
    most severe verdict, with its estimate, its reason prefixed with the count
    that hold and its label."""
    cases = list(cases)
    if not cases:
        return "", NOTHING, Judgement(NOT_MEASURABLE, "nothing was measured")
    label, estimate, worst = min(cases, key=lambda case: _SEVERITY.index(case[2].verdict))
    held = sum(judgement.verdict == REPRODUCED for _, _, judgement in cases)
    return (
        label,
        estimate,
        Judgement(
            worst.verdict,
            f"holds in {held} of {len(cases)}; {label}: {worst.reason}",
            worst.samples_needed,
        ),
    )


def with_context(judgement: Judgement, context: str) -> Judgement:
    """The judgement with ``context`` (what limits the measurement) after its reason."""
    if not context:
        return judgement
    return Judgement(judgement.verdict, f"{judgement.reason}; {context}", judgement.samples_needed)


def table(rows: Iterable[dict]) -> pd.DataFrame:
    """Rows as a claims table with the columns in order."""
    return pd.DataFrame(list(rows), columns=list(COLUMNS))


def simulated_clock(table: pd.DataFrame) -> bool:
    """Whether every row of a table was timed in simulated time (its ``clock``
    column; a table without one was timed on real cores), where no host core
    enters a run and a claim needs no CPU-only control."""
    return "clock" in table.columns and bool((table["clock"] == "simulated").all())


def shows_effect(row: Mapping) -> bool | None:
    """Whether a judged row shows its effect beyond its null value (the value
    meaning "no effect"): True if the whole interval is past it on the band's
    side, False if the interval holds it or lies on its other side, None where
    the row has no null value or measured nothing."""
    null = float(row["null_value"])
    value, low, high = (float(row[c]) for c in ("value", "ci_low", "ci_high"))
    if math.isnan(null) or math.isnan(value):
        return None
    if math.isnan(low) or math.isnan(high):
        low = high = value
    above = not math.isnan(float(row["target_low"])) and float(row["target_low"]) >= null
    return bool(low > null) if above else bool(high < null)


def outside_band(claims: pd.DataFrame) -> list[str]:
    """Reproduced rows whose interval is not inside their band: none may be,
    whatever the data, for a rule that lets one through is a bug."""
    found = []
    for _, row in claims[claims["verdict"] == REPRODUCED].iterrows():
        low, high = float(row["ci_low"]), float(row["ci_high"])
        if math.isnan(low) or math.isnan(high):
            low = high = float(row["value"])
        lower, upper = float(row["target_low"]), float(row["target_high"])
        if (not math.isnan(lower) and low < lower) or (not math.isnan(upper) and high > upper):
            found.append(f"{row['study']}: {row['claim_id']} is reproduced outside its band")
    return found


def contradictions(claims: pd.DataFrame) -> list[str]:
    """Pairs of rows of one claims table that cannot both be so: of two claims
    about one effect (their ``effect``), one is reproduced and so shows the
    effect, while the other's interval shows none."""
    found = []
    for effect, rows in claims[claims["effect"].fillna("") != ""].groupby("effect"):
        shown = {row["claim_id"]: shows_effect(row) for _, row in rows.iterrows()}
        for _, row in rows[rows["verdict"] == REPRODUCED].iterrows():
            if shown[row["claim_id"]] is False:
                continue
            for other, shows in shown.items():
                if shows is False:
                    found.append(
                        f"{row['study']}: {row['claim_id']} is reproduced, so {effect} is there,"
                        f" but {other} shows none"
                    )
    return found
