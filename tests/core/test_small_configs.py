"""Every small config of ``.test/`` plans its slice (a dry run): each study's
``.test/<key>/`` plans that study's measurements and no other's, the default
``.test/config/`` the platform's baseline alone, and ``.test/slurm/`` every
study through the Slurm profile. The default one also runs for real
(``tests/conftest.py: platform_run``), the Slurm one on the testbed's Slurm
cluster (``tests/core/test_slurm.py``)."""

import pytest
import yaml

from netnoise import studies
from netnoise.config import validate
from tests.conftest import DEFAULT_SLICE, REPO, small_config, snakemake

#: A measurement rule each study's slice must plan.
MEASURES = {
    "impact_compression": "measure_impact_of_compression",
    "network_noise": "simulate_network_noise",
    "variability": "measure_variability_runs",
    "asymmetric": "measure_asymmetric_random",
    "latency_variation": "measure_injected_latency",
    "characterise": "measure_characterise",
}


def test_every_study_has_a_small_config():
    assert set(MEASURES) == set(studies.KEYS)
    for key in studies.KEYS:
        config = validate(yaml.safe_load((REPO / ".test" / key / "config.yaml").read_text()))
        assert config[key]["enabled"], f".test/{key} leaves its study out"


@pytest.mark.parametrize("key", sorted(MEASURES))
def test_small_config_plans_its_study(key, tmp_path):
    small_config(key, tmp_path)
    out = snakemake("-n", "--forceall", "--directory", str(tmp_path), cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    assert MEASURES[key] in out.stdout
    others = [rule for other, rule in MEASURES.items() if other != key and rule in out.stdout]
    assert not others, f".test/{key} also runs {others}"


def test_every_folder_of_dot_test_is_a_slice_a_test_plans():
    # (What `snakemake --directory .test` leaves there is no slice.)
    folders = {
        p.name
        for p in (REPO / ".test").iterdir()
        if p.is_dir() and not p.name.startswith(".") and p.name != "results"
    }
    assert folders == {*MEASURES, DEFAULT_SLICE, "slurm"}


def test_default_config_plans_the_baseline_alone(tmp_path):
    small_config(DEFAULT_SLICE, tmp_path)
    out = snakemake("-n", "--forceall", "--directory", str(tmp_path), cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "measure_baseline_latency" in out.stdout
    assert not [rule for rule in MEASURES.values() if rule in out.stdout]


def test_slurm_config_plans_every_study_through_the_profile(tmp_path):
    config = small_config("slurm", tmp_path)
    profile = REPO / "profiles" / "slurm"
    out = snakemake(
        "-n", "--forceall", "--profile", str(profile), "--directory", str(tmp_path), cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr[-3000:]
    # Study 100 needs 10 nodes (GPCNeT's least); the rig's cluster has 8.
    assert config["characterise"] == {"enabled": False}
    planned = [rule for key, rule in MEASURES.items() if key != "characterise"]
    assert [rule for rule in planned if rule not in out.stdout] == []
