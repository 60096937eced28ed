"""The README's status is the shipped bundle's claims summary, never more."""

from __future__ import annotations

import subprocess
import sys

import pytest

from netnoise import bundle, claims_summary
from tests.conftest import REPO

README = REPO / "README.md"


def test_the_readme_status_is_the_shipped_bundles_claims_summary():
    generated = subprocess.run(
        [sys.executable, "-m", "netnoise", "claims", "--bundle", str(bundle.SHIPPED), "--markdown"],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    ).stdout
    text = README.read_text()
    assert claims_summary.with_section(text, generated) == text, (
        "README.md's claims summary differs from the shipped bundle's: run "
        "netnoise claims --bundle resources/cache/quick-testbed.tar.gz --update README.md"
    )


def test_a_document_without_the_markers_is_refused():
    with pytest.raises(ValueError, match="claims-summary:begin"):
        claims_summary.with_section("# no section\n", "table\n")
    assert (
        claims_summary.with_section(
            f"a\n{claims_summary.SECTION_BEGIN}\nold\n{claims_summary.SECTION_END}\nb\n", "new\n"
        )
        == f"a\n{claims_summary.SECTION_BEGIN}\nnew\n{claims_summary.SECTION_END}\nb\n"
    )


def test_the_shipped_bundles_page_is_generated_from_it():
    page = REPO / "resources" / "cache" / "README.md"
    generated = subprocess.run(
        [
            sys.executable,
            "-m",
            "netnoise",
            "bundle",
            "describe",
            "resources/cache/quick-testbed.tar.gz",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    ).stdout
    assert page.read_text() == generated, (
        "resources/cache/README.md differs from the bundle's page: run netnoise bundle describe"
        " resources/cache/quick-testbed.tar.gz --update resources/cache/README.md"
    )
