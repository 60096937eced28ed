"""Seed 004's study: what it gives the shared machinery (netnoise.study)."""

from __future__ import annotations

from netnoise.studies.latency_variation import bench, config, cpu_case, headline, plan
from netnoise.studies.latency_variation.settings import LatencyVariationSettings
from netnoise.study import Citation, Claims, Study

STUDY = Study.at_home(
    "latency_variation",
    "004",
    title="Latency variation versus latency mean, latency injection",
    seed="004_c25dd7b2cfbfc0d4.txt",
    citation=Citation(
        authors="Robert Underwood, Jason Anderson and Amy Apon",
        title="Measuring Network Latency Variation Impacts to High Performance Computing "
        "Application Performance",
        venue="ICPE '18: ACM/SPEC International Conference on Performance Engineering",
        year=2018,
        doi="10.1145/3184407.3184427",
    ),
    testbed_changes=(
        "The paper loaded an InfiniBand cluster and injected latency into the InfiniBand "
        "sends of NAS Parallel Benchmarks. Here loadgen loads the emulated cluster's "
        "TCP links, a TCP-level injector (csrc/injector, preloaded) delays the sends of "
        "proxy applications for NPB FT, CG, MG and LU, and latencies are tens to hundreds "
        "of microseconds instead of one or two."
    ),
    settings=LatencyVariationSettings,
    checks=config.problems,
    plan=plan.final_files,
    results=plan.REPORT_RESULTS,
    claims=Claims(headline.headline_claims, headline.INPUTS),
    cpu_cases=cpu_case.CASES,
    benches=bench.register,
    programs=(
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
)
