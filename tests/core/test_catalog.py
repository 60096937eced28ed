"""netnoise meets the Snakemake workflow catalog's "standardized usage" rules: a
``workflow/Snakefile``, ``.smk`` rule modules, configuration instructions in
``config/README.md`` and a ``.snakemake-workflow-catalog.yml`` whose ``usage``
has only the keys the catalog documents (its "Adding workflows" page), each
saying what the workflow does."""

from __future__ import annotations

import re

import yaml

from tests.conftest import REPO, snakemake

CATALOG = yaml.safe_load((REPO / ".snakemake-workflow-catalog.yml").read_text())
#: The catalog's documented keys of ``usage`` and of its two mappings.
USAGE_KEYS = {"mandatory-flags", "software-stack-deployment", "report"}
FLAG_KEYS = {"desc", "flags"}
DEPLOYMENT_KEYS = {"conda", "apptainer", "apptainer+conda", "singularity", "singularity+conda"}


def test_catalog_file_has_only_the_documented_keys():
    assert set(CATALOG) == {"usage"}
    usage = CATALOG["usage"]
    assert set(usage) <= USAGE_KEYS, set(usage) - USAGE_KEYS
    assert set(usage["mandatory-flags"]) == FLAG_KEYS
    assert usage["mandatory-flags"]["desc"].strip()
    flags = usage["mandatory-flags"]["flags"]
    assert isinstance(flags, str | list) and all(isinstance(f, str) for f in list(flags))
    deployment = usage["software-stack-deployment"]
    assert set(deployment) <= DEPLOYMENT_KEYS, set(deployment) - DEPLOYMENT_KEYS
    assert all(isinstance(v, bool) for v in deployment.values())
    assert any(deployment.values()), "the catalog needs at least one deployment method"
    assert isinstance(usage["report"], bool)


def test_what_the_catalog_file_promises_is_there():
    usage = CATALOG["usage"]
    snakefile = (REPO / "workflow" / "Snakefile").read_text()
    if usage["report"]:
        assert re.search(r"^report: ", snakefile, flags=re.M)
    if usage["software-stack-deployment"].get("conda"):
        # Every rule names an environment (tests/core/test_envs.py checks each one).
        assert sorted((REPO / "envs").glob("*.yaml"))
    flags = usage["mandatory-flags"]["flags"]
    flags = flags.split() if isinstance(flags, str) else flags
    if flags:
        help_text = snakemake("--help").stdout
        for flag in (f for f in flags if f.startswith("-")):
            assert flag in help_text, f"snakemake has no option {flag}"


def test_repository_has_the_catalog_layout():
    readme = (REPO / "README.md").read_text().lower()
    assert "snakemake" in readme and "workflow" in readme
    assert (REPO / "workflow" / "Snakefile").is_file()
    rules = list((REPO / "workflow" / "rules").iterdir())
    assert rules and all(rule.suffix == ".smk" for rule in rules if rule.is_file())
    assert (REPO / "config" / "README.md").is_file()
    assert (REPO / "config" / "config.yaml").is_file()
    # The default test config, where `snakemake --directory .test` reads it.
    assert (REPO / ".test" / "config" / "config.yaml").is_file()
