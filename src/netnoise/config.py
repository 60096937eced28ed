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


def _inline(node: Any, directory: Path, main: str) -> Any:
    """``node`` with every ``$ref`` to a sibling schema file replaced by that file's
    content, and that file's references into the main schema made local."""
    if isinstance(node, list):
        return [_inline(item, directory, main) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith(f"{main}#"):
        node = {**node, "$ref": ref[len(main) :]}
    elif isinstance(ref, str) and not ref.startswith("#"):
        with open(directory / ref) as fh:
            included = yaml.safe_load(fh)
        included.pop("$schema", None)
        rest = {k: v for k, v in node.items() if k != "$ref"}
        node = {**included, **rest}
    return {k: _inline(v, directory, main) for k, v in node.items()}


def load_schema(path: str | os.PathLike[str] = SCHEMA_PATH) -> dict[str, Any]:
    """The config schema as one document: the per-study files it references
    (``workflow/schemas/<key>.schema.yaml``) are inlined."""
    path = Path(path)
    with open(path) as fh:
        return _inline(yaml.safe_load(fh), path.parent, path.name)


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


def study_testbed(study: dict[str, Any]) -> dict[str, Any]:
    """The keys of a study's testbed layout that override platform.testbed (None keeps it)."""
    return {k: v for k, v in study.get("testbed", {}).items() if v is not None}


def study_platform(platform: dict[str, Any], study: dict[str, Any]) -> dict[str, Any]:
    """The platform with a study's testbed layout (its ``testbed`` section: racks,
    backbone, nodes) over the shared one. Measurements run one at a time, so the
    testbed is rebuilt with this layout when the study's jobs start and back when
    another study's do."""
    out = copy.deepcopy(dict(platform))
    out["testbed"].update(study_testbed(dict(study)))
    return out


def rack_interleaved_nodes(testbed: dict[str, Any], count: int) -> list[str]:
    """The first ``count`` testbed nodes taken from the racks in turn (rack 1's first,
    rack 2's first, ...): an allocation that spans every rack, so its traffic
    crosses the backbone."""
    nodes, racks = testbed["nodes"], testbed["racks"]
    per_rack = -(-nodes // racks)
    order = sorted(range(nodes), key=lambda i: (i % per_rack, i // per_rack))
    return [f"{testbed['prefix']}-n{i + 1:02d}" for i in order[:count]]


def enabled(config: dict[str, Any], key: str) -> dict[str, Any]:
    """The config section of study ``key``, or {} when the study is disabled."""
    section = config.get(key, {})
    return section if section.get("enabled", True) else {}


def undefined_applications(config: dict[str, Any], key: str, names: list[str]) -> list[str]:
    """Problems of ``names`` (given at ``key``) that the applications section lacks."""
    apps = config.get("applications", {})
    return [
        f"{key}: {name!r} is not defined in applications (defined: {', '.join(sorted(apps))})"
        for name in names
        if name not in apps
    ]


def nodes_beyond_testbed(config: dict[str, Any], wanted: dict[str, list[int]]) -> list[str]:
    """Problems of node counts (key -> counts) that exceed the main testbed's nodes."""
    platform = config.get("platform", {})
    available = platform.get("testbed", {}).get("nodes")
    if platform.get("kind") != "testbed" or available is None:
        return []
    return [
        f"{key}: {count} exceeds platform.testbed.nodes ({available})"
        for key, counts in wanted.items()
        for count in counts
        if count > available
    ]


def _cross_checks(config: dict[str, Any]) -> list[str]:
    """Constraints between keys that a JSON schema cannot express: the shared
    sections' here, each study's in ``netnoise.studies.<key>.config``."""
    from netnoise import studies

    problems = _application_problems(config.get("applications", {}))
    for study in studies.STUDIES:
        checks = study.module("config")
        if checks is not None:
            problems += checks.problems(config)
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
