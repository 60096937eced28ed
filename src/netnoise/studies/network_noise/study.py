"""Seed 001's study: what it gives the shared machinery (netnoise.study)."""

from __future__ import annotations

from netnoise.studies.network_noise import cli, config, cpu_case, headline, plan
from netnoise.studies.network_noise.netgauge import parse_collvsnoise
from netnoise.studies.network_noise.settings import NetworkNoiseSettings
from netnoise.study import Citation, Claims, Study

STUDY = Study.at_home(
    "network_noise",
    "001",
    title="Network noise benchmark and congestion simulator",
    seed="001_9f0f9ede26bdffbe.txt",
    citation=Citation(
        authors="Torsten Hoefler, Timo Schneider and Andrew Lumsdaine",
        title="The Effect of Network Noise on Large-Scale Collective Communications",
        venue="Parallel Processing Letters",
        year=2009,
        note="The extracted text has no title page: title and authors are the published "
        "paper's; the venue and year are in its page headers.",
    ),
    testbed_changes=(
        "The paper ran its benchmark on InfiniBand fat-trees of up to 492 nodes and a "
        "BlueGene/P torus, and simulated fat-trees and tori of thousands of endpoints. Here "
        "the benchmark runs on the emulated cluster's few nodes behind one switch, and the "
        "quick study simulates smaller topologies (config/paper.yaml has the paper's sizes); "
        "the real fabrics of Fig. 11 are read only from configured ibnetdiscover files."
    ),
    settings=NetworkNoiseSettings,
    checks=config.problems,
    plan=plan.final_files,
    results=plan.REPORT_RESULTS,
    claims=Claims(headline.headline_claims, headline.INPUTS, headline.OPTIONAL),
    cpu_cases=cpu_case.CASES,
    commands=cli.register,
    table_parsers={"netgauge_collvsnoise": parse_collvsnoise},
    programs=("csrc/bench/noise.c",),
)
