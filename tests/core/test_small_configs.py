"""Every study has a small config in ``.test/<key>/``: valid on its own, and
planning the study's measurements (the tests' and CI's slice of the study)."""

import pytest
import yaml

from netnoise import studies
from netnoise.config import validate
from tests.conftest import REPO, small_config, snakemake

#: A measurement rule each study's slice must plan.
MEASURES = {
    "impact_compression": "measure_impact_of_compression",
    "network_noise": "simulate_network_noise",
    "variability": "measure_variability_runs",
    "asymmetric": "measure_asymmetric_random",
    "latency_variation": "measure_injected_latency",
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
