"""Config values that validated and then hung, exhausted memory or changed on
the way: every count, duration and interval has bounds (with their reason in
the schema), node and rank counts fit the platform, a number YAML 1.1 and 1.2
read differently is refused, and an empty file is refused as Snakemake
refuses it. The platform alone is checked where only the platform is used."""

from __future__ import annotations

import copy

import pytest
import yaml
from snakemake.common.configfile import load_configfile
from snakemake_interface_common.exceptions import WorkflowError

from netnoise import config
from netnoise.cli import main


def _numbers(node, path=()):
    """(key path, schema) of every integer or number a config may hold, with
    '[]' for an item of a list."""
    if not isinstance(node, dict):
        return
    kinds = node.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    refs = [part.get("$ref") for part in node.get("allOf", []) if isinstance(part, dict)]
    positive = node.get("$ref") == "#/$defs/positive_int" or "#/$defs/positive_int" in refs
    if positive or {"integer", "number"} & set(kinds):
        yield path, node
    for name, sub in node.get("properties", {}).items():
        yield from _numbers(sub, (*path, name))
    if isinstance(node.get("items"), dict):
        yield from _numbers(node["items"], (*path, "[]"))


SCHEMA = config.load_schema()
NUMBERS = {".".join(path): node for path, node in _numbers(SCHEMA)}


def test_the_family_is_the_schemas_every_number():
    assert len(NUMBERS) > 150
    assert "variability.runs" in NUMBERS and "baseline.ranks" in NUMBERS


def _maximum(node) -> float | None:
    for part in (node, *node.get("anyOf", [])):
        if "maximum" in part or "exclusiveMaximum" in part:
            return part.get("maximum", part.get("exclusiveMaximum"))
    return None


@pytest.mark.parametrize("key", sorted(NUMBERS))
def test_every_count_duration_and_interval_has_an_upper_bound(key):
    node = NUMBERS[key]
    assert "enum" in node or _maximum(node) is not None, f"{key} has no maximum"


def _config_with(key: str, value) -> dict:
    """A config holding ``value`` at ``key`` (a list of one where the key path
    goes through '[]')."""
    parts = key.split(".")
    built: object = value
    for part in reversed(parts):
        built = [built] if part == "[]" else {part: built}
    # The list of a list-of-lists key needs its other items to be valid too.
    return built  # type: ignore[return-value]


def _beyond(node) -> float:
    maximum = _maximum(node)
    kinds = node.get("type")
    integer = "integer" in (kinds if isinstance(kinds, list) else [kinds]) or "allOf" in node
    beyond = maximum * 10 + 1
    return int(beyond) if integer else float(beyond)


@pytest.mark.parametrize("key", sorted(k for k in NUMBERS if "enum" not in NUMBERS[k]))
def test_a_value_beyond_its_bound_is_refused_naming_the_key(key):
    value = _beyond(NUMBERS[key])
    given = _config_with(key, value)
    with pytest.raises(config.ConfigError) as err:
        config.validate(copy.deepcopy(given))
    message = str(err.value)
    # The key is named with its list indices ("a.0.1" for "a.[].[]").
    assert key.replace("[]", "0").split(".")[0] in message
    assert "out of range" in message or "exceeds" in message, message


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("variability.runs", 100_000_000),
        ("variability.counter_interval_s", 1e300),
        ("variability.counter_interval_s", 1e-300),
        ("variability.counter_interval_s", 0.001),
        ("latency_variation.characterize.duration_s", 1e-300),
        ("platform.simgrid.link_gbit", 1e-300),
        ("asymmetric.ns3.nic_mbit", 1e-9),
        ("asymmetric.properties.message_mb", 1e-300),
        ("baseline.repetitions", 10**9),
        ("network_noise.seed", 2**31),
    ],
)
def test_values_that_validated_and_then_hung_or_ran_out_of_memory_are_refused(key, value):
    with pytest.raises(config.ConfigError, match=key.replace(".", r"\.")):
        config.validate(_config_with(key, value))


@pytest.mark.parametrize("interval", [0, 0.01, 0.1, 60, 3600])
def test_the_counter_interval_takes_zero_or_a_readable_interval(interval):
    assert config.validate(_config_with("variability.counter_interval_s", interval))


# Node and rank counts against the platform the config names.
@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"platform": {"testbed": {"nodes": 8}}, "baseline": {"ranks": 5000}}, "5000 exceeds"),
        ({"platform": {"testbed": {"nodes": 8}}, "baseline": {"ranks": 10}}, "10 exceeds"),
        ({"platform": {"testbed": {"nodes": 2}}, "baseline": {"ranks": 4}}, "4 exceeds"),
        (
            {
                "platform": {"kind": "slurm", "slurm": {"nodes": 2, "tasks_per_node": 1}},
                "baseline": {"ranks": 4},
            },
            "baseline.ranks: 4 exceeds the platform's 2 nodes",
        ),
        (
            {
                "platform": {"kind": "slurm", "slurm": {"nodes": 3, "tasks_per_node": 2}},
                "baseline": {"ranks": 8},
            },
            "baseline.ranks: 8 exceeds the platform's 3 nodes",
        ),
    ],
)
def test_ranks_beyond_the_platforms_nodes_are_refused(given, message):
    with pytest.raises(config.ConfigError, match=r"baseline\.ranks") as err:
        config.validate(given)
    assert message in str(err.value)


def test_ranks_within_the_platforms_nodes_pass():
    assert config.validate({"platform": {"testbed": {"nodes": 8}}, "baseline": {"ranks": 8}})


# Plain scalars that YAML 1.1 (PyYAML, Snakemake's reader) takes for octal or
# base-60 numbers, where YAML 1.2 does not: refused wherever they stand.
YAML11 = ["010", "-017", "+07", "0_7", "00", "15:00", "1:30:00", "-1:30", "190:20:30.15", "1:05.5"]
PLACES = {
    "a count": "variability:\n  runs: {}\n",
    "a duration": "platform:\n  timeout_s: {}\n",
    "a list item": "baseline:\n  sizes: [8, {}]\n",
    "a block list item": "baseline:\n  sizes:\n    - 8\n    - {}\n",
    "a text value": "platform:\n  testbed:\n    prefix: {}\n",
    "a key": "applications:\n  {}: {{program: pingpong}}\n",
}


@pytest.mark.parametrize("text", YAML11)
@pytest.mark.parametrize("place", sorted(PLACES))
def test_a_number_yaml_versions_read_differently_is_refused_naming_key_and_line(
    tmp_path, place, text
):
    path = tmp_path / "c.yaml"
    path.write_text(PLACES[place].format(text))
    with pytest.raises(config.ConfigError) as err:
        config.read_yaml(path)
    message = str(err.value)
    assert f"{path}:" in message and "YAML 1.1" in message
    key = {"a key": "applications", "a text value": "platform.testbed.prefix"}.get(place)
    assert (key or PLACES[place].split(":")[0]) in message
    # Quoted, it is the text it reads as to every reader.
    path.write_text(PLACES[place].format(f'"{text}"'))
    assert config.read_yaml(path)


@pytest.mark.parametrize("text", ["1e8", "1.5e3", "2E-3", ".5e1"])
def test_an_exponent_yaml_1_1_reads_as_text_says_how_to_write_it(text):
    given = yaml.safe_load(f"variability: {{runs: {text}, counter_interval_s: {text}}}")
    with pytest.raises(config.ConfigError) as err:
        config.validate(given)
    assert "is text to YAML 1.1" in str(err.value)


# An empty config: refused by netnoise as by Snakemake, and both agree on others.
FILES = {
    "empty": "",
    "a line break": "\n",
    "a comment": "# nothing yet\n",
    "a document marker": "---\n",
    "null": "null\n",
    "a tilde": "~\n",
    "a list": "- 1\n",
    "a number": "3\n",
    "an empty mapping": "{}\n",
    "a mapping": "baseline: {ranks: 2}\n",
}


@pytest.mark.parametrize("case", sorted(FILES))
def test_netnoise_and_snakemake_agree_on_what_is_a_config_file(tmp_path, capsys, case):
    path = tmp_path / "c.yaml"
    path.write_text(FILES[case])
    try:
        load_configfile(str(path))
        snakemake_takes_it = True
    except WorkflowError:
        snakemake_takes_it = False
    status = main(["config", "check", str(path)])
    captured = capsys.readouterr()
    assert (status == 0) == snakemake_takes_it, captured
    assert "Traceback" not in captured.err


def test_config_check_merges_several_files_as_snakemake_does(tmp_path, capsys):
    (tmp_path / "a.yaml").write_text("platform: {testbed: {nodes: 8}}\n")
    (tmp_path / "b.yaml").write_text("baseline: {ranks: 10}\n")
    assert main(["config", "check", str(tmp_path / "a.yaml")]) == 0
    assert main(["config", "check", str(tmp_path / "a.yaml"), str(tmp_path / "b.yaml")]) == 2
    assert "baseline.ranks: 10 exceeds" in capsys.readouterr().err


# The testbed commands read the platform section alone.
SMALL = (
    "platform:\n  testbed: {nodes: 2, prefix: zqsm}\n"
    "variability:\n  node_counts: [64]\n"
    "network_noise:\n  benchmark: {nodes: 32}\n"
)


@pytest.mark.parametrize("action", [["status"], ["status", "--json"], ["down"], ["env"]])
def test_testbed_commands_take_a_two_node_config(tmp_path, capsys, action):
    path = tmp_path / "small.yaml"
    path.write_text(SMALL)
    with pytest.raises(config.ConfigError):
        config.load(path)  # as a study config it does not validate
    status = main(["testbed", "--config", str(path), *action])
    captured = capsys.readouterr()
    assert "invalid configuration" not in captured.err
    assert "Traceback" not in captured.err
    assert status in (0, 1), captured
    if action[0] == "status":
        assert "zqsm" in captured.out


def test_testbed_commands_still_refuse_a_bad_platform(tmp_path, capsys):
    path = tmp_path / "bad.yaml"
    path.write_text("platform:\n  testbed: {nodes: 0}\n")
    assert main(["testbed", "--config", str(path), "status"]) == 2
    assert "platform.testbed.nodes" in capsys.readouterr().err
