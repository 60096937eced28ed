"""Packing a finished run into a bundle (:func:`create`), and the page that
describes one (:func:`describe`)."""

from __future__ import annotations

import json
import os
import tarfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from netnoise import __version__, provenance
from netnoise.atomic import atomic_path
from netnoise.bundle import plan, verification
from netnoise.bundle.layout import (
    CONFIG,
    DATA_SUFFIXES,
    EXPECTED,
    FORMAT,
    MANIFEST,
    BundleError,
    add_member,
    sha256,
)


def create(
    output: str | os.PathLike[str],
    *,
    workdir: str | os.PathLike[str] = ".",
    configfiles: Sequence[str | os.PathLike[str]] = ("config/config.yaml",),
    include_raw: bool = False,
) -> dict[str, Any]:
    """Pack the cached results of the run in ``workdir`` into ``output`` (tar.gz)."""
    workdir = plan.run_directory(workdir)
    if not Path(output).resolve().parent.is_dir():
        raise BundleError(f"{output}: its directory does not exist")
    configfiles = [Path(c) if Path(c).is_absolute() else workdir / c for c in configfiles]
    config = plan.run_config(configfiles)
    planned = plan.planned_files(workdir, configfiles)
    chosen = plan.cached_files(planned)
    if include_raw:
        chosen |= plan.raw_files(planned)
    # Sidecars the job graph does not name (co-run backgrounds, run directories).
    results = workdir / "results" / config["platform"]["kind"]
    for sidecar in provenance.sidecars(results):
        chosen.setdefault(str(sidecar.relative_to(workdir)), "provenance")
    missing = sorted(p for p in chosen if not (workdir / p).is_file())
    if missing:
        shown = ", ".join(missing[:5]) + (
            f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        )
        raise BundleError(f"the run is incomplete (run the workflow first): missing {shown}")
    identity = one_run(
        [json.loads((workdir / p).read_bytes()) for p in chosen if p.endswith(".prov.json")],
        config,
    )
    derived = plan.derived_tables(planned, workdir)
    # The run's own tables travel too, so a review compares its rebuilt values
    # with them, not only their checksums.
    contents = {path: (workdir / path).read_bytes() for path in sorted(chosen)}
    contents |= {f"{EXPECTED}/{path}": (workdir / path).read_bytes() for path in derived}
    contents[CONFIG] = yaml.safe_dump(config, sort_keys=False).encode()
    rules = dict(chosen) | {f"{EXPECTED}/{path}": "expected" for path in derived}
    rules[CONFIG] = "config"
    not_data = sorted(p for p in contents if not p.endswith(DATA_SUFFIXES))
    if not_data:
        raise BundleError(
            f"{', '.join(not_data[:5])}: not a data format a bundle may carry "
            f"({', '.join(DATA_SUFFIXES)})"
        )
    files = {
        path: {"sha256": sha256(data), "bytes": len(data), "rule": rules[path]}
        for path, data in contents.items()
    }
    manifest = {
        "format": FORMAT,
        "created": provenance.now(),
        "netnoise_version": __version__,
        "git": provenance.git_state(),
        "software": provenance.software_versions(),
        "platform": config["platform"]["kind"],
        "run": identity.record(),
        "configfiles": [os.path.relpath(c, workdir) for c in configfiles],
        "raw_included": include_raw,
        "analysis_prefixes": list(plan.ANALYSIS_PREFIXES),
        "files": files,
        # What reviewers rebuild, to compare against (compare_tables).
        "derived_tables": derived,
    }
    with atomic_path(output) as staged:
        with tarfile.open(staged, "w:gz") as tar:
            add_member(tar, MANIFEST, json.dumps(manifest, indent=1, sort_keys=True).encode())
            for path, data in contents.items():
                add_member(tar, path, data)
        os.chmod(staged, 0o644)
        # What a review would refuse is never written: the bundle is checked as
        # a reviewer's netnoise checks it, before it takes its name.
        try:
            verification.check(staged)
        except BundleError as err:
            problem = str(err).replace(str(staged), str(output))
            raise BundleError(f"the bundle made of this run would not verify: {problem}") from None
    return manifest


def one_run(records: list[dict[str, Any]], config: dict[str, Any]) -> provenance.RunIdentity:
    """The run the sidecar ``records`` come from, refused unless it is one run of
    this checkout's clean revision with ``config``."""
    identity = provenance.run_identity(records, config)
    problems = identity.problems()
    checkout = provenance.git_state()
    if checkout.get("dirty"):
        problems.append("the checkout has uncommitted changes")
    measured = [sha for sha in identity.revisions if sha != "unknown"]
    if len(measured) == 1 and checkout.get("sha") and measured[0] != checkout["sha"]:
        problems.append(
            f"the results were measured at {measured[0][:12]}, the checkout is at"
            f" {checkout['sha'][:12]}"
        )
    if problems:
        raise BundleError(
            f"not one run of one clean revision: {'; '.join(problems)}; a bundle is one"
            " make reproduce of a clean checkout with one config"
        )
    return identity


def describe(
    name: str,
    manifest: dict[str, Any],
    identity: provenance.RunIdentity,
    cpu_summary: pd.DataFrame | None,
    claims_markdown: str,
) -> str:
    """The page (resources/cache/README.md) of the verified bundle shown as ``name``
    (so its results are one run), made from its manifest, the run its sidecars
    name, its CPU record and its claims summary."""
    git = manifest["git"]
    lines = [
        "# Shipped results bundle",
        "",
        f"`{Path(name).name}`: format `{manifest['format']}`, made by netnoise"
        f" {manifest['netnoise_version']} at revision {git['sha'][:12]}"
        f"{' with uncommitted changes' if git['dirty'] else ''} on the {manifest['platform']}"
        f" platform, {manifest['created'][:16].replace('T', ' ')} UTC; {len(manifest['files'])}"
        f" files. This page is generated from it: `netnoise bundle describe {name}`.",
        "",
    ]
    lines.append(f"One run: {identity.describe()}.")
    configfiles = manifest.get("configfiles")
    made_by = f' (`make reproduce CONFIG="{" ".join(configfiles)}"`)' if configfiles else ""
    lines += ["", f"Its config is the bundle's `config.yaml`, the run's resolved config{made_by}."]
    if cpu_summary is not None:
        lines += [
            "",
            "| Study | Measured results | CPU-saturated | Median runnable tasks |",
            "| --- | --- | --- | --- |",
        ]
        lines += [
            f"| {row['study']} | {int(row['results'])} | "
            + (
                "not applicable (simulated time) | — |"
                if row.get("simulated", 0) == row["results"]
                else f"{int(row['saturated'])} | {row['runnable_median']:.2g} |"
            )
            for _, row in cpu_summary.iterrows()
        ]
    lines += [
        "",
        "## Headline claims",
        "",
        claims_markdown.rstrip("\n"),
        "",
        "Rebuild every figure and table from it, measuring nothing: `make review`.",
    ]
    return "\n".join(lines) + "\n"
