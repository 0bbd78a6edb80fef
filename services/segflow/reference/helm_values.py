"""The Helm values reference, read from the chart's values.yaml: every value with its
default, and the comment written above it (or after it, on its line) as its
description, so the file stays the one place a value is explained.

The YAML library drops comments, so they are read from the text: a run of full-line
comments directly above a key (no blank line between) describes that key; a blank line
ends a run.
"""
from __future__ import annotations

import json
import re
from typing import Any, Iterator

from .markdown import cell, code, generated_note, table

_KEY = re.compile(r"^(?P<indent> *)(?P<key>[A-Za-z0-9_.-]+):(?P<rest>.*)$")


def comments(text: str) -> dict[str, str]:
    """Each key's description by its dotted path (keys of block mappings only: a flow
    mapping's keys have no line of their own)."""
    described: dict[str, str] = {}
    parents: list[tuple[int, str]] = []          # (indent, key) of the mappings the line is in
    pending: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            pending = []
        elif stripped.startswith("#"):
            pending.append(stripped.lstrip("#").strip())
        elif (match := _KEY.match(line)) is not None:
            indent = len(match["indent"])
            parents = [(i, k) for i, k in parents if i < indent]
            path = ".".join([k for _, k in parents] + [match["key"]])
            words = pending + [_trailing_comment(match["rest"])]
            if any(words):
                described[path] = " ".join(w for w in words if w)
            parents.append((indent, match["key"]))
            pending = []
    return described


def values(data: dict[str, Any], path: str = "") -> Iterator[tuple[str, Any]]:
    """``(dotted path, value)`` of every key, a mapping before its keys, in file order;
    an empty mapping or any list is one value."""
    for key, value in data.items():
        here = f"{path}.{key}" if path else str(key)
        yield here, value
        if isinstance(value, dict):
            yield from values(value, here)


def helm_values_markdown(text: str, data: dict[str, Any], chart: str = "segflow") -> str:
    """The page: one table of every value of the chart's values.yaml, its ``text`` (for
    the comments) and ``data`` (that text parsed)."""
    described = comments(text)
    rows = ([code(path), _type(value), "" if _is_mapping(value) else code(json.dumps(value)),
             cell(described.get(path, ""))] for path, value in values(data))
    return "\n".join([generated_note(f"charts/{chart}/values.yaml and its comments"), "", "# Helm values", "",
                      f"The values of the {code(chart)} chart (charts/{chart}) with their defaults; set them with "
                      f"`helm install --set key=value` or `-f my-values.yaml`. A mapping's keys follow it, by their "
                      "dotted paths.", ""]
                     + table(["Key", "Type", "Default", "Description"], rows) + [""])


def _is_mapping(value: Any) -> bool:
    return isinstance(value, dict) and bool(value)


def _type(value: Any) -> str:
    for kind, name in ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"),
                       (list, "list"), (dict, "map")):
        if isinstance(value, kind):
            return name
    return "null"


def _trailing_comment(rest: str) -> str:
    """The comment after a key's value on its line, if any (a ``#`` inside quotes is
    part of the value)."""
    quote = None
    for index, char in enumerate(rest):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or rest[index - 1].isspace()):
            return rest[index + 1:].strip()
    return ""
