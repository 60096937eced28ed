"""The typed config (netnoise.settings): each section type holds the keys its
schema describes, is built from the validated config, and a study's runs see
the platform with the study's overlay, resolved in one place."""

import dataclasses
import typing

import pytest

from netnoise import settings as netnoise_settings
from netnoise import studies
from netnoise.config import ConfigError, load_schema, validate
from netnoise.settings import PlatformSettings, Section, Settings, SettingsError, overlaid

SCHEMA = load_schema()


def _resolved(schema: dict) -> dict:
    """A schema with a reference into its definitions followed."""
    ref = schema.get("$ref", "")
    if ref.startswith("#/$defs/"):
        return {**SCHEMA["$defs"][ref.split("/")[-1]], **schema}
    return schema


def _sections(hint: object) -> list[type]:
    """The section types a field's type names (``X``, ``X | None``, ``dict[str, X]``)."""
    kinds = typing.get_args(hint) or (hint,)
    return [k for k in kinds if isinstance(k, type) and issubclass(k, Section)]


def _mismatches(kind: type, schema: dict, where: str) -> list[str]:
    """Where ``kind`` and its schema name different keys, down every subsection."""
    schema = _resolved(schema)
    names = {field.name for field in dataclasses.fields(kind)}
    keys = set(schema.get("properties", {}))
    found = [] if names == keys else [f"{where}: {sorted(names ^ keys)}"]
    hints = typing.get_type_hints(kind)
    for name in names & keys:
        sub = _resolved(schema["properties"][name])
        if typing.get_origin(hints[name]) is dict:
            sub = _resolved(sub.get("additionalProperties", {}))
        for inner in _sections(hints[name]):
            found += _mismatches(inner, sub, f"{where}.{name}")
    return found


def test_every_section_type_holds_the_keys_its_schema_describes():
    shared = {field.name for field in dataclasses.fields(Settings)}
    assert set(SCHEMA["properties"]) == shared | {study.key for study in studies.STUDIES}
    found = _mismatches(Settings, {"properties": {k: SCHEMA["properties"][k] for k in shared}}, "")
    for study in studies.STUDIES:
        found += _mismatches(study.settings, SCHEMA["properties"][study.key], study.key)
    assert not found


def test_settings_keep_the_mapping_they_were_built_from():
    config = validate({})
    settings = Settings.of(config)
    assert settings.platform.testbed.nodes == config["platform"]["testbed"]["nodes"]
    assert settings.platform.as_config() is config["platform"]
    assert settings.applications["cg_solver"].program == "cg_solver"
    made = netnoise_settings.WaitSettings(mpi="hybrid", probe=None)
    assert made.as_config() == {"mpi": "hybrid", "probe": None}


def test_a_config_that_was_not_validated_is_named_where_it_lacks_a_key():
    with pytest.raises(SettingsError, match=r"platform\.testbed\.nodes is missing"):
        PlatformSettings.of({**validate({})["platform"], "testbed": {"prefix": "nn"}})


def test_a_studys_testbed_lies_over_the_shared_one_where_it_sets_a_value():
    settings = Settings.of(validate({"network_noise": {"benchmark": {"testbed": {
        "nodes": None, "racks": 3, "nic_mbit": 100, "backbone_mbit": 40}}}}))  # fmt: skip
    platform = settings.platform
    before = platform.as_config()["testbed"].copy()
    noise = settings.study(studies.get("network_noise").settings)
    out = settings.effective(noise)
    assert (out.testbed.racks, out.testbed.nic_mbit, out.testbed.backbone_mbit) == (3, 100, 40)
    assert out.testbed.nodes == platform.testbed.nodes  # None keeps the shared one
    assert out.kind == platform.kind and out.simgrid == platform.simgrid
    assert platform.as_config()["testbed"] == before  # the shared platform is left as it was
    # Rule params carry the mapping: its keys keep their order.
    assert list(out.as_config()["testbed"]) == list(before)


def test_a_studys_cpu_limits_replace_the_platforms_where_set():
    platform = Settings.of(validate({})).platform
    tolerant = overlaid(platform, {"cpu": {"tolerated_runnable": 8.5}})
    assert tolerant.cpu.tolerated_runnable == 8.5 and tolerant.cpu.attempts == platform.cpu.attempts
    assert overlaid(platform, {"cpu": {}}) == platform
    settings = Settings.of(validate({"asymmetric": {"cpu": {"attempts": 1}}}))
    asymmetric = settings.study(studies.get("asymmetric").settings)
    assert settings.effective(asymmetric).cpu.attempts == 1
    assert settings.effective(asymmetric).cpu.max_runnable == platform.cpu.max_runnable


@pytest.mark.parametrize("key", ["variability", "impact_compression"])
def test_study_queue_replaces_the_platform_queue_only_where_set(key):
    kind = studies.get(key).settings
    deep = Settings.of(validate({key: {"testbed": {"queue_bytes": 400000}}}))
    assert deep.effective(deep.study(kind)).testbed.queue_bytes == 400000
    shared = Settings.of(validate({}))
    queue = shared.effective(shared.study(kind)).testbed.queue_bytes
    assert queue == shared.platform.testbed.queue_bytes
    with pytest.raises(ConfigError, match="queue_bytes"):
        validate({key: {"testbed": {"queue_bytes": 100}}})


def test_a_study_without_choices_refuses_one():
    settings = Settings.of(validate({}))
    noise = settings.study(studies.get("network_noise").settings)
    with pytest.raises(TypeError, match="choose nothing: congestion"):
        settings.effective(noise, congestion="bbr")


def test_an_interleaved_allocation_spans_every_rack():
    testbed = Settings.of(validate({})).platform.testbed
    two = dataclasses.replace(testbed, racks=2)
    assert two.rack_interleaved_nodes(4) == ["nn-n01", "nn-n05", "nn-n02", "nn-n06"]
    assert sorted(two.rack_interleaved_nodes(8)) == [f"nn-n0{i}" for i in range(1, 9)]
    assert testbed.rack_interleaved_nodes(3) == ["nn-n01", "nn-n02", "nn-n03"]
