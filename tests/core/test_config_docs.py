"""docs/config.md is the rendering of the schemas: each key once, with its
description, unit, default and allowed values; config/README.md, the page the
Snakemake workflow catalog shows, is the rendering of the schemas' sections and
the config files' header comments."""

import re

from netnoise import config_docs
from netnoise.config import load_schema
from netnoise.project import CHECKOUT

PAGE = CHECKOUT / "docs" / "config.md"
GUIDE = CHECKOUT / "config" / "README.md"


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


def test_config_guide_is_its_rendering():
    assert GUIDE.read_text() == config_docs.render_guide(), (
        "config/README.md differs from the schemas and config files: run `netnoise config docs`"
    )


def test_config_guide_names_every_config_file_and_section_once():
    guide = GUIDE.read_text()
    for path in (CHECKOUT / "config").glob("*.yaml"):
        assert guide.count(f"| `config/{path.name}` |") == 1, path.name
    headings = set(re.findall(r"^#{2} `([^`]+)`$", PAGE.read_text(), flags=re.M))
    for key in load_schema()["properties"]:
        assert key in headings
        assert guide.count(f"[`{key}`](../docs/config.md#{key})") == 1, key


def test_header_summary_is_the_first_sentence_before_any_command():
    text = "# A study: small,\n# for two cores. More words.\n#   snakemake ...\nplatform: {}\n"
    assert config_docs.header_summary(text) == "A study: small, for two cores."
    assert config_docs.header_summary("# Grids for Slurm:\n#   snakemake\n") == "Grids for Slurm."


def test_cli_writes_both_pages_by_default(tmp_path, monkeypatch):
    from netnoise.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "config").mkdir()
    assert main(["config", "docs"]) == 0
    assert (tmp_path / "docs" / "config.md").read_text() == config_docs.render()
    assert (tmp_path / "config" / "README.md").read_text() == config_docs.render_guide()
