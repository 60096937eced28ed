"""The studies netnoise reproduces: every ``STUDY`` (netnoise.study) that an
installed distribution registers under the ``netnoise.studies`` entry point
group, in the order of their numbers.

The five of this project register in its ``pyproject.toml``; another
distribution (or a test) adds one by registering its own. Shared machinery
finds the studies here and imports none of them.
"""

from __future__ import annotations

import functools
import subprocess
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from netnoise import project

REPO = project.ROOT
#: The entry point group every study registers under.
GROUP = "netnoise.studies"


class StudiesMissing(RuntimeError):
    """No distribution registers a study (the netnoise package is not installed)."""


@functools.cache
def registered() -> tuple[Any, ...]:
    """Every registered study, by number."""
    found = entry_points(group=GROUP)
    if not found:
        raise StudiesMissing(
            f"no {GROUP} entry points: the netnoise package is not installed "
            "(run `make setup`, or `pip install -e .` in this checkout)"
        )
    loaded = [point.load() for point in found]
    keys = [study.key for study in loaded]
    twice = sorted({key for key in keys if keys.count(key) > 1})
    if twice:
        raise StudiesMissing(f"studies registered twice: {', '.join(twice)}")
    return tuple(sorted(loaded, key=lambda study: (study.number, study.key)))


def __getattr__(name: str) -> Any:
    # The registered studies (STUDIES) and their keys (KEYS), found when first
    # asked; PAPERS (and PAPER_KEYS) are those that reproduce a paper of the seeds.
    if name == "STUDIES":
        return registered()
    if name == "KEYS":
        return tuple(study.key for study in registered())
    if name == "PAPERS":
        return tuple(study for study in registered() if study.reproduces)
    if name == "PAPER_KEYS":
        return tuple(study.key for study in registered() if study.reproduces)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def get(key: str) -> Any:
    """The study ``key``."""
    for study in registered():
        if study.key == key:
            return study
    keys = ", ".join(study.key for study in registered())
    raise KeyError(f"no study {key!r}; the studies are {keys}")


def tracked_files(root: Path = REPO) -> list[str]:
    """Files of the repository (git's view when it is a checkout, else every file)."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        return sorted(f for f in out.splitlines() if (root / f).is_file())
    except (OSError, subprocess.CalledProcessError):
        return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def status_lines() -> list[str]:
    """One line per study: its key, seed number (or "new" and its number, for a
    study beyond the papers) and title, the paper's first author and year, and
    which rule file it lacks if it is not in the workflow."""
    lines = []
    for study in registered():
        first = study.citation.authors.split(",")[0].split(" and ")[0]
        paper = f"{first} et al." if first != study.citation.authors else first
        paper += f", {study.citation.year}" if study.citation.year else ""
        missing = "" if study.rules.is_file() else f" (not built yet: no {study.rules})"
        kind = "seed" if study.reproduces else "new "
        lines.append(f"{study.key:<20} {kind} {study.number}  {study.title} ({paper}){missing}")
    return lines
