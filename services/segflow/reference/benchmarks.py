"""The benchmarks page, made from the results files the bench scripts write
(bench/common.report: one file per run, with its date, commit and machine) and from each
bench script's docstring, its method: no figure on the page is typed by hand.

For each bench: its method, its newest run's figures in full, and every run it has.
"""
from __future__ import annotations

import ast
import json
import re
from typing import Any, Iterator

from .markdown import cell, code, generated_note, table

Run = tuple[str, dict[str, Any]]            # (the results file's path, its record)


def method_of(source: str) -> str:
    """A bench script's method: its module docstring (Python source ``source``, parsed,
    not imported: a bench imports what it measures)."""
    return ast.get_docstring(ast.parse(source)) or ""


def benchmarks_markdown(runs: list[Run], methods: dict[str, str]) -> str:
    """The page: ``runs`` (any order) and each bench's method by its name."""
    by_bench: dict[str, list[Run]] = {name: [] for name in methods}
    for run in runs:
        by_bench.setdefault(run[1]["bench"], []).append(run)
    for bench_runs in by_bench.values():
        bench_runs.sort(key=_age, reverse=True)
    lines = [generated_note("bench/results/**/*.json and the bench scripts' docstrings"), "", "# Benchmarks", "",
             "Benchmarks are not tests: each compares systems or settings within one run, on one machine. Every "
             "run a bench makes is kept as a results file, `bench/results/BENCH/DATE-COMMIT.json`, with its date, "
             "commit, machine and arguments, and this page is generated from those files. Runs recorded before "
             "the results files existed were transcribed from the README of the time; they say so, and their "
             "machine was not recorded. Figures from different runs differ with the machine and its load as much "
             "as with the code: compare within a run.", ""]
    lines += table(["Bench", "Runs", "Newest run"],
                   ([f"[{code(name)}](#{_anchor(name)})", str(len(bench_runs)),
                     _when(bench_runs[0][1]) if bench_runs else "none yet"]
                    for name, bench_runs in sorted(by_bench.items()))) + [""]
    for name, bench_runs in sorted(by_bench.items()):
        lines += [f"## {name}", "", "### Method", "", methods.get(name) or "(no docstring)", ""]
        if not bench_runs:
            lines += ["No run recorded yet.", ""]
            continue
        newest = bench_runs[0][1]
        lines += ["### Newest run", "", *_about(bench_runs[0]), ""]
        lines += _result_tables(newest["result"])
        lines += ["### Every run", ""]
        lines += [f"- {_when(record)}, {_argv(record)}: {code(path)}" for path, record in bench_runs] + [""]
    return "\n".join(lines)


def _age(run: Run) -> tuple[str, str, int]:
    """A run's place in time: its date, then (runs transcribed from the README know only
    their day) when the record was written down, then the ``-N`` of a later run of the same
    day and commit (bench/common.report names them so)."""
    path, record = run
    suffix = re.search(r"-(\d+)\.json$", path)
    return record["date"], record.get("recorded", ""), int(suffix.group(1)) if suffix else 1


def _anchor(name: str) -> str:
    """The id MkDocs gives the heading ``## name`` (lower case, ``_`` kept)."""
    return name.lower()


def _when(record: dict) -> str:
    commit = record.get("commit")
    return f"{record['date']}, " + (f"commit {code(commit)}" if commit else "commit not recorded")


def _argv(record: dict) -> str:
    argv = record.get("argv")
    if argv is None:
        return "arguments not recorded"
    return code(" ".join([f"bench/{record['bench']}.py", *argv]))


def _about(run: Run) -> list[str]:
    path, record = run
    machine = record.get("machine")
    lines = [f"- When: {_when(record)}", f"- Command: {_argv(record)}",
             f"- Machine: {_machine(machine) if machine else 'not recorded'}", f"- File: {code(path)}"]
    if record.get("source"):
        lines.append(f"- Source: {cell(record['source'])}")
    if record.get("note"):
        lines.append(f"- Note: {cell(record['note'])}")
    return lines


def _machine(machine: dict) -> str:
    """What is known of the machine (a transcribed run may know only its CPU count)."""
    said = [f"{machine['cpu_count']} CPUs" if machine.get("cpu_count") else "",
            machine.get("cpu_model") or "", f"{machine['memory_gb']} GB" if machine.get("memory_gb") else "",
            f"Python {machine['python']}" if machine.get("python") else "", machine.get("system") or "",
            f"({machine['note']})" if machine.get("note") else ""]
    return cell(", ".join(part for part in said if part))


def _result_tables(result: Any) -> list[str]:
    """The result's plain figures in one table (by their dotted paths), and each list of
    rows (e.g. one per configuration) in a table of its own."""
    figures: list[tuple[str, Any]] = []
    row_lists: list[tuple[str, list[dict]]] = []
    for path, value in _walk(result, ""):
        (row_lists if isinstance(value, list) else figures).append((path, value))
    lines = table(["Figure", "Value"], ([code(path or "result"), code(_text(value))] for path, value in figures))
    lines.append("")
    for path, rows in row_lists:
        columns = list(dict.fromkeys(key for row in rows for key in row))
        lines += [f"{code(path)}:", ""]
        lines += table([code(c) for c in columns], ([code(_text(row.get(c, ""))) for c in columns] for row in rows))
        lines.append("")
    return lines


def _walk(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    """``(path, value)`` of every figure; a non-empty list of mappings is one value (rows)."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _walk(inner, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        yield path, value
    else:
        yield path, json.dumps(value) if isinstance(value, list) else value


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)
