"""The five studies netnoise reproduces, and where each one lives.

Every study has one key, and that key names its home everywhere: the package
``netnoise.studies.<key>``, the rule file ``workflow/rules/<key>.smk``, its
scripts, schema, report captions, tests, notebook, published reference values
and config section. :meth:`Study.files` lists them from these conventions (plus
the C programs that only this study runs), so ``netnoise studies --files KEY``
shows a study's whole story.
"""

from __future__ import annotations

import importlib
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pandas as pd

from netnoise import project
from netnoise.settings import StudySection

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
class Study:
    key: str
    number: str
    title: str
    seed: str
    citation: Citation
    testbed_changes: str
    """What the emulated cluster changes against the paper's machines."""
    programs: tuple[str, ...] = ()
    """C sources (relative to the repository) that only this study runs."""
    testbed_section: tuple[str, ...] = ()
    """Where, below the study's config section, its testbed layout is (its measured
    part's subsection); empty for the section itself."""

    def config_section(self, config: Mapping[str, Any]) -> Mapping[str, Any]:
        """The config section whose ``testbed`` (and ``cpu``) apply to the study's runs."""
        section = config[self.key]
        for name in self.testbed_section:
            section = section[name]
        return section

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

    @property
    def settings(self) -> type[StudySection]:
        """The type of the study's config section (its ``settings`` module's)."""
        module = self.module("settings")
        return next(
            value
            for value in vars(module).values()
            if isinstance(value, type)
            and issubclass(value, StudySection)
            and getattr(value, "KEY", None) == self.key
        )

    def module(self, name: str) -> ModuleType | None:
        """The study's submodule ``name`` (e.g. ``config``, ``cli``), or None if it has none."""
        try:
            return importlib.import_module(f"{__name__}.{self.key}.{name}")
        except ModuleNotFoundError as err:
            if err.name != f"{__name__}.{self.key}.{name}":
                raise
            return None


STUDIES = (
    Study(
        "impact_compression",
        "000",
        "Impact and Compression experiments, pairwise slowdown predictions",
        "000_7009c5ae4db82585.txt",
        Citation(
            authors="Marc Casas and Greg Bronevetsky",
            title="Active Measurement of the Impact of Network Switch Utilization on "
            "Application Performance",
            venue="IEEE International Parallel and Distributed Processing Symposium (IPDPS)",
            year=2014,
            doi="10.1109/IPDPS.2014.28",
            note="The extracted text starts at the abstract: title, authors, venue, year and "
            "DOI are the published paper's.",
        ),
        "The paper probed one InfiniBand switch of LLNL's Cab cluster beside six HPC "
        "applications. Here four proxy applications (csrc/apps) share one emulated switch, "
        "MPI over TCP: latencies are hundreds of microseconds instead of about one, and the "
        "applications differ, so Table I and the predictors' errors are compared by their "
        "structure and spread, not value by value. Its links queue deeply, so that, as on "
        "InfiniBand, a busy link delays packets rather than dropping them (a dropped "
        "message costs a TCP retransmission timeout).",
        ("csrc/bench/impactb.c",),
    ),
    Study(
        "network_noise",
        "001",
        "Network noise benchmark and congestion simulator",
        "001_9f0f9ede26bdffbe.txt",
        Citation(
            authors="Torsten Hoefler, Timo Schneider and Andrew Lumsdaine",
            title="The Effect of Network Noise on Large-Scale Collective Communications",
            venue="Parallel Processing Letters",
            year=2009,
            note="The extracted text has no title page: title and authors are the published "
            "paper's; the venue and year are in its page headers.",
        ),
        "The paper ran its benchmark on InfiniBand fat-trees of up to 492 nodes and a "
        "BlueGene/P torus, and simulated fat-trees and tori of thousands of endpoints. Here "
        "the benchmark runs on the emulated cluster's few nodes behind one switch, and the "
        "quick study simulates smaller topologies (config/paper.yaml has the paper's sizes); "
        "the real fabrics of Fig. 11 are read only from configured ibnetdiscover files.",
        ("csrc/bench/noise.c",),
        testbed_section=("benchmark",),
    ),
    Study(
        "variability",
        "002",
        "Counter-based model of network-induced variability",
        "002_9ff0e74a68d20027.txt",
        Citation(
            authors="Sudheer Chunduri, Elise Jennings, Kevin Harms, Christopher Knight "
            "and Scott Parker",
            title="A generalized statistics-based model for predicting network-induced variability",
            venue=None,
            year=None,
            note="Argonne National Laboratory; the paper cites the June 2019 TOP500 list, so "
            "it dates from 2019 or later.",
        ),
        "The paper read Aries network counters of a Cray XC40 (dragonfly) under production "
        "load. Here a production-like campaign runs proxy applications with a seeded random "
        "background per run on a two-rack testbed, and queue-discipline and link counters "
        "stand for the Aries flit and stall counters; runs are seconds long and hundreds "
        "rather than thousands.",
    ),
    Study(
        "asymmetric",
        "003",
        "Asymmetric communication model for hierarchical Ethernet",
        "003_691d34d3fcf0833d.txt",
        Citation(
            authors="Jun Zhu, Alexey Lastovetsky, Shoukat Ali, Rolf Riesen and Khalid Hasanov",
            title="Asymmetric communication models for resource-constrained hierarchical "
            "ethernet networks",
            venue="Special issue paper, John Wiley & Sons (Concurrency and Computation: "
            "Practice and Experience)",
            year=2014,
            note="The journal's name is the published paper's; the text shows its publisher, "
            "the special issue and the 2014 copyright.",
        ),
        "The paper measured a two-switch cluster of 1 GbE NICs and a 10 GbE backbone (and "
        "Grid'5000). Here the study brings up a two-rack testbed of its own, with deep "
        "queues, MPI and iperf3 over TCP with CUBIC and BBR chosen per socket; or "
        "(asymmetric.network ns3) runs the same trials in ns-3's packet-level TCP.",
        ("csrc/bench/p2p_concurrent.c", "csrc/ns3/asymmetric_ns3.cc"),
    ),
    Study(
        "latency_variation",
        "004",
        "Latency variation versus latency mean, latency injection",
        "004_c25dd7b2cfbfc0d4.txt",
        Citation(
            authors="Robert Underwood, Jason Anderson and Amy Apon",
            title="Measuring Network Latency Variation Impacts to High Performance Computing "
            "Application Performance",
            venue="ICPE '18: ACM/SPEC International Conference on Performance Engineering",
            year=2018,
            doi="10.1145/3184407.3184427",
        ),
        "The paper loaded an InfiniBand cluster and injected latency into the InfiniBand "
        "sends of NAS Parallel Benchmarks. Here loadgen loads the emulated cluster's "
        "TCP links, a TCP-level injector (csrc/injector, preloaded) delays the sends of "
        "proxy applications for NPB FT, CG, MG and LU, and latencies are tens to hundreds "
        "of microseconds instead of one or two.",
        (
            "csrc/bench/tcpping.c",
            "csrc/bench/barrier.c",
            "csrc/injector/README.md",
            "csrc/injector/injector.mk",
            "csrc/injector/nnlat.h",
            "csrc/injector/nnlat_core.c",
            "csrc/injector/nnlat_init.c",
            "csrc/injector/nnlat_mpi.c",
            "csrc/injector/nnlat_smpi.c",
            "csrc/injector/nnlat_smpi.h",
            "csrc/injector/nnlat_smpi_network.cpp",
            "csrc/injector/nnlat_tcp.c",
            "csrc/injector/tests/check.sh",
            "csrc/injector/tests/sendfamily.c",
            "csrc/injector/tests/test_nnlatency.c",
            "csrc/injector/tests/wrapcost.c",
        ),
    ),
)
KEYS = tuple(study.key for study in STUDIES)


def get(key: str) -> Study:
    for study in STUDIES:
        if study.key == key:
            return study
    raise KeyError(f"no study {key!r}; the studies are {', '.join(KEYS)}")


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


def status_lines(root: Path = REPO) -> list[str]:
    """One line per study: in the workflow, or which rule file it lacks."""
    lines = []
    for study in STUDIES:
        rules = root / "workflow" / "rules" / f"{study.key}.smk"
        state = "in the workflow" if rules.is_file() else f"not built yet (no {rules.name})"
        lines.append(f"{study.key:<20} {study.seed}  {state}: {study.title}")
    return lines


def headline_inputs(key: str, results: Path | Sequence[Path], root: Path = REPO) -> dict[str, Path]:
    """Where study ``key``'s ``headline.headline_claims`` reads each argument:
    under a platform's results folder (the first of ``results`` that holds it,
    as a bundle keeps its tables apart from its tidy data), or (``resources/…``)
    in the project's ``root``."""
    roots = [results] if isinstance(results, Path) else list(results)

    def under_results(path: str) -> Path:
        return next((r / path for r in roots if (r / path).is_file()), roots[0] / path)

    inputs = get(key).module("headline").INPUTS
    return {
        argument: root / path if path.startswith("resources/") else under_results(path)
        for argument, path in inputs.items()
    }


def optional_headline_inputs(key: str) -> frozenset[str]:
    """The arguments of study ``key``'s headline claims whose tables a run may
    lack (a part of the study its config disabled)."""
    return getattr(get(key).module("headline"), "OPTIONAL", frozenset())


def judge_headline_claims(key: str, paths: Mapping[str, Path]) -> pd.DataFrame:
    """Study ``key``'s headline claims from the tables at ``paths`` (one per
    argument); an optional table that is absent is passed as None."""
    module = get(key).module("headline")
    tables = {}
    for argument, path in paths.items():
        if Path(path).is_file():
            tables[argument] = pd.read_csv(path)
        elif argument in optional_headline_inputs(key):
            tables[argument] = None
        else:
            raise FileNotFoundError(f"{path}: the {key} study's headline claims need it")
    return module.headline_claims(**tables)


def collect_headline_claims(results: Path | Sequence[Path], root: Path = REPO) -> pd.DataFrame:
    """Every study's headline claims judged from the tables under ``results``
    (one platform's folder, or several as in a bundle); a study whose required
    tables are absent (disabled or skipped) is left out."""
    roots = [results] if isinstance(results, Path) else list(results)
    frames = []
    for key in KEYS:
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
    CPU record, from the first of ``folders`` that holds each."""
    tables = [Path(folder) / "tables" for folder in folders]
    summary = next(
        (t / "claims_summary.csv" for t in tables if (t / "claims_summary.csv").is_file()), None
    )
    cpu = next((t / "cpu_summary.csv" for t in tables if (t / "cpu_summary.csv").is_file()), None)
    claims = pd.read_csv(summary) if summary else collect_headline_claims(list(folders))
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
