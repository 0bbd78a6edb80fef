"""Where a job's checkpoints live in a state store: one prefix per checkpoint, one object
per replica snapshot, and a ``_COMPLETE`` marker written last (a checkpoint without it
never happened)."""
from __future__ import annotations

import re


def snapshot_key(job_name: str, checkpoint_id: int, block: int, replica: int) -> str:
    return f"jobs/{job_name}/chk-{checkpoint_id:08d}/b{block}.r{replica}"


def complete_key(job_name: str, checkpoint_id: int) -> str:
    return f"jobs/{job_name}/chk-{checkpoint_id:08d}/_COMPLETE"


def checkpoint_prefix(job_name: str, checkpoint_id: int | None = None) -> str:
    return f"jobs/{job_name}/" if checkpoint_id is None else f"jobs/{job_name}/chk-{checkpoint_id:08d}/"


def window_prefix(job_name: str) -> str:
    """Segment backup's pending windows: one object per connector replica and version."""
    return f"jobs/{job_name}/windows/"


def window_key(job_name: str, block: int, replica: int, version: int) -> str:
    return f"{window_prefix(job_name)}b{block}.r{replica}/v{version:020d}"


def checkpoint_location(store_url: str, job_name: str, checkpoint_id: int) -> str:
    """Where a checkpoint lies, as ``segflow savepoint`` prints it (give the store URL with
    its password masked) and :func:`parse_location` reads it back."""
    return f"{store_url.rstrip('/')}/{checkpoint_prefix(job_name, checkpoint_id)}"


_LOCATION = re.compile(r"^(?P<store>[a-z0-9]+://.*?)/?jobs/(?P<job>[^/]+)/chk-(?P<id>\d+)/?$")


def parse_location(text: str) -> tuple[str, str, int] | None:
    """``(store URL, job name, checkpoint id)`` of a checkpoint's location as ``segflow
    savepoint`` prints it (``file:///state/jobs/wc/chk-00000012/``); None for anything else."""
    match = _LOCATION.match(text)
    if match is None:
        return None
    return match.group("store").rstrip("/"), match.group("job"), int(match.group("id"))
