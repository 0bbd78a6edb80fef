"""``segflow checkpoints ls|show|rm``: what a state store holds, for any state URL.

Markers are sealed (``state/sealing.py``), so this reads them with the same state key as the
jobs (``SEGFLOW_STATE_KEY``, else the local key file); a checkpoint whose marker fails its
check is listed as such, never decoded.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import time

from ..checkpoint.catalog import Catalog, jobs_in
from ..checkpoint.layout import checkpoint_location
from ..checkpoint.local_records import StoredLine, decode_line
from ..errors import SegflowError
from ..redaction import redact_url
from ..runtime.elements import checkpoint_label
from ..state import open_backend
from ..state.sealing import TamperedState
from .checkpoint_args import LINE
from .progress_bar import human


def describe(checkpoint_id: int, complete: bool, record: dict | None, damaged: bool) -> dict:
    """One row of ``ls``: pure, from what the store holds of a checkpoint."""
    if damaged:
        kind = "integrity check failed"
    elif not complete:
        kind = "incomplete"
    else:
        kind = "savepoint" if (record or {}).get("savepoint") else "checkpoint"
    record = record or {}
    when = record.get("time")
    return {"id": checkpoint_label(checkpoint_id), "kind": kind,
            "time": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(when)) if when else "",
            "bytes": human(record["bytes"]) + "B" if "bytes" in record else "",
            "seconds": f"{record['seconds']:.2f}" if "seconds" in record else ""}


def describe_line(stored: StoredLine | None, damaged: bool) -> dict:
    """The ``ls`` row of an uncoordinated job's stored stable line: pure."""
    kind = "integrity check failed" if damaged else "unreadable" if stored is None else "recovery line"
    when = stored.written if stored is not None else None
    return {"id": LINE, "kind": kind, "time": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(when)) if when else "",
            "bytes": "", "seconds": ""}


def _stable_line(catalog: Catalog) -> tuple[bool, StoredLine | None, bool]:
    """Whether ``catalog``'s job has a stored stable line: ``(present, decoded or None, damaged)``."""
    try:
        data = catalog.read_stable_line()
    except TamperedState:
        return True, None, True
    try:
        return data is not None, None if data is None else decode_line(data), False
    except ValueError:
        return True, None, False


def _record(catalog: Catalog, checkpoint_id: int, complete: bool) -> tuple[dict | None, bool]:
    if not complete:
        return None, False
    try:
        return catalog.metadata(checkpoint_id), False
    except TamperedState:
        return None, True


def _table(rows: list[dict], columns: list[str]) -> str:
    widths = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in columns}
    lines = ["  ".join(c.upper().ljust(widths[c]) for c in columns)]
    lines += ["  ".join(str(r[c]).ljust(widths[c]) for c in columns) for r in rows]
    return "\n".join(line.rstrip() for line in lines)


def cmd_checkpoints(args: argparse.Namespace) -> int:
    endpoint = args.s3_endpoint or os.environ.get("AWS_ENDPOINT_URL")
    with contextlib.closing(open_backend(args.state, endpoint)) as backend:
        present = jobs_in(backend)
        if args.job and args.job not in present:
            raise SegflowError(f"no job {args.job!r} in {redact_url(args.state)}; jobs there: "
                               f"{', '.join(present) or 'none'}")
        jobs = [args.job] if args.job else present
        return {"ls": _ls, "show": _show, "rm": _rm}[args.action](backend, jobs, args)


def _ls(backend, jobs: list[str], args: argparse.Namespace) -> int:
    rows = []
    for job in jobs:
        catalog = Catalog(backend, job)
        for checkpoint_id, (_, complete) in catalog.stored().items():
            record, damaged = _record(catalog, checkpoint_id, complete)
            rows.append({"job": job, **describe(checkpoint_id, complete, record, damaged)})
        present, stored, damaged = _stable_line(catalog)
        if present:
            rows.append({"job": job, **describe_line(stored, damaged)})
    if not rows:
        print(f"no checkpoints in {redact_url(args.state)}")
        return 0
    print(_table(rows, ["job", "id", "kind", "time", "bytes", "seconds"]))
    return 0


def _stored(catalog: Catalog, stored: dict, checkpoint_id: int, state: str) -> tuple[list[str], bool]:
    """What ``stored`` (the catalog's listing) holds of ``checkpoint_id``, or a clear error."""
    if checkpoint_id not in stored:
        known = ", ".join(checkpoint_label(i) for i in list(stored)[-10:]) or "none"
        raise SegflowError(f"job {catalog.job!r} has no checkpoint {checkpoint_id} in {redact_url(state)}; "
                           f"it has: {known}")
    return stored[checkpoint_id]


def _show(backend, jobs: list[str], args: argparse.Namespace) -> int:
    catalog = Catalog(backend, jobs[0])
    if args.id == LINE:
        return _show_line(catalog, args.state)
    keys, complete = _stored(catalog, catalog.stored(), args.id, args.state)
    record, damaged = _record(catalog, args.id, complete)
    location = checkpoint_location(redact_url(args.state), catalog.job, args.id)
    print(json.dumps({"job": catalog.job, **describe(args.id, complete, record, damaged),
                      "record": record, "location": location, "objects": keys}, indent=2))
    return 0


def _show_line(catalog: Catalog, state: str) -> int:
    present, stored, damaged = _stable_line(catalog)
    if not present:
        raise SegflowError(f"job {catalog.job!r} has no stored stable line in {redact_url(state)}: only the "
                           "uncoordinated protocols (uncoordinated, cic) store one, once every replica has "
                           "taken a local checkpoint")
    checkpoints = {} if stored is None else {str(r.process): r.index for r in stored.line}   # process names
    print(json.dumps({"job": catalog.job, **describe_line(stored, damaged), "line": checkpoints,
                      "location": f"{redact_url(state).rstrip('/')}/{catalog.stable_line_key()}",
                      "objects": [catalog.local_key(p, i) for p, i in sorted(checkpoints.items())]}, indent=2))
    return 0


def _rm(backend, jobs: list[str], args: argparse.Namespace) -> int:
    catalog = Catalog(backend, jobs[0])
    stored = catalog.stored()
    for checkpoint_id in args.ids:      # all named ones exist before any goes
        _stored(catalog, stored, checkpoint_id, args.state)
    for checkpoint_id in args.ids:
        removed = catalog.remove(checkpoint_id)
        print(f"removed checkpoint {checkpoint_label(checkpoint_id)} of {catalog.job} ({removed} objects)")
    return 0
