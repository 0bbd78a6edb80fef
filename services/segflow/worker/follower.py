"""A hot standby's worker follows the primary's store (``disasterRecovery.standby: hot``).

While its cluster awaits the job's lease, the worker lists the job's keys every
``follow_interval`` s (one LIST with ETags: :func:`segflow.checkpoint.follow.plan_follow`
decides), GETs only what is new or rewritten, checks each seal and keeps the snapshots
decoded in memory. It never writes to the store and never publishes: it holds no
lease generation and has no fence to pass.

On a takeover the worker's assignment names the versions to restore. :meth:`Follower.take`
stops following, follows once more (the old holder can publish no more: the lease has
moved) and hands the restore a :class:`FollowedCatalog`, which serves a snapshot from
memory only if it is exactly the key the restore asks for, with the ETag the store lists
now; anything else is read from the store as a warm standby reads it.
"""
from __future__ import annotations

import logging
import pickle
import threading
import time
from typing import Callable

from prometheus_client import CollectorRegistry
from prometheus_client.core import GaugeMetricFamily

from ..checkpoint import layout
from ..checkpoint.catalog import Catalog
from ..checkpoint.follow import plan_follow, version_of
from ..observability.follow_metrics import FOLLOWED_VERSION, LAG_SECONDS, LAG_VERSIONS
from ..observability.logs import event
from ..settings import CheckpointSettings
from ..state import StateBackend, StateStoreError, open_backend
from ..state.sealing import TamperedState

log = logging.getLogger("segflow.worker")


class FollowedCatalog(Catalog):
    """The job's catalog for one restore, serving what the follower holds: each decoded
    snapshot once (a second restore of the same replica reads the store), window parts
    until :meth:`forget`. Counts what it served (``followed``) and what it read (``read``)."""

    def __init__(self, backend: StateBackend, job_name: str, snapshots: dict[str, dict], windows: dict[str, bytes]):
        super().__init__(backend, job_name)
        self.snapshots = snapshots
        self.windows = windows
        self.followed = 0
        self.reads = 0

    def read_state(self, checkpoint_id: int, block: int, replica: int) -> dict | None:
        state = self.snapshots.pop(layout.snapshot_key(self.job, checkpoint_id, block, replica), None)
        if state is not None:
            self.followed += 1
            return state
        return super().read_state(checkpoint_id, block, replica)

    def _get(self, key: str) -> bytes | None:
        part = self.windows.get(key)
        if part is not None:
            self.followed += 1
            return part
        self.reads += 1
        return super()._get(key)

    def forget(self) -> None:
        """The restore is over: from now on this attempt writes the store itself (segment
        backup may take a version again under a key the follower held), so every read
        goes to the store."""
        self.snapshots.clear()
        self.windows.clear()


class Follower:
    """Follows one job's store on a thread of its own until :meth:`take` or :meth:`stop`."""

    def __init__(self, settings: CheckpointSettings, clock: Callable[[], float] = time.time):
        self.settings = settings
        self.clock = clock
        self.backend = open_backend(settings.state_url, settings.s3_endpoint or None)
        self.catalog = Catalog(self.backend, settings.job_name)
        self.held: dict[str, str] = {}            # key -> the ETag it was read with
        self.snapshots: dict[str, dict] = {}
        self.windows: dict[str, bytes] = {}
        self.version = 0                          # the newest version held
        self.lag_versions = 0                     # the newest restorable version listed, less ``version``
        self.followed_at = 0.0                    # when a follow last completed
        self.lists = self.gets = 0
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, name="follow", daemon=True)

    def start(self) -> "Follower":
        event(log, logging.INFO, "hot standby follows the store", job=self.settings.job_name,
              interval=self.settings.follow_interval)
        self.thread.start()
        return self

    def _run(self) -> None:
        failed = ""
        while not self.stopped.is_set():
            try:
                self.step()
                failed = ""
            except StateStoreError as exc:
                if str(exc) != failed:
                    failed = str(exc)
                    event(log, logging.WARNING, "hot standby cannot follow the store; trying again", error=failed)
            self.stopped.wait(self.settings.follow_interval)

    def step(self, final: bool = False) -> None:
        """One follow: a LIST, then a GET of each key that is new or rewritten. Stopped
        (the worker has its assignment), a follow ends at its next GET unless it is the
        ``final`` one of a takeover."""
        tagged = getattr(self.backend, "list_tagged", None)
        if tagged is None:
            raise StateStoreError(f"a hot standby follows an S3 store, not {self.backend.url}")
        listing = tagged(layout.job_prefix(self.settings.job_name))
        with self.lock:
            self.lists += 1
            plan = plan_follow(listing, self.held, self.settings.job_name, self.settings.protocol.segment_backup)
            for key in plan.drop:
                self.held.pop(key, None)
                self.snapshots.pop(key, None)
                self.windows.pop(key, None)
            for key in plan.fetch:
                if self.stopped.is_set() and not final:
                    return
                try:
                    self._fetch(key)
                except TamperedState as exc:      # not held: a restore that needs it reads it and says so
                    event(log, logging.WARNING, "hot standby refuses a stored part that fails its check",
                          key=key, error=str(exc))
            self.version = version_of(set(self.held))
            self.lag_versions = plan.version - self.version
            self.followed_at = self.clock()

    def _fetch(self, key: str) -> None:
        found = self.backend.get_tagged(key)  # type: ignore[attr-defined]  # S3: step checked list_tagged
        self.gets += 1
        if found is None:
            return                      # deleted since the listing (retention): the next follow drops it
        blob, etag = found
        data = self.catalog.sealer.open(key, blob)
        if key.startswith(layout.window_prefix(self.settings.job_name)):
            self.windows[key] = data
        else:
            self.snapshots[key] = pickle.loads(data)
        self.held[key] = etag

    def lag_seconds(self) -> float:
        """How old the followed state may be: since the last follow completed."""
        return max(0.0, self.clock() - self.followed_at) if self.followed_at else 0.0

    def stop(self) -> None:
        self.stopped.set()
        if self.thread.is_alive():
            self.thread.join()

    def take(self, checkpointing) -> FollowedCatalog | None:
        """Stop following and follow once more; the catalog a takeover's restore reads
        through (None: the assignment restores another job's store than the one followed,
        no follow had completed, or the store could not be read now, so the restore
        reads the store itself)."""
        self.stop()
        if (checkpointing.state_url, checkpointing.job_name) != (self.settings.state_url, self.settings.job_name):
            return None
        if not self.followed_at:
            return None       # it never followed (assigned at once: a worker replaced while the job runs)
        started = time.monotonic()
        try:
            self.step(final=True)
        except StateStoreError as exc:
            event(log, logging.WARNING, "hot standby could not follow at the takeover; restoring from the store",
                  error=str(exc))
            return None
        event(log, logging.WARNING, "hot standby takes over from followed state", version=self.version,
              snapshots=len(self.snapshots), windows=len(self.windows),
              last_follow_seconds=round(time.monotonic() - started, 4))
        catalog = FollowedCatalog(self.backend, self.settings.job_name, self.snapshots, self.windows)
        self.snapshots, self.windows, self.held = {}, {}, {}
        return catalog

    def register(self, registry: CollectorRegistry) -> None:
        """The follow's gauges on the worker's ``/metrics``."""
        registry.register(_FollowCollector(self))


class _FollowCollector:
    def __init__(self, follower: Follower):
        self.follower = follower

    def describe(self) -> list:
        return []

    def collect(self):
        follower = self.follower
        if follower.stopped.is_set():
            return                      # it took over (or stood down): nothing is followed
        yield GaugeMetricFamily(LAG_SECONDS,
                                "Seconds since a hot standby's worker last followed the primary's store",
                                value=follower.lag_seconds())
        yield GaugeMetricFamily(LAG_VERSIONS,
                                "Restorable versions in the primary's store a hot standby's worker does not hold yet",
                                value=follower.lag_versions)
        yield GaugeMetricFamily(FOLLOWED_VERSION,
                                "The newest version a hot standby's worker holds decoded", value=follower.version)
