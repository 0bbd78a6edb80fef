"""Disaster-recovery fencing in the job's processes (I/O around the pure rules in
``lease``).

The coordinator reads the lease before every checkpoint publish, and each worker before
writing a snapshot or pending-window part: both are refused unless this job's cluster
still holds the generation it was deployed with, before its deadline. Sinks commit and
windows are truncated only after a publish, so a cut-off old primary commits and deletes
nothing after a takeover, and writes nothing a later restore could read. The coordinator's
watcher also reads the lease every second (a short lease: every ``lease.step_seconds``)
and ends the job at the lease's deadline even
when the store does not answer, so the old primary's processes are gone before a standby
can have taken over.
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from ..errors import SegflowError
from ..observability.logs import event
from ..state import StateBackend, StateStoreError
from .lease import Lease, LeaseError, publish_refusal, step_seconds
from .lease_store import LeaseStore, VersionedStore

log = logging.getLogger("segflow.disaster")
WATCH_SECONDS = 1.0


class LeaseFence:
    def __init__(self, store: LeaseStore, owner: str, generation: int, clock: Callable[[], float] = time.time):
        self.store = store
        self.owner = owner
        self.generation = generation
        self.clock = clock
        self.last: Lease | None = None        # the lease as last read
        self.read_once = False

    def _read(self) -> None:
        self.last, _ = self.store.read()
        self.read_once = True

    def refusal(self) -> str:
        """Why this process must not write or publish now ("" if it may), from a fresh read."""
        try:
            self._read()
        except (StateStoreError, LeaseError) as exc:
            return f"cannot read the lease: {exc}"
        return publish_refusal(self.last, self.owner, self.generation, self.clock())

    def overdue(self) -> str:
        """Why the job must end now ("" if not): another holder, or past the deadline of the
        last lease read, whether or not the store answers now."""
        try:
            self._read()
        except (StateStoreError, LeaseError):
            if not self.read_once:
                return ""
        return publish_refusal(self.last, self.owner, self.generation, self.clock())

    def watch(self, fail: Callable[[str], None], done: threading.Event) -> None:
        """Until ``done``: end the job (``fail``) once the lease is lost."""
        while not done.wait(step_seconds(self.last.ttl) if self.last is not None else WATCH_SECONDS):
            reason = self.overdue()
            if reason:
                event(log, logging.ERROR, "fenced", owner=self.owner, generation=self.generation, reason=reason)
                fail(reason)
                return


def lease_fence(backend: StateBackend, state_url: str, job_name: str, owner: str,
                generation: int) -> LeaseFence | None:
    """The fence of a job deployed under ``generation`` of its lease, reading the lease
    through the job's own store; None when no lease fences the job (generation 0)."""
    if not generation:
        return None
    if not isinstance(backend, VersionedStore):
        raise SegflowError("a lease fences only a job whose state store keeps versioned objects: use an s3:// "
                           "state URL with disasterRecovery")
    return LeaseFence(LeaseStore(state_url, job_name, backend=backend), owner, generation)
