"""Checking a bundle before anything reads it (:func:`verify`): its archive, its
manifest, every member against the manifest and against what its reader takes,
its config against this version's schema, and that its results are one run."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import tarfile
import zlib
from collections import Counter
from pathlib import Path
from typing import Any

from netnoise import __version__, provenance
from netnoise import config as netnoise_config
from netnoise.bundle import contents, layout
from netnoise.bundle.layout import (
    CONFIG,
    DATA_SUFFIXES,
    EXPECTED,
    FORMAT,
    MANIFEST,
    READABLE_FORMATS,
    BundleError,
    safe_name,
    sha256,
)
from netnoise.inputs import quoted


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
        safe_name(k) and isinstance(v, str) and _SHA256.fullmatch(v) for k, v in derived.items()
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
                if len(data) != entry["bytes"] or sha256(data) != entry["sha256"]:
                    raise BundleError(f"{bundle}: {name} does not match its checksum")
                # The config is read as one below.
                problem = contents.data_problem(name, data) if name != CONFIG else None
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


def _members(bundle: Path, tar: tarfile.TarFile) -> list[tarfile.TarInfo]:
    """The members of ``tar``, read from their headers alone and refused as soon
    as they are too many or too large (:data:`~layout.MAX_FILES`,
    :data:`~layout.MAX_FILE_BYTES`, :data:`~layout.MAX_BYTES`), then checked
    (:func:`_check_members`)."""
    members = []
    total = 0
    # Checked as each header is read: reaching the next header means decompressing
    # the data before it, gigabytes for a sparse member a few megabytes packed.
    for member in tar:
        members.append(member)
        total += member.size
        if len(members) > layout.MAX_FILES:
            raise BundleError(
                f"{bundle}: more than {layout.MAX_FILES} files; a run's bundle has fewer"
            )
        if member.size > layout.MAX_FILE_BYTES or total > layout.MAX_BYTES:
            break
    _check_members(bundle, members)
    return members


def _check_members(bundle: Path, members: list[tarfile.TarInfo]) -> None:
    """Regular files of data formats under safe, distinct names, of a bounded size."""
    names = [m.name for m in members]
    problems = [f"unsafe member name {n!r}" for n in names if not safe_name(n)]
    problems += [f"{m.name!r} is not a regular file" for m in members if not m.isfile()]
    problems += [f"{n!r} appears {k} times" for n, k in Counter(names).items() if k > 1]
    problems += [
        f"{n!r} is not a data format a bundle may carry ({', '.join(DATA_SUFFIXES)})"
        for n in names
        if not n.endswith(DATA_SUFFIXES)
    ]
    problems += [
        f"{m.name!r} unpacks to {m.size} bytes, more than {layout.MAX_FILE_BYTES}"
        for m in members
        if m.size > layout.MAX_FILE_BYTES
    ]
    total = sum(m.size for m in members)
    if total > layout.MAX_BYTES:
        problems.append(f"its files unpack to {total} bytes, more than {layout.MAX_BYTES}")
    if problems:
        raise BundleError(f"{bundle}: {'; '.join(problems[:5])}")
