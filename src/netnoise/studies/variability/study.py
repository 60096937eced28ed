"""Seed 002's study: what it gives the shared machinery (netnoise.study)."""

from __future__ import annotations

from netnoise.studies.variability import cli, config, cpu_case, headline, plan
from netnoise.studies.variability.settings import VariabilitySettings
from netnoise.study import Citation, Claims, Study

STUDY = Study.at_home(
    "variability",
    "002",
    title="Counter-based model of network-induced variability",
    seed="002_9ff0e74a68d20027.txt",
    citation=Citation(
        authors="Sudheer Chunduri, Elise Jennings, Kevin Harms, Christopher Knight "
        "and Scott Parker",
        title="A generalized statistics-based model for predicting network-induced variability",
        venue=None,
        year=None,
        note="Argonne National Laboratory; the paper cites the June 2019 TOP500 list, so "
        "it dates from 2019 or later.",
    ),
    testbed_changes=(
        "The paper read Aries network counters of a Cray XC40 (dragonfly) under production "
        "load. Here a production-like campaign runs proxy applications with a seeded random "
        "background per run on a two-rack testbed, and queue-discipline and link counters "
        "stand for the Aries flit and stall counters; runs are seconds long and hundreds "
        "rather than thousands."
    ),
    settings=VariabilitySettings,
    checks=config.problems,
    plan=plan.final_files,
    results=plan.REPORT_RESULTS,
    claims=Claims(headline.headline_claims, headline.INPUTS),
    cpu_cases=cpu_case.CASES,
    commands=cli.register,
)
