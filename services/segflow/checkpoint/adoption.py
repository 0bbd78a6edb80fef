"""Restoring another job's savepoint: ``--restore`` (or a StreamJob's ``restoreFrom``) may
name a checkpoint's location as ``segflow savepoint`` prints it, of any job in any store.
The coordinator copies it into its own job before the workers start (re-sealed under this
job's name), and the job then restores it like one of its own: every restore path, the
rescaling one too, reads only the job's own checkpoints. Both jobs need the same state key
(``SEGFLOW_STATE_KEY``; one local key file serves every local job)."""
from __future__ import annotations

from typing import Callable

from ..errors import SegflowError
from ..state import open_backend
from .catalog import Catalog
from .layout import parse_location


def restore_point(catalog: Catalog, restore: str, check: Callable[[dict | None, str], None],
                  s3_endpoint: str = "") -> str:
    """``restore`` as this job's catalog resolves it: a location of another job's
    checkpoint becomes its id here, once copied (again on a restart: nothing is copied
    twice); anything else is returned as it is. ``check(layout, what)`` sees the other
    job's checkpoint's layout before anything is copied, and may refuse it by raising."""
    located = parse_location(restore)
    if located is None:
        return restore
    store, job, checkpoint_id = located
    if job == catalog.job and store == catalog.backend.url.rstrip("/"):
        return str(checkpoint_id)
    if checkpoint_id in catalog.complete_ids():
        adopted = (catalog.metadata(checkpoint_id) or {}).get("adopted_from")
        if adopted == {"job": job, "id": checkpoint_id}:
            return str(checkpoint_id)
    highest = catalog.highest_id()
    if checkpoint_id <= highest:
        raise SegflowError(f"job {catalog.job!r} already has checkpoints up to {highest} in {catalog.backend.url}: "
                           f"restore {job!r}'s checkpoint {checkpoint_id} into a job of its own (--job-name)")
    source = Catalog(open_backend(store, s3_endpoint or None), job)
    source.resolve(str(checkpoint_id))
    check((source.metadata(checkpoint_id) or {}).get("layout"), f"checkpoint {checkpoint_id} of job {job!r}")
    catalog.adopt(source, checkpoint_id)
    return str(checkpoint_id)
