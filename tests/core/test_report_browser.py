"""The report as a reviewer sees it: opened in Debian's headless Chromium.

The report of a small real run and the report ``netnoise review`` rebuilds from
that run's bundle: the landing page's first paragraph is on screen at
1400x900, a table's numbers render inside the page, the pages say where
their numbers come from, and nothing is requested from anywhere but the
report itself (``file:``) and what it embeds (``data:``). Screenshots of the
landing page, a table and the Provenance go to ``$NETNOISE_SCREENSHOTS`` (or
the test's temporary folder); the run's summary names the folder.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pandas as pd
import pytest

from netnoise.studies import PAPERS
from tests.chromium import Chromium, executable
from tests.conftest import shipped_studies

pytestmark = [
    pytest.mark.slow,
    pytest.mark.mpi,
    pytest.mark.skipif(executable() is None, reason="chromium not installed (make setup)"),
]

FIRST_PARAGRAPH = "document.querySelector('.prose p')"
CLAIMS_PAGE = "Headline claims · the paper's claims, judged on this run"


def _open(browser: Chromium, report: Path) -> None:
    browser.open(report.as_uri())
    browser.until(f"{FIRST_PARAGRAPH} !== null")


def _first_paragraph_on_screen(browser: Chromium) -> dict:
    """Where the first paragraph is, and whether all of it is in the window and
    not covered (the element at its centre is inside it)."""
    return browser.evaluate(
        f"""(() => {{
        const p = {FIRST_PARAGRAPH};
        const r = p.getBoundingClientRect();
        const hit = document.elementFromPoint((r.left + r.right) / 2, (r.top + r.bottom) / 2);
        return {{top: r.top, bottom: r.bottom, left: r.left, right: r.right,
                 width: innerWidth, height: innerHeight, text: p.innerText,
                 visible: r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight
                          && r.right <= innerWidth && r.height > 0 && p.contains(hit)}};
        }})()"""
    )


def _landing_lines(browser: Chromium) -> list[dict]:
    """The landing page's list lines (claims, CPU records): text, and whether all
    of each is in the window."""
    return browser.evaluate(
        """(() => [...document.querySelectorAll('.prose li')].map(li => {
            const r = li.getBoundingClientRect();
            return {text: li.innerText,
                    visible: r.top >= 0 && r.bottom <= innerHeight && r.height > 0};
        }))()"""
    )


def _show(browser: Chromium, category: str, title: str) -> None:
    """Click ``category`` in the menu, then the view button of result ``title``.

    Showing a result leaves the menu at that result's category, so the menu goes
    back to the list of categories (its *Results* link) first."""
    link = f"""[...document.querySelectorAll('a')]
        .find(a => a.textContent.trim() === {json.dumps(category)})"""
    if not browser.evaluate(f"{link} !== undefined"):
        browser.evaluate(
            """[...document.querySelectorAll('a')]
               .find(a => a.textContent.trim() === 'Results').click()"""
        )
        browser.until(f"{link} !== undefined")
    browser.evaluate(f"{link}.click()")
    browser.until(
        f"""[...document.querySelectorAll('tr')]
            .some(tr => tr.textContent.includes({json.dumps(title)}))"""
    )
    browser.evaluate(
        f"""[...document.querySelectorAll('tr')]
            .find(tr => tr.textContent.includes({json.dumps(title)}))
            .querySelector('a').click()"""
    )


def _rules_and_params(html: str) -> str:
    """The rule details and result properties the report shows (not its data)."""
    found = [
        re.search(rf'<script id="{name}">\s*var {name} = (.*?);\s*</script>', html, re.S)
        for name in ("rules", "results")
    ]
    rules = json.loads(found[0].group(1))
    results = json.loads(found[1].group(1))
    for result in results.values():
        result.pop("data_uri")
    return json.dumps([rules, results])


@pytest.fixture
def screenshots(tmp_path) -> Path:
    folder = Path(os.environ.get("NETNOISE_SCREENSHOTS") or tmp_path / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_the_run_report_opens_on_its_first_paragraph_and_names_its_run(platform_report):
    with Chromium(1400, 900) as browser:
        _open(browser, platform_report)
        first = _first_paragraph_on_screen(browser)
        assert first["visible"], first
        assert first["text"].startswith("netnoise reproduces five published studies")
        landing = browser.evaluate("document.querySelector('.prose').innerText")
        assert "Numbers from a fresh run on the localhost platform at revision" in landing
        _show(browser, "Provenance", "Where these numbers come from")
        source = browser.until_frame_shows("measured on the platform")
        assert "a run of the workflow" in source
        assert {u.split(":", 1)[0] for u in browser.requests} <= {"file", "data"}


def test_the_landing_page_shows_every_headline_claim_first(simulator_run, screenshots, request):
    """The landing page opens with the count and one line per claim, all of it on
    screen at 1400x900; the study's category opens with its claims page, which
    shows the paper's value beside ours."""
    from netnoise import report
    from netnoise.studies.network_noise import headline as network_noise_claims

    html = simulator_run / "report.html"
    report.build(
        html, workdir=simulator_run, configfiles=[simulator_run / "config" / "config.yaml"]
    )
    with Chromium(1400, 900) as browser:
        _open(browser, html)
        every_line = _landing_lines(browser)
        assert all(item["visible"] for item in every_line), every_line
        summary = [item for item in every_line if " · 001 · " in item["text"]]
        assert len(summary) == len(network_noise_claims.CLAIMS), summary
        assert summary[0]["text"].startswith("not measurable here · 001 · ours —; band 150 to")
        assert "Network noise slows a reduction" in summary[0]["text"]
        count = browser.evaluate("document.querySelector('.prose strong').innerText")
        assert count.endswith("headline claims reproduced on localhost.")
        browser.screenshot(screenshots / "claims_landing.png")

        _show(browser, "001 Network noise benchmark and congestion simulator", CLAIMS_PAGE)
        page = browser.until_frame_shows("Ours (95 % interval)")
        assert "Paper\tOurs (95 % interval)\tBand\tVerdict" in page
        assert "grows with the size" in page
        browser.screenshot(screenshots / "claims_page.png")
    request.node.user_properties.append(("screenshots", str(screenshots)))


def test_every_claim_of_the_shipped_bundle_is_on_the_reports_first_screen(
    shipped_review, screenshots, request
):
    """All five studies' claims and CPU records, one line each, fit 1400x900."""
    with Chromium(1400, 900) as browser:
        _open(browser, shipped_review / "report.html")
        lines = _landing_lines(browser)
        claims = [line for line in lines if "CPU record" not in line["text"]]
        tables = shipped_review / "results" / "testbed" / "tables"
        summary = pd.read_csv(tables / "claims_summary.csv")
        assert len(claims) == len(summary), lines
        assert len(lines) == len(summary) + len(shipped_studies()), lines
        assert all(line["visible"] for line in lines), [
            line["text"][:60] for line in lines if not line["visible"]
        ]
        browser.screenshot(screenshots / "shipped_landing.png")

        # Every paper's category opens with its claims page.
        for study in PAPERS:
            _show(browser, f"{study.number} {study.title}", CLAIMS_PAGE)
            page = browser.until_frame_shows("Ours (95 % interval)")
            assert "Paper\tOurs (95 % interval)\tBand\tVerdict" in page, study.key
    request.node.user_properties.append(("screenshots", str(screenshots)))


def test_the_review_report_shows_tables_and_names_its_bundle(platform_review, screenshots, request):
    review, bundle_file = platform_review
    report = review / "report.html"
    html = report.read_text()
    details = _rules_and_params(html)
    # Rule details and result properties name no absolute path of this machine.
    assert not re.search(r'"/(tmp|work|home|root)/', details), re.findall(r'"/[^"]+"', details)[:5]
    with Chromium(1400, 900) as browser:
        _open(browser, report)
        first = _first_paragraph_on_screen(browser)
        assert first["visible"], first
        landing = browser.evaluate("document.querySelector('.prose').innerText")
        assert f"Numbers from the results bundle {bundle_file.name}" in landing
        assert "nothing was measured for this report" in landing
        browser.screenshot(screenshots / "landing.png")

        _show(browser, "Platform", "Baseline one-way latency per message size (table)")
        # A frame fills its table after its heading: wait for the last row.
        table = browser.until_frame_shows("\n4096\t")
        assert "median (µs)" in table
        rows = [line.split("\t") for line in table.splitlines() if line.count("\t") >= 9]
        assert [row[0] for row in rows[1:]] == ["8", "4096"], table
        # Rounded: at most four significant digits in every latency with decimals.
        decimals = [cell for row in rows[1:] for cell in row[2:] if "." in cell]
        assert decimals and all(len(re.sub(r"\D", "", c).lstrip("0")) <= 4 for c in decimals)
        assert f"Numbers from the results bundle {bundle_file.name}" in table
        browser.screenshot(screenshots / "table.png")

        _show(browser, "Provenance", "Provenance of every measured result")
        provenance = browser.until_frame_shows("pingpong_size8_rep0.csv")
        assert "Every measured result" in provenance and "Per study" in provenance
        browser.screenshot(screenshots / "provenance.png")

        assert browser.requests, "the browser recorded no request at all"
        assert {u.split(":", 1)[0] for u in browser.requests} <= {"file", "data"}, [
            u[:80] for u in browser.requests if not u.startswith(("file:", "data:"))
        ]
    request.node.user_properties.append(("screenshots", str(screenshots)))
