"""Study 100's study: what it gives the shared machinery (netnoise.study)."""

from __future__ import annotations

from netnoise.studies.characterise import cli, config, plan
from netnoise.studies.characterise.settings import CharacteriseSettings
from netnoise.study import Citation, Study

STUDY = Study.at_home(
    "characterise",
    "100",
    title="A platform's congestion in GPCNeT's numbers: canaries, congestors, CIF",
    seed=None,
    citation=Citation(
        authors="Sudheer Chunduri, Taylor Groves, Peter Mendygral, Brian Austin, Jacob "
        "Balma, Krishna Kandalla, Kalyan Kumaran, Glenn Lockwood, Scott Parker, Steven "
        "Warren, Nathan Wichmann and Nicholas Wright",
        title="GPCNeT: Designing a Benchmark Suite for Inducing and Measuring Contention "
        "in HPC Networks",
        venue="SC '19: International Conference for High Performance Computing, "
        "Networking, Storage and Analysis",
        year=2019,
        doi="10.1145/3295500.3356215",
        note="Not one of the seeds: the method this study follows, beyond the five papers.",
    ),
    testbed_changes=(
        "GPCNeT runs on a production system's nodes and fabric (Aries, Slingshot, "
        "InfiniBand). Here its canaries and congestors (csrc/bench/characterise.c, our "
        "own implementation of its design) run one rank per emulated node over TCP on "
        "shaped links, racks joined by a backbone, with tens of nodes rather than "
        "thousands; the CIF is GPCNeT's, its interval taken over rounds."
    ),
    settings=CharacteriseSettings,
    checks=config.problems,
    plan=plan.final_files,
    results=plan.REPORT_RESULTS,
    claims=None,
    commands=cli.register,
    programs=("csrc/bench/characterise.c",),
)
