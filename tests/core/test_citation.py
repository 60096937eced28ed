"""The project is citable: LICENSE, CITATION.cff (the project and the five papers
as references) and .zenodo.json agree with pyproject.toml and the study registry.

``make test`` also validates CITATION.cff against the Citation File Format's own
schema (``cffconvert --validate``, Makefile target ``check-citation``)."""

from __future__ import annotations

import json
import tomllib

import pytest
import yaml

from netnoise import studies
from tests.conftest import REPO

CFF = yaml.safe_load((REPO / "CITATION.cff").read_text())
ZENODO = json.loads((REPO / ".zenodo.json").read_text())
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]

#: Keys of the Citation File Format 1.2.0: the file's and a reference's
#: (guide and schema.json of citation-file-format 1.2.0).
CFF_KEYS = {
    "abstract", "authors", "cff-version", "commit", "contact", "date-released", "doi",
    "identifiers", "keywords", "license", "license-url", "message", "preferred-citation",
    "references", "repository", "repository-artifact", "repository-code", "title", "type",
    "url", "version",
}  # fmt: skip
REFERENCE_KEYS = {
    "abbreviation", "abstract", "authors", "collection-doi", "collection-title",
    "collection-type", "commit", "conference", "contact", "copyright", "data-type",
    "database", "database-provider", "date-accessed", "date-downloaded", "date-published",
    "date-released", "department", "doi", "edition", "editors", "editors-series", "end",
    "entry", "filename", "format", "identifiers", "institution", "isbn", "issn", "issue",
    "issue-date", "issue-title", "journal", "keywords", "languages", "license",
    "license-url", "loc-end", "loc-start", "location", "medium", "month", "nihmsid",
    "notes", "number", "number-volumes", "pages", "patent-states", "pmcid", "publisher",
    "recipients", "repository", "repository-artifact", "repository-code", "scope",
    "section", "senders", "start", "status", "term", "thesis-type", "title", "translators",
    "type", "url", "version", "volume", "volume-title", "year", "year-original",
}  # fmt: skip
#: Keys of Zenodo's deposit metadata (its REST API's deposition metadata).
ZENODO_KEYS = {
    "upload_type", "publication_type", "image_type", "publication_date", "title", "creators",
    "description", "access_right", "license", "embargo_date", "access_conditions", "doi",
    "prereserve_doi", "keywords", "notes", "related_identifiers", "contributors",
    "references", "communities", "grants", "journal_title", "journal_volume",
    "journal_issue", "journal_pages", "conference_title", "conference_acronym",
    "conference_dates", "conference_place", "conference_url", "conference_session",
    "conference_session_part", "imprint_publisher", "imprint_isbn", "imprint_place",
    "partof_title", "partof_pages", "thesis_supervisors", "thesis_university", "subjects",
    "version", "language", "locations", "dates", "method",
}  # fmt: skip
ZENODO_RELATIONS = {
    "isCitedBy", "cites", "isSupplementTo", "isSupplementedBy", "isContinuedBy", "continues",
    "isDescribedBy", "describes", "hasMetadata", "isMetadataFor", "isNewVersionOf",
    "isPreviousVersionOf", "isPartOf", "hasPart", "isReferencedBy", "references",
    "isDocumentedBy", "documents", "isCompiledBy", "compiles", "isVariantFormOf",
    "isOriginalFormof", "isIdenticalTo", "isAlternateIdentifier", "isReviewedBy", "reviews",
    "isDerivedFrom", "isSourceOf", "requires", "isRequiredBy", "isObsoletedBy", "obsoletes",
}  # fmt: skip


def _names(authors: list[dict]) -> str:
    """``A, B and C`` as the study registry writes a paper's authors."""
    names = [f"{a['given-names']} {a['family-names']}" for a in authors]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def test_license_is_the_one_pyproject_names():
    text = (REPO / "LICENSE").read_text()
    assert PROJECT["license"] == CFF["license"] == ZENODO["license"] == "BSD-3-Clause"
    assert text.startswith("BSD 3-Clause License")
    assert "Copyright (c) The netnoise authors." in text


def test_citation_names_the_project_as_pyproject_does():
    assert set(CFF) <= CFF_KEYS, set(CFF) - CFF_KEYS
    assert CFF["cff-version"] == "1.2.0"
    assert CFF["type"] == "software"
    assert CFF["version"] == PROJECT["version"] == ZENODO["version"]
    assert CFF["title"].startswith(f"{PROJECT['name']}: ")
    assert CFF["title"] == ZENODO["title"]
    assert CFF["authors"] == [{"name": "The netnoise authors"}]


@pytest.mark.parametrize("study", studies.STUDIES, ids=lambda s: s.key)
def test_every_paper_is_a_reference_as_the_registry_cites_it(study):
    citation = study.citation
    found = [r for r in CFF["references"] if r["title"] == citation.title]
    assert len(found) == 1, f"CITATION.cff: no single reference titled {citation.title!r}"
    reference = found[0]
    assert set(reference) <= REFERENCE_KEYS, set(reference) - REFERENCE_KEYS
    assert _names(reference["authors"]) == citation.authors
    assert reference.get("year") == citation.year
    assert reference.get("doi") == citation.doi
    named = (
        f"Seed {study.number}, study {study.key}"
        if study.reproduces
        else f"Beyond the papers: study {study.number}, {study.key}"
    )
    assert named in reference["notes"]
    if not citation.doi:
        # Said once per paper: the seed text gives no other identifier either.
        assert "gives no DOI, report number" in " ".join(reference["notes"].split())
    assert any(citation.title in text for text in ZENODO["references"])


def test_references_are_the_studies_papers_in_their_order():
    titles = [r["title"] for r in CFF["references"]]
    assert titles == [s.citation.title for s in studies.STUDIES]


def test_zenodo_metadata_uses_only_its_documented_keys():
    assert set(ZENODO) <= ZENODO_KEYS, set(ZENODO) - ZENODO_KEYS
    assert ZENODO["upload_type"] == "software"
    assert ZENODO["access_right"] == "open"
    assert all(creator["name"] for creator in ZENODO["creators"])
    dois = {s.citation.doi for s in studies.STUDIES if s.citation.doi}
    assert {r["identifier"] for r in ZENODO["related_identifiers"]} == dois
    for related in ZENODO["related_identifiers"]:
        assert related["relation"] in ZENODO_RELATIONS
        assert related["scheme"] == "doi"
    assert len(ZENODO["references"]) == len(studies.STUDIES)
