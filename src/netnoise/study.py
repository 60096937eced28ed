"""The contract of a study: what it gives the shared machinery, in one object.

Every study package exports one ``STUDY`` (a :class:`Study`) and registers it
under the ``netnoise.studies`` entry point group of its distribution's
metadata; :mod:`netnoise.studies` finds them there. The workflow includes its
rules and asks it for its final files, the config checks its section, the
report shows its results, ``netnoise claims`` judges its headline claims,
``netnoise bench cpu`` runs its CPU-control cases, and the command line takes
its commands: none of them imports a study. docs/architecture.md shows how to
add one.

Every study has one key, and that key names its home everywhere: the package
``netnoise.studies.<key>``, the rule file ``workflow/rules/<key>.smk``, its
scripts, schema, report captions, tests, notebook, published reference values
and config section. :meth:`Study.files` lists them from these conventions (plus
the C programs only this study runs), so ``netnoise studies --files KEY``
shows a study's whole story.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from netnoise import project
from netnoise.platform.testbed import TestbedPlatform
from netnoise.report import Result
from netnoise.run import Job
from netnoise.settings import Settings, StudySection

REPO = project.ROOT


@dataclass(frozen=True)
class Citation:
    """The published paper a study reproduces, as its seed text gives it.

    ``doi`` is None where the paper text shows none; ``note`` says which parts
    come from the published paper rather than from its extracted text.
    """

    authors: str
    title: str
    venue: str | None
    year: int | None
    doi: str | None = None
    note: str = ""

    NO_DOI = "No DOI given in the paper text"

    @property
    def published(self) -> str:
        """Venue and year, or that the paper text gives neither."""
        given = ", ".join(str(p) for p in (self.venue, self.year) if p)
        return given or "Venue and year not given in the paper text"

    def text(self) -> str:
        """One line: authors, title, venue, year and DOI, saying which the text lacks."""
        doi = f"DOI {self.doi}" if self.doi else self.NO_DOI
        return f"{self.authors}. {self.title}. {self.published}. {doi}."


@dataclass(frozen=True)
class StudyPaths:
    """Where a study keeps its files under a platform's results folder (raw
    results, tidy tables, models, tables, figures, logs, benchmark timings), and
    its report captions relative to the workflow's rules."""

    raw: str
    tidy: str
    models: str
    tables: str
    figures: str
    logs: str
    benchmarks: str
    captions: str

    @classmethod
    def under(cls, results: str, key: str, captions: str) -> StudyPaths:
        """Study ``key``'s folders under ``results`` (results/<platform.kind>)."""
        folders = ("raw", "tidy", "models", "tables", "figures", "logs", "benchmarks")
        return cls(**{name: f"{results}/{name}/{key}" for name in folders}, captions=captions)


@dataclass(frozen=True)
class Claims:
    """How a study's headline claims are judged: ``judge`` (its headline module's
    ``headline_claims``) takes one table per argument of ``inputs``, each read
    from the path there (under a platform's results folder, or ``resources/…``
    in the project); a run may lack the ``optional`` ones (a part of the study
    its config disabled), which are then passed as None."""

    judge: Callable[..., pd.DataFrame]
    inputs: Mapping[str, str]
    optional: frozenset[str] = frozenset()


#: (built programs, output folder, settings, the case's testbed) -> (measured job,
#: background jobs).
JobsBuilder = Callable[[Path, Path, Settings, TestbedPlatform], tuple[Job, list[Job]]]


@dataclass
class CpuCase:
    """One heavy co-run of a study for ``netnoise bench cpu``: what it is, the
    testbed layout it runs on (over platform.testbed), how to build its jobs and
    read the measured job's runtimes. ``cpu_control``: for a measured job that
    carries its own perturbation (the noise benchmark), its CPU-only control;
    None: the control is the measured job beside ``cpuhog`` ranks in place of
    each background job."""

    title: str
    layout: Callable[[Settings], dict[str, Any]]
    jobs: JobsBuilder
    runtime: Callable[[pd.DataFrame], pd.Series]
    cpu_control: JobsBuilder | None = None


def node_names(platform: TestbedPlatform) -> list[str]:
    """The names of a CPU case's testbed nodes, in order."""
    return [node.name for node in platform.testbed.spec.node_list()]


def application_argv(
    bin_dir: Path, name: str, settings: Settings, extra: Sequence[str] = ()
) -> list[str]:
    """The argv of configured application ``name`` (a csrc program) with ``extra``."""
    app = settings.applications[name]
    return [str(bin_dir / str(app.program)), *map(str, app.args or []), *extra]


def application_runtimes(data: pd.DataFrame) -> pd.Series:
    """A proxy application's runtimes, one per timed run."""
    return data["runtime_s"]


@dataclass(frozen=True)
class Study:
    """One study: what it is, where its parts are, and what it gives the shared
    machinery.

    ``settings`` is the type of its config section, ``schema`` the JSON schema
    of that section; ``checks(config)`` the problems of a validated config that
    the schema cannot express. ``rules`` is its Snakemake rules file and
    ``plan(settings, paths)`` its final files in this run (none where it does
    not run on the platform). ``results`` are its figures and tables in the
    report, in the paper's order; ``claims`` its headline claims. A study that
    goes beyond the papers (it reproduces no seed) has ``seed`` and ``claims``
    None: it measures, and nothing of it is judged. The optional
    rest: CPU-control cases, the commands and benchmarks it adds to ``netnoise``
    (each a function given the sub-parsers), parsers of third-party tables by
    name, and the C sources only it runs."""

    key: str
    number: str
    title: str
    seed: str | None
    """The seed file of the paper it reproduces (None: it reproduces none)."""
    citation: Citation
    testbed_changes: str
    """What the emulated cluster changes against the paper's machines."""
    settings: type[StudySection]
    schema: Path
    checks: Callable[[dict[str, Any]], list[str]]
    rules: Path
    plan: Callable[[Settings, StudyPaths], list[str]]
    results: tuple[Result, ...]
    claims: Claims | None
    notebook: Path
    captions: Path
    cpu_cases: tuple[CpuCase, ...] = ()
    commands: Callable[[Any], object] | None = None
    benches: Callable[[Any], object] | None = None
    table_parsers: Mapping[str, Callable[[str], pd.DataFrame]] = field(default_factory=dict)
    programs: tuple[str, ...] = ()
    """C sources (relative to the repository) that only this study runs."""

    @classmethod
    def at_home(cls, key: str, number: str, **parts: Any) -> Study:
        """A study of this project, its schema, rules, notebook and report captions
        where its key puts them (``parts``: every other field)."""
        return cls(
            key=key,
            number=number,
            schema=REPO / "workflow" / "schemas" / f"{key}.schema.yaml",
            rules=REPO / "workflow" / "rules" / f"{key}.smk",
            notebook=REPO / "notebooks" / f"{number}_{key}.ipynb",
            captions=REPO / "workflow" / "report" / key,
            **parts,
        )

    @property
    def reproduces(self) -> bool:
        """Whether it reproduces a paper of the seeds (and so has claims to judge)."""
        return self.seed is not None

    @property
    def homes(self) -> tuple[str, ...]:
        """Glob patterns of the files that belong to the study by their name."""
        key = self.key
        return (
            f"src/netnoise/studies/{key}/**/*",
            f"workflow/rules/{key}.smk",
            f"workflow/scripts/{key}/**/*",
            f"workflow/schemas/{key}.schema.yaml",
            f"workflow/report/{key}/**/*",
            f"tests/{key}/**/*",
            f".test/{key}/**/*",
            f"notebooks/{self.number}_{key}.ipynb",
            f"resources/reference/{key}/**/*",
            f"config/{key}-*.yaml",
            f"docs/{key}.md",
        )

    def files(self, root: Path = REPO) -> list[str]:
        """Every file of the study under ``root``, relative to it, sorted."""
        found = {
            str(path.relative_to(root))
            for pattern in self.homes
            for path in root.glob(pattern)
            if path.is_file() and "__pycache__" not in path.parts
        }
        return sorted(found | set(self.programs))
