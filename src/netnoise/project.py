"""Where the workflow and its data are: the source checkout this package runs
from, or the copy shipped inside the installed package.

The workflow (``workflow/``: Snakefile, rules, scripts, schemas, report
templates), the C sources, the configs, the conda environments, the profiles
and the reference data live at the top of the repository. An editable install
runs from the checkout; a plain ``pip install`` ships the same files as package
data under ``netnoise/project/`` (``setup.py``), so the command works from any
directory. :func:`path` says in one line what is missing when neither has them.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
#: The repository this package sits in when it runs from a source checkout.
CHECKOUT = _PACKAGE.parents[1]
#: The copy of the repository's files inside an installed package.
SHIPPED = _PACKAGE / "project"
#: What a plain installation ships (``setup.py`` copies them).
SHIPPED_DIRECTORIES = ("workflow", "csrc", "config", "envs", "profiles", "resources")


class ProjectFileMissing(FileNotFoundError):
    """Neither a checkout nor the installed package has a file the command needs."""


def _find_root() -> Path:
    for candidate in (CHECKOUT, SHIPPED):
        if (candidate / "workflow" / "Snakefile").is_file():
            return candidate
    return SHIPPED


#: The checkout when the package runs from one, else the shipped copy.
ROOT = _find_root()


def path(*parts: str) -> Path:
    """``ROOT/parts``, or a one-line error saying what is missing and what provides it."""
    found = ROOT.joinpath(*parts)
    if not found.exists():
        raise ProjectFileMissing(
            f"{'/'.join(parts)} is neither in a netnoise checkout nor in the installed "
            f"package ({SHIPPED}): run netnoise from a clone, or install it with "
            "`pip install .` from one"
        )
    return found


def is_checkout(root: Path = ROOT) -> bool:
    """Whether ``root`` is the source checkout (a git work tree), not a shipped copy."""
    return root == CHECKOUT and (root / "pyproject.toml").is_file()


def snakemake_command() -> list[str]:
    """Snakemake of this Python's environment, else the one on PATH; a one-line
    error naming what to install when there is none."""
    beside = Path(sys.executable).parent / "snakemake"
    found = [str(beside)] if beside.exists() else ["snakemake"] if shutil.which("snakemake") else []
    # Snakemake and its executor plugins start sh and which from PATH as they load.
    missing = [tool for tool in ("sh", "which") if shutil.which(tool) is None]
    if found and missing:
        raise ProjectFileMissing(
            f"PATH ({os.environ.get('PATH', '')!r}) finds no {' or '.join(missing)}, which "
            "Snakemake runs: set PATH to the system's, e.g. PATH=/usr/local/bin:/usr/bin:/bin"
        )
    if found:
        return found
    raise ProjectFileMissing(
        "this command runs the workflow and needs Snakemake: install netnoise with its "
        "workflow extra (pip install 'netnoise[workflow]'), or run make setup in a clone"
    )
