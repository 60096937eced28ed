"""``netnoise config docs``: the configuration reference, ``docs/config.md``,
written from the JSON schemas (``workflow/schemas/*.schema.yaml``).

The schemas are the one place a key is described; this page shows each key
once, with its description, unit, default and allowed values, so that the
manual cannot drift from what the workflow accepts
(``tests/core/test_config_docs.py`` fails when the page is not the rendering of
the schemas).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from netnoise import config as netnoise_config

#: Units named by the suffix of a key.
UNITS = {
    "mbit": "Mbit/s",
    "bytes": "bytes",
    "mb": "MB (10^6 bytes)",
    "s": "seconds",
    "seconds": "seconds",
    "ms": "milliseconds",
    "us": "microseconds",
    "hz": "Hz",
    "cycles": "CPU cycles",
    "pct": "%",
}
HEADER = (
    "# Configuration reference\n\n"
    "<!-- Written by `netnoise config docs` from workflow/schemas/*.schema.yaml: "
    "change a description in its schema, then run `netnoise config docs`. -->\n"
)
_INTERNAL_REF = re.compile(r"^#/\$defs/(\w+)$")


def unit(key: str) -> str | None:
    """The unit a key's name gives by its suffix (``timeout_s``: seconds), or None."""
    suffix = key.rsplit(".", 1)[-1].rsplit("_", 1)
    return UNITS.get(suffix[1]) if len(suffix) == 2 else None


def _resolved(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """``node`` with its ``$ref`` and ``allOf`` to the main schema's ``$defs`` merged in."""
    merged = dict(node)
    refs = [merged.pop("$ref")] if "$ref" in merged else []
    refs += [part["$ref"] for part in merged.pop("allOf", []) if "$ref" in part]
    for ref in refs:
        found = _INTERNAL_REF.match(ref.split("config.schema.yaml", 1)[-1])
        if found and found.group(1) in defs:
            merged = {**_resolved(defs[found.group(1)], defs), **merged}
    return merged


def _number(value: Any) -> str:
    # Thousands separators keep long numbers readable (and unlike a revision).
    if isinstance(value, bool) or not isinstance(value, int | float):
        return json.dumps(value)
    if isinstance(value, int) or value.is_integer():
        return f"{int(value):,}"
    return repr(value)


def _value(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, str):
        return json.dumps(value)
    return "null" if value is None else _number(value)


def _code(text: str) -> str:
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def allowed(node: dict[str, Any]) -> str:
    """What values a key takes, in words: its values, type, range, pattern, list rules."""
    if "enum" in node:
        return "one of " + ", ".join(_code(_value(v)) for v in node["enum"])
    parts = []
    types = node.get("type")
    if types:
        parts.append(" or ".join(types) if isinstance(types, list) else types)
    bounds = [
        (word, node[name])
        for name, word in (
            ("minimum", ">="),
            ("exclusiveMinimum", ">"),
            ("maximum", "<="),
            ("exclusiveMaximum", "<"),
        )
        if name in node
    ]
    if bounds:
        parts.append(", ".join(f"{word} {_number(v)}" for word, v in bounds))
    if "pattern" in node:
        parts.append(f"matching {_code(node['pattern'])}")
    if "minLength" in node:
        parts.append(f"at least {node['minLength']} character(s)")
    if "minItems" in node or "maxItems" in node:
        low, high = node.get("minItems"), node.get("maxItems")
        parts.append(
            f"{low}-{high} items" if low is not None and high is not None
            else f"at least {low} item(s)" if low is not None else f"at most {high} items"
        )  # fmt: skip
    if node.get("uniqueItems"):
        parts.append("no item twice")
    return "; ".join(parts)


def keys(schema: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every key of the config, depth first, as (dotted name, resolved schema node)."""
    defs = schema.get("$defs", {})

    def walk(node: dict[str, Any], prefix: str) -> Iterator[tuple[str, dict[str, Any]]]:
        for name, sub in node.get("properties", {}).items():
            key = f"{prefix}.{name}" if prefix else name
            sub = _resolved(sub, defs)
            yield key, sub
            yield from walk(sub, key)
            items = sub.get("items")
            if isinstance(items, dict):
                yield from walk(_resolved(items, defs), f"{key}[]")
            entries = sub.get("additionalProperties")
            if isinstance(entries, dict):
                yield from walk(_resolved(entries, defs), f"{key}.<name>")

    yield from walk(schema, "")


def _entry(key: str, node: dict[str, Any], defs: dict[str, Any]) -> str:
    # A section (a top-level key) is a chapter of the page, its keys entries in it.
    heading = "##" if "." not in key else "###"
    lines = [f"{heading} `{key}`", "", " ".join(str(node.get("description", "")).split()), ""]
    facts = []
    if unit(key):
        facts.append(f"- unit: {unit(key)}")
    if "default" in node:
        facts.append(f"- default: {_code(_value(node['default']))}")
    took = allowed(node)
    items = node.get("items")
    if isinstance(items, dict):
        each = allowed(_resolved(items, defs))
        if each:
            took = f"{took}; each item {each}" if took else f"each item {each}"
    if took:
        facts.append(f"- allowed: {took}")
    return "\n".join(lines + facts) + "\n"


def render(schema: dict[str, Any] | None = None) -> str:
    """The text of ``docs/config.md``."""
    schema = schema if schema is not None else netnoise_config.load_schema()
    defs = schema.get("$defs", {})
    parts = [HEADER, str(schema.get("description", "")).strip() + "\n"]
    parts += [_entry(key, node, defs) for key, node in keys(schema)]
    return "\n".join(parts)
