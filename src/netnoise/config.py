"""Load and validate the workflow configuration against its JSON schema.

Validation fills in every default the schema declares, so code downstream
reads a complete config, and turns schema violations into one paragraph
that names each offending key, its value and what is allowed.
"""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from jsonschema import validators

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "workflow" / "schemas" / "config.schema.yaml"


class ConfigError(ValueError):
    """The configuration violates the schema."""


def _with_defaults(validator_class: type) -> type:
    check_properties = validator_class.VALIDATORS["properties"]

    def fill_defaults(validator, properties, instance, schema) -> Iterator[Any]:
        if isinstance(instance, dict):
            for name, subschema in properties.items():
                if name not in instance and "default" in subschema:
                    instance[name] = copy.deepcopy(subschema["default"])
        yield from check_properties(validator, properties, instance, schema)

    return validators.extend(validator_class, {"properties": fill_defaults})


_FillingValidator = _with_defaults(jsonschema.Draft202012Validator)


def load_schema(path: str | os.PathLike[str] = SCHEMA_PATH) -> dict[str, Any]:
    with open(path) as fh:
        return yaml.safe_load(fh)


def _key(error: jsonschema.ValidationError) -> str:
    return ".".join(str(p) for p in error.absolute_path) or "(top level)"


def _describe(error: jsonschema.ValidationError) -> str:
    key = _key(error)
    value = error.instance
    schema = error.schema
    kind = error.validator
    if kind == "enum":
        allowed = ", ".join(repr(v) for v in schema["enum"])
        problem = f"{value!r} is not allowed; allowed values: {allowed}"
    elif kind == "type":
        problem = f"{value!r} has the wrong type; expected {schema['type']}"
    elif kind == "pattern":
        problem = f"{value!r} does not match {schema['pattern']}"
    elif kind in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
        op = {"minimum": ">=", "exclusiveMinimum": ">", "maximum": "<=", "exclusiveMaximum": "<"}
        problem = f"{value!r} is out of range; must be {op[kind]} {schema[kind]}"
    elif kind == "additionalProperties":
        extra = sorted(set(value) - set(schema.get("properties", {})))
        allowed = ", ".join(sorted(schema.get("properties", {})))
        problem = f"unknown key(s) {', '.join(extra)}; allowed keys: {allowed}"
    elif kind in ("minItems", "maxItems", "uniqueItems", "minLength"):
        problem = f"{value!r}: {error.message}"
    else:
        problem = error.message
    description = schema.get("description")
    hint = (
        f" ({description.strip().rstrip('.')})"
        if description and kind != "additionalProperties"
        else ""
    )
    return f"{key}: {problem}{hint}"


def _application_problems(apps: dict[str, Any]) -> list[str]:
    """A csrc program or a real application with source, build and binary; not both."""
    problems = []
    real_keys = ("source", "build", "binary", "figure_of_merit")
    for name, app in apps.items():
        key = f"applications.{name}"
        if "program" in app:
            given = [k for k in real_keys if k in app]
            if given:
                problems.append(
                    f"{key}: {', '.join(given)} belong to a real application, but 'program' "
                    "names a csrc program; give either program or source, build and binary"
                )
            continue
        missing = [k for k in ("source", "build", "binary") if k not in app]
        if missing:
            problems.append(
                f"{key}: needs 'program' (a csrc program) or all of source, build and "
                f"binary (missing: {', '.join(missing)})"
            )
        pattern = app.get("figure_of_merit", {}).get("pattern")
        if pattern is not None:
            try:
                groups = re.compile(pattern).groups
            except re.error as err:
                problems.append(f"{key}.figure_of_merit.pattern: {pattern!r} is invalid: {err}")
                continue
            if groups < 1:
                problems.append(
                    f"{key}.figure_of_merit.pattern: {pattern!r} has no group; put the "
                    "number in parentheses"
                )
    return problems


def _netgauge_problems(bench: dict[str, Any]) -> list[str]:
    if not bench.get("enabled", True) or not bench.get("netgauge", {}).get("source"):
        return []
    from netnoise.netgauge import size_problems

    problems = size_problems(bench.get("nodes", 8), bench.get("ratios", []))
    return [
        f"network_noise.benchmark.ratios: {p} (network_noise.benchmark.netgauge is set; "
        "change the ratios or nodes, or unset netgauge.source)"
        for p in problems
    ]


def _cross_checks(config: dict[str, Any]) -> list[str]:
    """Constraints between keys that a JSON schema cannot express."""
    problems = _application_problems(config.get("applications", {}))
    problems += _netgauge_problems(config.get("network_noise", {}).get("benchmark", {}))
    apps = config.get("applications", {})
    study = config.get("impact_compression", {})
    if not study.get("enabled", True):
        study = {}
    for name in study.get("applications", []):
        if name not in apps:
            problems.append(
                f"impact_compression.applications: {name!r} is not defined in applications "
                f"(defined: {', '.join(sorted(apps))})"
            )
    nodes = study.get("nodes")
    for p in study.get("compression", {}).get("partners", []):
        if nodes is not None and p >= nodes:
            problems.append(
                f"impact_compression.compression.partners: {p} needs more than {p} nodes; "
                f"impact_compression.nodes is {nodes}"
            )
    platform = config.get("platform", {})
    problems += _latency_variation_checks(config, apps, platform)
    available = platform.get("testbed", {}).get("nodes")
    if platform.get("kind") == "testbed" and available is not None:
        bench = config.get("network_noise", {}).get("benchmark", {})
        if not bench.get("enabled", True):
            bench = {}
        latency = config.get("latency_variation", {})
        if not latency.get("enabled", True):
            latency = {}
        wanted = {
            "impact_compression.nodes": [nodes] if nodes is not None else [],
            "latency_variation.nodes": [latency["nodes"]] if "nodes" in latency else [],
            "network_noise.benchmark.nodes": [bench["nodes"]] if "nodes" in bench else [],
            "network_noise.benchmark.allocations": bench.get("allocations", []),
        }
        for key, counts in wanted.items():
            for count in counts:
                if count > available:
                    problems.append(f"{key}: {count} exceeds platform.testbed.nodes ({available})")
    asymmetric = config.get("asymmetric", {})
    if asymmetric.get("enabled", True) and "testbed" in asymmetric:
        problems += _asymmetric_checks(asymmetric, platform.get("testbed", {}).get("prefix"))
    return problems + _variability_checks(config)


def _asymmetric_checks(study: dict[str, Any], main_prefix: str | None) -> list[str]:
    """Seed 003: its patterns must fit its own testbed."""
    problems = []
    testbed = study["testbed"]
    nodes, racks = testbed["nodes"], testbed["racks"]
    per_rack = nodes // racks
    if nodes % racks:
        problems.append(
            f"asymmetric.testbed.nodes: {nodes} nodes do not split evenly over "
            f"asymmetric.testbed.racks ({racks})"
        )
    if per_rack < 4:
        problems.append(
            f"asymmetric.testbed.nodes: {per_rack} nodes per rack; the Alltoallv needs 4"
        )
    if testbed["prefix"] is not None and testbed["prefix"] == main_prefix:
        problems.append(
            f"asymmetric.testbed.prefix: {main_prefix!r} is platform.testbed.prefix too; "
            "the study's testbed needs its own"
        )
    props = study["properties"]
    if 1 not in props["nic_links"]:
        problems.append(
            "asymmetric.properties.nic_links: must include 1 (one link alone calibrates "
            "the models' NIC rate)"
        )
    for n in props["backbone_links"]:
        if n > per_rack:
            problems.append(
                f"asymmetric.properties.backbone_links: {n} links need {n} nodes per rack; "
                f"the testbed has {per_rack}"
            )
    for key, limit in (("nic_degrees", None), ("backbone_degrees", per_rack)):
        for pair in props[key]:
            if sum(pair) == 0:
                problems.append(f"asymmetric.properties.{key}: {pair} has no link")
            if limit is not None and max(pair) > limit:
                problems.append(
                    f"asymmetric.properties.{key}: {pair} needs {max(pair)} nodes per rack; "
                    f"the testbed has {limit}"
                )
    rand = study["random"]
    for n in rand["nodes"]:
        if n % racks or n // racks > per_rack:
            problems.append(
                f"asymmetric.random.nodes: {n} must be a multiple of asymmetric.testbed.racks "
                f"({racks}) and at most asymmetric.testbed.nodes ({nodes})"
            )
    extra = [c for c in rand["congestion_controls"] if c not in study["congestion_controls"]]
    if extra:
        problems.append(
            f"asymmetric.random.congestion_controls: {', '.join(extra)} not in "
            f"asymmetric.congestion_controls ({', '.join(study['congestion_controls'])}), "
            "whose property runs calibrate the models"
        )
    iterations = study["iterations"]
    if iterations["min"] > iterations["max"]:
        problems.append(
            f"asymmetric.iterations.min: {iterations['min']} exceeds "
            f"asymmetric.iterations.max ({iterations['max']})"
        )
    return problems


def study_testbed(study: dict[str, Any]) -> dict[str, Any]:
    """The keys of a study's testbed layout that override platform.testbed (None keeps it)."""
    return {k: v for k, v in study.get("testbed", {}).items() if v is not None}


def _variability_checks(config: dict[str, Any]) -> list[str]:
    """Seed 002: the campaign's names, sizes and the model's splits must fit together."""
    study = config.get("variability", {})
    if not study.get("enabled", True):
        return []
    problems = []
    platform = config.get("platform", {})
    apps = config.get("applications", {})
    chosen = study.get("applications", [])
    for name in chosen:
        if name not in apps:
            problems.append(
                f"variability.applications: {name!r} is not defined in applications "
                f"(defined: {', '.join(sorted(apps))})"
            )
    model = study.get("model", {})
    named = {
        "variability.model.unseen_application": [model.get("unseen_application")],
        "variability.model.sparse_application": [model.get("sparse_application")],
        "variability.model.use_case.applications": model.get("use_case", {}).get(
            "applications", []
        ),
    }
    for key, names in named.items():
        for name in names:
            if name is not None and name not in chosen:
                problems.append(
                    f"{key}: {name!r} is not one of variability.applications ({', '.join(chosen)})"
                )
    counts = study.get("node_counts", [])
    use_nodes = model.get("use_case", {}).get("nodes")
    if use_nodes is not None and use_nodes not in counts:
        problems.append(
            f"variability.model.use_case.nodes: {use_nodes} is not one of "
            f"variability.node_counts ({', '.join(map(str, counts))})"
        )
    testbed = {**platform.get("testbed", {}), **study_testbed(study)}
    nodes, racks = testbed.get("nodes"), testbed.get("racks", 1)
    # Other platforms leave the study out (its campaign is the testbed's).
    if platform.get("kind") == "testbed" and nodes is not None:
        if racks > nodes:
            problems.append(
                f"variability.testbed.racks: {racks} racks need at least {racks} nodes; "
                f"the study's testbed has {nodes}"
            )
        for count in counts:
            if count > nodes:
                problems.append(
                    f"variability.node_counts: {count} exceeds the study's testbed nodes ({nodes})"
                )
    runs = study.get("runs", 2)
    per_application = runs * len(counts)
    for added in model.get("added", []):
        if added > per_application - 2:
            problems.append(
                f"variability.model.added: {added} runs of a held-out application leave "
                f"fewer than 2 of its {per_application} runs (runs x node_counts) to test"
            )
    cv = model.get("cv", 10)
    if runs * len(counts) * len(chosen) < 2 * cv:
        problems.append(
            f"variability.runs: {runs * len(counts) * len(chosen)} production runs in all are "
            f"too few for {cv}-fold cross-validation (need {2 * cv})"
        )
    background = study.get("background", {})
    for key in ("load", "compression_messages", "compression_sleep_cycles"):
        low, high = background.get(key, [1, 1])
        if low > high:
            problems.append(f"variability.background.{key}: low {low} is above high {high}")
    return problems


def _latency_variation_checks(
    config: dict[str, Any], apps: dict[str, Any], platform: dict[str, Any]
) -> list[str]:
    """Seed 004: levels that build on each other, applications, a link rate."""
    study = config.get("latency_variation", {})
    if not study.get("enabled", True):
        return []
    problems = []
    characterize = study.get("characterize", {})
    injection = study.get("injection", {})
    measured = characterize.get("levels", [])
    if measured and 0 not in measured:
        problems.append(
            "latency_variation.characterize.levels: must include 0 (the idle network of "
            "Fig. 4 and the zero-load reference)"
        )
    for level in injection.get("levels", []):
        if level not in measured:
            problems.append(
                f"latency_variation.injection.levels: {level} is not one of "
                f"latency_variation.characterize.levels ({measured})"
            )
    for level in injection.get("fixed_mean_levels", []):
        if level not in injection.get("levels", []):
            problems.append(
                f"latency_variation.injection.fixed_mean_levels: {level} is not one of "
                f"latency_variation.injection.levels ({injection.get('levels', [])})"
            )
    for name in injection.get("applications", []):
        if name not in apps:
            problems.append(
                f"latency_variation.injection.applications: {name!r} is not defined in "
                f"applications (defined: {', '.join(sorted(apps))})"
            )
    if characterize.get("link_mbit") is None and platform.get("kind", "testbed") != "testbed":
        problems.append(
            "latency_variation.characterize.link_mbit: null only works on the testbed "
            "(it takes platform.testbed.nic_mbit); give the link rate of your network in Mbit/s"
        )
    return problems


def validate(
    config: dict[str, Any], schema: dict[str, Any] | None = None, *, source: str = "config"
) -> dict[str, Any]:
    """Validate ``config`` in place, filling defaults; raise ConfigError on violations."""
    schema = schema if schema is not None else load_schema()
    errors = sorted(
        _FillingValidator(schema).iter_errors(config), key=lambda e: list(e.absolute_path)
    )
    problems = [_describe(e) for e in errors] or _cross_checks(config)
    if problems:
        details = "; ".join(problems)
        raise ConfigError(
            f"invalid configuration ({source}): {details}. "
            "See config/README.md for every key and its allowed values."
        )
    return config


def load(path: str | os.PathLike[str], schema: dict[str, Any] | None = None) -> dict[str, Any]:
    """Read a YAML config file and validate it."""
    with open(path) as fh:
        config = yaml.safe_load(fh) or {}
    if not isinstance(config, dict):
        raise ConfigError(f"invalid configuration ({path}): the top level must be a mapping")
    return validate(config, schema, source=str(path))
