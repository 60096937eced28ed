"""Study 100 on its 10-node, 2-rack testbed: the canaries' CIF is about 1 with
the congestors off and above 1 with them on, the CPU-only control (the
canaries apart from the congestors' links) measured beside them, and the
verdict between the two drawn from their intervals."""

from __future__ import annotations

import os

import pytest

from netnoise.config import validate
from netnoise.io import read_benchmark, read_tidy
from netnoise.platform.testbed import TestbedPlatform
from netnoise.run import run_benchmark
from netnoise.settings import Settings
from netnoise.studies.characterise import cif, plan
from netnoise.studies.characterise.settings import CharacteriseSettings
from tests.conftest import UNJUDGED_CPU


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root")
def test_the_congestors_slow_the_small_messages_beside_a_cpu_only_control(built_programs, tmp_path):
    config = validate(
        {
            "platform": {"testbed": {"prefix": "nch"}, "cpu": UNJUDGED_CPU},
            "characterise": {
                "seed": 100,
                "rounds": 5,
                "rings": 2,
                "latency_iterations": 200,
                "allreduce_iterations": 200,
                "bandwidth_iterations": 2,
                "bandwidth_bytes": 32768,
                "congestors": ["all", "none", plan.APART],
            },
        }
    )
    settings = Settings.of(config)
    study = settings.study(CharacteriseSettings)
    effective = settings.effective(study)
    platform = TestbedPlatform(effective)
    nodes = {c: plan.run_nodes(effective, c, study.nodes) for c in study.congestors}
    results = []
    try:
        platform.check()
        for congestor in study.congestors:
            output = tmp_path / f"{congestor}.csv"
            run_benchmark(
                platform,
                [str(built_programs / "characterise"), *plan.program_args(study, congestor)],
                ranks=study.nodes,
                output=output,
                log=tmp_path / f"{congestor}.log",
                timeout_s=300,
                nodes=nodes[congestor],
                env={"OMPI_MCA_osc": "^rdma"},
            )
            results.append(output)
    finally:
        platform.testbed.down()
    # The seed puts the two canaries in different racks: their exchanges cross
    # the backbone the congestors load. Apart, both are in the first rack.
    rack_of = {node.name: node.rack for node in platform.testbed.spec.node_list()}

    def canary_racks(congestor: str, result) -> set[int]:
        ranks = read_benchmark(result).meta["canary_ranks"].split()
        return {rack_of[nodes[congestor][int(rank)]] for rank in ranks}

    assert canary_racks("all", results[0]) == {1, 2}
    assert canary_racks(plan.APART, results[2]) == {1}
    # The seed also sends the all-to-all pair across the backbone, below a node
    # link: the one pattern whose two ranks both send.
    groups = dict(g.split(":") for g in read_benchmark(results[0]).meta["groups"].split())
    a2a_pair = [nodes["all"][int(rank)] for rank in groups["a2a"].split(",")]
    assert {rack_of[node] for node in a2a_pair} == {1, 2}
    tidy = read_tidy([str(p) for p in results], congestor=list(study.congestors))
    table = cif.impact_table(tidy).set_index(["congestor", "canary", "statistic"])
    # Five short rounds: the idle control is 1 within a factor of 2.
    for canary in cif.CANARIES:
        idle = table.loc[("none", canary, "average")]
        assert 0.5 < idle["cif"] < 2, (canary, idle.to_dict())
    # Beside the congestors the small messages take longer: through the shared
    # cores and the backbone alike.
    for canary in ("latency", "allreduce"):
        loaded = table.loc[("all", canary, "average")]
        assert loaded["cif_ci_low"] > 1.1, (canary, loaded.to_dict())
        assert loaded["cif"] > table.loc[("none", canary, "average"), "cif_ci_high"]
    # The control: the same congestors on the same cores, off the canaries'
    # links. Its share of the small messages' factor depends on the host's load,
    # so the run measures it and the verdict is what the intervals give; the
    # canaries' bulk flows, which wait on the link and not on a core, lose
    # bandwidth beside the congestors alone.
    control = table.xs(plan.APART, level="congestor")
    assert len(control) == 2 * len(cif.CANARIES)
    assert (control["rounds"] == 5).all()
    assert (control["cif_ci_low"] < control["cif_ci_high"]).all()
    judged = table.xs("all", level="congestor")
    assert judged["beyond_cpu_control"].map(type).eq(bool).all(), judged
    assert judged["beyond_cpu_control"].eq(judged["cif_ci_low"] > control["cif_ci_high"]).all()
    bandwidth = ("bandwidth", "average")
    assert judged.loc[bandwidth, "cif"] > control.loc[bandwidth, "cif_ci_high"], (
        judged.loc[bandwidth].to_dict(),
        control.loc[bandwidth].to_dict(),
    )
    offered = cif.offered_load_table(tidy)
    assert set(offered["pattern"]) == {"a2a", "incast", "put_incast", "get_bcast"}
    # What each pattern offers is measured, not assumed; every one moves data.
    assert set(offered["congestor"]) == {"all", plan.APART}
    assert (offered["mibps_per_rank"] > 0.1).all(), offered
