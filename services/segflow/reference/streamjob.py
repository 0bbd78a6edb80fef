"""The StreamJob reference, read from the CRD's OpenAPI schema: every field of the spec
and the status with its type, default, constraints (enum, range, pattern, required) and
description, so the page says what the API server accepts.

A field's path is written as in ``kubectl explain``: ``checkpointing.interval``; an
array's items add ``[]`` and a map's values ``{}``.
"""
from __future__ import annotations

import json
from typing import Any, Iterator

from .markdown import cell, code, generated_note, table

Schema = dict[str, Any]


def fields(schema: Schema, path: str = "") -> Iterator[tuple[str, Schema, bool]]:
    """``(path, schema, required)`` of every property under ``schema``, depth first in
    the schema's order: an object's properties, an array's item properties, a map's
    value properties."""
    required = set(schema.get("required", ()))
    for name, prop in schema.get("properties", {}).items():
        here = f"{path}.{name}" if path else name
        yield here, prop, name in required
        yield from fields(prop, here)
    items = schema.get("items")
    if isinstance(items, dict):
        yield from fields(items, f"{path}[]")
    values = schema.get("additionalProperties")
    if isinstance(values, dict):
        yield from fields(values, f"{path}{{}}")


def type_of(schema: Schema) -> str:
    """The field's type in words: ``integer (int64)``, ``array of string``,
    ``map of string``, ``integer or string``."""
    if schema.get("x-kubernetes-int-or-string"):
        return "integer or string"
    if "anyOf" in schema:
        return " or ".join(type_of(option) for option in schema["anyOf"])
    kind = schema.get("type", "any")
    if kind == "array" and isinstance(schema.get("items"), dict):
        kind = f"array of {type_of(schema['items'])}"
    elif kind == "object" and isinstance(schema.get("additionalProperties"), dict):
        kind = f"map of {type_of(schema['additionalProperties'])}"
    return f"{kind} ({schema['format']})" if "format" in schema else kind


def constraints(schema: Schema, required: bool) -> list[str]:
    """What the API server checks beyond the type, as short Markdown phrases."""
    said = ["required"] if required else []
    if "enum" in schema:
        said.append("one of " + ", ".join(code(json.dumps(v) if not isinstance(v, str) else v)
                                          for v in schema["enum"]))
    for key, words in (("minimum", ">="), ("maximum", "<="), ("minLength", "length >="),
                       ("maxLength", "length <="), ("minItems", "items >="), ("maxItems", "items <=")):
        if key in schema:
            strict = schema.get(f"exclusive{key[0].upper()}{key[1:]}") is True
            said.append(f"{words.replace('=', '') if strict else words} {code(schema[key])}")
    if "pattern" in schema:
        said.append(f"matches {code(schema['pattern'])}")
    if schema.get("nullable"):
        said.append("nullable")
    if schema.get("x-kubernetes-preserve-unknown-fields"):
        said.append("any fields kept")
    return said


def streamjob_markdown(crd: dict) -> str:
    """The page: the resource's names, then per served version its printer columns and
    one table each for ``spec`` and ``status``."""
    spec = crd["spec"]
    names = spec["names"]
    lines = [generated_note("the CRD charts/segflow/crds/streamjobs.segflow.io.yaml"), "",
             f"# {names['kind']}", "",
             f"A {names['kind']} is a namespaced resource of the API group {code(spec['group'])} "
             f"(plural {code(names['plural'])}, short names "
             f"{', '.join(code(n) for n in names.get('shortNames', [])) or 'none'}); the operator runs each as a "
             "coordinator pod and worker pods. Below: every field of its spec and status, as its CRD declares it.",
             ""]
    for version in spec["versions"]:
        if not version.get("served", True):
            continue
        root = version["schema"]["openAPIV3Schema"]
        lines += [f"## {spec['group']}/{version['name']}", ""]
        columns = version.get("additionalPrinterColumns", [])
        if columns:
            lines += ["`kubectl get` shows:", ""]
            lines += table(["Column", "Type", "From", "Description"],
                           ([cell(c["name"]), cell(c["type"]), code(c["jsonPath"]), cell(c.get("description", ""))]
                            for c in columns)) + [""]
        for part in ("spec", "status"):
            schema = root["properties"].get(part)
            if schema is None:
                continue
            lines += [f"### {part}", ""]
            if schema.get("description"):
                lines += [cell(schema["description"]), ""]
            lines += table(["Field", "Type", "Default", "Constraints", "Description"],
                           ([code(path), cell(type_of(prop)), _default(prop),
                             "; ".join(constraints(prop, required)), cell(prop.get("description", ""))]
                            for path, prop, required in fields(schema))) + [""]
    return "\n".join(lines)


def _default(schema: Schema) -> str:
    return code(json.dumps(schema["default"])) if "default" in schema else ""
