"""The coordinator's checkpoint bookkeeping, apart from its RPCs and its workers: rounds of
the coordinated protocols (triggered, acknowledged, timed out), savepoints asked for and
periodic ones, recording a complete checkpoint under the job's lease, retention, the
uncoordinated protocols' local checkpoint records, segment backup's ledger, and what a
recovery restores. The servicer holds its lock around every call; commands for the
workers go out through ``broadcast``.
"""
from __future__ import annotations

import logging
import threading
import time
from typing import Callable

from ..checkpoint.adoption import restore_point
from ..checkpoint.catalog import Catalog
from ..checkpoint.layout import checkpoint_location, parse_location
from ..checkpoint.local_records import LocalCheckpointRecords, StoredLine, decode_line, encode_line
from ..checkpoint.recovery_line import CheckpointRecord, Process
from ..checkpoint.retention import SavepointRetention
from ..checkpoint.segment_plan import WindowSize
from ..disaster.fence import lease_fence
from ..disaster.lease import fenced_message
from ..errors import SegflowError
from ..observability.history import CheckpointEntry, JobHistory
from ..observability.logs import event
from ..plan.placement import Worker, pinned_blocks, plan, replica_name
from ..plan.signature import layout
from ..redaction import redact, redact_url
from ..runtime.elements import FINAL_CHECKPOINT, FINAL_NAME, checkpoint_label
from ..settings import CheckpointSettings
from ..state import StateStoreError, open_backend
from ..v1 import control_pb2 as cpb
from .checkpoints import BlockDelays, CheckpointTracker, Outcome, first_checkpoint_id
from .cleanup import StoreCleanup
from .restore_checks import RestoreChecks
from .segment_backup import SegmentBackup

log = logging.getLogger("segflow.coordinator")


class NoIntactCheckpoint(SegflowError):
    """Every complete checkpoint failed its integrity check: nothing is left to restore."""


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
        self.metrics = None
        self.catalog = Catalog(open_backend(settings.state_url, settings.s3_endpoint or None), settings.job_name)
        self.fence = lease_fence(self.catalog.backend, settings.state_url, settings.job_name,
                                 settings.lease_owner, settings.lease_generation)
        self.cleanup = StoreCleanup(self.catalog)
        self.uncoordinated = settings.protocol.uncoordinated
        self.local_records = LocalCheckpointRecords(settings.retain)
        self.segment: SegmentBackup | None = None
        self.restore_id = 0
        self.finished = False       # the job had ended: this run resumes from its end
        self.restore_counts: tuple[int, dict] = (0, {})     # (checkpoint, its replica count per block)
        self.recovery_plan: dict | None = None
        self.stored_line: StoredLine | None = None          # the line a whole-job restart restores
        self._one_slot: tuple[tuple, object] = ((None,), None)     # (workers, their one-slot plan)
        self.attempt = 0
        self.savepoints: dict[int, PendingSavepoint] = {}
        self.layout = layout(graph)
        self.checks = RestoreChecks(self.catalog, settings, self.layout)
        self.last_savepoint = 0
        self.next_savepoint_at = time.monotonic() + settings.savepoint_interval
        self._choose_restore()
        self.catalog.write_protocol(settings.protocol.value)
        if not self.finished:
            self.catalog.forget_end()
        self.tracker = CheckpointTracker(0 if self.uncoordinated or self.finished else settings.interval, set(),
                                         first_id=first_checkpoint_id(self.catalog.highest_id(),
                                                                      0 if self.finished else self.restore_id,
                                                                      settings.revision))
        if self.restore_id:
            event(log, logging.WARNING, "restoring", checkpoint=checkpoint_label(self.restore_id),
                  job=settings.job_name)

    @property
    def wanted(self) -> str:
        """What the first attempt restores: ``--restore``, or the job's end if it had
        ended (resuming an ended job must not produce its output again)."""
        return FINAL_NAME if self.finished else self.settings.restore

    def _choose_restore(self) -> None:
        settings = self.settings
        if settings.restore in ("latest", "auto"):
            self.checks.same_history()
            self.finished = not self.uncoordinated and self.catalog.finished()
            if self.finished:
                event(log, logging.WARNING, "the job had finished: restoring its end, nothing is processed again",
                      job=settings.job_name)
        elif settings.restore == FINAL_NAME:
            self.finished = not self.uncoordinated     # the catalog refuses it below unless the job had ended
        if parse_location(settings.restore) and (settings.protocol.segment_backup or self.uncoordinated):
            raise SegflowError(f"--restore {settings.restore}: restoring another job's checkpoint works with the "
                               f"aligned and unaligned protocols, not {settings.protocol.value}")
        if settings.protocol.segment_backup:
            self.segment = SegmentBackup(self.graph, settings.connectors, self.catalog, self.cleanup)
            if self.wanted not in ("", "latest", "auto"):
                self.checks.same_layout(self.catalog.resolve(self.wanted))   # complete, or a clear error
            elif settings.restore and self.segment.has_state():
                self.checks.same_layout(max(self.catalog.complete_ids(), default=0))
            elif settings.restore:
                self.checks.nothing_of_this_protocol(f"no checkpoint of job {settings.job_name!r} in "
                                                     f"{redact_url(settings.state_url)} to restore")
            return
        if self.uncoordinated:
            self._choose_stable_line()
            return
        restore = restore_point(self.catalog, self.wanted, self.checks.refuse_other_layout,
                                settings.s3_endpoint)
        try:
            self.restore_id = self.catalog.resolve(restore) if restore else 0
        except SegflowError as exc:
            held = self.checks.held_by_other_protocols()
            raise SegflowError(f"{exc}; {held}" if held else str(exc)) from None
        if restore == "auto" and not self.restore_id:
            self.checks.nothing_of_this_protocol("")
        self.checks.same_layout(self.restore_id)

    def _choose_stable_line(self) -> None:
        """The uncoordinated protocols restore the whole job from the stable line the
        store holds (the newest consistent line of local checkpoints), or start afresh
        and clear what earlier runs stored (this run's checkpoints reuse their numbers)."""
        settings = self.settings
        if settings.restore not in ("", "latest", "auto"):
            raise SegflowError(f"--restore {settings.restore}: the {settings.protocol.value} protocol restores the "
                               "job's newest stable line of local checkpoints: use --restore latest (or auto); "
                               "complete checkpoints and savepoints restore with the protocol that took them "
                               "(aligned, unaligned or segment)")
        data = self.catalog.read_stable_line() if settings.restore else None
        if data is None:
            if settings.restore:
                self.checks.nothing_of_this_protocol(f"no stable line of job {settings.job_name!r} in "
                                                     f"{redact_url(settings.state_url)} to restore: no local "
                                                     "checkpoint of every replica was stored yet")
            self.catalog.clear_local()
            return
        try:
            self.stored_line = decode_line(data)
        except ValueError as exc:
            raise SegflowError(f"the stored stable line of job {settings.job_name!r} cannot be read ({exc}): "
                               "restart the job without --restore") from exc
        self.checks.refuse_other_layout(self.stored_line.layout, f"the stored stable line of job {settings.job_name!r}")
        event(log, logging.WARNING, "restoring", line={r.process: r.index for r in self.stored_line.line},
              job=settings.job_name)

    # ------------------------------------------------------------ rounds
    @property
    def idle(self) -> bool:
        """No round in flight (a savepoint may start one)."""
        return self.tracker.current is None

    @property
    def connectors(self) -> set[int]:
        return set(self.segment.connectors) if self.segment is not None else set()

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
        self.broadcast(cpb.Command(kind=cpb.Command.CHECKPOINT, checkpoint_id=checkpoint_id))

    def acknowledge(self, checkpoint_id: int, acks) -> None:
        """Replicas' snapshots of ``checkpoint_id`` are durable (or failed)."""
        outcome = None
        for ack in acks:
            if self.segment is not None and ack.ok:
                self.segment.acknowledged(ack.block, ack.replica, checkpoint_id, ack.window_bytes, ack.window_records)
            outcome = self.tracker.ack(checkpoint_id, (ack.block, ack.replica), ack.ok, ack.bytes,
                                       ack.alignment_seconds, ack.error, time.monotonic(),
                                       ack.barrier_unix_time) or outcome
        if outcome is not None:
            self._ended(outcome)
        if self.segment is not None and self.metrics is not None:
            self.metrics.windows(self.segment.window_sizes())

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

    # ------------------------------------------------ uncoordinated protocols
    def _one_slot_plan(self, workers: list[str]):
        """The plan with one slot per worker, as the uncoordinated protocols place their
        processes (kept until the workers change: every report asks for it)."""
        key = tuple(workers)
        if self._one_slot[0] != key:
            self._one_slot = (key, plan(self.graph, [Worker(w, 1) for w in key]))
        return self._one_slot[1]

    def processes(self, workers: list[str]) -> list[str]:
        """Every replica's process name, placed one slot per worker."""
        return sorted(replica_name(r.block, r.index) for r in self._one_slot_plan(workers).all_replicas())

    def local_checkpoint(self, record: CheckpointRecord, workers: list[str]) -> None:
        """A replica stored a local checkpoint: tell the processes whose stable line
        advanced, and remove (in the background) what no recovery line can go back to."""
        processes = self.processes(workers)
        advanced = self.local_records.add(record, processes)
        for process, index in sorted(advanced.items()):
            self.broadcast(cpb.Command(kind=cpb.Command.CHECKPOINT_COMPLETE, checkpoint_id=index,
                                       process=str(process)))      # a replica's name
        if advanced:
            self.cleanup.stable_line(encode_line(self.local_records.stable_line(), processes, time.time(), self.layout))
            checkpoints, segments = self.local_records.newly_collectable()
            if checkpoints or segments:
                self.cleanup.local_checkpoints(checkpoints, segments)

    # ------------------------------------------------------------ recovery
    def recover(self, lost: str, workers: list[str]) -> None:
        """Worker ``lost`` is gone: choose what the next attempt restores. Raises
        :class:`NoIntactCheckpoint` or ``StateNoLongerKept`` when nothing can be."""
        complete = self.tracker.last_complete
        if self.catalog.excluded and self.segment is None and not self.uncoordinated:
            self.restore_id = max(self.catalog.complete_ids(), default=0)     # the newest intact one
            if not self.restore_id:
                raise NoIntactCheckpoint("no intact checkpoint is left to restore")
        elif complete is not None and self.segment is None:    # segment backup plans from the store
            self.restore_id = complete.checkpoint_id
        elif self.uncoordinated:
            execution = self._one_slot_plan(workers)
            failed = {replica_name(r.block, r.index) for r in execution.all_replicas()
                      if execution.placement[r] == lost}
            result = self.local_records.recover(self.processes(workers), failed)
            self.recovery_plan = {"line": result.line, "replay": result.replay}
            event(log, logging.WARNING, "recovery line", line=result.line, useless=result.useless,
                  replay={f"{a}>{b}": r for (a, b), r in result.replay.items()})
        self.tracker.reset(set(), time.monotonic())

    def exclude(self, key: str) -> None:
        """A restore read ``key`` and it failed its integrity check: restore from older state."""
        self.catalog.exclude(key)
        if self.finished and not self.catalog.finished():
            self.finished = False       # the end is damaged: the newest intact state, and what follows it
        local = self.catalog.local_of(key)
        if local is not None:
            self.local_records.forget(*local)

    def rescaling(self, workers: list[Worker]) -> tuple[dict, dict]:
        """For a restore: ``(replica counts of the snapshot if the plan's differ, pinned
        block counts)`` (see :func:`pinned_blocks`)."""
        if not self.restore_id or self.uncoordinated:
            return {}, {}
        if self.restore_counts[0] != self.restore_id:
            self.restore_counts = (self.restore_id, self.catalog.replica_counts(self.restore_id))
        counts = self.restore_counts[1]
        pinned = pinned_blocks(self.graph, counts, sum(w.slots for w in workers))
        planned = plan(self.graph, workers, pinned).replicas
        changed = any(counts.get(b, n) != n for b, n in planned.items())
        return (counts if changed else {}), pinned

    def prepare(self, attempt: int, workers: list[Worker]) -> list[int]:
        """Before an attempt's assignment: with segment backup, plan its restore from the
        store (the connectors, which the assignment names, are returned); with a stored
        stable line to restore, the first attempt's recovery plan."""
        if self.stored_line is not None and attempt == 0:
            self._restore_stable_line(self.stored_line, [w.name for w in workers])
        if self.segment is None:
            return []
        replicas = plan(self.graph, workers).replicas
        again = self.wanted if attempt == 0 or self.finished else "latest"
        self.recovery_plan = self.segment.plan(attempt, replicas, again)
        return sorted(self.segment.connectors)

    def _restore_stable_line(self, stored_line: StoredLine, workers: list[str]) -> None:
        """The first attempt of a whole-job restore: every replica from its checkpoint on
        the stored line, in-transit messages replayed from the senders' logs."""
        line, stored = stored_line.line, stored_line.processes
        processes = self.processes(workers)
        if sorted(stored) != processes:
            raise SegflowError(f"the stored stable line is of {len(stored)} replicas, this run has {len(processes)}: "
                               "the uncoordinated protocols restore at the parallelism the job ran with")
        self.local_records.seed(line, self._tidy_around({r.process: r.index for r in line}))
        result = self.local_records.recover(processes, set(processes))
        self.recovery_plan = {"line": result.line, "replay": result.replay}
        self.stored_line = None

    def _tidy_around(self, line: dict[Process, int]) -> dict[Process, set[int]]:
        """What earlier runs stored around the restored ``line``: past it, removed now
        (this run numbers its checkpoints from the line on); checkpoints before it, removed
        in the background; log segments before it (returned) go with the line's own, as
        retention decides (a replay may still read them)."""
        past_blobs, past_logs, earlier_blobs = set(), set(), set()
        earlier_logs: dict[Process, set[int]] = {}
        for p, (blobs, logs) in self.catalog.local_indices().items():
            at = line.get(p, 0)
            past_blobs |= {(p, i) for i in blobs if i > at}
            past_logs |= {(p, i) for i in logs if i > at}
            earlier_blobs |= {(p, i) for i in blobs if i < at}
            earlier_logs[p] = {i for i in logs if i < at}
        self.catalog.delete_local(past_blobs, past_logs)
        self.cleanup.local_checkpoints(earlier_blobs, set())
        return earlier_logs

    def restoring(self) -> str:
        """As a recovery starts: where the new attempt will resume from."""
        if self.segment is not None:
            return "segment backup: each connector's pending window"
        if self.uncoordinated:
            return "the recovery line of local checkpoints"
        return f"checkpoint {checkpoint_label(self.restore_id)}" if self.restore_id else "the start (no checkpoint yet)"

    def restored(self) -> str:
        """What the current attempt restored, for the operator's status."""
        plan = self.recovery_plan or {}
        if "segment" in plan:
            return " ".join(f"b{b}:v{checkpoint_label(v)}" for b, v in sorted(plan["segment"]["versions"].items()))
        if "line" in plan:
            return "recovery line " + " ".join(f"{p}:{i}" for p, i in sorted(plan["line"].items()))
        return f"checkpoint {checkpoint_label(self.restore_id)}" if self.restore_id else ""

    # ------------------------------------------------------------ reports
    def block_delays(self) -> BlockDelays:
        """The last complete checkpoint's start and acknowledgement delays per block."""
        return BlockDelays.of(self.tracker.last_complete)

    def window_sizes(self) -> dict[int, WindowSize]:
        return self.segment.window_sizes() if self.segment is not None else {}

    def describe(self, update: cpb.JobUpdate) -> None:
        """The checkpointing fields of a job update."""
        complete = self.tracker.last_complete
        if complete is not None:
            update.last_checkpoint = complete.checkpoint_id
            update.last_checkpoint_seconds = complete.seconds
            update.last_checkpoint_bytes = complete.bytes
            update.last_alignment_seconds = complete.alignment
        update.restored = self.restored()
        if self.last_savepoint:
            update.last_savepoint = self.last_savepoint
            update.last_savepoint_location = self.location(self.last_savepoint)
        update.windows.extend(cpb.PendingWindow(block=b, versions=w.versions, bytes=w.bytes, records=w.records,
                                                truncation_lag=w.truncation_lag)
                              for b, w in sorted(self.window_sizes().items()))

    def remove_unfinished(self) -> None:
        """The job has ended and its workers are stopped: a checkpoint still in progress
        can never complete, so its parts go (a restore never takes them, but they would
        mislead whoever reads the store)."""
        if not self.uncoordinated and self.segment is None:
            self.cleanup.unfinished_checkpoints()
