"""What ``kubectl logs`` asks the kubelet for, and which bytes of a container's log answer
it (pure functions; kubeletapi.py serves them).

A container's log is one file that each run appends to; the agent records the offset at
which each run began, so the current run (the last one, also when it has ended and waits to
restart) and the previous one (``--previous``) are spans of that file. Supported query
parameters, as the API server passes them: ``previous``, ``tailLines``, ``limitBytes``,
``follow``; ``timestamps`` and ``sinceSeconds``/``sinceTime`` are refused (no timestamps
are kept per line).
"""
from __future__ import annotations

from dataclasses import dataclass


class LogQueryError(ValueError):
    """The query cannot be answered (400 Bad Request)."""


class NoSuchRun(LookupError):
    """The container has not run (or has no previous run) yet."""


@dataclass(frozen=True)
class LogQuery:
    previous: bool = False
    tail_lines: int | None = None
    limit_bytes: int | None = None
    follow: bool = False


def _flag(values: list[str]) -> bool:
    return values[-1].lower() in ("true", "1")


def _count(name: str, values: list[str]) -> int:
    try:
        number = int(values[-1])
    except ValueError:
        raise LogQueryError(f"{name}={values[-1]!r} is not a whole number") from None
    if number < 0:
        raise LogQueryError(f"{name} must not be negative")
    return number


def parse_query(query: dict[str, list[str]]) -> LogQuery:
    """The parsed query string of ``/containerLogs/...`` (``urllib.parse.parse_qs``)."""
    for refused in ("sinceSeconds", "sinceTime"):
        if refused in query:
            raise LogQueryError(f"{refused} is not supported by the segflow node agent (it keeps no time per line): "
                                f"use --tail")
    if "timestamps" in query and _flag(query["timestamps"]):
        raise LogQueryError("timestamps are not supported by the segflow node agent (it keeps no time per line)")
    return LogQuery(previous=_flag(query.get("previous", ["false"])),
                    tail_lines=_count("tailLines", query["tailLines"]) if "tailLines" in query else None,
                    limit_bytes=_count("limitBytes", query["limitBytes"]) if "limitBytes" in query else None,
                    follow=_flag(query.get("follow", ["false"])))


def run_span(runs: list[int], size: int, previous: bool) -> tuple[int, int]:
    """The [start, end) bytes of the current run (or the one before it) in a log of ``size``
    bytes whose runs began at the offsets ``runs``."""
    index = len(runs) - (2 if previous else 1)
    if index < 0:
        raise NoSuchRun("previous terminated container not found" if previous else "container has not started yet")
    end = runs[index + 1] if index + 1 < len(runs) else size
    return runs[index], end


def select(data: bytes, query: LogQuery) -> bytes:
    """The last ``tailLines`` lines of a run's bytes, then at most ``limitBytes`` of them
    (the kubelet applies them in that order)."""
    if query.tail_lines is not None:
        lines = data.splitlines(keepends=True)
        data = b"".join(lines[len(lines) - query.tail_lines:]) if query.tail_lines < len(lines) else data
    if query.limit_bytes is not None:
        data = data[:query.limit_bytes]
    return data
