"""Seed 003's study: what it gives the shared machinery (netnoise.study)."""

from __future__ import annotations

from netnoise.studies.asymmetric import cli, config, cpu_case, headline, plan
from netnoise.studies.asymmetric.settings import AsymmetricSettings
from netnoise.study import Citation, Claims, Study

STUDY = Study.at_home(
    "asymmetric",
    "003",
    title="Asymmetric communication model for hierarchical Ethernet",
    seed="003_691d34d3fcf0833d.txt",
    citation=Citation(
        authors="Jun Zhu, Alexey Lastovetsky, Shoukat Ali, Rolf Riesen and Khalid Hasanov",
        title="Asymmetric communication models for resource-constrained hierarchical "
        "ethernet networks",
        venue="Special issue paper, John Wiley & Sons (Concurrency and Computation: "
        "Practice and Experience)",
        year=2014,
        note="The journal's name is the published paper's; the text shows its publisher, "
        "the special issue and the 2014 copyright.",
    ),
    testbed_changes=(
        "The paper measured a two-switch cluster of 1 GbE NICs and a 10 GbE backbone (and "
        "Grid'5000). Here the study brings up a two-rack testbed of its own, with deep "
        "queues, MPI and iperf3 over TCP with CUBIC and BBR chosen per socket; or "
        "(asymmetric.network ns3) runs the same trials in ns-3's packet-level TCP."
    ),
    settings=AsymmetricSettings,
    checks=config.problems,
    plan=plan.final_files,
    results=plan.REPORT_RESULTS,
    claims=Claims(headline.headline_claims, headline.INPUTS),
    cpu_cases=cpu_case.CASES,
    commands=cli.register,
    programs=("csrc/bench/p2p_concurrent.c", "csrc/ns3/asymmetric_ns3.cc"),
)
