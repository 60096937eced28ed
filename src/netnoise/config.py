"""Read and validate the workflow configuration: the one validation layer.

:func:`read_yaml` reads a config file strictly: malformed YAML names the file
and line, a key given twice in one mapping (YAML would keep the last
silently) is refused, and so is a file that is not a regular one, is larger
than any config, or expands (aliases counted) to more values than any config
has, before it is built in memory. :func:`validate` checks a config against the JSON
schema with stricter types than JSON Schema's (a number is finite, an integer
is not a float, even a whole one, a pattern must match the whole value, so a
trailing line break fails), then the constraints between keys that a schema
cannot express (``netnoise.studies.<key>.config``). It fills in every
default the schema declares, so code downstream reads a complete config, and
turns violations into one paragraph that names the source, each offending
key, its value and what is allowed.
"""

from __future__ import annotations

import copy
import functools
import math
import os
import re
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from jsonschema import validators

from netnoise import inputs, project, studies, waiting
from netnoise.platform import from_config
from netnoise.testbed.fabric import frame_problems

SCHEMA_PATH = project.ROOT / "workflow" / "schemas" / "config.schema.yaml"
CSRC = project.ROOT / "csrc"


# Nesting a config may have, far beyond the schema's deepest (5 levels).
MAX_DEPTH = 64
# Size of a config with its YAML aliases expanded, in values (a long text counts
# one per 64 characters): the paper's config with every default filled in has
# about 730. A few lines of aliases can expand to billions, which no reader or
# message can hold; and composing is slow, so a long list stops at this count.
MAX_VALUES = 20_000
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


class ConfigError(ValueError):
    """The configuration violates the schema."""


class _StrictLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing a key given twice in one mapping."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        first_line: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # keys merged in by "<<" may be overridden
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            try:
                seen = first_line.get(key)
            except TypeError:
                shown = inputs.SHORT.repr(key)
                raise yaml.constructor.ConstructorError(
                    None, None, f"a mapping key must be a plain value, got {shown}",
                    key_node.start_mark,
                ) from None  # fmt: skip
            if seen is not None:
                raise yaml.constructor.ConstructorError(
                    None, None, f"key {key!r} is given twice (first on line {seen}); a config "
                    "gives every key once", key_node.start_mark,
                )  # fmt: skip
            first_line[key] = line
        return super().construct_mapping(node, deep)

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node:
        # Counted while composing, so a long list stops here, not after it is built.
        self.composed = getattr(self, "composed", 0) + 1
        if self.composed > MAX_VALUES:
            raise yaml.constructor.ConstructorError(
                None, None, f"more than {MAX_VALUES} values; a config is far smaller",
                self.peek_event().start_mark,
            )  # fmt: skip
        return super().compose_node(parent, index)

    def get_single_data(self) -> Any:
        node = self.get_single_node()
        if node is None:
            return None
        if _expanded_values(node) > MAX_VALUES:
            raise yaml.constructor.ConstructorError(
                None, None, f"more than {MAX_VALUES} values once its aliases (*name) are "
                "expanded; a config is far smaller", node.start_mark,
            )  # fmt: skip
        for key, scalar in _yaml11_numbers(node):
            raise yaml.constructor.ConstructorError(
                None, None, _yaml11_problem(key, scalar.value), scalar.start_mark
            )
        return self.construct_document(node)


# Plain scalars YAML 1.1 (PyYAML, and so Snakemake's reader of a config) reads
# as numbers that YAML 1.2 reads otherwise: 010 is 8 there and 10 here, 15:00
# is 900 seconds there and text here. Refused, so no reader changes a value.
_OCTAL = re.compile(r"[-+]?0[0-7_]+")
_SEXAGESIMAL = re.compile(r"[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?")
_NUMBER_TAGS = ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")


def _yaml11_numbers(root: yaml.Node) -> Iterator[tuple[str, yaml.ScalarNode]]:
    """The plain scalars of a composed document that YAML 1.1 reads as octal or
    base-60 numbers, each with the key path it is the value (or a key) of."""
    stack: list[tuple[yaml.Node, str]] = [(root, "")]
    seen: set[int] = set()
    while stack:
        node, path = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.ScalarNode):
            if (
                node.style is None
                and node.tag in _NUMBER_TAGS
                and (_OCTAL.fullmatch(node.value) or _SEXAGESIMAL.fullmatch(node.value))
            ):
                yield path or "(top level)", node
        elif isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                name = f"{path}.{key.value}" if path else str(key.value)
                stack += [(value, name), (key, name)]
        else:
            stack += [(item, f"{path}[{i}]") for i, item in enumerate(node.value)]


def _yaml11_problem(key: str, text: str) -> str:
    if _OCTAL.fullmatch(text):
        digits = text.lstrip("+-").replace("_", "")
        sign = "-" if text.startswith("-") else ""
        reading = f"octal {sign}{int(digits, 8)}"
        decimal = f"{sign}{int(digits)}"
    else:
        reading = "a number of minutes and seconds (base 60)"
        decimal = "the number of seconds"
    return (
        f"{key}: {text} is read as {reading} by YAML 1.1 (Snakemake's reader) but not by "
        f'YAML 1.2; write {decimal}, or quote it ("{text}") for text'
    )


def _expanded_values(root: yaml.Node) -> int:
    """The values of a composed document with every alias expanded, counted
    without expanding them (an alias is the node it names, shared)."""
    sizes: dict[int, int] = {}
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in sizes:
            continue
        if isinstance(node, yaml.ScalarNode):
            sizes[id(node)] = 1 + len(node.value) // 64
            continue
        children = [
            child
            for item in node.value
            for child in (item if isinstance(node, yaml.MappingNode) else (item,))
        ]
        if children_done:
            sizes[id(node)] = 1 + sum(sizes[id(child)] for child in children)
        else:
            stack.append((node, True))
            stack.extend((child, False) for child in children if id(child) not in sizes)
    return sizes[id(root)]


def _bracket_depth(text: bytes) -> int:
    """The deepest nesting of flow brackets ([ and {), strings not told apart."""
    depth = deepest = 0
    for byte in text.translate(None, _NOT_BRACKETS):
        depth += 1 if byte in b"[{" else -1
        deepest = max(deepest, depth)
    return deepest


def read_yaml(path: str | os.PathLike[str], text: str | bytes | None = None) -> dict[str, Any]:
    """The config mapping of YAML file ``path`` (or of ``text``, named ``path``).

    Malformed YAML, a key given twice, a document nested too deeply or too
    large (aliases expanded), a number YAML 1.1 and 1.2 read differently
    (``010``, ``15:00``), a file that is not a regular one or larger than
    :data:`netnoise.inputs.MAX_CONFIG_BYTES`, an empty file and a top level that
    is not a mapping are ConfigErrors naming the file (and line)."""
    data = parse_yaml(path, text)
    if data is None:
        # Snakemake refuses an empty config file too; {} is a config of defaults.
        raise ConfigError(
            f"invalid configuration ({path}): the file is empty (or null); a config is a "
            "mapping of sections (write {} for one that keeps every default)"
        )
    if not isinstance(data, dict):
        raise ConfigError(
            f"invalid configuration ({path}): the top level must be a mapping of sections, "
            f"got {type(data).__name__}"
        )
    return data


def parse_yaml(
    path: str | os.PathLike[str], text: str | bytes | None = None, what: str = "configuration"
) -> Any:
    """The data of YAML file ``path`` (or of ``text``, named ``path``), read as
    :func:`read_yaml` reads a config but of any top level; errors call it ``what``."""
    try:
        if text is None:
            text = inputs.read_bytes(path, inputs.MAX_CONFIG_BYTES, "config file (YAML)")
        elif len(text) > inputs.MAX_CONFIG_BYTES:
            raise inputs.InputError(
                f"{path}: larger than a config file may be ({inputs.MAX_CONFIG_BYTES} bytes at "
                "most)"
            )
        if _bracket_depth(text.encode() if isinstance(text, str) else text) > MAX_DEPTH:
            raise RecursionError  # YAML's parser takes quadratic time on deep nesting
        data = yaml.load(text, Loader=_StrictLoader)  # a safe loader
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        problem = " ".join(str(p) for p in (err.context, err.problem) if p)
        if not isinstance(err, yaml.constructor.ConstructorError):
            problem = f"malformed YAML: {problem}"
        raise ConfigError(f"invalid {what} ({where}): {problem}") from None
    except yaml.YAMLError as err:
        problem = " ".join(str(err).split())
        raise ConfigError(f"invalid {what} ({path}): malformed YAML: {problem}") from None
    except RecursionError:
        raise ConfigError(f"invalid {what} ({path}): nested too deeply") from None
    except inputs.InputError as err:
        raise ConfigError(str(err)) from None
    except OSError as err:
        raise ConfigError(f"{path}: cannot read the {what}: {err.strerror or err}") from None
    return data


def _is_integer(_: Any, instance: Any) -> bool:
    return isinstance(instance, int) and not isinstance(instance, bool)


def _is_number(_: Any, instance: Any) -> bool:
    if isinstance(instance, bool) or not isinstance(instance, int | float):
        return False
    return math.isfinite(instance)


def _full_match(validator, pattern: str, instance: Any, schema: dict[str, Any]) -> Iterator[Any]:
    # JSON Schema searches; "^...$" then accepts a trailing line break ("nn\n").
    if validator.is_type(instance, "string") and not re.fullmatch(pattern, instance):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


def _with_defaults(validator_class: type) -> type:
    check_properties = validator_class.VALIDATORS["properties"]

    def fill_defaults(validator, properties, instance, schema) -> Iterator[Any]:
        if isinstance(instance, dict):
            for name, subschema in properties.items():
                if name not in instance and "default" in subschema:
                    instance[name] = copy.deepcopy(subschema["default"])
        yield from check_properties(validator, properties, instance, schema)

    strict_types = validator_class.TYPE_CHECKER.redefine_many(
        {"integer": _is_integer, "number": _is_number}
    )
    return validators.extend(
        validator_class,
        {"properties": fill_defaults, "pattern": _full_match},
        type_checker=strict_types,
    )


_FillingValidator = _with_defaults(jsonschema.Draft202012Validator)
# Problems one message lists at most.
_SHOWN_PROBLEMS = 12


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
    """The config schema as one document: each registered study's section is its
    schema file (``STUDY.schema``), inlined."""
    return copy.deepcopy(_schema(Path(path).resolve(), _study_schemas()))


def _study_schemas() -> tuple[tuple[str, str], ...]:
    return tuple((study.key, str(study.schema)) for study in studies.STUDIES)


@functools.lru_cache(maxsize=4)
def _schema(path: Path, sections: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    # Parsed once per process and set of studies: reading the YAML takes longer
    # than a validation.
    with open(path) as fh:
        schema = yaml.safe_load(fh)
    for key, study_schema in sections:
        schema["properties"][key] = {"$ref": study_schema}
    return _inline(schema, path.parent, path.name)


def _key(error: jsonschema.ValidationError) -> str:
    return ".".join(str(p) for p in error.absolute_path) or "(top level)"


# A number as YAML 1.2 writes one, which YAML 1.1 reads as text (1e8, 1.5e3).
_YAML12_NUMBER = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")


def _type_problem(value: Any, expected: str | list[str]) -> str:
    types = " or ".join(expected) if isinstance(expected, list) else expected
    numeric = "number" in types or "integer" in types
    if isinstance(value, str) and _YAML12_NUMBER.fullmatch(value) and numeric:
        number = float(value)
        written = repr(number)
        if "integer" in types and number.is_integer():
            written = str(int(number))
        elif "e" in written and "." not in written:
            written = written.replace("e", ".0e")
        return (
            f"{value!r} is text to YAML 1.1 (Snakemake's reader: an exponent needs a dot and a "
            f"sign); expected {types}: write {written}"
        )
    if isinstance(value, float) and not math.isfinite(value):
        return f"{value!r} is not a finite number; expected a finite {types}"
    if isinstance(value, float) and value.is_integer() and "integer" in types:
        return f"{value!r} is not an integer; expected {types} (write {int(value)})"
    return f"{inputs.SHORT.repr(value)} has the wrong type; expected {types}"


def _cut(message: str, limit: int = 200) -> str:
    return message if len(message) <= limit else f"{message[:limit]}..."


def _bounds(schema: Any) -> str:
    """A schema of a constant or a range in words ("0", ">= 0.01 and <= 3600"), or ""."""
    if not isinstance(schema, dict):
        return ""
    if set(schema) == {"const"}:
        return repr(schema["const"])
    words = {"minimum": ">=", "exclusiveMinimum": ">", "maximum": "<=", "exclusiveMaximum": "<"}
    if not schema or set(schema) - set(words):
        return ""
    return " and ".join(f"{words[k]} {v}" for k, v in schema.items())


def _describe(error: jsonschema.ValidationError) -> str:
    key = _key(error)
    value = error.instance
    shown = inputs.SHORT.repr(value)
    schema = error.schema
    kind = error.validator
    if kind == "enum":
        allowed = ", ".join(repr(v) for v in schema["enum"])
        problem = f"{shown} is not allowed; allowed values: {allowed}"
    elif kind == "type":
        problem = _type_problem(value, schema["type"])
    elif kind == "pattern":
        whole = " as a whole" if re.search(schema["pattern"], value) else ""
        problem = f"{shown} does not match {schema['pattern']}{whole}"
    elif kind in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
        op = {"minimum": ">=", "exclusiveMinimum": ">", "maximum": "<=", "exclusiveMaximum": "<"}
        problem = f"{shown} is out of range; must be {op[kind]} {schema[kind]}"
    elif kind == "additionalProperties":
        extra = sorted(map(str, set(value) - set(schema.get("properties", {}))))
        allowed = ", ".join(sorted(schema.get("properties", {})))
        shown = ", ".join(_cut(key, 60) for key in extra[:_SHOWN_PROBLEMS])
        if len(extra) > _SHOWN_PROBLEMS:
            shown += f" and {len(extra) - _SHOWN_PROBLEMS} more"
        problem = f"unknown key(s) {shown}; allowed keys: {allowed}"
    elif kind in ("anyOf", "oneOf") and all(_bounds(a) for a in schema[kind]):
        allowed = " or ".join(_bounds(a) for a in schema[kind])
        problem = f"{shown} is out of range; must be {allowed}"
    elif kind == "multipleOf":
        problem = f"{shown} is not a multiple of {schema['multipleOf']}"
    elif kind in ("minItems", "maxItems", "uniqueItems", "minLength", "required"):
        problem = f"{shown}: {_cut(error.message)}"
    else:
        problem = _cut(error.message)
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
            programs = csrc_programs()
            if programs and app["program"] not in programs:
                problems.append(
                    f"{key}.program: {app['program']!r} is not a program of csrc (programs: "
                    f"{', '.join(programs)})"
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
                problems.append(
                    f"{key}.figure_of_merit.pattern: {inputs.quoted(pattern)} is invalid: {err}"
                )
                continue
            if groups < 1:
                problems.append(
                    f"{key}.figure_of_merit.pattern: {inputs.quoted(pattern)} has no group; "
                    "put the number in parentheses"
                )
    return problems


@functools.cache
def csrc_programs() -> tuple[str, ...]:
    """The programs csrc builds (not its libraries); none where csrc or make is absent."""
    from netnoise.build import list_programs

    try:
        names = list_programs(CSRC)
    except (OSError, subprocess.CalledProcessError):
        return ()
    return tuple(n for n in names if not n.endswith(".so"))


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


def nodes_beyond(available: int | None, wanted: dict[str, list[int]]) -> list[str]:
    """Problems of node counts (key -> counts) beyond the ``available`` nodes of the
    platform (netnoise.platform.Platform.max_nodes; None: no limit known)."""
    if available is None:
        return []
    return [
        f"{key}: {count} exceeds the platform's {available} nodes"
        for key, counts in wanted.items()
        for count in counts
        if count > available
    ]


def _platform_problems(platform: dict[str, Any]) -> list[str]:
    """Constraints between keys of the platform section."""
    problems = frame_problems(platform.get("testbed", {}), "platform.testbed")
    return problems + waiting.problems(platform.get("wait", {}), "platform.wait")


def _baseline_problems(config: dict[str, Any]) -> list[str]:
    """The baseline's ranks, one a node so that every pair crosses the network,
    within the nodes the platform has (where its config says how many)."""
    ranks = config.get("baseline", {}).get("ranks")
    if ranks is None or "platform" not in config:
        return []
    return nodes_beyond(from_config(config["platform"]).max_nodes, {"baseline.ranks": [ranks]})


def _cross_checks(config: dict[str, Any]) -> list[str]:
    """Constraints between keys that a JSON schema cannot express: the shared
    sections' here, each study's as its ``STUDY.checks`` says."""
    problems = _application_problems(config.get("applications", {}))
    problems += _platform_problems(config.get("platform", {}))
    problems += _baseline_problems(config)
    for study in studies.STUDIES:
        problems += study.checks(config)
    return problems


def validate(
    config: dict[str, Any], schema: dict[str, Any] | None = None, *, source: str = "config"
) -> dict[str, Any]:
    """Validate ``config`` in place, filling defaults; raise ConfigError on violations."""
    schema = schema if schema is not None else _schema(SCHEMA_PATH, _study_schemas())
    errors = sorted(
        _FillingValidator(schema).iter_errors(config), key=lambda e: list(e.absolute_path)
    )
    problems = [_describe(e) for e in errors] or _cross_checks(config)
    if problems:
        details = "; ".join(problems[:_SHOWN_PROBLEMS])
        if len(problems) > _SHOWN_PROBLEMS:
            details += f"; and {len(problems) - _SHOWN_PROBLEMS} more"
        raise ConfigError(
            f"invalid configuration ({source}): {details}. "
            "See docs/config.md for every key and its allowed values."
        )
    return config


def validate_platform(config: dict[str, Any], *, source: str = "config") -> dict[str, Any]:
    """The ``platform`` section of ``config``, validated alone with its defaults
    filled in, for what uses the platform only (``netnoise testbed``): a testbed
    of two nodes is a platform, though no study's defaults fit on it."""
    root = _schema(SCHEMA_PATH, ())
    schema = {
        **{k: v for k, v in root.items() if k != "properties"},
        "properties": {"platform": root["properties"]["platform"]},
        "additionalProperties": True,
    }
    section = {"platform": config.get("platform", {})}
    errors = sorted(_FillingValidator(schema).iter_errors(section), key=lambda e: e.path)
    problems = [_describe(e) for e in errors] or _platform_problems(section["platform"])
    if problems:
        raise ConfigError(
            f"invalid configuration ({source}): {'; '.join(problems[:_SHOWN_PROBLEMS])}. "
            "See docs/config.md for every key and its allowed values."
        )
    return section["platform"]


def load_platform(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The validated platform section of YAML config file ``path`` (:func:`validate_platform`)."""
    return validate_platform(read_yaml(path), source=str(path))


def load(path: str | os.PathLike[str], schema: dict[str, Any] | None = None) -> dict[str, Any]:
    """Read a YAML config file (:func:`read_yaml`) and validate it."""
    return validate(read_yaml(path), schema, source=str(path))


def load_files(paths: Sequence[str | os.PathLike[str]]) -> dict[str, Any]:
    """The config of a workflow run given ``paths`` (``--configfile``): the files
    read (:func:`read_yaml`) and merged in order as Snakemake merges them, then
    validated with defaults filled. Commands that run Snakemake call it first, so
    a bad file gets this module's error, not Snakemake's, and never reaches it."""
    merged: dict[str, Any] = {}
    for path in paths:
        merged = merge_like_snakemake(merged, read_yaml(path))
    return validate(merged, source=", ".join(map(str, paths)))


def merge_like_snakemake(base: Any, overlay: dict[str, Any]) -> Any:
    """``base`` updated in place by ``overlay`` as Snakemake merges ``--configfile``
    files (``snakemake.utils.update_config``): mappings merge key by key, anything
    else replaces. Written out here because checking a config must not need the
    workflow extra."""
    for key, value in overlay.items():
        if not isinstance(base, Mapping):
            base = {}
        if isinstance(value, Mapping):
            base[key] = merge_like_snakemake(base.get(key, {}), value)
        else:
            base[key] = value
    return base
