from __future__ import annotations

import copy

import pytest
import yaml

from netnoise.config import ConfigError, load, load_schema, validate
from tests.conftest import REPO, quick_study_with, snakemake

# The studies a SimGrid config must leave to the testbed (co-runs, counters, TCP).
_OFF_SIMGRID = {
    key: {"enabled": False} for key in ("impact_compression", "variability", "asymmetric")
}


def walk_keys(schema, path=""):
    for name, sub in schema.get("properties", {}).items():
        key = f"{path}.{name}" if path else name
        yield key, sub
        yield from walk_keys(sub, key)


def test_every_schema_key_has_description_and_default():
    schema = load_schema()
    keys = list(walk_keys(schema))
    assert keys
    for key, sub in keys:
        assert sub.get("description"), f"{key} has no description"
        assert "default" in sub, f"{key} has no default"


def test_empty_config_gets_every_default():
    config = validate({})
    assert config["platform"]["kind"] == "testbed"
    assert config["platform"]["testbed"]["nodes"] == 8
    assert config["platform"]["slurm"]["launcher"] == "srun --mpi=pmix"
    assert config["baseline"]["sizes"] == [8, 1024, 65536]


@pytest.mark.parametrize("name", ["config.yaml", "paper.yaml"])
def test_shipped_configs_are_valid(name):
    load(REPO / "config" / name)


def test_real_application_recipes_merge_into_a_study_config():
    apps = quick_study_with("real-applications.yaml")["applications"]
    assert {"halo3d", "lulesh", "npb_cg"} <= set(apps)
    assert apps["lulesh"]["figure_of_merit"]["unit"] == "z/s"


@pytest.mark.parametrize("overlay", ["testbed-bundle.yaml", "testbed-full.yaml"])
def test_testbed_overlays_merge_into_a_valid_study(overlay):
    assert quick_study_with(overlay)["platform"]["kind"] == "testbed"


BAD = [
    (
        {"platform": {"kind": "cloud"}},
        "platform.kind: 'cloud' is not allowed; allowed values: 'testbed', 'localhost', "
        "'slurm', 'simgrid'",
    ),
    (
        {"platform": {"mpirun": "mpirun; rm -rf /"}},
        "platform.mpirun: 'mpirun; rm -rf /' does not match",
    ),
    (
        {"platform": {"mpirun_args": ["--mca", "a b"]}},
        "platform.mpirun_args.1: 'a b' does not match",
    ),
    ({"platform": {"timeout_s": 0}}, "platform.timeout_s: 0 is out of range; must be >= 1"),
    ({"platform": {"testbed": {"prefix": "bad-prefix"}}}, "platform.testbed.prefix: 'bad-prefix'"),
    (
        {"platform": {"testbed": {"cores": "half"}}},
        "platform.testbed.cores: 'half' is not allowed; allowed values: 'shared', 'per_job'",
    ),
    (
        {"platform": {"testbed": {"nodes": 1}}},
        "platform.testbed.nodes: 1 is out of range; must be >= 2",
    ),
    (
        {"platform": {"testbed": {"tcp_congestion": "vegas"}}},
        "platform.testbed.tcp_congestion: 'vegas' is not allowed; allowed values: 'default'",
    ),
    (
        {"network_noise": {"benchmark": {"testbed": {"tcp_rto_min_ms": 0.2}}}},
        "network_noise.benchmark.testbed.tcp_rto_min_ms: 0.2 is out of range; must be >= 1",
    ),
    ({"baseline": {"ranks": 3}}, "baseline.ranks: 3 is not a multiple of 2"),
    ({"baseline": {"sizes": []}}, "baseline.sizes: []"),
    ({"baseline": {"sizes": [8, 8]}}, "baseline.sizes: [8, 8]"),
    ({"baseline": {"iterations": "many"}}, "baseline.iterations: 'many' has the wrong type"),
    ({"build": {"cflags": "-O2 `id`"}}, "build.cflags: '-O2 `id`' does not match"),
    ({"latency_variation": {"nodes": 3}}, "latency_variation.nodes: 3 is not a multiple of 2"),
    (
        {"latency_variation": {"characterize": {"load_size": 65536}}},
        "latency_variation.characterize.load_size: 65536 is out of range; must be <= 32768",
    ),
    (
        {"latency_variation": {"injection": {"levels": [0, 30]}}},
        "latency_variation.injection.levels: 30 is not one of "
        "latency_variation.characterize.levels ([0, 20, 40, 70, 100])",
    ),
    (
        {"latency_variation": {"injection": {"barrier_nodes": 6}}},
        "latency_variation.injection.barrier_nodes: 6 is more than latency_variation.nodes (4)",
    ),
    (
        {"latency_variation": {"injection": {"fixed_mean_levels": [20, 70]}}},
        "latency_variation.injection.fixed_mean_levels: 70 is not one of "
        "latency_variation.injection.levels ([0, 20, 40])",
    ),
    (
        {
            "latency_variation": {
                "characterize": {"levels": [20, 40]},
                "injection": {"levels": [20, 40]},
            }
        },
        "latency_variation.characterize.levels: must include 0",
    ),
    (
        {"latency_variation": {"injection": {"applications": ["npb_is"]}}},
        "latency_variation.injection.applications: 'npb_is' is not defined in applications",
    ),
    (
        {"platform": {"kind": "localhost"}},
        "latency_variation.characterize.link_mbit: null only works on the testbed",
    ),
    (
        {
            "platform": {"kind": "localhost"},
            "impact_compression": {"compression": {"offered_loads": [0.5, 1.0]}},
        },
        "impact_compression.compression.link_mbit: null only works on the testbed",
    ),
    (
        {"platform": {"testbed": {"nodes": 2}}, "impact_compression": {"enabled": False}},
        "latency_variation.nodes: 4 exceeds the platform's 2 nodes",
    ),
    (
        {"latency_variation": {"injection": {"wait": "yield"}}},
        "latency_variation.injection.wait: 'yield' is not allowed; allowed values: 'sleep', 'spin'",
    ),
    (
        {"applications": {"lulesh": {"program": "halo3d", "source": "lulesh.tar.gz"}}},
        "applications.lulesh: source belong to a real application, but 'program' names",
    ),
    (
        {"applications": {"lulesh": {"source": "lulesh.tar.gz", "build": "make"}}},
        "applications.lulesh: needs 'program' (a csrc program) or all of source, build and "
        "binary (missing: binary)",
    ),
    (
        {
            "applications": {
                "lulesh": {
                    "source": "l.tar.gz",
                    "build": "make",
                    "binary": "lulesh2.0",
                    "figure_of_merit": {"pattern": "FOM = [0-9.]+"},
                }
            }
        },
        "applications.lulesh.figure_of_merit.pattern: 'FOM = [0-9.]+' has no group",
    ),
    (
        {
            "network_noise": {
                "benchmark": {"nodes": 8, "ratios": [0.25, 0.375], "netgauge": {"source": "ng"}}
            }
        },
        "network_noise.benchmark.ratios: application communicator sizes [5, 6] (of 8 ranks) "
        "mix odd and even, but Netgauge steps the size by 2",
    ),
    (
        {"network_noise": {"benchmark": {"application_ranks": 4, "ratios": [0.5, 0.75]}}},
        "network_noise.benchmark.application_ranks: 4 ranks at ratio 0.75 need 12 perturbing "
        "rank(s) beside them; allowed are 0 or 2 to 4 (network_noise.benchmark.nodes: 8)",
    ),
    (
        {"network_noise": {"benchmark": {"application_ranks": 9, "ratios": [0.5]}}},
        "network_noise.benchmark.application_ranks: 9 exceeds network_noise.benchmark.nodes (8)",
    ),
    (
        {"network_noise": {"benchmark": {"application_ranks": 4, "ratios": [0.2]}}},
        "network_noise.benchmark.application_ranks: 4 ranks at ratio 0.2 need 1 perturbing",
    ),
    (
        {
            "network_noise": {
                "benchmark": {
                    "application_ranks": 4,
                    "ratios": [0.5],
                    "netgauge": {"source": "ng"},
                }
            }
        },
        "network_noise.benchmark.application_ranks: Netgauge's collvsnoise splits the whole "
        "allocation; set it to null to run network_noise.benchmark.netgauge",
    ),
    (
        {"colour": "red"},
        "(top level): unknown key(s) colour; allowed keys: applications,",
    ),
    (
        {"platform": {"kind": "simgrid"}, **_OFF_SIMGRID},
        "latency_variation.characterize.from_bundle: null measures latency under load here, "
        "but on platform.kind simgrid each launch is a simulation of its own",
    ),
    (
        {
            "platform": {"kind": "simgrid"},
            **_OFF_SIMGRID,
            "latency_variation": {
                "characterize": {"from_bundle": "resources/cache/quick-testbed.tar.gz"},
                "injection": {"injector_level": "tcp"},
            },
        },
        "latency_variation.injection.injector_level: tcp delays a rank's TCP sends, but on "
        "platform.kind simgrid no message crosses a socket",
    ),
    (
        {
            "platform": {"kind": "simgrid", "simgrid": {"network_model": "packet"}},
            **_OFF_SIMGRID,
            "latency_variation": {
                "characterize": {"from_bundle": "resources/cache/quick-testbed.tar.gz"}
            },
        },
        "platform.simgrid.network_model: packet (ns-3) takes no latency callback",
    ),
    (
        {"latency_variation": {"characterize": {"from_bundle": "no/such/bundle.tar.gz"}}},
        "latency_variation.characterize.from_bundle: 'no/such/bundle.tar.gz' is not a regular file",
    ),
]


@pytest.mark.parametrize(("config", "message"), BAD)
def test_bad_values_name_key_value_and_allowed(config, message):
    with pytest.raises(ConfigError) as err:
        validate(copy.deepcopy(config))
    assert message in str(err.value)
    assert "\n" not in str(err.value), "the error must be one paragraph"


def test_workflow_stops_before_any_job_on_bad_config(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"platform": {"kind": "cloud"}, "baseline": {"ranks": 5}}))
    out = snakemake("-n", "--configfile", str(bad))
    assert out.returncode != 0
    text = out.stdout + out.stderr
    assert (
        "platform.kind: 'cloud' is not allowed; allowed values: 'testbed', 'localhost', "
        "'slurm', 'simgrid'" in text
    )
    assert "baseline.ranks: 5 is not a multiple of 2" in text
    assert "rule " not in text  # no job was scheduled


def test_a_token_bucket_that_cannot_pass_a_frame_is_named_before_anything_runs():
    with pytest.raises(
        ConfigError,
        match=r"platform\.testbed: burst_bytes \(3028\) .*mtu_bytes \(9000\).*at least 9014",
    ):
        validate({"platform": {"testbed": {"burst_bytes": 3028, "mtu_bytes": 9000}}})
    # The noise benchmark's jumbo frames need the platform's burst to hold one.
    with pytest.raises(
        ConfigError,
        match=r"network_noise\.benchmark\.testbed over platform\.testbed: burst_bytes \(4000\)",
    ):
        validate({"platform": {"testbed": {"burst_bytes": 4000}}})
    benchmark = validate({})["network_noise"]["benchmark"]
    assert benchmark["testbed"]["mtu_bytes"] == 9000
    assert validate(
        {
            "platform": {"testbed": {"burst_bytes": 4000}},
            "network_noise": {"benchmark": {"testbed": {"mtu_bytes": 1500}}},
        }
    )


@pytest.mark.parametrize(
    "base, overlay",
    [
        ({}, {"a": 1}),
        ({"a": {"b": 1, "c": 2}}, {"a": {"c": 3, "d": {"e": 4}}}),
        ({"a": 1}, {"a": {"b": 2}}),
        ({"a": 1}, {"a": {}}),
        ({"a": {"b": 1}}, {"a": 2}),
        ({"a": {"b": [1, 2]}}, {"a": {"b": [3]}}),
        ({"a": {"b": {"c": 1}}}, {"a": {"b": None}}),
    ],
)
def test_configfiles_merge_as_snakemake_merges_them(base, overlay):
    from snakemake.utils import update_config

    from netnoise.config import merge_like_snakemake

    expected = copy.deepcopy(base)
    update_config(expected, copy.deepcopy(overlay))
    assert merge_like_snakemake(copy.deepcopy(base), copy.deepcopy(overlay)) == expected
