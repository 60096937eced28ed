"""Reviewer mode: a verified bundle unpacked into a working directory of its own,
every figure and table rebuilt from it by the analysis rules alone, and each
rebuilt table compared with the one the bundled run made."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tarfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from netnoise import config as netnoise_config
from netnoise import project, provenance
from netnoise import report as netnoise_report
from netnoise.atomic import write_json
from netnoise.bundle import plan
from netnoise.bundle.layout import (
    CONFIG,
    EXPECTED,
    REVIEWED,
    SHIPPED,
    WORKDIR_MARK,
    BundleError,
    sha256,
)
from netnoise.bundle.verification import Verified, check, extract, verify

#: The review's testbed names (platform.testbed.prefix, and each study's testbed prefix
#: with a letter of its own); no workflow run uses them unless told to.
REVIEW_PREFIX = "nnrev"


#: How a rebuilt table agrees with the bundled one (compare_tables), and which
#: of those verdicts a review accepts.
IDENTICAL = "identical"
CLOSE = "equal to 1e-6"
EXTENDED = "equal to 1e-6, with columns this version adds"
AGREEING = (IDENTICAL, CLOSE, EXTENDED)
#: A claims table of a bundle another revision made, which differs because this
#: version's rules judge the same tables again: a review accepts it, and says so.
REJUDGED = "judged again by this version's claims rules"
ACCEPTED = (*AGREEING, REJUDGED)
#: The tables that hold verdicts, not measurements.
CLAIMS_TABLES = ("headline_claims.csv", "claims_summary.csv")


def compare_tables(manifest: dict[str, Any], workdir: str | os.PathLike[str]) -> dict[str, str]:
    """Each table of the bundled run, rebuilt in ``workdir``: ``identical`` (the
    same bytes), ``equal to 1e-6`` (every number within a relative 1e-6 of the
    bundled one, as floating point of another CPU gives), ``equal to 1e-6, with
    columns this version adds`` (the bundled columns so, beside new ones a
    later analysis adds), :data:`REJUDGED` (a claims table of a bundle another
    revision made), ``different`` or ``missing``. Bundles without the tables
    themselves are compared by checksum."""
    workdir = Path(workdir)
    other_revision = manifest.get("git", {}).get("sha") != provenance.git_state().get("sha")
    verdicts = {}
    for path, digest in sorted(manifest.get("derived_tables", {}).items()):
        rebuilt = workdir / path
        expected = workdir / EXPECTED / path
        if not rebuilt.is_file():
            verdicts[path] = "missing"
        elif sha256(rebuilt.read_bytes()) == digest:
            verdicts[path] = IDENTICAL
        elif expected.is_file() and _close(expected, rebuilt):
            verdicts[path] = CLOSE
        elif expected.is_file() and _close(expected, rebuilt, added_columns=True):
            verdicts[path] = EXTENDED
        elif other_revision and Path(path).name in CLAIMS_TABLES:
            verdicts[path] = REJUDGED
        else:
            verdicts[path] = "different"
    return verdicts


def _close(expected: Path, rebuilt: Path, *, added_columns: bool = False) -> bool:
    """The same table: same columns (or, ``added_columns``, the bundled ones in
    their order among others) and text cells, numbers within rtol 1e-6."""
    import numpy as np
    import pandas as pd

    try:
        a, b = pd.read_csv(expected), pd.read_csv(rebuilt)
    except (ValueError, pd.errors.ParserError):
        return False
    if added_columns and set(a.columns) <= set(b.columns):
        b = b[[c for c in b.columns if c in set(a.columns)]]
    if list(a.columns) != list(b.columns) or a.shape != b.shape:
        return False
    for column in a.columns:
        x, y = a[column], b[column]
        if pd.api.types.is_numeric_dtype(x) and pd.api.types.is_numeric_dtype(y):
            if not np.allclose(x.to_numpy(float), y.to_numpy(float), rtol=1e-6, atol=1e-12,
                               equal_nan=True):  # fmt: skip
                return False
        elif not x.astype(str).equals(y.astype(str)):
            return False
    return True


def fresh_workdir(workdir: str | os.PathLike[str], bundle: str | os.PathLike[str]) -> Path:
    """``workdir`` made ready for unpacking ``bundle`` into: created (its parent must
    exist), or emptied if a review made it (it holds :data:`WORKDIR_MARK`), or used as
    it is when empty; marked either way. Anything else, and a directory holding the
    bundle, is refused before anything is touched: a review deletes only what a
    review made, and never its input."""
    if not str(workdir).strip():
        raise BundleError("the working directory is empty text: name a directory")
    path = Path(workdir).resolve()
    if Path(bundle).resolve().is_relative_to(path):
        raise BundleError(
            f"{bundle} lies inside the working directory {workdir}, which a review empties: "
            "give a --workdir outside it"
        )
    if path.exists() and not path.is_dir():
        raise BundleError(f"{workdir}: not a directory")
    if path.is_dir():
        entries = list(path.iterdir())
        if entries and not (path / WORKDIR_MARK).is_file():
            raise BundleError(
                f"{workdir} holds files a review did not make (it has no {WORKDIR_MARK}); "
                "give a new or empty directory"
            )
        for entry in entries:
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
    else:
        try:
            path.mkdir()
        except FileNotFoundError:
            raise BundleError(
                f"{workdir}: its parent directory does not exist; create it first"
            ) from None
    (path / WORKDIR_MARK).write_text(
        "A netnoise review's working directory: the next review empties it.\n"
    )
    return path


def unpack(bundle: str | os.PathLike[str], workdir: str | os.PathLike[str]) -> dict[str, Any]:
    """Verify ``bundle`` and unpack it into ``workdir`` (:func:`fresh_workdir`)."""
    return _unpack(bundle, workdir).manifest


def _unpack(bundle: str | os.PathLike[str], workdir: str | os.PathLike[str]) -> Verified:
    verified = check(bundle)
    extract(bundle, verified, fresh_workdir(workdir, bundle))
    return verified


def review_configfiles(workdir: str | os.PathLike[str]) -> list[Path]:
    """The bundle's config, then the review's own testbed names (:data:`REVIEW_PREFIX`)
    and ``keep_up``, so the workflow's end never tears a testbed down."""
    workdir = Path(workdir)
    config = netnoise_config.read_yaml(workdir / CONFIG)
    own: dict[str, Any] = {"platform": {"testbed": {"prefix": REVIEW_PREFIX, "keep_up": True}}}
    # Studies with a testbed of their own (a validated config names every section).
    studies = sorted(
        key
        for key, section in config.items()
        if key not in ("platform", "applications")
        and isinstance(section, dict)
        and "prefix" in (section.get("testbed") or {})
    )
    letters = "rstuvw"
    for letter, key in zip(letters[: len(studies)], studies, strict=True):
        own[key] = {"testbed": {"prefix": f"{REVIEW_PREFIX}{letter}"}}
    override = workdir / "review.yaml"
    override.write_text(yaml.safe_dump(own, sort_keys=False))
    return [workdir / CONFIG, override]


def missing_for_analysis(
    workdir: str | os.PathLike[str], configfiles: Sequence[str | os.PathLike[str]]
) -> dict[str, str]:
    """Files this version's analysis reads that the unpacked bundle lacks."""
    workdir = Path(workdir)
    needed = plan.analysis_inputs(plan.planned_files(workdir, configfiles))
    return {p: r for p, r in needed.items() if not (workdir / p).is_file()}


def analysis_rules(
    workdir: str | os.PathLike[str], configfiles: Sequence[str | os.PathLike[str]]
) -> list[str]:
    rules = {f.rule for f in plan.planned_files(workdir, configfiles)}
    return sorted(r for r in rules if plan.is_analysis(r))


def review(
    bundle: str | os.PathLike[str] = SHIPPED,
    workdir: str | os.PathLike[str] = "results/review",
    *,
    cores: int = 2,
    report: bool = True,
) -> Path:
    """Rebuild every figure and table (and the report) of ``bundle`` in ``workdir``."""
    project.snakemake_command()  # its error before anything is unpacked
    verified = _unpack(bundle, workdir)
    workdir = Path(workdir).resolve()
    record = {"bundle": shown(bundle), "sha256": verified.sha256, "reviewed": provenance.now()}
    write_json(workdir / REVIEWED, record)
    config = review_configfiles(workdir)
    netnoise_config.load_files(config)  # before Snakemake reads them
    missing = missing_for_analysis(workdir, config)
    if missing:
        listed = ", ".join(f"{p} (rule {r})" for p, r in sorted(missing.items())[:5])
        raise BundleError(
            f"{bundle} lacks what this version's figures and tables need: {listed}; "
            "make the bundle with this version (netnoise bundle create)"
        )
    allowed = ["all", *analysis_rules(workdir, config)]
    run = plan.snakemake_argv(workdir, config, "--cores", str(cores), "--allowed-rules", *allowed)
    # The workflow's own output goes to the review's log: a reviewer reads the
    # verdict of the comparison, and the log only when something failed.
    log = workdir / REVIEW_LOG
    with log.open("w") as out:
        rebuilt = subprocess.run(run, check=False, stdout=out, stderr=subprocess.STDOUT)
        if rebuilt.returncode != 0:
            raise BundleError(
                f"rebuilding the figures and tables from {bundle} failed; the end of"
                f" the workflow's log ({log}):\n{_tail(log)}"
            )
        if report:
            try:
                netnoise_report.build(
                    workdir / "report.html", workdir=workdir, configfiles=config, log=out
                )
            except subprocess.CalledProcessError as err:
                raise BundleError(
                    f"the report could not be built; the end of the workflow's log ({log}):"
                    f"\n{_tail(log)}"
                ) from err
    return workdir


#: The review's log of the workflow runs, in its working directory.
REVIEW_LOG = "review.log"


def _tail(log: Path, lines: int = 20) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])


def tidy_table(
    bundle: str | os.PathLike[str], study: str, name: str
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """A verified bundle's tidy table ``name`` of ``study`` (its run's data, as
    measured) and the bundle's manifest."""
    manifest = verify(bundle)
    member = f"results/{manifest['platform']}/tidy/{study}/{name}.csv"
    if member not in manifest["files"]:
        raise BundleError(f"{bundle}: holds no {member} (its run did not measure it)")
    with tarfile.open(bundle, "r:gz") as tar:
        data = tar.extractfile(member).read()
    if sha256(data) != manifest["files"][member]["sha256"]:
        raise BundleError(f"{bundle}: changed since it was verified ({member})")
    return pd.read_csv(io.BytesIO(data)), manifest


def shown(bundle: str | os.PathLike[str]) -> str:
    """How the report names a bundle: its path in the repository, else its file name."""
    path = Path(bundle).resolve()
    return str(path.relative_to(project.ROOT)) if path.is_relative_to(project.ROOT) else path.name


def open_results(
    bundle: str | os.PathLike[str] | None = None, workdir: str | os.PathLike[str] | None = None
) -> Path:
    """Unpack a bundle (default: ``$NETNOISE_BUNDLE`` or the shipped one) for exploration;
    return its ``results/<platform>`` directory."""
    import tempfile

    bundle = bundle or os.environ.get("NETNOISE_BUNDLE") or SHIPPED
    workdir = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="netnoise-bundle-"))
    manifest = unpack(bundle, workdir)
    return workdir / "results" / manifest["platform"]
