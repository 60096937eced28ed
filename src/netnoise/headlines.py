"""Every study's headline claims, judged from the tables of a run or a bundle.

Each study says how its claims are judged (``STUDY.claims``: its headline
module's function and the tables it reads, netnoise.study); this module finds
those tables under a platform's results (or a bundle's) and judges every study
that ran, for ``netnoise claims``, the workflow's claims tables and the report.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from netnoise import project, studies, verdicts
from netnoise.study import Claims

REPO = project.ROOT


def _claims(key: str) -> Claims:
    """How study ``key``'s claims are judged; a study beyond the papers has none."""
    claims = studies.get(key).claims
    if claims is None:
        raise KeyError(f"study {key!r} reproduces no paper: it has no headline claims")
    return claims


def headline_inputs(key: str, results: Path | Sequence[Path], root: Path = REPO) -> dict[str, Path]:
    """Where study ``key``'s ``headline.headline_claims`` reads each argument:
    under a platform's results folder (the first of ``results`` that holds it,
    as a bundle keeps its tables apart from its tidy data), or (``resources/…``)
    in the project's ``root``."""
    roots = [results] if isinstance(results, Path) else list(results)

    def under_results(path: str) -> Path:
        return next((r / path for r in roots if (r / path).is_file()), roots[0] / path)

    inputs = _claims(key).inputs
    return {
        argument: root / path if path.startswith("resources/") else under_results(path)
        for argument, path in inputs.items()
    }


def optional_headline_inputs(key: str) -> frozenset[str]:
    """The arguments of study ``key``'s headline claims whose tables a run may
    lack (a part of the study its config disabled)."""
    return _claims(key).optional


def judge_headline_claims(key: str, paths: Mapping[str, Path]) -> pd.DataFrame:
    """Study ``key``'s headline claims from the tables at ``paths`` (one per
    argument); an optional table that is absent is passed as None."""
    judge = _claims(key).judge
    tables = {}
    for argument, path in paths.items():
        if Path(path).is_file():
            tables[argument] = pd.read_csv(path)
        elif argument in optional_headline_inputs(key):
            tables[argument] = None
        else:
            raise FileNotFoundError(f"{path}: the {key} study's headline claims need it")
    return judge(**tables)


def collect_headline_claims(results: Path | Sequence[Path], root: Path = REPO) -> pd.DataFrame:
    """Every study's headline claims judged from the tables under ``results``
    (one platform's folder, or several as in a bundle); a study whose required
    tables are absent (disabled or skipped) is left out."""
    roots = [results] if isinstance(results, Path) else list(results)
    frames = []
    for key in studies.PAPER_KEYS:
        optional = optional_headline_inputs(key)
        paths = headline_inputs(key, roots, root)
        required = [p for argument, p in paths.items() if argument not in optional]
        if any(p.is_file() for p in paths.values()) and all(p.is_file() for p in required):
            frames.append(judge_headline_claims(key, paths))
    if not frames:
        raise FileNotFoundError(f"no study's tables under {', '.join(map(str, roots))}")
    return pd.concat(frames, ignore_index=True)


#: A platform's claims (its summary, or judged from its tables) and its CPU
#: record (None where the run has none), by platform.
PlatformClaims = dict[str, tuple[pd.DataFrame, pd.DataFrame | None]]


def platform_claims(folders: Sequence[Path]) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """A platform's claims (its summary, or judged from its tables) and its
    CPU record, from the first of ``folders`` that holds each. A summary that
    lacks this version's columns (an older run's) is judged again from the
    tables, by this version's rules."""
    tables = [Path(folder) / "tables" for folder in folders]
    summary = next(
        (t / "claims_summary.csv" for t in tables if (t / "claims_summary.csv").is_file()), None
    )
    cpu = next((t / "cpu_summary.csv" for t in tables if (t / "cpu_summary.csv").is_file()), None)
    claims = pd.read_csv(summary) if summary else None
    if claims is None or not set(verdicts.COLUMNS) <= set(claims.columns):
        claims = collect_headline_claims(list(folders))
    return claims, pd.read_csv(cpu) if cpu else None


def results_claims(results: Path) -> PlatformClaims:
    """Per platform under ``results`` (a platform's folder, or the folder of several)."""
    folders = (
        [results]
        if (results / "tables").is_dir()
        else sorted(d for d in results.iterdir() if (d / "tables").is_dir())
        if results.is_dir()
        else []
    )
    if not folders:
        raise FileNotFoundError(f"{results}: no results of a run (no tables/ in it or below it)")
    return {folder.name: platform_claims([folder]) for folder in folders}


def bundle_claims(path: str | Path) -> PlatformClaims:
    """The claims of a results bundle (verified first), judged from its derived
    tables and its tidy data."""
    from netnoise import bundle

    with tempfile.TemporaryDirectory(prefix="netnoise-claims-") as scratch:
        unpacked = Path(scratch) / "bundle"
        platform = bundle.unpack(path, unpacked)["platform"]
        roots = [unpacked / bundle.EXPECTED / "results" / platform, unpacked / "results" / platform]
        return {platform: platform_claims(roots)}


def beside_bundle(
    path: str | Path, by_platform: Mapping[str, pd.DataFrame]
) -> dict[str, pd.DataFrame]:
    """The claims of the bundle at ``path`` first, then ``by_platform``'s, by
    platform; the bundle's platform reads ``<platform> (bundle)`` where a run of
    the same platform stands beside it."""
    ((shipped, (claims, _)),) = bundle_claims(path).items()
    return {f"{shipped} (bundle)" if shipped in by_platform else shipped: claims, **by_platform}
