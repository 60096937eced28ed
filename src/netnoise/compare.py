"""Two runs side by side: does my run agree with the shipped one, and where not?

A *run* is a results folder (``results`` or ``results/<platform>``) or a
results bundle. For every table both runs have, each figure of merit (a value
with its 95 % interval: ``x`` beside ``x_ci_low``/``x_ci_high`` or
``x_low``/``x_high``, the conventions of netnoise's tables) is matched on the
row's keys, and the two values are *compatible* when the interval of their
difference, the half-widths added in quadrature as for independent runs,
holds zero. The claims are set side by side, a changed verdict flagged, and the
runs' provenance (revision, platform, software, config keys) compared.

A *reference* (``references.yaml``, after ReFrame's performance references)
holds, per figure, the value a platform is expected to give with a lower and
an upper bound; ``--save-reference`` writes one from a run, ``--reference``
checks a run against it.
"""

from __future__ import annotations

import json
import math
import re
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from netnoise import headlines
from netnoise.atomic import atomic_open
from netnoise.estimates import Estimate, difference

#: How the interval columns of a figure ``x`` are named in netnoise's tables,
#: tried in this order.
INTERVAL_NAMES = (("_ci_low", "_ci_high"), ("_low", "_high"), ("_low_pct", "_high_pct"))
#: Integer columns that count samples rather than name a point: a run with
#: more samples is the same point measured longer.
COUNT = re.compile(r"^(n|n_.*|.*_?(runs|splits|samples|iterations|trials|repeats|draws|pairings))$")
#: A spread's column (a standard deviation), never a figure's value.
SPREAD = re.compile(r"_(sd|std)$")
#: Columns that state the paper's value or a test's p, never a row's point.
NOT_KEYS = re.compile(r"^(paper_|p_)")
#: Digits that tell a point's parameter (0.3333, 20.0) from a measured float.
PARAMETER_DIGITS = 4
CLAIM_KEYS = ["study", "claim_id"]


@dataclass(frozen=True)
class Run:
    """What a comparison reads of one run: its platform, its tables by name
    (``<study>/<table>``), its claims and its provenance in flat keys."""

    name: str
    platform: str
    tables: Mapping[str, pd.DataFrame]
    claims: pd.DataFrame
    provenance: Mapping[str, str] = field(default_factory=dict)


def _flat(mapping: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    flat: dict[str, str] = {}
    for key, value in mapping.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat |= _flat(value, f"{name}.")
        else:
            flat[name] = json.dumps(value, sort_keys=True)
    return flat


def _tables(folder: Path) -> dict[str, pd.DataFrame]:
    found = {}
    for path in sorted(folder.rglob("*.csv")):
        try:
            found[path.relative_to(folder).with_suffix("").as_posix()] = pd.read_csv(path)
        except (pd.errors.EmptyDataError, pd.errors.ParserError):
            continue
    return found


def _provenance_of_folder(folder: Path) -> dict[str, str]:
    facts: dict[str, str] = {}
    table = folder / "tables" / "provenance.csv"
    if table.is_file():
        frame = pd.read_csv(table)
        for column in ("git_sha", "platform", "netnoise", "mpi", "kernel", "host"):
            if column in frame:
                facts[f"run.{column}"] = ", ".join(
                    sorted(map(str, frame[column].dropna().unique()))
                )
    for sidecar in sorted(folder.glob("raw/**/*.prov.json")):
        try:
            record = json.loads(sidecar.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        for key, value in _flat(record.get("config") or {}, "config.").items():
            facts.setdefault(key, value)
    return facts


def _platform_folder(path: Path) -> Path:
    if (path / "tables").is_dir():
        return path
    folders = sorted(d for d in path.iterdir() if (d / "tables").is_dir()) if path.is_dir() else []
    if len(folders) != 1:
        raise FileNotFoundError(
            f"{path}: not a run's results (a folder with tables/, or one platform's folder"
            f" below it; found {len(folders)})"
        )
    return folders[0]


def load(path: str | Path) -> Run:
    """A run from a results folder or a results bundle (verified first)."""
    path = Path(path)
    if path.is_file():
        from netnoise import bundle

        with tempfile.TemporaryDirectory(prefix="netnoise-compare-") as scratch:
            unpacked = Path(scratch) / "bundle"
            manifest = bundle.unpack(path, unpacked)
            platform = manifest["platform"]
            folder = unpacked / bundle.EXPECTED / "results" / platform
            claims, _ = headlines.platform_claims([folder, unpacked / "results" / platform])
            facts = {
                "run.git_sha": manifest["git"]["sha"][:12],
                "run.platform": platform,
                **_flat(manifest.get("software") or {}, "software."),
            }
            config = unpacked / bundle.CONFIG
            if config.is_file():
                facts |= _flat(yaml.safe_load(config.read_text()) or {}, "config.")
            return Run(str(path), platform, _tables(folder / "tables"), claims, facts)
    folder = _platform_folder(path)
    claims, _ = headlines.platform_claims([folder])
    return Run(
        str(path), folder.name, _tables(folder / "tables"), claims, _provenance_of_folder(folder)
    )


def figures_of_merit(frame: pd.DataFrame) -> dict[str, tuple[str, str]]:
    """The figures of merit of a table: each value column with its interval's columns."""
    columns = list(frame.columns)
    found: dict[str, tuple[str, str]] = {}
    for position, column in enumerate(columns):
        for low_suffix, high_suffix in INTERVAL_NAMES:
            if not column.endswith(low_suffix):
                continue
            stem = column[: -len(low_suffix)]
            high = stem + high_suffix
            if high not in frame:
                continue
            candidates = [stem, f"{stem}_pct", "value" if stem == "ci" else None]
            value = next((c for c in candidates if c and c in frame), None)
            before = columns[position - 1] if position > 0 else ""
            if value is None and before.startswith(stem) and not SPREAD.search(before):
                value = before
            if value is not None and pd.api.types.is_numeric_dtype(frame[value]):
                found[value] = (column, high)
            break
    return found


def _is_parameter(series: pd.Series) -> bool:
    if series.name is not None and COUNT.match(str(series.name)):
        return False
    if not pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
        return True
    values = series.dropna().to_numpy(float)
    return bool(np.allclose(values, np.round(values, PARAMETER_DIGITS), rtol=0, atol=1e-12))


def key_columns(frame: pd.DataFrame) -> list[str]:
    """The columns naming a row's point: the table's leading words and grid
    numbers (few digits), up to its first measured column, passing over counts
    of samples, the paper's values and tests' p; never a figure of merit or
    its interval."""
    merit = figures_of_merit(frame)
    taken = set(merit) | {c for pair in merit.values() for c in pair}
    keys: list[str] = []
    for column in frame.columns:
        if COUNT.match(str(column)) or NOT_KEYS.match(str(column)):
            continue
        if column in taken or SPREAD.search(str(column)) or not _is_parameter(frame[column]):
            break
        keys.append(column)
    return keys


def _estimate(row: Mapping, value: str, low: str, high: str) -> Estimate:
    return Estimate(float(row[value]), float(row[low]), float(row[high]), 0)


def compare_table(name: str, first: pd.DataFrame, second: pd.DataFrame) -> pd.DataFrame:
    """Every figure of merit of one table in both runs, matched on the keys
    both share: the two values with their intervals, the difference with its
    interval and whether the runs are compatible (the difference's interval
    holds 0; None where either lacks an interval)."""
    merit = {f: cols for f, cols in figures_of_merit(first).items() if f in second}
    merit = {f: cols for f, cols in merit.items() if set(cols) <= set(second.columns)}
    keys = [k for k in key_columns(first) if k in second.columns and k in key_columns(second)]
    if not merit:
        return pd.DataFrame()
    if keys:
        joined = first.merge(second, on=keys, how="inner", suffixes=("_a", "_b"))
    else:
        if len(first) != len(second):
            return pd.DataFrame()
        joined = first.add_suffix("_a").join(second.add_suffix("_b"))
    rows = []
    for _, row in joined.iterrows():
        point = "; ".join(f"{k}={row[k]}" for k in keys if pd.notna(row[k]))
        for value, (low, high) in merit.items():
            a = _estimate(row, f"{value}_a", f"{low}_a", f"{high}_a")
            b = _estimate(row, f"{value}_b", f"{low}_b", f"{high}_b")
            if not (a.measured and b.measured):
                continue
            gap = difference(b, a) if a.has_interval and b.has_interval else None
            rows.append(
                {
                    "table": name,
                    "point": point,
                    "figure": value,
                    "a": a.value,
                    "a_low": a.low,
                    "a_high": a.high,
                    "b": b.value,
                    "b_low": b.low,
                    "b_high": b.high,
                    "difference": b.value - a.value,
                    "difference_low": gap.low if gap else math.nan,
                    "difference_high": gap.high if gap else math.nan,
                    "compatible": None if gap is None else bool(gap.low <= 0 <= gap.high),
                }
            )
    return pd.DataFrame(rows)


def compare_figures(first: Run, second: Run) -> pd.DataFrame:
    """:func:`compare_table` over every table both runs have."""
    frames = [
        compare_table(name, first.tables[name], second.tables[name])
        for name in sorted(set(first.tables) & set(second.tables))
    ]
    frames = [f for f in frames if not f.empty]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def compare_claims(first: Run, second: Run) -> pd.DataFrame:
    """Each claim of either run with both verdicts, and whether it changed."""
    a = first.claims.set_index(CLAIM_KEYS)[["claim", "verdict"]]
    b = second.claims.set_index(CLAIM_KEYS)[["verdict"]]
    joined = a.join(b, how="outer", suffixes=("_a", "_b")).reset_index()
    joined["changed"] = joined["verdict_a"].fillna("") != joined["verdict_b"].fillna("")
    return joined.fillna({"verdict_a": NOT_JUDGED, "verdict_b": NOT_JUDGED})


#: The verdict column of a claim the other run judged and this one did not.
NOT_JUDGED = "not judged in this run"


def compare_provenance(first: Run, second: Run) -> pd.DataFrame:
    """The provenance keys whose values differ (or that one run lacks)."""
    keys = sorted(set(first.provenance) | set(second.provenance))
    rows = [
        {"key": k, "a": first.provenance.get(k, "—"), "b": second.provenance.get(k, "—")}
        for k in keys
        if first.provenance.get(k) != second.provenance.get(k)
    ]
    return pd.DataFrame(rows, columns=["key", "a", "b"])


@dataclass(frozen=True)
class Comparison:
    first: Run
    second: Run
    figures: pd.DataFrame
    claims: pd.DataFrame
    provenance: pd.DataFrame

    @property
    def disagreeing(self) -> pd.DataFrame:
        if self.figures.empty:
            return self.figures
        return self.figures[self.figures["compatible"].eq(False)]

    @property
    def changed_claims(self) -> pd.DataFrame:
        return self.claims[self.claims["changed"]]


def compare(first: Run, second: Run) -> Comparison:
    return Comparison(
        first,
        second,
        compare_figures(first, second),
        compare_claims(first, second),
        compare_provenance(first, second),
    )


def _number(value: float) -> str:
    return "—" if math.isnan(value) else f"{value:.3g}"


def summary_lines(comparison: Comparison, *, shown: int = 20) -> list[str]:
    """The comparison for a terminal: counts, the figures beyond their
    intervals, the changed claims and the differing provenance."""
    figures, disagreeing = comparison.figures, comparison.disagreeing
    judged = int(figures["compatible"].notna().sum()) if not figures.empty else 0
    lines = [
        f"{comparison.second.name} against {comparison.first.name}: {len(figures)} figures of"
        f" merit in both, {len(disagreeing)} of {judged} with an interval differ beyond their"
        f" intervals; {len(comparison.changed_claims)} of {len(comparison.claims)} claims"
        " change verdict"
    ]
    for _, row in disagreeing.head(shown).iterrows():
        lines.append(
            f"  differs: {row['table']} [{row['point']}] {row['figure']}: {_number(row['a'])}"
            f" ({_number(row['a_low'])} to {_number(row['a_high'])}) against {_number(row['b'])}"
            f" ({_number(row['b_low'])} to {_number(row['b_high'])})"
        )
    if len(disagreeing) > shown:
        lines.append(f"  … and {len(disagreeing) - shown} more (--csv lists them all)")
    for _, row in comparison.changed_claims.iterrows():
        lines.append(
            f"  claim {row['study']}/{row['claim_id']}: {row['verdict_a']} → {row['verdict_b']}"
        )
    provenance = comparison.provenance
    if not provenance.empty:
        lines.append(f"  provenance: {len(provenance)} keys differ, among them:")
        for _, row in provenance.head(shown).iterrows():
            lines.append(f"    {row['key']}: {row['a']} → {row['b']}")
    return lines


# ---------------------------------------------------------------- references
REFERENCE_FORMAT = "netnoise-references-1"


def save_reference(run: Run, path: str | Path, *, tables: Iterable[str] | None = None) -> int:
    """A reference of every figure of merit of ``run`` (its value, and its
    interval as the bounds), written to ``path``; returns how many figures."""
    figures = []
    for name in sorted(tables or run.tables):
        frame = run.tables[name]
        merit = figures_of_merit(frame)
        keys = key_columns(frame)
        for _, row in frame.iterrows():
            for value, (low, high) in merit.items():
                if pd.isna(row[value]) or pd.isna(row[low]) or pd.isna(row[high]):
                    continue
                figures.append(
                    {
                        "table": name,
                        "key": {k: _plain(row[k]) for k in keys if pd.notna(row[k])},
                        "figure": value,
                        "reference": float(row[value]),
                        "lower": float(row[low]),
                        "upper": float(row[high]),
                    }
                )
    document = {"format": REFERENCE_FORMAT, "platform": run.platform, "figures": figures}
    with atomic_open(path) as out:
        yaml.safe_dump(document, out, sort_keys=False, allow_unicode=True)
    return len(figures)


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def read_reference(path: str | Path) -> dict[str, Any]:
    """A reference file, checked: its format, and each figure's fields."""
    document = yaml.safe_load(Path(path).read_text())
    if not isinstance(document, dict) or document.get("format") != REFERENCE_FORMAT:
        raise ValueError(f"{path}: not a netnoise reference (format {REFERENCE_FORMAT})")
    for number, figure in enumerate(document.get("figures") or [], start=1):
        missing = {"table", "key", "figure", "reference", "lower", "upper"} - set(figure)
        if missing:
            raise ValueError(f"{path}: figure {number} lacks {', '.join(sorted(missing))}")
        if not figure["lower"] <= figure["upper"]:
            raise ValueError(f"{path}: figure {number}: lower is above upper")
    return document


def check_reference(run: Run, reference: Mapping[str, Any]) -> pd.DataFrame:
    """Every figure of ``reference`` in ``run``: its value and whether it lies
    within the reference's bounds (``missing`` where the run lacks it)."""
    rows = []
    for figure in reference.get("figures") or []:
        frame = run.tables.get(figure["table"])
        value = math.nan
        if frame is not None and figure["figure"] in frame:
            match = pd.Series(True, index=frame.index)
            for key, wanted in figure["key"].items():
                if key not in frame:
                    match &= False
                    continue
                column = frame[key]
                match &= (
                    np.isclose(column.astype(float), float(wanted))
                    if pd.api.types.is_numeric_dtype(column) and not isinstance(wanted, str)
                    else column.astype(str) == str(wanted)
                )
            if match.sum() == 1:
                value = float(frame.loc[match, figure["figure"]].iloc[0])
        status = (
            "missing"
            if math.isnan(value)
            else "pass"
            if figure["lower"] <= value <= figure["upper"]
            else "fail"
        )
        rows.append(
            {
                "table": figure["table"],
                "point": "; ".join(f"{k}={v}" for k, v in figure["key"].items()),
                "figure": figure["figure"],
                "value": value,
                "reference": figure["reference"],
                "lower": figure["lower"],
                "upper": figure["upper"],
                "status": status,
            }
        )
    return pd.DataFrame(rows)
