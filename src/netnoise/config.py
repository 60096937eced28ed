"""Load and validate the workflow configuration against its JSON schema.

Validation fills in every default the schema declares, so code downstream
reads a complete config, and turns schema violations into one paragraph
that names each offending key, its value and what is allowed.
"""

from __future__ import annotations

import copy
import os
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


def _cross_checks(config: dict[str, Any]) -> list[str]:
    """Constraints between keys that a JSON schema cannot express."""
    problems = []
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
