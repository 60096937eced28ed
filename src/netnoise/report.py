"""What the Snakemake report shows beyond figures: tables as pages, each study's
front page, and where the numbers come from.

Snakemake's report shows an HTML result inside the page and offers any other
file (a CSV) only as a download, so every table of the report is an HTML page
made from its CSV: numbers rounded to four significant digits, units in the
column heads (from the ``_us``/``_s``/``_pct``/... suffixes of the column
names, shares shown in %), the CSV itself one click away with every digit.

Every result of the report carries two labels, its place (``#``) and its title:
the report lists a category's results sorted by their labels, so the place
keeps them in the order the paper presents them. A study lists its results in
``REPORT_RESULTS`` of its ``plan.py``; the platform's and the provenance
results are listed here.

The landing page and the Provenance pages say where the numbers come from: a
run of the workflow (its platform, revision and dates, from the provenance of
every measured result) or a results bundle (``netnoise review``: the bundle's
file, SHA-256, creation date and revision, and that nothing was measured).
"""

from __future__ import annotations

import base64
import html
import json
import math
import os
import subprocess
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import pandas as pd

from netnoise import claims_summary, project, verdicts
from netnoise import config as netnoise_config
from netnoise.atomic import atomic_open

#: Lets content taller than the window scroll from its top (Snakemake's template
#: centres it vertically and cuts its top off) and keeps the landing page's text
#: beside the rule graph readable.
STYLESHEET = project.ROOT / "workflow" / "report" / "report.css"
SIGNIFICANT_DIGITS = 4


@dataclass(frozen=True)
class Result:
    """One result of the report: its file stem, its title and, for a table, the
    units of the columns whose names carry none."""

    name: str
    title: str
    units: Mapping[str, str] = field(default_factory=dict)


#: The first result of every study's category: its front page.
ABOUT = Result("about", "The paper, what the testbed changes, and these results")
#: The result every study's category opens with: its paper's headline claims,
#: judged on this run (netnoise.verdicts).
HEADLINE_CLAIMS = Result(
    "headline_claims",
    "Headline claims · the paper's claims, judged on this run",
    {"value": "", "ci_low": "", "ci_high": ""},
)
#: The cross-study summary, the report's first table.
CLAIMS_RESULTS = (
    Result("claims_summary", "Every paper's headline claims, judged on this run"),
    Result("claims_beside", "The headline claims on this platform beside the shipped testbed run"),
)
LATENCY_UNITS = {c: "µs" for c in ("mean", "std", "min", "p05", "median", "p95", "p99", "max")}
PLATFORM_RESULTS = (
    Result("about_report", "About this report: the platform and the papers' machines"),
    Result("testbed_validation", "Validation of the emulated cluster: TCP goodput per link"),
    Result(
        "baseline_latency_table", "Baseline one-way latency per message size (table)", LATENCY_UNITS
    ),
    Result("baseline_latency_figure", "Baseline one-way latency per message size (figure)"),
)
PROVENANCE_RESULTS = (
    Result(
        "cpu_summary",
        "Per study: measured results, CPU-saturated share, busy share, failures",
        {"runnable_median": "tasks", "runnable_max": "tasks"},
    ),
    Result("source", "Where these numbers come from"),
    Result("provenance", "Provenance of every measured result"),
)


def labels(results: Sequence[Result], name: str) -> dict[str, str]:
    """The report labels of result ``name`` of a category listing ``results``
    (a study's ABOUT page first)."""
    for place, result in enumerate(results, start=1):
        if result.name == name:
            return {"#": f"{place:02d}", "result": result.title}
    known = ", ".join(r.name for r in results)
    raise KeyError(f"no report result {name!r}; this category lists {known}")


def find(results: Sequence[Result], name: str) -> Result:
    return next(r for r in results if r.name == name)


# --- Numbers and column heads -------------------------------------------------

_SUFFIX_UNITS = (
    ("_us", "µs"),
    ("_ms", "ms"),
    ("_s", "s"),
    ("_pct", "%"),
    ("_mbit", "Mbit/s"),
    ("_mbps", "Mbit/s"),
    ("_bytes", "bytes"),
)


def is_share(column: str) -> bool:
    """A fraction of one (shown in %): ``share``, ``late_share``, ``share_mean``..."""
    return "share" in column.split("_")


def column_head(column: str, units: Mapping[str, str]) -> str:
    """``mean_latency_us`` -> ``mean latency (µs)``; ``late_share`` -> ``late share (%)``."""
    unit = units.get(column)
    name = column
    if unit is None:
        for suffix, suffix_unit in _SUFFIX_UNITS:
            if column.endswith(suffix) and len(column) > len(suffix):
                name, unit = column[: -len(suffix)], suffix_unit
                break
    if unit is None and is_share(column):
        unit = "%"
    name = name.replace("_", " ")
    return f"{name} ({unit})" if unit else name


def format_number(value: float, digits: int = SIGNIFICANT_DIGITS) -> str:
    """``digits`` significant digits (all digits of a larger integer part), no
    exponent above 0.001, thousands grouped by a narrow space from 10 000 on,
    trailing zeros dropped."""
    if math.isnan(value):
        return "–"
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    if value == 0:
        return "0"
    magnitude = abs(value)
    if magnitude < 1e-3:
        return f"{value:.{digits - 2}e}"
    decimals = max(0, digits - 1 - math.floor(math.log10(magnitude)))
    grouping = "," if magnitude >= 1e4 else ""
    text = f"{round(value, decimals):{grouping}.{decimals}f}".replace(",", "\u202f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text.replace("-", "−")


def format_column(values: pd.Series, column: str) -> tuple[list[str], bool]:
    """The cells of one column as text, and whether they are numbers."""
    if pd.api.types.is_bool_dtype(values):
        return ["yes" if v else "no" for v in values], False
    if not pd.api.types.is_numeric_dtype(values):
        return ["–" if pd.isna(v) else str(v) for v in values], False
    numbers = values.astype(float)
    if is_share(column):
        numbers = numbers * 100
    present = numbers.dropna()
    if not is_share(column) and (present == present.round()).all() and (present.abs() < 1e15).all():
        return ["–" if math.isnan(v) else format_number(v, digits=1) for v in numbers], True
    return [format_number(v) for v in numbers], True


# --- Pages --------------------------------------------------------------------

_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 1.2rem 1.5rem; color: #1e293b; }
h1 { font-size: 1.3rem; margin: 0 0 .4rem; }
h2 { font-size: 1.05rem; margin: 1.4rem 0 .4rem; }
p, ol { max-width: 60rem; }
.note { color: #475569; font-size: 12.5px; }
table { border-collapse: collapse; font-size: 13px; margin-top: .6rem; }
th, td { padding: .25rem .6rem; border-bottom: 1px solid #e2e8f0; text-align: left;
         vertical-align: top; }
th { position: sticky; top: 0; background: #f1f5f9; min-width: 4.5rem; }
.frame { max-width: 100%; overflow-x: auto; }
td { max-width: 28rem; overflow-wrap: break-word; }
.verdict { font-weight: 600; }
.claims td:has(> .claim) { min-width: 14rem; }
.claims .ours { white-space: nowrap; }
.verdict.reproduced { color: #15803d; }
.verdict.not-reproduced { color: #b91c1c; }
.verdict.inconclusive, .verdict.not-measurable-here { color: #a16207; }
td.number { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tbody tr:nth-child(even) { background: #f8fafc; }
cite { font-style: italic; }
code { font-size: 12.5px; }
"""


def _page(title: str, body: str) -> str:
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head>\n"
        f"<body>\n<h1>{html.escape(title)}</h1>\n{body}\n</body></html>\n"
    )


def table_html(frame: pd.DataFrame, units: Mapping[str, str] | None = None) -> str:
    """A ``<table>`` of ``frame``: rounded numbers, units in the heads, each head's
    tooltip the CSV's column name."""
    units = units or {}
    heads = "".join(
        f'<th title="{html.escape(str(c))}">{html.escape(column_head(str(c), units))}</th>'
        for c in frame.columns
    )
    columns = [format_column(frame[c], str(c)) for c in frame.columns]
    rows = []
    for i in range(len(frame)):
        cells = "".join(
            f'<td class="number">{html.escape(cells[i])}</td>'
            if numeric
            else f"<td>{html.escape(cells[i])}</td>"
            for cells, numeric in columns
        )
        rows.append(f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{heads}</tr></thead><tbody>\n" + "\n".join(rows) + "</tbody></table>"


def _download(csv: Path) -> str:
    data = base64.b64encode(csv.read_bytes()).decode()
    return (
        f'<a download="{html.escape(csv.name)}" href="data:text/csv;base64,{data}">'
        f"{html.escape(csv.name)}</a>"
    )


def table_page(
    csv: str | os.PathLike[str],
    title: str,
    units: Mapping[str, str] | None = None,
    *,
    source: str,
    before: str = "",
) -> str:
    """The HTML page of one CSV table; ``source`` (HTML) says where its numbers come
    from, ``before`` (HTML) goes above the table."""
    csv = Path(csv)
    frame = read_table(csv)
    shares = [c for c in frame.columns if is_share(str(c))]
    note = (
        f"{len(frame)} rows. Numbers rounded to {SIGNIFICANT_DIGITS} significant digits"
        + ("; shares in %" if shares else "")
        + f". Every digit: {_download(csv)}. {source}"
    )
    frame = frame[paper_beside_ours(list(frame.columns))]
    shown = claims_html(frame) if set(verdicts.COLUMNS) <= set(frame.columns) else None
    return _page(
        title,
        f'<p class="note">{note}</p>\n{before}'
        f'<div class="frame">{shown or table_html(frame, units)}</div>',
    )


def paper_beside_ours(columns: list[str]) -> list[str]:
    """``columns`` with each ``paper_<name>`` moved right after ``<name>``, so
    a reader compares the paper's value with ours side by side."""
    ordered = [c for c in columns if not (c.startswith("paper_") and c[6:] in columns)]
    for column in columns:
        if column.startswith("paper_") and column[6:] in columns:
            ordered.insert(ordered.index(column[6:]) + 1, column)
    return ordered


def claims_html(claims: pd.DataFrame) -> str:
    """A claims table for reading: per claim its words and where the paper says
    so, the paper's value beside ours with its interval, the verdict, and the
    evidence with the target; a study column only where several studies are."""
    several = claims["study"].nunique() > 1
    heads = ["Study"] if several else []
    heads += ["Claim", "Paper", "Ours (95 % interval)", "Band", "Verdict", "Evidence"]
    rows = []
    for _, row in claims.iterrows():
        verdict = str(row["verdict"])
        kind = verdict.split(":")[0].replace(" ", "-")
        cells = [html.escape(str(row["study"]))] if several else []
        cells += [
            f'<span class="claim">{html.escape(str(row["claim"]))}</span>'
            f'<br><span class="note">“{html.escape(str(row["quote"]))}”'
            f" ({html.escape(str(row['paper_where']))})</span>",
            html.escape(str(row["paper_value"])),
            f'<span class="ours">{html.escape(claims_summary.ours_text(row))}</span>',
            f'<span class="ours">{html.escape(claims_summary.band(row))}</span>'
            f'<br><span class="note">{html.escape(str(row["kind"]))}, over'
            f" {html.escape(str(row['unit_of_replication']))}</span>",
            f'<span class="verdict {kind}">{html.escape(verdict)}</span>',
            html.escape(str(row["reason"])),
        ]
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    head = "".join(f"<th>{html.escape(h)}</th>" for h in heads)
    return (
        f'<table class="claims"><thead><tr>{head}</tr></thead><tbody>\n'
        + "\n".join(rows)
        + "</tbody></table>"
    )


def about_page(
    study: Any,
    titles: Iterable[str],
    *,
    source: str,
    facts: tuple[str, Sequence[tuple[str, str]]] | None = None,
    missing: Collection[str] = frozenset(),
) -> str:
    """A study's front page: its paper's citation, what the testbed changes, the
    ``facts`` of the platform it ran on (netnoise.platform.Platform.facts) where
    its config says any, and the titles of its results in the paper's order,
    numbered as the report's ``#`` labels number them; those of ``missing``
    (not made by this run's config) say so, which explains the gaps in the
    numbers of the report's list."""
    citation = study.citation
    doi = (
        f'DOI <a href="https://doi.org/{html.escape(citation.doi)}">{html.escape(citation.doi)}</a>'
        if citation.doi
        else citation.NO_DOI
    )
    note = f'<p class="note">{html.escape(citation.note)}</p>' if citation.note else ""
    listed = "".join(
        f"<li>{html.escape(title)}</li>"
        if title not in missing
        else f'<li class="missing">{html.escape(title)}: not in this run (its part of the'
        " study is off in this run's config)</li>"
        for title in titles
    )
    layout = ""
    if facts:
        heading, lines = facts
        rows = "".join(
            f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in lines
        )
        layout = f"<h2>{heading}</h2>\n<table>{rows}</table>\n"
    # A study beyond the papers cites the method it follows; its results have
    # no paper's order.
    follows = "" if study.reproduces else "It follows the method of "
    order = "Results, in the paper's order" if study.reproduces else "Results"
    body = (
        f"<p>{follows}{html.escape(citation.authors)}. <cite>{html.escape(citation.title)}</cite>. "
        f"{html.escape(citation.published)}. {doi}.</p>\n{note}"
        f"<h2>What the testbed changes</h2>\n<p>{html.escape(study.testbed_changes)}</p>\n"
        f"{layout}"
        f"<h2>{order}</h2>\n<ol>{listed}</ol>\n"
        f'<p class="note">{source}</p>'
    )
    return _page(f"Study {study.number}: {study.title}", body)


def text_page(title: str, rst: str, *, source: str) -> str:
    """A page of reStructuredText (the report's longer description)."""
    from docutils.core import publish_parts

    body = publish_parts(rst, writer_name="html", settings_overrides={"report_level": 4})
    return _page(title, f'{body["body"]}\n<p class="note">{source}</p>')


# --- Where the numbers come from ----------------------------------------------


@dataclass(frozen=True)
class Source:
    """Where a report's numbers come from: facts (what, value) and one sentence."""

    facts: list[tuple[str, str]]
    sentence_rst: str
    """For the landing page."""
    sentence_html: str
    """The same, shorter, for the foot of every page."""


def _minutes(timestamp: str) -> str:
    """``2026-11-22T04:58:42.058+00:00`` -> ``2026-11-22 04:58 UTC``."""
    moment = pd.Timestamp(timestamp)
    if moment.tzinfo is not None:
        moment = moment.tz_convert("UTC")
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def _revision(git: Mapping[str, Any] | None) -> str:
    if not git or not git.get("sha"):
        return "unknown (not a git checkout)"
    return git["sha"][:12] + (" with uncommitted changes" if git.get("dirty") else "")


#: Columns that hold text even when every character is a digit: a revision's
#: short hash can be, and read as a number it would lose its leading zeros.
TEXT_COLUMNS = {"git_sha": str}


def read_table(csv: str | os.PathLike[str]) -> pd.DataFrame:
    """A results table (CSV), its revision columns kept as text."""
    return pd.read_csv(csv, dtype=TEXT_COLUMNS)


def describe_source(
    provenance: pd.DataFrame,
    platform: str,
    *,
    manifest: Mapping[str, Any] | None = None,
    review: Mapping[str, Any] | None = None,
) -> Source:
    """Where the numbers come from: the measured results' provenance and, when
    the working directory was unpacked from a bundle by ``netnoise review``, that
    bundle's ``manifest`` and the ``review``'s record of its file and SHA-256."""
    facts: list[tuple[str, str]] = []
    if len(provenance):
        starts = pd.to_datetime(provenance["start"], utc=True, format="ISO8601")
        ends = starts + pd.to_timedelta(provenance["duration_s"], unit="s")
        revisions = sorted(
            sha + (" with uncommitted changes" if str(dirty) == "True" else "")
            for sha, dirty in set(zip(provenance["git_sha"], provenance["git_dirty"], strict=True))
        )
        measured = (
            f"{starts.min().strftime('%Y-%m-%d %H:%M')} to "
            f"{ends.max().strftime('%Y-%m-%d %H:%M')} UTC"
        )
        run_facts = [
            ("measured on the platform", platform),
            ("measured", measured),
            ("measured at revision", ", ".join(revisions)),
            ("measured results", str(len(provenance))),
        ]
    else:
        revisions, measured = [], "nothing measured"
        run_facts = [("measured on the platform", platform), ("measured", measured)]
    if manifest is not None and review is not None:
        created = _minutes(manifest["created"])
        revision = _revision(manifest.get("git"))
        name = Path(review["bundle"]).name
        facts = [
            ("numbers from", f"the results bundle {review['bundle']}"),
            ("bundle SHA-256", review["sha256"]),
            ("bundle created", created),
            ("bundle made at revision", revision),
            ("bundle made by", f"netnoise {manifest.get('netnoise_version', '?')}"),
            ("measured for this report", "nothing: every table and figure was rebuilt from "
                                         "the bundle's cached results"),
            ("rebuilt", _minutes(review["reviewed"])),
            *run_facts,
        ]  # fmt: skip
        sentence = (
            f"**Numbers from the results bundle** ``{name}`` (created {created} at revision "
            f"``{revision}``, SHA-256 ``{review['sha256'][:16]}…``): nothing was measured for "
            "this report; every table and figure was rebuilt from the bundle."
        )
        short = (
            f"Numbers from the results bundle <code>{html.escape(name)}</code> (created "
            f"{created}, revision {html.escape(revision)}, SHA-256 "
            f"<code>{review['sha256'][:16]}…</code>); nothing was measured for this report."
        )
    else:
        facts = [("numbers from", "a run of the workflow"), *run_facts]
        at = ", ".join(revisions) or "no measured result"
        sentence = (
            f"**Numbers from a fresh run** on the **{platform}** platform at revision "
            f"``{at}``, measured {measured}."
        )
        short = (
            f"Numbers from a fresh run on the {html.escape(platform)} platform at revision "
            f"{html.escape(at)}, measured {html.escape(measured)}."
        )
    return Source(facts, sentence, short)


def source_page(source: Source) -> str:
    rows = "".join(
        f"<tr><th>{html.escape(what)}</th><td>{html.escape(value)}</td></tr>"
        for what, value in source.facts
    )
    body = (
        f"<p>{source.sentence_html}</p>\n<table><tbody>{rows}</tbody></table>\n"
        '<p class="note">The provenance of every measured result (its revision, platform, '
        "software, times and CPU load) is in <em>Provenance of every measured result</em>; "
        "the bundle's manifest lists the SHA-256 of every file it holds.</p>"
    )
    return _page("Where these numbers come from", body)


def _rst_text(text: object) -> str:
    """Text set literally in reStructuredText (its markup characters escaped)."""
    return "".join(f"\\{c}" if c in "\\*_`|" else c for c in str(text))


def claims_rst(
    claims: pd.DataFrame,
    platform: str,
    numbers: Mapping[str, str],
    cpu: Mapping[str, str] | None = None,
) -> str:
    """The landing page's summary of the headline claims: the count, then one
    line per claim with its verdict, its study's seed number (``numbers``), our
    value and its band before the claim's words and the paper's value (the
    words are what a narrow window cuts short), and each study's CPU record
    (``cpu``)."""
    lines = [f"**{claims_summary.headline_sentence(claims, platform)}.**", ""]
    for study, rows in claims.groupby("study", sort=False):
        for _, row in rows.iterrows():
            lines.append(
                f"- **{row['verdict']}** · {numbers.get(study, study)}"
                f" · ours {_rst_text(claims_summary.ours_text(row))};"
                f" band {_rst_text(claims_summary.band(row))}"
                f" · {_rst_text(row['claim'])} (paper {_rst_text(row['paper_value'])})"
            )
        if cpu and study in cpu:
            lines.append(f"- *{numbers.get(study, study)} {_rst_text(cpu[study])}*")
    lines += [
        "",
        "Each study's *Headline claims* page, first in its category, gives the paper's words,"
        " the band and the evidence behind every verdict; *Claims* holds them all in one table.",
    ]
    return "\n".join(lines) + "\n"


def write_pages(pages: Mapping[str, str]) -> None:
    """Write ``{path: html}``, each file whole or not at all."""
    for path, text in pages.items():
        with atomic_open(path, "wb") as fh:
            fh.write(text.encode())


def read_json(path: str | os.PathLike[str]) -> dict[str, Any]:
    return json.loads(Path(path).read_text())


# --- Building the report ------------------------------------------------------


def build(
    output: str | os.PathLike[str],
    *,
    workdir: str | os.PathLike[str] = ".",
    configfiles: Sequence[str | os.PathLike[str]] = (),
    log: IO[str] | None = None,
) -> None:
    """``snakemake --report`` of the working directory ``workdir`` with the
    report's stylesheet, its output to ``log`` when given; raises
    CalledProcessError when Snakemake fails.

    ``workdir`` must exist (a run's), and so must the directory of ``output``:
    nothing is made outside them. The config files are validated
    (:func:`netnoise.config.load_files`) before Snakemake reads them."""
    if not str(workdir).strip() or not Path(workdir).is_dir():
        raise ValueError(f"{workdir!r}: no such directory (where the workflow ran)")
    if not str(output).strip() or not Path(output).resolve().parent.is_dir():
        raise ValueError(f"{output!r}: its directory does not exist")
    netnoise_config.load_files(configfiles)
    snakefile = project.path("workflow", "Snakefile")
    argv = [*project.snakemake_command(), "--snakefile", str(snakefile)]
    argv += ["--directory", str(workdir)]
    if configfiles:
        argv += ["--configfile", *(str(Path(c).resolve()) for c in configfiles)]
    argv += ["--report", str(Path(output).resolve()), "--report-stylesheet", str(STYLESHEET)]
    subprocess.run(argv, check=True, stdout=log, stderr=subprocess.STDOUT if log else None)
