"""Where a job's state lies in a state store: the one module that builds the store's keys
and reads them back, so a reader of the store and a writer never disagree.

Under ``jobs/<job>/``:

- ``chk-<id>/b<block>.r<replica>``: one object per replica snapshot of a checkpoint, and
  ``chk-<id>/_COMPLETE`` (its metadata), written last: a checkpoint without it never
  happened;
- ``windows/b<block>.r<replica>/v<version>``: segment backup's pending windows, one
  object per connector replica and version;
- ``unc/<process>/<index>`` and ``unc/<process>/<index>.log``: the uncoordinated
  protocols' local checkpoints and log segments, and ``unc/_STABLE``, the newest stable
  line;
- ``_PROTOCOL``: the protocol whose history the job's state continues.
"""
from __future__ import annotations

import re

from ..plan.placement import parse_replica_name, replica_name

JOBS = "jobs/"
COMPLETE = "_COMPLETE"
LOG_SUFFIX = ".log"

_CHECKPOINT = re.compile(rf"^{JOBS}[^/]+/chk-(\d{{8,}})/")
_VERSION = re.compile(r"v(\d+)")


def job_prefix(job_name: str) -> str:
    return f"{JOBS}{job_name}/"


def checkpoint_prefix(job_name: str, checkpoint_id: int | None = None) -> str:
    """Every checkpoint of the job (``checkpoint_id`` None), or one."""
    jobs = job_prefix(job_name)
    return jobs if checkpoint_id is None else f"{jobs}chk-{checkpoint_id:08d}/"


def snapshot_key(job_name: str, checkpoint_id: int, block: int, replica: int) -> str:
    return checkpoint_prefix(job_name, checkpoint_id) + replica_name(block, replica)


def complete_key(job_name: str, checkpoint_id: int) -> str:
    return checkpoint_prefix(job_name, checkpoint_id) + COMPLETE


def window_prefix(job_name: str) -> str:
    return f"{job_prefix(job_name)}windows/"


def window_key(job_name: str, block: int, replica: int, version: int) -> str:
    return f"{window_prefix(job_name)}{replica_name(block, replica)}/v{version:020d}"


def local_prefix(job_name: str) -> str:
    """Everything the uncoordinated protocols keep for the job."""
    return f"{job_prefix(job_name)}unc/"


def local_key(job_name: str, process: str, index: int) -> str:
    return f"{local_prefix(job_name)}{process}/{index:08d}"


def log_key(job_name: str, process: str, index: int) -> str:
    """The log segment stored with local checkpoint ``index``."""
    return local_key(job_name, process, index) + LOG_SUFFIX


def stable_line_key(job_name: str) -> str:
    return f"{local_prefix(job_name)}_STABLE"


def protocol_key(job_name: str) -> str:
    return f"{job_prefix(job_name)}_PROTOCOL"


def segment_choice_key(job_name: str) -> str:
    """What ``segflow plan --segment-backup`` measured and chose for the job (JSON)."""
    return f"{job_prefix(job_name)}_SEGMENT_CHOICE"


def checkpoint_of(key: str) -> int | None:
    """The checkpoint id of a key under some job's ``chk-<id>/`` (None: not one)."""
    match = _CHECKPOINT.match(key)
    return int(match.group(1)) if match else None


def is_complete_marker(key: str) -> bool:
    return key.endswith("/" + COMPLETE)


def snapshot_of(key: str) -> tuple[int, int] | None:
    """``(block, replica)`` of a replica snapshot's key (None: not one)."""
    return parse_replica_name(key.rpartition("/")[2])


def window_of(key: str) -> tuple[int, int, int] | None:
    """``(block, replica, version)`` of a pending window part's key (None: not one)."""
    rest, _, version = key.rpartition("/")
    replica, match = parse_replica_name(rest.rpartition("/")[2]), _VERSION.fullmatch(version)
    return (*replica, int(match.group(1))) if replica and match else None


def local_of(job_name: str, key: str) -> tuple[str, int] | None:
    """``(process, index)`` of one of the job's local checkpoint or log segment keys
    (None: not one)."""
    match = re.match(rf"^{re.escape(local_prefix(job_name))}([^/]+)/(\d+)(\.log)?$", key)
    return (match.group(1), int(match.group(2))) if match else None


def is_log(key: str) -> bool:
    return key.endswith(LOG_SUFFIX)


def job_of(key: str) -> str | None:
    """The job a key of the store belongs to (None: no job's)."""
    parts = key.split("/")
    return parts[1] if len(parts) >= 3 and key.startswith(JOBS) else None


def checkpoint_location(store_url: str, job_name: str, checkpoint_id: int) -> str:
    """Where a checkpoint lies, as ``segflow savepoint`` prints it (give the store URL with
    its password masked) and :func:`parse_location` reads it back."""
    return f"{store_url.rstrip('/')}/{checkpoint_prefix(job_name, checkpoint_id)}"


_LOCATION = re.compile(rf"^(?P<store>[a-z0-9]+://.*?)/?{JOBS}(?P<job>[^/]+)/chk-(?P<id>\d+)/?$")


def parse_location(text: str) -> tuple[str, str, int] | None:
    """``(store URL, job name, checkpoint id)`` of a checkpoint's location as ``segflow
    savepoint`` prints it (``file:///state/jobs/wc/chk-00000012/``); None for anything else."""
    match = _LOCATION.match(text)
    if match is None:
        return None
    return match.group("store").rstrip("/"), match.group("job"), int(match.group("id"))
