"""Study 100 on a 10-node, 2-rack testbed: the canaries' CIF is about 1 with
the congestors off, above 1 with them on, and the CPU-only control (the
canaries apart from the congestors' links) measured beside them."""

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
                "seed": 82,
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
                [
                    str(built_programs / "characterise"),
                    *plan.program_args(study, congestor, platform),
                ],
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
    tidy = read_tidy([str(p) for p in results], congestor=list(study.congestors))
    table = cif.impact_table(tidy).set_index(["congestor", "canary", "statistic"])
    # Five short rounds on a loaded machine: the idle control is 1 within a
    # factor of 2, and the congestors' factor is beyond the control's.
    for canary in cif.CANARIES:
        idle = table.loc[("none", canary, "average")]
        assert 0.5 < idle["cif"] < 2, (canary, idle.to_dict())
    # The small messages queue behind the congestors' at the backbone; a canary's
    # bulk flow is held by its own link, so its bandwidth is no better beside them.
    for canary in ("latency", "allreduce"):
        loaded = table.loc[("all", canary, "average")]
        assert loaded["cif_ci_low"] > 1.1, (canary, loaded.to_dict())
        assert loaded["cif"] > table.loc[("none", canary, "average"), "cif_ci_high"]
    # The same congestors on the same cores, off the canaries' links: how much
    # of the factor is the cores' depends on the machine's load, so the run
    # measures it and says, per canary, whether the network's factor is beyond.
    control = table.xs(plan.APART, level="congestor")
    assert len(control) == 2 * len(cif.CANARIES)
    assert (control["cif_ci_low"] > 0).all() and (control["rounds"] == 5).all()
    judged = table.xs("all", level="congestor")["beyond_cpu_control"]
    assert judged.map(type).eq(bool).all(), judged
    assert table.loc[("all", "bandwidth", "average"), "cif"] > 0.8
    offered = cif.offered_load_table(tidy)
    assert set(offered["pattern"]) == {"a2a", "incast", "put_incast", "get_bcast"}
    # What each pattern offers is measured, not assumed: the all-to-all loads the
    # backbone; the others may offer far less over TCP.
    assert set(offered["congestor"]) == {"all", plan.APART}
    assert (offered["mibps_per_rank"] >= 0).all()
    assert (offered.set_index("pattern").loc["a2a", "mibps_per_rank"] > 1).all()
