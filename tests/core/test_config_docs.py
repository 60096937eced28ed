"""docs/config.md is the rendering of the schemas: each key once, with its
description, unit, default and allowed values."""

import re

from netnoise import config_docs
from netnoise.config import load_schema
from netnoise.project import CHECKOUT

PAGE = CHECKOUT / "docs" / "config.md"


def test_config_reference_is_the_schemas_rendering():
    assert PAGE.read_text() == config_docs.render(), (
        "docs/config.md differs from the schemas: run `netnoise config docs`"
    )


def test_every_key_has_one_entry_with_description_and_default():
    headings = re.findall(r"^#{2,3} `([^`]+)`$", PAGE.read_text(), flags=re.M)
    assert len(headings) == len(set(headings))
    for key, node in config_docs.keys(load_schema()):
        assert key in headings, f"{key} has no entry"
        assert node.get("description"), f"{key} has no description in its schema"
        if "<name>" not in key:
            assert "default" in node, f"{key} has no default in its schema"


def test_entry_gives_unit_default_and_range():
    page = PAGE.read_text()
    entry = page[page.index("### `platform.testbed.nic_mbit`") :].split("\n### ")[0]
    assert "- unit: Mbit/s" in entry
    assert "- default: `50`" in entry
    assert "- allowed: number; >= 1, <= 10,000" in entry


def test_allowed_values_in_words():
    assert config_docs.allowed({"enum": ["a", "b"]}) == 'one of `"a"`, `"b"`'
    assert config_docs.allowed({"type": "integer", "minimum": 1, "maximum": 10**6}) == (
        "integer; >= 1, <= 1,000,000"
    )
    assert config_docs.unit("platform.timeout_s") == "seconds"
    assert config_docs.unit("platform.testbed.nodes") is None


def test_cli_writes_the_reference(tmp_path):
    from netnoise.cli import main

    out = tmp_path / "config.md"
    assert main(["config", "docs", "--output", str(out)]) == 0
    assert out.read_text() == config_docs.render()
