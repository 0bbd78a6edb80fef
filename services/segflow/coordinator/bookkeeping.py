"""The coordinator's checkpoint bookkeeping, apart from its RPCs and its workers: what every
protocol shares (rounds triggered, acknowledged and timed out; savepoints asked for and
periodic ones; recording a complete checkpoint under the job's lease; retention), with what
each protocol decides on its own asked of its coordinator side (``protocols``: what to
restore, what a lost worker or a local checkpoint changes). The servicer holds its lock
around every call; commands for the workers go out through ``broadcast``.
"""
from __future__ import annotations

import logging
import threading
import time
from typing import Callable

from ..checkpoint.catalog import Catalog
from ..checkpoint.layout import checkpoint_location
from ..checkpoint.recovery_line import CheckpointRecord
from ..checkpoint.regional import RegionalRecovery
from ..checkpoint.retention import SavepointRetention
from ..disaster.fence import lease_fence
from ..disaster.lease import fenced_message
from ..observability.history import CheckpointEntry, JobHistory
from ..observability.logs import event
from ..observability.metrics import CheckpointMetrics
from ..plan.signature import layout
from ..protocols.cleanup import StoreCleanup
from ..protocols.coordinator_side import CoordinatorSide, ProtocolContext
from ..protocols.registry import family
from ..protocols.restore_checks import RestoreChecks
from ..redaction import redact, redact_url
from ..runtime.elements import FINAL_CHECKPOINT, checkpoint_label
from ..settings import CheckpointSettings
from ..state import StateStoreError, open_backend
from ..v1 import control_pb2 as cpb
from .checkpoints import BlockDelays, CheckpointTracker, Outcome, first_checkpoint_id

log = logging.getLogger("segflow.coordinator")


class PendingSavepoint:
    """A savepoint's checkpoint round, awaited by the Savepoint RPC that started it."""

    def __init__(self, checkpoint_id: int) -> None:
        self.checkpoint_id = checkpoint_id
        self.ended = threading.Event()
        self.error = ""

    def end(self, error: str = "") -> None:
        self.error = error
        self.ended.set()


class CheckpointBookkeeping:
    """``fenced(reason)``: the lease is lost (the job must end); ``final_failed()``: the
    checkpoint of the job's end failed (the servicer tries it again)."""

    def __init__(self, graph, settings: CheckpointSettings, history: JobHistory,
                 broadcast: Callable[[cpb.Command], None], fenced: Callable[[str], None],
                 final_failed: Callable[[], None]):
        self.graph, self.settings, self.history = graph, settings, history
        self.broadcast, self.fenced, self.final_failed = broadcast, fenced, final_failed
        self.metrics: CheckpointMetrics | None = None
        self.catalog = Catalog(open_backend(settings.state_url, settings.s3_endpoint or None), settings.job_name)
        self.fence = lease_fence(self.catalog.backend, settings.state_url, settings.job_name,
                                 settings.lease_owner, settings.lease_generation)
        self.cleanup = StoreCleanup(self.catalog)
        self.attempt = 0
        self.savepoints: dict[int, PendingSavepoint] = {}
        self.layout = layout(graph)
        self.last_savepoint = 0
        self.next_savepoint_at = time.monotonic() + settings.savepoint_interval
        context = ProtocolContext(graph, settings, self.catalog, self.cleanup,
                                  RestoreChecks(self.catalog, settings, self.layout), self.layout, broadcast)
        self.side: CoordinatorSide = family(settings.protocol).coordinator(context)
        self.side.choose_restore()
        self.catalog.write_protocol(settings.protocol.value)
        if not self.side.finished:
            self.catalog.forget_end()
        periodic = self.side.periodic_rounds and not self.side.finished
        self.tracker = CheckpointTracker(settings.interval if periodic else 0, set(),
                                         first_id=first_checkpoint_id(self.catalog.highest_id(),
                                                                      0 if self.side.finished else self.side.restore_id,
                                                                      settings.revision))
        if self.side.restore_id:
            event(log, logging.WARNING, "restoring", checkpoint=checkpoint_label(self.side.restore_id),
                  job=settings.job_name)

    # ------------------------------------------------------------ rounds
    @property
    def idle(self) -> bool:
        """No round in flight (a savepoint may start one)."""
        return self.tracker.current is None

    def reset(self, replicas: set, now: float, attempt: int) -> None:
        """Attempt ``attempt`` starts with these replicas: the round in flight is void."""
        self.attempt = attempt
        self.tracker.reset(replicas, now)

    def tick(self, now: float, trigger: bool) -> None:
        """Fail a round that timed out; with ``trigger``, start the next one when due."""
        outcome = self.tracker.expire(now)
        if outcome is not None:
            self._ended(outcome)
        if trigger and self.tracker.due(now):
            self._start(self.tracker.trigger(now, asked_at=time.time()))

    def start_savepoint(self) -> PendingSavepoint:
        """A round now, kept as a savepoint once complete (call when :attr:`idle`)."""
        checkpoint_id = self.tracker.trigger(time.monotonic(), asked_at=time.time())
        waiter = self.savepoints[checkpoint_id] = PendingSavepoint(checkpoint_id)
        self._start(checkpoint_id)
        return waiter

    def final_checkpoint(self) -> None:
        """Every worker has finished: checkpoint the end of the job, then commit it."""
        complete = self.tracker.last_complete
        if complete is not None and complete.checkpoint_id == FINAL_CHECKPOINT:
            self.broadcast(cpb.Command(kind=cpb.Command.CHECKPOINT_COMPLETE, checkpoint_id=FINAL_CHECKPOINT))
            return
        self.tracker.current = None
        self._start(self.tracker.trigger(time.monotonic(), FINAL_CHECKPOINT, time.time()))

    def _start(self, checkpoint_id: int) -> None:
        event(log, logging.INFO, "checkpoint started", checkpoint=checkpoint_id)
        self.broadcast(cpb.Command(kind=cpb.Command.CHECKPOINT, checkpoint_id=checkpoint_id))

    def acknowledge(self, checkpoint_id: int, acks) -> None:
        """Replicas' snapshots of ``checkpoint_id`` are durable (or failed)."""
        outcome = None
        for ack in acks:
            self.side.acknowledged(checkpoint_id, ack)
            outcome = self.tracker.ack(checkpoint_id, (ack.block, ack.replica), ack.ok, ack.bytes,
                                       ack.alignment_seconds, ack.error, time.monotonic(),
                                       ack.barrier_unix_time) or outcome
        if outcome is not None:
            self._ended(outcome)
        if self.metrics is not None:
            self.metrics.windows(self.side.window_sizes())

    def _ended(self, outcome: Outcome) -> None:
        """A round completed or failed. A savepoint waiting on it hears either way."""
        if self.metrics is not None:
            self.metrics.ended(outcome)
            if outcome.complete:
                self.metrics.block_delays(BlockDelays.of(outcome))
        checkpoint_id = outcome.checkpoint_id
        savepoint = outcome.complete and checkpoint_id != FINAL_CHECKPOINT and \
            (checkpoint_id in self.savepoints or self._periodic_savepoint_due())
        self.history.checkpoint(CheckpointEntry(checkpoint_id, outcome.complete, round(outcome.seconds, 4),
                                                outcome.bytes, round(outcome.alignment, 4), time.time(),
                                                savepoint, redact(outcome.error)))
        if not outcome.complete:
            event(log, logging.WARNING, "checkpoint failed", checkpoint=checkpoint_id, error=outcome.error)
            if checkpoint_id == FINAL_CHECKPOINT:
                self.final_failed()
            self._answer(checkpoint_id, outcome.error)
            return
        refusal = self.fence.refusal() if self.fence is not None else ""
        if refusal:
            self.tracker.retract(checkpoint_id)
            self._answer(checkpoint_id, fenced_message(refusal))
            self.fenced(refusal)
            return
        meta = {"id": checkpoint_id, "attempt": self.attempt, "bytes": outcome.bytes,
                "seconds": round(outcome.seconds, 4), "alignment_seconds": round(outcome.alignment, 4),
                "replicas": len(self.tracker.replicas), "time": time.time(), "savepoint": savepoint,
                "layout": self.layout}
        if self.fence is not None:
            meta["lease"] = {"owner": self.settings.lease_owner, "generation": self.settings.lease_generation}
        try:
            self.catalog.mark_complete(checkpoint_id, meta)
        except StateStoreError as exc:
            self.tracker.retract(checkpoint_id)
            event(log, logging.WARNING, "checkpoint could not be recorded", checkpoint=checkpoint_id, error=str(exc))
            self._answer(checkpoint_id, f"checkpoint {checkpoint_id} could not be recorded: {exc}")
            return
        event(log, logging.INFO, "checkpoint complete", **meta)
        self.broadcast(cpb.Command(kind=cpb.Command.CHECKPOINT_COMPLETE, checkpoint_id=checkpoint_id))
        if savepoint:
            self.last_savepoint = checkpoint_id
            self.next_savepoint_at = time.monotonic() + self.settings.savepoint_interval
        self._answer(checkpoint_id, "")
        s = self.settings
        self.cleanup.old_checkpoints(s.retain, SavepointRetention(s.savepoint_retain, s.savepoint_max_age))

    def _answer(self, checkpoint_id: int, error: str) -> None:
        waiter = self.savepoints.pop(checkpoint_id, None)
        if waiter is not None:
            waiter.end(error)

    def _periodic_savepoint_due(self) -> bool:
        """With --savepoint-interval: the next complete checkpoint is kept as a savepoint."""
        return bool(self.settings.savepoint_interval) and time.monotonic() >= self.next_savepoint_at

    def location(self, checkpoint_id: int) -> str:
        """Where a checkpoint is kept: the state store (password masked) and its prefix."""
        return checkpoint_location(redact_url(self.settings.state_url), self.settings.job_name, checkpoint_id)

    # ------------------------------------------------------------ recovery
    def local_checkpoint(self, record: CheckpointRecord, workers: list[str]) -> None:
        """A replica stored a local checkpoint (the uncoordinated protocols)."""
        self.side.local_checkpoint(record, workers)

    def recover(self, lost: str, workers: list[str]) -> None:
        """Worker ``lost`` is gone: the protocol chooses what the next attempt restores
        (raises ``SegflowError`` when nothing can be); the round in flight is void."""
        complete = self.tracker.last_complete
        self.side.recover(lost, workers, complete.checkpoint_id if complete is not None else None)
        self.tracker.reset(set(), time.monotonic())

    def recover_region(self, attempt: int, region: RegionalRecovery[int]) -> None:
        """A loss restarts ``region`` only, in attempt ``attempt``: its blocks take again the
        versions after theirs up to the newest begun; the round in flight is void (the next
        starts once the region is back)."""
        self.side.restart_region(attempt, region, self.tracker.next_id - 1)
        self.tracker.reset(set(), time.monotonic())

    def exclude(self, key: str) -> None:
        """A restore read ``key`` and it failed its integrity check: restore from older state."""
        self.catalog.exclude(key)
        self.side.excluded(key)

    # ------------------------------------------------------------ reports
    def block_delays(self) -> BlockDelays:
        """The last complete checkpoint's start and acknowledgement delays per block."""
        return BlockDelays.of(self.tracker.last_complete)

    def describe(self, update: cpb.JobUpdate) -> None:
        """The checkpointing fields of a job update."""
        complete = self.tracker.last_complete
        if complete is not None:
            update.last_checkpoint = complete.checkpoint_id
            update.last_checkpoint_seconds = complete.seconds
            update.last_checkpoint_bytes = complete.bytes
            update.last_alignment_seconds = complete.alignment
        update.restored = self.side.restored()
        if self.last_savepoint:
            update.last_savepoint = self.last_savepoint
            update.last_savepoint_location = self.location(self.last_savepoint)
        update.windows.extend(cpb.PendingWindow(block=b, versions=w.versions, bytes=w.bytes, records=w.records,
                                                truncation_lag=w.truncation_lag)
                              for b, w in sorted(self.side.window_sizes().items()))
