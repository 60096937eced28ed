"""Checking a bundle before anything reads it (:func:`verify`): its archive read
to its end (:mod:`~netnoise.bundle.archive`), its manifest parsed strictly and
matched member for member, byte for byte, every member read as its reader in a
review takes it (:mod:`~netnoise.bundle.contents`), its config held to this
version's schema, and its results to one run of one clean revision, whatever
its format: a bundle that passes never crashes a review job, and one whose
results are not one run is refused, never judged.

:func:`extract` unpacks a verified bundle, each member held to the checksum the
verified manifest gives, so what lands on disk is what was verified even if the
file changes in between.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import re
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from netnoise import __version__, inputs, provenance
from netnoise import config as netnoise_config
from netnoise.bundle import archive, contents
from netnoise.bundle.layout import (
    CONFIG,
    EXPECTED,
    MANIFEST,
    READABLE_FORMATS,
    BundleError,
    safe_name,
)
from netnoise.inputs import quoted


@dataclass(frozen=True)
class Verified:
    """A bundle that passed :func:`check`: its manifest, the run its sidecars
    come from, and the SHA-256 of the bundle file."""

    manifest: dict[str, Any]
    identity: provenance.RunIdentity
    sha256: str


def verify(bundle: str | os.PathLike[str]) -> dict[str, Any]:
    """Check a bundle (:func:`check`); return its manifest."""
    return check(bundle).manifest


def identify(bundle: str | os.PathLike[str]) -> provenance.RunIdentity:
    """The run a bundle's sidecars come from, against its config (checked first)."""
    return check(bundle).identity


class _Members:
    """What one pass over a bundle found: each member's size and checksum, the
    manifest and config documents, and the sidecars' records."""

    def __init__(self, bundle: Path) -> None:
        self.bundle = bundle
        self.found: dict[str, tuple[int, str]] = {}
        self.manifest = contents.Document(MANIFEST, parse=False)
        self.config = contents.Document(CONFIG, inputs.MAX_CONFIG_BYTES, parse=False)
        self.records: list[dict[str, Any]] = []

    def visit(self, member: tarfile.TarInfo, chunks: Iterator[bytes]) -> None:
        name = member.name
        check = {MANIFEST: self.manifest, CONFIG: self.config}.get(name) or contents.check_for(name)
        digest = hashlib.sha256()
        size = 0
        for chunk in chunks:
            digest.update(chunk)
            check.feed(chunk)
            size += len(chunk)
        problem = check.finish()
        if problem:
            raise BundleError(f"{self.bundle}: {name}: {problem}")
        self.found[name] = (size, digest.hexdigest())
        if name.endswith(provenance.SIDECAR_SUFFIX) and isinstance(check, contents.Document):
            record = check.record
            # What run_identity reads; the rest (the hwloc topology) is not held.
            self.records.append(
                {
                    "git": record.get("git"),
                    "software": {"hostname": (record.get("software") or {}).get("hostname")},
                    "start": record.get("start"),
                    "config": record.get("config"),
                }
            )


def check(bundle: str | os.PathLike[str]) -> Verified:
    """Check format, members, checksums, contents, config and run of a bundle."""
    bundle = Path(bundle)
    members = _Members(bundle)
    file_sha256 = archive.read(bundle, members.visit)
    if MANIFEST not in members.found:
        raise BundleError(f"{bundle}: no {MANIFEST}: not a netnoise bundle")
    try:
        manifest = contents.strict_json(members.manifest.data)
    except RecursionError:
        raise BundleError(f"{bundle}: {MANIFEST} is nested too deeply") from None
    except ValueError as err:  # UnicodeDecodeError too
        raise BundleError(f"{bundle}: {MANIFEST} is not JSON ({err})") from None
    problems = _manifest_problems(manifest)
    if problems:
        raise BundleError(f"{bundle}: {'; '.join(problems[:5])}")
    listed = set(manifest["files"])
    present = set(members.found) - {MANIFEST}
    if listed - present:
        raise BundleError(
            f"{bundle}: files in the manifest are missing: {sorted(listed - present)[:5]}"
        )
    if present - listed:
        raise BundleError(f"{bundle}: files not in the manifest: {sorted(present - listed)[:5]}")
    for name in sorted(listed):
        entry = manifest["files"][name]
        if members.found[name] != (entry["bytes"], entry["sha256"]):
            raise BundleError(f"{bundle}: {name} does not match its checksum")
    try:
        config = netnoise_config.read_yaml(f"{bundle}:{CONFIG}", members.config.data)
    except netnoise_config.ConfigError as err:
        raise BundleError(f"{bundle}: its {CONFIG} cannot be read: {err}") from err
    try:
        netnoise_config.validate(config, source=f"{bundle}:{CONFIG}")
    except netnoise_config.ConfigError as err:
        raise BundleError(
            f"{bundle}: its config does not match this version's schema: {err}"
        ) from err
    identity = provenance.run_identity(members.records, config)
    problems = identity.problems()
    if list(identity.revisions) not in ([], [manifest["git"]["sha"]]):
        problems.append(f"its manifest names revision {manifest['git']['sha'][:12]}")
    if problems:
        raise BundleError(
            f"{bundle}: not one run: {'; '.join(problems)}; a bundle is one run of one clean "
            "revision, so its claims cannot be judged"
        )
    if config["platform"]["kind"] != manifest["platform"]:
        raise BundleError(
            f"{bundle}: its config runs on {config['platform']['kind']!r}, its manifest says "
            f"{manifest['platform']!r}"
        )
    return Verified(manifest, identity, file_sha256)


def extract(bundle: str | os.PathLike[str], verified: Verified, workdir: Path) -> None:
    """Unpack ``bundle``, as :func:`check` verified it, into the empty directory
    ``workdir``: regular files only, each created new and held to its checksum."""
    bundle = Path(bundle)
    files = verified.manifest["files"]

    def write(member: tarfile.TarInfo, chunks: Iterator[bytes]) -> None:
        if member.name == MANIFEST:
            target = workdir / MANIFEST
        elif member.name in files:
            target = workdir / member.name
        else:
            raise BundleError(f"{bundle}: changed since it was verified ({member.name} is new)")
        target.parent.mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha256()
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        with os.fdopen(os.open(target, flags, 0o644), "wb") as out:
            for chunk in chunks:
                digest.update(chunk)
                out.write(chunk)
        expected = files.get(member.name, {}).get("sha256")
        if member.name != MANIFEST and digest.hexdigest() != expected:
            raise BundleError(f"{bundle}: changed since it was verified ({member.name})")

    try:
        file_sha256 = archive.read(bundle, write)
    except OSError as err:
        raise BundleError(f"{bundle}: cannot unpack into {workdir}: {err.strerror}") from None
    if file_sha256 != verified.sha256:
        raise BundleError(f"{bundle}: changed since it was verified")


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
