"""Seed 000's study: what it gives the shared machinery (netnoise.study)."""

from __future__ import annotations

from netnoise.studies.impact_compression import config, cpu_case, headline, plan
from netnoise.studies.impact_compression.settings import ImpactCompressionSettings
from netnoise.study import Citation, Claims, Study

STUDY = Study.at_home(
    "impact_compression",
    "000",
    title="Impact and Compression experiments, pairwise slowdown predictions",
    seed="000_7009c5ae4db82585.txt",
    citation=Citation(
        authors="Marc Casas and Greg Bronevetsky",
        title="Active Measurement of the Impact of Network Switch Utilization on "
        "Application Performance",
        venue="IEEE International Parallel and Distributed Processing Symposium (IPDPS)",
        year=2014,
        doi="10.1109/IPDPS.2014.28",
        note="The extracted text starts at the abstract: title, authors, venue, year and "
        "DOI are the published paper's.",
    ),
    testbed_changes=(
        "The paper probed one InfiniBand switch of LLNL's Cab cluster beside six HPC "
        "applications. Here four proxy applications (csrc/apps) share one emulated switch, "
        "MPI over TCP: latencies are hundreds of microseconds instead of about one, and the "
        "applications differ, so Table I and the predictors' errors are compared by their "
        "structure and spread, not value by value. Its links queue deeply, so that, as on "
        "InfiniBand, a busy link delays packets rather than dropping them (a dropped "
        "message costs a TCP retransmission timeout)."
    ),
    settings=ImpactCompressionSettings,
    checks=config.problems,
    plan=plan.final_files,
    results=plan.REPORT_RESULTS,
    claims=Claims(headline.headline_claims, headline.INPUTS),
    cpu_cases=cpu_case.CASES,
    programs=("csrc/bench/impactb.c",),
)
