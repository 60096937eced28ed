"""The README is a newcomer's ten-minute manual: short, citing every paper,
free of revisions and run histories (those live in commit messages and in the
bundle's provenance)."""

import re

import pytest

from netnoise import studies
from netnoise.project import CHECKOUT

README = CHECKOUT / "README.md"
MANUAL = [README, *sorted((CHECKOUT / "docs").glob("*.md"))]
MANUAL += sorted((CHECKOUT / "config").iterdir()) + sorted((CHECKOUT / "csrc").glob("**/README.md"))
# A git revision: 7 to 40 hexadecimal digits standing alone, letters and digits
# mixed (a DOI's or a count's decimal digits are no revision).
REVISION = re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b")


def test_readme_reads_in_ten_minutes():
    assert len(README.read_text()) <= 12_000


@pytest.mark.parametrize("study", studies.STUDIES, ids=lambda s: s.key)
def test_readme_cites_every_paper(study):
    readme = " ".join(README.read_text().split())
    citation = study.citation
    assert citation.title in readme
    assert citation.authors in readme
    if citation.year:
        assert str(citation.year) in readme
    if citation.doi:
        assert citation.doi in readme


def test_readme_keeps_the_two_commands_near_the_top_and_the_claims_markers():
    text = README.read_text()
    assert text.index("make reproduce") < 4_000 and text.index("make test") < 4_000
    assert text.count("<!-- claims-summary:begin -->") == 1
    assert text.count("<!-- claims-summary:end -->") == 1


@pytest.mark.parametrize("path", MANUAL, ids=lambda p: str(p.relative_to(CHECKOUT)))
def test_manual_names_no_revision(path):
    found = REVISION.findall(path.read_text())
    assert not found, f"{path.name} names what looks like a git revision: {found[:3]}"


def test_readme_links_only_pages_that_exist():
    for link in re.findall(r"\]\((docs/[^)#]+)", README.read_text()):
        assert (CHECKOUT / link).is_file(), link
