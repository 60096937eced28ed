"""Results bundles: a run's cached results, from which every figure and table is rebuilt.

A bundle holds what the workflow's analysis rules read but do not make
themselves (tidy tables, fitted models, measured summaries) and every file a
measurement rule makes that nothing consumes (provenance sidecars, the testbed
validation table), found from the workflow's own job graph
(``snakemake --detailed-summary``), so a new rule needs no bundle code. Raw
per-sample files are left out unless asked for. ``manifest.json`` lists every
other file, ``config.yaml`` (the run's validated config) included, with its
SHA-256 and size, and records the software of the run.

A bundle carries data only (:data:`DATA_SUFFIXES`: tables, JSON, YAML, numpy
arrays): no format that runs code when read. :func:`verify` refuses anything
else, and a bundle whose manifest is malformed, lists no files, or does not
match its members name for name, byte for byte. It reads every member as the
review's jobs will (tables of consistent width, arrays no larger than their
bytes, plain YAML, sidecars the provenance table can read), within bounds on
sizes and counts checked from the tar headers before any data is read, so a
bundle that passes never crashes a review job.

Reviewer mode (:func:`review`) unpacks a verified bundle into a scratch
working directory (new, empty, or marked as one a review made: it empties no
other, and never one holding the bundle) and runs the workflow there with only
the analysis rules allowed: nothing is built or measured, and a bundle lacking a file the
current analysis needs is refused before any job runs. The run has testbed
names of its own and keeps the testbed up at its end: it never tears down a
testbed, least of all one of a run in progress under the bundle's names.
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import io
import json
import math
import os
import re
import shutil
import subprocess
import tarfile
import time
import zipfile
import zlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import pandas as pd
import yaml

from netnoise import __version__, project, provenance
from netnoise import config as netnoise_config
from netnoise import report as netnoise_report
from netnoise.atomic import atomic_path, write_json
from netnoise.inputs import quoted

FORMAT = "netnoise-bundle-3"
#: Bundles this version reads; format 3 records the run its results come from
#: (``run``), which ``verify`` holds the sidecars to, format 2 did not.
READABLE_FORMATS = (FORMAT, "netnoise-bundle-2")
MANIFEST = "manifest.json"
CONFIG = "config.yaml"
#: What a bundle's files may be: data that no reader executes.
DATA_SUFFIXES = (".csv", ".json", ".npz", ".tsv", ".txt", ".yaml")
#: Unpacked bytes a bundle may hold (the shipped one: 7 MB), bytes of one of its
#: files (its largest: 9 MB), and files (681).
MAX_BYTES = 1 << 30
MAX_FILE_BYTES = 256 << 20
MAX_FILES = 20_000
#: Columns of a bundled table (the widest: 56), and elements of a bundled array.
MAX_COLUMNS = 1000
MAX_ARRAY_ELEMENTS = 1 << 26
#: The review's testbed names (platform.testbed.prefix, and each study's testbed prefix
#: with a letter of its own); no workflow run uses them unless told to.
REVIEW_PREFIX = "nnrev"
# Where a bundle keeps the tables of its run (to compare a review with).
EXPECTED = "expected"
# What a review records in its working directory: the bundle it rebuilt (its
# path and SHA-256), which the report names as the source of its numbers.
REVIEWED = "reviewed-bundle.json"
#: The file marking a directory a review made (and so may empty); no bundle member
#: can be named so (:data:`DATA_SUFFIXES`).
WORKDIR_MARK = ".netnoise-review"
SHIPPED = project.ROOT / "resources" / "cache" / "quick-testbed.tar.gz"
#: Rules that derive tables, figures and model evaluations from cached results;
#: everything else (builds, measurements, tidying of raw files, simulations,
#: model training) makes what a bundle carries.
ANALYSIS_PREFIXES = ("analyse_", "tabulate_", "plot_", "evaluate_", "compare_")


class BundleError(ValueError):
    """A bundle is missing, damaged, or does not match this version of netnoise."""


def is_analysis(rule: str) -> bool:
    return rule.startswith(ANALYSIS_PREFIXES)


@dataclass(frozen=True)
class PlannedFile:
    """One output of the workflow's job graph, the rule making it and that job's inputs."""

    path: str
    rule: str
    inputs: tuple[str, ...]


def parse_summary(text: str) -> list[PlannedFile]:
    """Rows of ``snakemake --detailed-summary``."""
    lines = [line for line in text.splitlines() if line.count("\t") >= 4]
    rows = csv.DictReader(io.StringIO("\n".join(lines)), delimiter="\t")
    planned = []
    for row in rows:
        inputs = row.get("input-file(s)") or ""
        planned.append(
            PlannedFile(
                row["output_file"],
                row["rule"],
                tuple(i for i in inputs.split(",") if i and i != "-"),
            )
        )
    return planned


def _snakemake(workdir: Path, configfiles: Sequence[str | os.PathLike[str]], *args: str):
    snakefile = project.path("workflow", "Snakefile")
    argv = [*project.snakemake_command(), "--snakefile", str(snakefile)]
    argv += ["--directory", str(workdir)]
    if configfiles:
        argv += ["--configfile", *map(str, configfiles)]
    return [*argv, *args]


def planned_files(
    workdir: str | os.PathLike[str], configfiles: Sequence[str | os.PathLike[str]]
) -> list[PlannedFile]:
    """The workflow's job graph for this working directory and config."""
    argv = _snakemake(Path(workdir), configfiles, "--detailed-summary")
    out = subprocess.run(argv, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise BundleError(f"the workflow could not plan its jobs:\n{out.stderr[-3000:]}")
    return parse_summary(out.stdout)


def analysis_inputs(planned: Iterable[PlannedFile]) -> dict[str, str]:
    """Inputs of analysis rules that other rules make, each with the rule making it."""
    planned = list(planned)
    made_by = {f.path: f.rule for f in planned}
    needed = {i for f in planned if is_analysis(f.rule) for i in f.inputs}
    return {p: made_by[p] for p in needed if p in made_by and not is_analysis(made_by[p])}


def cached_files(planned: Iterable[PlannedFile]) -> dict[str, str]:
    """Files a bundle carries, each with the rule that makes it.

    The analysis inputs, and outputs of other rules that nothing consumes
    (provenance sidecars, measured tables that are targets themselves).
    """
    planned = list(planned)
    consumed = {i for f in planned for i in f.inputs}
    unconsumed = {
        f.path: f.rule
        for f in planned
        if not is_analysis(f.rule)
        and f.path not in consumed
        # Programs are rebuilt from source, never shipped; their build record is.
        and not (f.rule.startswith("build_") and not f.path.endswith(".json"))
    }
    return {**unconsumed, **analysis_inputs(planned)}


def raw_files(planned: Iterable[PlannedFile]) -> dict[str, str]:
    return {f.path: f.rule for f in planned if "/raw/" in f.path}


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def run_config(configfiles: Sequence[str | os.PathLike[str]]) -> dict[str, Any]:
    """The config the workflow ran with: files merged in order, validated, defaults filled."""
    return netnoise_config.load_files(configfiles)


def run_directory(workdir: str | os.PathLike[str]) -> Path:
    """``workdir``, where a workflow ran, as an absolute path; BundleError unless it is
    an existing directory (Snakemake would create it, and its ``.snakemake`` inside)."""
    if not str(workdir).strip():
        raise BundleError("the working directory is empty text: name a directory")
    path = Path(workdir).resolve()
    if not path.is_dir():
        raise BundleError(f"{workdir}: no such directory (where the workflow ran)")
    return path


def create(
    output: str | os.PathLike[str],
    *,
    workdir: str | os.PathLike[str] = ".",
    configfiles: Sequence[str | os.PathLike[str]] = ("config/config.yaml",),
    include_raw: bool = False,
) -> dict[str, Any]:
    """Pack the cached results of the run in ``workdir`` into ``output`` (tar.gz)."""
    workdir = run_directory(workdir)
    if not Path(output).resolve().parent.is_dir():
        raise BundleError(f"{output}: its directory does not exist")
    configfiles = [Path(c) if Path(c).is_absolute() else workdir / c for c in configfiles]
    config = run_config(configfiles)
    planned = planned_files(workdir, configfiles)
    chosen = cached_files(planned)
    if include_raw:
        chosen |= raw_files(planned)
    # Sidecars the job graph does not name (co-run backgrounds, run directories).
    results = workdir / "results" / config["platform"]["kind"]
    for sidecar in provenance.sidecars(results):
        chosen.setdefault(str(sidecar.relative_to(workdir)), "provenance")
    missing = sorted(p for p in chosen if not (workdir / p).is_file())
    if not missing:
        identity = _one_run(
            [json.loads((workdir / p).read_bytes()) for p in chosen if p.endswith(".prov.json")],
            config,
        )
    if missing:
        shown = ", ".join(missing[:5]) + (
            f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        )
        raise BundleError(f"the run is incomplete (run the workflow first): missing {shown}")
    derived = _derived_tables(planned, workdir)
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
        path: {"sha256": _sha256(data), "bytes": len(data), "rule": rules[path]}
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
        "analysis_prefixes": list(ANALYSIS_PREFIXES),
        "files": files,
        # What reviewers rebuild, to compare against (compare_tables).
        "derived_tables": derived,
    }
    with atomic_path(output) as staged, tarfile.open(staged, "w:gz") as tar:
        _add(tar, MANIFEST, json.dumps(manifest, indent=1, sort_keys=True).encode())
        for path, data in contents.items():
            _add(tar, path, data)
        os.chmod(staged, 0o644)
    return manifest


def _one_run(records: list[dict[str, Any]], config: dict[str, Any]) -> provenance.RunIdentity:
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
    """The page (resources/cache/README.md) of the bundle shown as ``name``, made
    from its manifest, the run its sidecars name, its CPU record and its claims
    summary."""
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
    problems = identity.problems()
    if problems:
        lines.append(f"**Its results are not one run:** {'; '.join(problems)}.")
    else:
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


def identify(bundle: str | os.PathLike[str]) -> provenance.RunIdentity:
    """The run a (verified) bundle's sidecars come from, against its config."""
    with tarfile.open(bundle, "r:gz") as tar:
        records = [
            json.loads(tar.extractfile(member).read())
            for member in tar.getmembers()
            if member.isfile() and member.name.endswith(provenance.SIDECAR_SUFFIX)
        ]
        config = netnoise_config.read_yaml(f"{bundle}:{CONFIG}", tar.extractfile(CONFIG).read())
    return provenance.run_identity(records, config)


def _derived_tables(planned: Iterable[PlannedFile], workdir: Path) -> dict[str, str]:
    """SHA-256 of every CSV table the analysis rules made in this run."""
    return {
        f.path: _sha256((workdir / f.path).read_bytes())
        for f in planned
        if is_analysis(f.rule) and f.path.endswith(".csv") and (workdir / f.path).is_file()
    }


#: How a rebuilt table agrees with the bundled one (compare_tables), and which
#: of those verdicts a review accepts.
IDENTICAL = "identical"
CLOSE = "equal to 1e-6"
EXTENDED = "equal to 1e-6, with columns this version adds"
AGREEING = (IDENTICAL, CLOSE, EXTENDED)


def compare_tables(manifest: dict[str, Any], workdir: str | os.PathLike[str]) -> dict[str, str]:
    """Each table of the bundled run, rebuilt in ``workdir``: ``identical`` (the
    same bytes), ``equal to 1e-6`` (every number within a relative 1e-6 of the
    bundled one, as floating point of another CPU gives), ``equal to 1e-6, with
    columns this version adds`` (the bundled columns so, beside new ones a
    later analysis adds), ``different`` or ``missing``. Bundles without the
    tables themselves are compared by checksum."""
    workdir = Path(workdir)
    verdicts = {}
    for path, digest in sorted(manifest.get("derived_tables", {}).items()):
        rebuilt = workdir / path
        expected = workdir / EXPECTED / path
        if not rebuilt.is_file():
            verdicts[path] = "missing"
        elif _sha256(rebuilt.read_bytes()) == digest:
            verdicts[path] = IDENTICAL
        elif expected.is_file() and _close(expected, rebuilt):
            verdicts[path] = CLOSE
        elif expected.is_file() and _close(expected, rebuilt, added_columns=True):
            verdicts[path] = EXTENDED
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


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = int(time.time())
    info.mode = 0o644
    tar.addfile(info, io.BytesIO(data))


def _safe_name(name: str) -> bool:
    """A relative path in normal form, without '..', that the workflow could have written."""
    path = PurePosixPath(name)
    return (
        bool(name)
        and name == str(path)
        and not path.is_absolute()
        and ".." not in path.parts
        and "\\" not in name
        and name.isprintable()
    )


_SHA256 = re.compile(r"[0-9a-f]{64}")


def _manifest_problems(manifest: Any) -> list[str]:
    """Why ``manifest`` is not a netnoise bundle manifest (nothing when it is one)."""
    if not isinstance(manifest, dict):
        return [f"{MANIFEST} is a JSON {type(manifest).__name__}, not an object"]
    if manifest.get("format") not in READABLE_FORMATS:
        return [
            f"bundle format {manifest.get('format')!r}; this netnoise ({__version__}) reads "
            f"{', '.join(map(repr, READABLE_FORMATS))}: make the bundle again with this "
            "version (netnoise bundle create)"
        ]
    problems = []
    files = manifest.get("files")
    if not isinstance(files, dict) or not files:
        return [f"{MANIFEST}: 'files' must map every file of the bundle to its checksum"]
    for name, entry in files.items():
        if not (isinstance(entry, dict) and isinstance(entry.get("sha256"), str)
                and _SHA256.fullmatch(entry["sha256"]) and type(entry.get("bytes")) is int
                and entry["bytes"] >= 0):  # fmt: skip
            problems.append(f"{MANIFEST}: the entry of {name!r} needs a sha256 and a size")
    if CONFIG not in files:
        problems.append(f"{MANIFEST} does not cover {CONFIG}")
    derived = manifest.get("derived_tables", {})
    if not isinstance(derived, dict) or not all(
        _safe_name(k) and isinstance(v, str) and _SHA256.fullmatch(v) for k, v in derived.items()
    ):
        problems.append(f"{MANIFEST}: 'derived_tables' must map table paths to checksums")
    git = manifest.get("git")
    if not (isinstance(git, dict) and isinstance(git.get("sha"), str)
            and isinstance(git.get("dirty"), bool)):  # fmt: skip
        problems.append(f"{MANIFEST}: 'git' must give the run's sha and dirty")
    for key in ("netnoise_version", "created", "platform"):
        if not isinstance(manifest.get(key), str):
            problems.append(f"{MANIFEST}: {key!r} must be text")
    if isinstance(manifest.get("created"), str):
        try:
            dt.datetime.fromisoformat(manifest["created"])
        except ValueError:
            problems.append(
                f"{MANIFEST}: 'created' {quoted(manifest['created'])} is not a date and time "
                "(ISO 8601, as 2026-01-31T12:00:00+00:00)"
            )
    if isinstance(files, dict) and isinstance(derived, dict):
        problems += [
            f"{MANIFEST}: 'derived_tables' gives {path} another checksum than its copy "
            f"{EXPECTED}/{path} has"
            for path, digest in derived.items()
            if isinstance(files.get(f"{EXPECTED}/{path}"), dict)
            and files[f"{EXPECTED}/{path}"].get("sha256") != digest
        ]
    return problems


def verify(bundle: str | os.PathLike[str]) -> dict[str, Any]:
    """Check format, members, checksums and config of a bundle; return its manifest."""
    bundle = Path(bundle)
    if not bundle.is_file():
        raise BundleError(f"{bundle}: no such bundle")
    try:
        with tarfile.open(bundle, "r:gz") as tar:
            members = _members(bundle, tar)
            by_name = {m.name: m for m in members}
            if MANIFEST not in by_name:
                raise BundleError(f"{bundle}: no {MANIFEST}: not a netnoise bundle")
            manifest = json.loads(tar.extractfile(by_name[MANIFEST]).read())
            problems = _manifest_problems(manifest)
            if problems:
                raise BundleError(f"{bundle}: {'; '.join(problems[:5])}")
            listed = set(manifest["files"])
            present = set(by_name) - {MANIFEST}
            if listed - present:
                raise BundleError(
                    f"{bundle}: files in the manifest are missing: {sorted(listed - present)[:5]}"
                )
            if present - listed:
                raise BundleError(
                    f"{bundle}: files not in the manifest: {sorted(present - listed)[:5]}"
                )
            for name in sorted(listed):
                data = tar.extractfile(by_name[name]).read()
                entry = manifest["files"][name]
                if len(data) != entry["bytes"] or _sha256(data) != entry["sha256"]:
                    raise BundleError(f"{bundle}: {name} does not match its checksum")
                # The config is read as one below.
                problem = _data_problem(name, data) if name != CONFIG else None
                if problem:
                    raise BundleError(f"{bundle}: {name}: {problem}")
            config = netnoise_config.read_yaml(
                f"{bundle}:{CONFIG}", tar.extractfile(by_name[CONFIG]).read()
            )
    except (tarfile.TarError, OSError, EOFError, zlib.error, UnicodeDecodeError) as err:
        raise BundleError(
            f"{bundle}: damaged or not a bundle ({err or type(err).__name__})"
        ) from err
    except json.JSONDecodeError as err:
        raise BundleError(f"{bundle}: {MANIFEST} is not JSON ({err})") from err
    except RecursionError:
        raise BundleError(f"{bundle}: {MANIFEST} is nested too deeply") from None
    except netnoise_config.ConfigError as err:
        raise BundleError(f"{bundle}: its {CONFIG} cannot be read: {err}") from err
    try:
        netnoise_config.validate(config, source=f"{bundle}:{CONFIG}")
    except netnoise_config.ConfigError as err:
        raise BundleError(
            f"{bundle}: its config does not match this version's schema: {err}"
        ) from err
    if manifest["format"] == FORMAT:
        identity = identify(bundle)
        problems = identity.problems()
        if list(identity.revisions) not in ([], [manifest["git"]["sha"]]):
            problems.append(f"its manifest names revision {manifest['git']['sha'][:12]}")
        if problems:
            raise BundleError(f"{bundle}: not one run: {'; '.join(problems)}")
    if config["platform"]["kind"] != manifest["platform"]:
        raise BundleError(
            f"{bundle}: its config runs on {config['platform']['kind']!r}, its manifest says "
            f"{manifest['platform']!r}"
        )
    return manifest


def _data_problem(name: str, data: bytes) -> str | None:
    """Why a file is not what its suffix says, as its reader in a review job would
    find (JSON; a provenance sidecar the provenance table can read; YAML of plain
    data; a table whose rows have its header's columns; an .npz of arrays of plain
    numbers, which numpy reads without unpickling, no larger than its bytes), or None."""
    try:
        if name.endswith(provenance.SIDECAR_SUFFIX):
            return provenance.sidecar_problem(json.loads(data))
        if name.endswith(".json"):
            json.loads(data)
        elif name.endswith(".yaml"):
            netnoise_config.parse_yaml(name, data, "YAML data")
        elif name.endswith((".csv", ".tsv")):
            return _table_problem(data, "\t" if name.endswith(".tsv") else ",")
        elif name.endswith(".npz"):
            return _npz_problem(data)
    except RecursionError:
        return "nested too deeply"
    except netnoise_config.ConfigError as err:
        return str(err)
    except ValueError as err:
        return f"not JSON ({err})"
    return None


def _table_problem(data: bytes, delimiter: str) -> str | None:
    """Why ``data`` is not a table of at most :data:`MAX_COLUMNS` columns whose every
    row has the header's (lines starting with ``#``, a result file's preamble and
    comments, aside), or None."""
    try:
        lines = data.decode("utf-8").splitlines()
    except UnicodeDecodeError as err:
        return f"not a text table (byte {err.start} is not UTF-8)"
    numbered = [(n, line) for n, line in enumerate(lines, start=1) if not line.startswith("#")]
    if not numbered:
        return "empty: a table needs its header line"
    # The header alone first: a line of a million fields is refused before csv splits it.
    if numbered[0][1].count(delimiter) >= MAX_COLUMNS:
        return f"more than {MAX_COLUMNS} columns; a table of a run has far fewer"
    try:
        rows = csv.reader((line for _, line in numbered), delimiter=delimiter, strict=True)
        header = next(rows)
        for (lineno, _), row in zip(numbered[1:], rows, strict=False):
            if row and len(row) != len(header):
                return f"line {lineno} has {len(row)} fields, the header {len(header)}"
    except csv.Error as err:
        return f"not a table ({err})"
    return None


def _npz_problem(data: bytes) -> str | None:
    """Read from the array headers alone: every member an array without objects."""
    import numpy as np

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for member in archive.namelist():
                if not member.endswith(".npy"):
                    return f"{member} is not an array"
                with archive.open(member) as fh:
                    version = np.lib.format.read_magic(fh)
                    read_header = (
                        np.lib.format.read_array_header_1_0
                        if version == (1, 0)
                        else np.lib.format.read_array_header_2_0
                    )
                    shape, _, dtype = read_header(fh)
                    header_bytes = fh.tell()
                if dtype.hasobject:
                    return f"{member} holds Python objects (a pickle), not numbers"
                elements = math.prod(shape)
                if elements > MAX_ARRAY_ELEMENTS:
                    return f"{member} declares {elements} elements, more than {MAX_ARRAY_ELEMENTS}"
                stored = archive.getinfo(member).file_size - header_bytes
                if elements * dtype.itemsize != stored:
                    return (
                        f"{member} declares {elements} elements of {dtype.itemsize} bytes but "
                        f"holds {stored} bytes"
                    )
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as err:
        return f"not an archive of arrays ({err})"
    return None


def _members(bundle: Path, tar: tarfile.TarFile) -> list[tarfile.TarInfo]:
    """The members of ``tar``, read from their headers alone and refused as soon
    as they are too many or too large (:data:`MAX_FILES`, :data:`MAX_FILE_BYTES`,
    :data:`MAX_BYTES`), then checked (:func:`_check_members`)."""
    members = []
    total = 0
    # Checked as each header is read: reaching the next header means decompressing
    # the data before it, gigabytes for a sparse member a few megabytes packed.
    for member in tar:
        members.append(member)
        total += member.size
        if len(members) > MAX_FILES:
            raise BundleError(f"{bundle}: more than {MAX_FILES} files; a run's bundle has fewer")
        if member.size > MAX_FILE_BYTES or total > MAX_BYTES:
            break
    _check_members(bundle, members)
    return members


def _check_members(bundle: Path, members: list[tarfile.TarInfo]) -> None:
    """Regular files of data formats under safe, distinct names, of a bounded size."""
    names = [m.name for m in members]
    problems = [f"unsafe member name {n!r}" for n in names if not _safe_name(n)]
    problems += [f"{m.name!r} is not a regular file" for m in members if not m.isfile()]
    problems += [f"{n!r} appears {k} times" for n, k in Counter(names).items() if k > 1]
    problems += [
        f"{n!r} is not a data format a bundle may carry ({', '.join(DATA_SUFFIXES)})"
        for n in names
        if not n.endswith(DATA_SUFFIXES)
    ]
    problems += [
        f"{m.name!r} unpacks to {m.size} bytes, more than {MAX_FILE_BYTES}"
        for m in members
        if m.size > MAX_FILE_BYTES
    ]
    total = sum(m.size for m in members)
    if total > MAX_BYTES:
        problems.append(f"its files unpack to {total} bytes, more than {MAX_BYTES}")
    if problems:
        raise BundleError(f"{bundle}: {'; '.join(problems[:5])}")


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
    manifest = verify(bundle)
    workdir = fresh_workdir(workdir, bundle)
    with tarfile.open(bundle, "r:gz") as tar:
        tar.extractall(workdir, filter="data")
    return manifest


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
    needed = analysis_inputs(planned_files(workdir, configfiles))
    return {p: r for p, r in needed.items() if not (workdir / p).is_file()}


def analysis_rules(
    workdir: str | os.PathLike[str], configfiles: Sequence[str | os.PathLike[str]]
) -> list[str]:
    rules = {f.rule for f in planned_files(workdir, configfiles)}
    return sorted(r for r in rules if is_analysis(r))


def review(
    bundle: str | os.PathLike[str] = SHIPPED,
    workdir: str | os.PathLike[str] = "results/review",
    *,
    cores: int = 2,
    report: bool = True,
) -> Path:
    """Rebuild every figure and table (and the report) of ``bundle`` in ``workdir``."""
    project.snakemake_command()  # its error before anything is unpacked
    unpack(bundle, workdir)
    workdir = Path(workdir).resolve()
    record = {
        "bundle": shown(bundle),
        "sha256": _sha256(Path(bundle).read_bytes()),
        "reviewed": provenance.now(),
    }
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
    run = _snakemake(workdir, config, "--cores", str(cores), "--allowed-rules", *allowed)
    if subprocess.run(run, check=False).returncode != 0:
        raise BundleError(f"rebuilding the figures and tables from {bundle} failed (see above)")
    if report:
        try:
            netnoise_report.build(workdir / "report.html", workdir=workdir, configfiles=config)
        except subprocess.CalledProcessError as err:
            raise BundleError("the report could not be built (see above)") from err
    return workdir


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
        return pd.read_csv(tar.extractfile(member)), manifest


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
