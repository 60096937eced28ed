"""What the studies add to the shared machinery, found through their entry
points.

Shared modules (everything outside ``netnoise.studies``) import no study. A
study registers what they need in ``pyproject.toml`` under
``[project.entry-points."netnoise.<group>"]``, and the shared code asks this
module for a group: the commands a study adds (``cli``, ``bench``), the checks
of its config section (``config_checks``), the parsers of third-party output
it reads (``table_parsers``) and its heaviest co-run for ``netnoise bench cpu``
(``cpu_cases``).
"""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Any

GROUPS = ("cli", "bench", "config_checks", "table_parsers", "cpu_cases")


class PluginsMissing(RuntimeError):
    """The package's metadata names no entry point of a group (not installed)."""


def load(group: str) -> dict[str, Any]:
    """Every object registered under ``netnoise.<group>``, by name, in name order."""
    if group not in GROUPS:
        raise ValueError(f"no plugin group {group!r}; the groups are {', '.join(GROUPS)}")
    found = entry_points(group=f"netnoise.{group}")
    if not found:
        raise PluginsMissing(
            f"no netnoise.{group} entry points: the netnoise package is not installed "
            "(run `make setup`, or `pip install -e .` in this checkout)"
        )
    return {point.name: point.load() for point in sorted(found, key=lambda p: p.name)}
