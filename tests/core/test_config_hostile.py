"""Bad configs, as a careless or a hostile user writes them: each one a clear error
naming the file, the key, the value and what is allowed; none a traceback, none
accepted silently."""

from __future__ import annotations

import math
import re

import pytest
import yaml

from netnoise import config
from netnoise.config import ConfigError
from netnoise.sim import congestion, topology
from tests.conftest import REPO

# (a config key, the value it is given, what the message must say after the key)
BAD_VALUES = [
    # A first value of each kind of mistake.
    ("platform.timeout_s", math.nan, ": nan is not a finite number"),
    ("network_noise.ratios", [math.nan, 0.5], ".0: nan is not a finite"),
    ("baseline.repetitions", 3.0, ": 3.0 is not an integer; expected integer (write 3)"),
    ("platform.testbed.nodes", 8.0, ": 8.0 is not an integer"),
    ("baseline.sizes", [8.0], ".0: 8.0 is not an integer"),
    ("platform.testbed.prefix", "zq\n", ": 'zq\\n' does not match ^[a-z][a-z0-9]{0,5}$ as a whole"),
    (
        "network_noise.fat_trees",
        ["xgft:0,0/1"],
        ".0: bad topology SPEC 'xgft:0,0/1': xgft needs as many W (and P) values as M values",
    ),
    (
        "network_noise.torus_2d",
        "torus:0x0",
        ": bad topology SPEC 'torus:0x0': every torus dimension must be >= 2; allowed forms: xgft:",
    ),
    (
        "network_noise.torus_2d",
        "torus:100000x100000",
        ": topology SPEC 'torus:100000x100000' has 10000000000 endpoints and 30000000000 links; "
        "the simulator builds at most 1048576 endpoints and 4194304 links",
    ),
    ("baseline.iterations", 1e20, ": 1e+20 is not an integer"),
    (
        "baseline.iterations",
        10**20,
        ": 100000000000000000000 is out of range; must be <= 1000000000000",
    ),
    # Not finite, anywhere a number goes.
    ("platform.timeout_s", math.inf, ": inf is not a finite number"),
    ("platform.timeout_s", -math.inf, ": -inf is not a finite number"),
    (
        "platform.cpu.max_runnable",
        math.inf,
        ": inf is not a finite number; expected a finite number or null",
    ),
    ("platform.testbed.nic_mbit", math.nan, ": nan is not"),
    (
        "network_noise.benchmark.testbed.backbone_arbitration",
        "fair",
        ": 'fair' is not allowed; allowed values: 'fifo', 'round_robin', None",
    ),
    ("network_noise.benchmark.testbed.nic_mbit", 0, ": 0 is out of range; must be >= 1"),
    ("variability.model.grid.C", [math.nan], ".0: nan "),
    ("latency_variation.characterize.duration_s", math.inf, ": inf is not a finite number"),
    ("asymmetric.properties.message_mb", math.nan, ": nan is not a finite number"),
    # Whole floats and booleans where an integer goes.
    ("baseline.ranks", 2.0, ": 2.0 is not an integer"),
    (
        "platform.testbed.queue_bytes",
        1e5,
        ": 100000.0 is not an integer; expected integer (write 100000)",
    ),
    ("platform.testbed.nodes", True, ": True has the wrong type; expected integer"),
    ("variability.runs", 16.0, ": 16.0 is not an integer"),
    # Trailing line breaks and spaces: a pattern matches the whole value.
    ("platform.testbed.prefix", "nn ", ": 'nn ' does not match"),
    ("platform.mpirun", "mpirun\n", ": 'mpirun\\n' does not match ^[A-Za-z0-9_./+-]+$ as a whole"),
    ("asymmetric.testbed.prefix", "ab\n", ": 'ab\\n' does not match"),
    ("applications", {"cg\n": {"program": "cg_solver"}}, ": 'cg\\n' does not match"),
    (
        "network_noise.torus_2d",
        "torus:3x3\n",
        ": 'torus:3x3\\n' does not match ^torus:[0-9]+x[0-9]+$ as a whole",
    ),
    (
        "impact_compression.applications",
        ["halo3d\n", "cg_solver"],
        ".0: 'halo3d\\n' does not match",
    ),
    # Impossible or too large topologies, bounded by the schema (a torus of 101^3
    # is about the simulator's largest) or read by the simulator's parser.
    ("network_noise.torus_sizes_3d", [200], ".0: 200 is out of range; must be <= 101"),
    (
        "network_noise.fat_trees",
        ["xgft:1000,1000,1000/1,1,1"],
        ".0: topology SPEC 'xgft:1000,1000,1000/1,1,1' has 1000000000 endpoints",
    ),
    (
        "network_noise.torus_3d",
        "torus:1x5x5",
        ": bad topology SPEC 'torus:1x5x5': every torus dimension must be >= 2",
    ),
    (
        "network_noise.fat_trees",
        ["xgft:4,4/1,2/1"],
        ".0: bad topology SPEC 'xgft:4,4/1,2/1': xgft needs as many W (and P) values as M values "
        "(h = 2)",
    ),
    # Beyond the limits of the C programs that receive them.
    ("baseline.iterations", 10**13, ": 10000000000000 is out of range; must be <= 1000000000000"),
    ("baseline.warmup", 2 * 10**9, ": 2000000000 is out of range; must be <= 1000000000"),
    (
        "latency_variation.characterize.iterations",
        2 * 10**9,
        ": 2000000000 is out of range; must be <= 1000000000",
    ),
    (
        "latency_variation.characterize.gap_us",
        1e8,
        ": 100000000.0 is out of range; must be <= 10000000",
    ),
    ("latency_variation.injection.probe_iterations", 10**10, ": 10000000000 is out of range"),
    (
        "latency_variation.injection.sleep_margin_us",
        20000,
        ": 20000 is out of range; must be <= 10000",
    ),
    ("latency_variation.seed", 2**31, ": 2147483648 is out of range; must be <= 2147483547"),
    ("impact_compression.impact_size", 2**25, ": 33554432 is out of range; must be <= 16777216"),
    (
        "impact_compression.compression.partners",
        [2000],
        ".0: 2000 is out of range; must be <= 1024",
    ),
    (
        "impact_compression.compression.cycle_hz",
        1e12,
        ": 1000000000000.0 is out of range; must be <= 100000000000",
    ),
    ("network_noise.benchmark.splits", 20_000, ": 20000 is out of range; must be <= 10000"),
    ("network_noise.runs", 10**7, ": 10000000 is out of range; must be <= 1000000"),
    ("asymmetric.iterations.ci_width", 1e-9, ": 1e-09 is out of range; must be >= 1e-06"),
    ("asymmetric.properties.message_mb", 5000, ": 5000 is out of range; must be <= 1073"),
    (
        "variability.background.compression_messages",
        [1, 4096],
        ".1: 4096 is out of range; must be <= 1024",
    ),
    ("variability.warmup", 10**10, ": 10000000000 is out of range"),
    # Rates, timeouts and sizes no run can live with: a frame taking hours, a timeout
    # every run exceeds, a queue of gigabytes; the message says the range.
    (
        "platform.testbed.nic_mbit",
        0.000001,
        ": 1e-06 is out of range; must be >= 1 (rate of every node link, each direction (Mbit/s); "
        "1 to 10000 Mbit/s)",
    ),
    ("platform.timeout_s", 1.0e-300, ": 1e-300 is out of range; must be >= 1"),
    (
        "platform.timeout_s",
        1e9,
        ": 1000000000.0 is out of range; must be <= 604800 (a benchmark run that takes longer is "
        "killed and counts as failed (seconds); 1 s to a week (604800 s))",
    ),
    (
        "platform.testbed.queue_bytes",
        2**40,
        ": 1099511627776 is out of range; must be <= 1073741824",
    ),
    ("latency_variation.characterize.link_mbit", 0.01, ": 0.01 is out of range; must be >= 1"),
    (
        "impact_compression.compression.cycle_hz",
        1e-3,
        ": 0.001 is out of range; must be >= 1000000",
    ),
    ("variability.slurm.link_mbit", 1e-9, ": 1e-09 is out of range; must be >= 1"),
    # A message quotes a short prefix of what it was given, however much that is.
    (
        "platform",
        {f"key{i:04d}": 1 for i in range(1000)},
        ": unknown key(s) key0000, key0001, key0002, key0003, key0004, key0005, key0006, key0007, "
        "key0008, key0009, key0010, key0011 and 988 more; allowed keys:",
    ),
    (
        "platform.kind",
        "x" * 100_000,
        ": 'xxxxxxxxxxxxxxxxxxxxxxxxxxx...xxxxxxxxxxxxxxxxxxxxxxxxxxxx' is not allowed",
    ),
    # Paths, programs and applications that do not exist.
    ("network_noise.fabrics", ["/dev/zero"], ".0: '/dev/zero' is not a regular file"),
    (
        "network_noise.fabrics",
        ["../../../nonexistent/fabric.txt"],
        ".0: '../../../nonexistent/fabric.txt' is not a regular file",
    ),
    (
        "applications.ghost",
        {"program": "no_such_program", "args": []},
        ".program: 'no_such_program' is not a program of csrc (programs: ",
    ),
    (
        "latency_variation.injection.application_args",
        {"nosuch": ["--steps", "2"]},
        ": 'nosuch' is not defined in applications",
    ),
    (
        "impact_compression.application_args",
        {"nosuch": ["--size", "144"]},
        ": 'nosuch' is not defined in applications",
    ),
    # Wrong shapes.
    ("platform.kind", 1, ": 1 is not allowed; allowed values: 'testbed'"),
    ("platform", ["testbed"], ": ['testbed'] has the wrong type; expected object"),
    ("baseline.sizes", "8", ": '8' has the wrong type; expected array"),
]


def nested(key: str, value) -> dict:
    """The config that gives the dotted ``key`` its ``value``."""
    for part in reversed(key.split(".")):
        value = {part: value}
    return value


@pytest.mark.parametrize(("key", "value", "message"), BAD_VALUES, ids=[k for k, _, _ in BAD_VALUES])
def test_bad_values_name_file_key_value_and_what_is_allowed(tmp_path, key, value, message):
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(nested(key, value)))
    with pytest.raises(ConfigError) as err:
        config.load(path)
    text = str(err.value)
    assert text.startswith(f"invalid configuration ({path}): ")
    assert f"{key}{message}" in text
    assert "\n" not in text.replace("\\n", ""), "one paragraph"
    assert len(text) < 2000


# (YAML text, what the message must say after the file name)
BAD_FILES = [
    (
        "baseline:\n  warmup: 5\nbaseline:\n  warmup: 7\n",
        ":3:1): key 'baseline' is given twice (first on line 1); a config gives every key once",
    ),
    (
        "baseline:\n  warmup: 5\n  iterations: 9\n  warmup: 7\n",
        ":4:3): key 'warmup' is given twice",
    ),
    ("platform: {kind: testbed, kind: localhost}\n", ":1:27): key 'kind' is given twice"),
    ("platform:\n  kind: [testbed\n", ":3:1): malformed YAML: while parsing a flow sequence"),
    ("platform:\n  kind: testbed\n \tnodes: 3\n", ":3:2): malformed YAML: "),
    ("platform: 'testbed\n", "malformed YAML: while scanning a quoted scalar"),
    ("[" * 5000 + "]" * 5000 + "\n", "): nested too deeply"),
    ("- platform\n- baseline\n", "): the top level must be a mapping of sections, got list"),
    ("just a string\n", "): the top level must be a mapping of sections, got str"),
    (
        "platform: !!python/object/apply:os.system ['touch {marker}']\n",
        ":1:11): could not "
        "determine a constructor for the tag 'tag:yaml.org,2002:python/object/apply:os.system'",
    ),
    ("? [a, b]\n: 1\n", ":1:3): a mapping key must be a plain value, got ['a', 'b']"),
    (
        "a: &a [x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\n"
        "platform: {mpirun_args: [*b, *b, *b, *b, *b, *b, *b, *b]}\n",
        "platform.mpirun_args.0: [['x', 'x', 'x', 'x', ...], ['x', 'x', 'x', 'x', ...], ['x', 'x', "
        "'x', 'x', ...], ['x', 'x', 'x', 'x', ...], ...] has the wrong type; expected string",
    ),
]


@pytest.mark.parametrize(("text", "message"), BAD_FILES)
def test_bad_files_name_the_file_and_line(tmp_path, text, message):
    path = tmp_path / "bad.yaml"
    marker = tmp_path / "ran"
    path.write_text(text.replace("{marker}", str(marker)))
    with pytest.raises(ConfigError) as err:
        config.load(path)
    assert f"invalid configuration ({path}" in str(err.value)
    assert message in str(err.value)
    assert not marker.exists()


def test_unreadable_or_binary_files_are_config_errors(tmp_path):
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(b"platform:\n  kind: \xff\xfe\x00\x01\n")
    cases = {
        binary: "malformed YAML: unacceptable character #x00ff: invalid start byte",
        tmp_path: "is a directory, not a config file (YAML)",
        tmp_path / "absent.yaml": "cannot read the configuration: No such file or directory",
    }
    for path, message in cases.items():
        with pytest.raises(ConfigError, match=re.escape(message)):
            config.load(path)


def test_values_at_the_limits_pass():
    config.validate(
        {
            "baseline": {"iterations": 10**12, "warmup": 10**9, "sizes": [1, 2**30]},
            "network_noise": {"runs": congestion.MAX_RUNS, "torus_2d": "torus:1024x1024"},
            "latency_variation": {"seed": 2147483547, "characterize": {"iterations": 10**9}},
            "asymmetric": {"iterations": {"ci_width": 1e-6}},
        }
    )
    assert topology.check_spec("torus:1024x1024")["endpoints"] == topology.MAX_ENDPOINTS


def test_merge_keys_may_override_what_they_merge(tmp_path):
    path = tmp_path / "merged.yaml"
    path.write_text(
        "defaults: &tb {nodes: 4, racks: 1}\nplatform:\n  testbed:\n    <<: *tb\n    nodes: 6\n"
    )
    assert config.read_yaml(path)["platform"]["testbed"] == {"nodes": 6, "racks": 1}


def _option_limits(source: str, option: str) -> tuple[float, float]:
    """Minimum and maximum of ``--option`` in a C option table of csrc/."""
    text = (REPO / "csrc" / source).read_text()
    match = re.search(rf'\{{"{option}", NN_OPT_\w+, [^,]+, ([^,]+), ([^,]+),', text)
    assert match, f"{source} has no option --{option}"
    return _c_number(text, match.group(1)), _c_number(text, match.group(2))


def _c_number(source: str, expression: str) -> float:
    """A limit as the option tables write it: 1e12, 1 << 24 or a #define'd NAME."""
    expression = expression.strip()
    if "<<" in expression:
        base, shift = expression.split("<<")
        return float(int(base) << int(shift))
    if re.fullmatch(r"[A-Z_]+", expression):
        defined = re.search(rf"#define {expression} +(.+)", source)
        assert defined, f"{expression} is not #defined"
        return _c_number(source, defined.group(1))
    return float(expression)


NN = "common/nn.h"
# Config key -> the C option it becomes (the source of the option table).
C_OPTIONS = {
    "baseline.warmup": (NN, "warmup"),
    "baseline.iterations": (NN, "iterations"),
    "baseline.sizes": ("bench/pingpong.c", "size"),
    "impact_compression.runs": (NN, "iterations"),
    "impact_compression.impact_samples": (NN, "iterations"),
    "impact_compression.impact_sleep_us": ("bench/impactb.c", "sleep-us"),
    "impact_compression.impact_size": ("bench/impactb.c", "size"),
    "impact_compression.compression.partners": ("bench/compressionb.c", "partners"),
    "impact_compression.compression.messages": ("bench/compressionb.c", "messages"),
    "impact_compression.compression.sleep_cycles": ("bench/compressionb.c", "sleep-cycles"),
    "impact_compression.compression.cycle_hz": ("bench/compressionb.c", "cycle-hz"),
    "impact_compression.compression.size": ("bench/compressionb.c", "size"),
    "network_noise.benchmark.size": ("bench/noise.c", "size"),
    "network_noise.benchmark.perturb_size": ("bench/noise.c", "perturb-size"),
    "network_noise.benchmark.splits": ("bench/noise.c", "splits"),
    "network_noise.benchmark.reps": ("bench/noise.c", "reps"),
    "network_noise.benchmark.phase_warmup": ("bench/noise.c", "phase-warmup"),
    "asymmetric.iterations.min": ("bench/p2p_concurrent.c", "min-iterations"),
    "asymmetric.iterations.max": ("bench/p2p_concurrent.c", "max-iterations"),
    "asymmetric.iterations.ci_width": ("bench/p2p_concurrent.c", "ci-width"),
    "variability.warmup": (NN, "warmup"),
    "variability.background.compression_messages": ("bench/compressionb.c", "messages"),
    "variability.background.compression_sleep_cycles": ("bench/compressionb.c", "sleep-cycles"),
    "variability.background.cycle_hz": ("bench/compressionb.c", "cycle-hz"),
    "latency_variation.characterize.link_mbit": ("bench/loadgen.c", "link-mbit"),
    "latency_variation.characterize.duration_s": ("bench/tcpping.c", "duration"),
    "latency_variation.characterize.iterations": ("bench/tcpping.c", "iterations"),
    "latency_variation.characterize.gap_us": ("bench/tcpping.c", "gap-us"),
    "latency_variation.characterize.warmup": (NN, "warmup"),
    "latency_variation.injection.runs": (NN, "iterations"),
    "latency_variation.injection.probe_iterations": ("bench/tcpping.c", "iterations"),
    "latency_variation.injection.warmup": (NN, "warmup"),
}


def _schema_of(key: str) -> dict:
    node = config.load_schema()
    for part in key.split("."):
        node = node["properties"][part]
    return node.get("items", node) if node.get("type") == "array" else node


@pytest.mark.parametrize("key", sorted(C_OPTIONS))
def test_schema_limits_are_those_of_the_c_option_it_becomes(key):
    low, high = _option_limits(*C_OPTIONS[key])
    schema = _schema_of(key)
    assert schema["maximum"] == high, f"{key}: the C program takes at most {high:g}"
    assert schema.get("minimum", schema.get("exclusiveMinimum", 1)) >= low


def test_schema_limits_derived_from_c_limits():
    # loadgen's --seed is latency_variation.seed plus the load level (0-100).
    assert _schema_of("latency_variation.seed")["maximum"] + 100 == _option_limits(NN, "seed")[1]
    # p2p_concurrent takes messages up to 2^30 bytes; the study's MB are 10^6 bytes.
    for key in ("asymmetric.properties.message_mb", "asymmetric.random.message_mb"):
        assert _schema_of(key)["maximum"] * 10**6 <= 2**30
    assert _schema_of("network_noise.runs")["maximum"] == congestion.MAX_RUNS


def test_config_reference_says_what_a_value_must_be():
    readme = (REPO / "docs" / "config.md").read_text()
    for promise in ("appears once", "is finite", "is written as one", "the whole value",
                    "option's\n  range", "simulator's own parser"):  # fmt: skip
        assert promise in readme
