"""The few Markdown pieces every generated page is made of: tables whose cells survive
any text (pipes escaped, line breaks joined), code spans, and the note that says a page
is generated, so nobody edits it by hand."""
from __future__ import annotations

from typing import Iterable, Sequence


def generated_note(source: str) -> str:
    """An HTML comment (invisible on the site) naming the page's source and how to
    regenerate it."""
    return (f"<!-- Generated from {source} by `python -m segflow.reference --write` (make docs-reference); "
            "edit the source, not this page. -->")


def cell(text: str) -> str:
    """``text`` as one table cell: one line, its pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def code(text: object) -> str:
    """A code span that holds any text on one line, backticks included. Pipes stay as
    they are: Python-Markdown's tables (MkDocs') do not split a cell inside a code span,
    and an escaped pipe would show its backslash there."""
    text = " ".join(str(text).split())
    fence = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def table(headers: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    """A Markdown table; the cells are already Markdown (see :func:`cell`, :func:`code`)."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines
