"""A worker's part in every checkpointing protocol, between its replicas, the state store
and the coordinator.

Coordinated protocols: triggers checkpoints at its replicas (sources inject barriers; a
running replica that no barrier can reach any more starts one itself; a finished replica
is snapshotted from outside), persists snapshots in the background so processing never
waits for the store, and acknowledges each replica's part to the coordinator.
Uncoordinated ones: persists each replica's local checkpoints and log segments, and
reports them to the coordinator, which computes the recovery line. Both: passes
completions on (sinks commit).
"""
from __future__ import annotations

import logging
import pickle
import threading
import time
from concurrent import futures

import grpc

from ..checkpoint.barriers import BarrierTiming
from ..checkpoint.catalog import Catalog
from ..checkpoint.segment import WindowPart
from ..disaster.fence import LeaseFence
from ..disaster.lease import fenced_message
from ..observability.logs import event
from ..plan.placement import ReplicaId, replica_name
from ..state import StateStoreError
from ..net.control_codec import channel_counts
from ..v1 import control_pb2 as cpb

log = log_ = logging.getLogger("segflow.worker")


class CheckpointAgent:
    """``fence``: with disaster recovery, the lease this worker's snapshots are written under."""

    def __init__(self, worker: str, attempt: int, catalog: Catalog, control, executors: dict,
                 fence: LeaseFence | None = None):
        self.worker = worker
        self.fence = fence
        self.attempt = attempt
        self.catalog = catalog
        self.control = control
        self.executors = executors
        self.done: set[ReplicaId] = set()
        self.pending: dict[int, set[ReplicaId]] = {}
        self.asked = 0                                    # the newest checkpoint the coordinator asked for
        self.early: dict[int, list[tuple]] = {}           # snapshots whose barrier outran the ask
        self.lock = threading.Lock()
        self.persist = futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="persist")

    # -- commands from the coordinator
    def checkpoint(self, checkpoint_id: int) -> None:
        with self.lock:
            self.asked = max(self.asked, checkpoint_id)
            waiting = self.pending[checkpoint_id] = set(self.executors)
            early = self.early.pop(checkpoint_id, [])
            for never_asked in [n for n in self.early if n < checkpoint_id]:
                del self.early[never_asked]
            waiting.difference_update(snapshot[0] for snapshot in early)
            if not waiting:
                del self.pending[checkpoint_id]
            finished = [rid for rid in waiting if rid in self.done]
            running = [rid for rid in waiting if rid not in self.done]
        for snapshot in early:
            self._submit(checkpoint_id, *snapshot)
        for rid in finished:
            self.executors[rid].snapshot_finished(checkpoint_id)
        for rid in running:
            self.executors[rid].trigger(checkpoint_id)

    def complete(self, checkpoint_id: int, process: str = "") -> None:
        """Checkpoint ``checkpoint_id`` is complete (for one replica only, if ``process``)."""
        for rid, executor in self.executors.items():
            if not process or process == replica_name(rid.block, rid.index):
                executor.notify_complete(checkpoint_id)
                if executor.checkpointing is not None:
                    executor.checkpointing.completed(checkpoint_id)

    # -- uncoordinated protocols
    def local_done(self, block: int, replica: int, index: int, state: bytes, record: dict,
                   segment: dict) -> None:
        blob = pickle.dumps({"state": state, "record": record}, protocol=5)
        log = pickle.dumps(segment, protocol=5)
        self.persist.submit(self._persist_local, replica_name(block, replica), index, blob, log, record)

    def _persist_local(self, process: str, index: int, blob: bytes, log: bytes, record: dict) -> None:
        report = cpb.LocalCheckpoint(worker=self.worker, attempt=self.attempt, process=process, index=index,
                                     ok=True, sent=channel_counts(record["sent"]),
                                     processed=channel_counts(record["processed"]), forced=record["forced"])
        try:
            self.catalog.write_local(process, index, blob, log)
        except StateStoreError as exc:
            report.ok, report.error = False, str(exc)
            event(log_, logging.WARNING, "local checkpoint not stored", process=process, index=index,
                  error=str(exc))
        try:
            deliver(self.control.Report, report)
        except grpc.RpcError as exc:
            event(log_, logging.WARNING, "local checkpoint not reported", process=process, error=str(exc.details()))

    def owe(self, rid: ReplicaId, checkpoint_ids) -> None:
        """After a segment restore: ``rid`` takes these versions again (others already hold them)."""
        with self.lock:
            for checkpoint_id in checkpoint_ids:
                self.pending.setdefault(checkpoint_id, set()).add(rid)

    # -- from the replicas
    def replica_done(self, rid: ReplicaId) -> None:
        """A replica's thread ended: it owes a snapshot to every checkpoint in progress."""
        with self.lock:
            self.done.add(rid)
            owed = [n for n, waiting in self.pending.items() if rid in waiting]
        for checkpoint_id in owed:
            self.executors[rid].snapshot_finished(checkpoint_id)

    def snapshot_done(self, block: int, replica: int, checkpoint_id: int, state: bytes, channels: dict,
                      timing: BarrierTiming, finished: bool, window: WindowPart | None = None) -> None:
        """A replica's snapshot. Its barrier may come over the data plane from another worker
        before the coordinator's ask reaches this one: such a snapshot waits for the ask
        (dropping it left the round open until its timeout)."""
        rid = ReplicaId(block, replica)
        if window is not None and window.spilled:
            event(log, logging.WARNING, "window memory bound reached", replica=str(rid), version=checkpoint_id,
                  spilled_parts=window.spilled,
                  note="checkpoints are not completing: a replay reads the older window parts from the store")
        snapshot = (rid, state, channels, timing, finished, window)
        with self.lock:
            waiting = self.pending.get(checkpoint_id)
            if waiting is None and checkpoint_id > self.asked:
                self.early.setdefault(checkpoint_id, []).append(snapshot)
                return
            if waiting is None or rid not in waiting:
                return
            waiting.discard(rid)
            if not waiting:
                del self.pending[checkpoint_id]
        self._submit(checkpoint_id, *snapshot)

    def _submit(self, checkpoint_id: int, rid: ReplicaId, state: bytes, channels: dict, timing: BarrierTiming,
                finished: bool, window: WindowPart | None) -> None:
        blob = pickle.dumps({"state": state, "channels": channels}, protocol=5)
        part = None if window is None else pickle.dumps(window.channels, protocol=5)
        records = 0 if window is None else window.records
        self.persist.submit(self._persist, checkpoint_id, rid, blob, timing, finished, part, records)

    def _persist(self, checkpoint_id: int, rid: ReplicaId, blob: bytes, timing: BarrierTiming, finished: bool,
                 part: bytes | None, records: int) -> None:
        """The window part goes first: a snapshot in the store vouches for its part."""
        ack = cpb.ReplicaAck(block=rid.block, replica=rid.index, ok=True, bytes=len(blob) + len(part or b""),
                             alignment_seconds=timing.alignment, finished=finished, window_bytes=len(part or b""),
                             window_records=records, barrier_unix_time=timing.arrived)
        refusal = self.fence.refusal() if self.fence is not None else ""
        try:
            if refusal:
                raise StateStoreError(fenced_message(refusal))
            if part is not None:
                self.catalog.write_window(rid.block, rid.index, checkpoint_id, part)
            self.catalog.write(checkpoint_id, rid.block, rid.index, blob)
        except StateStoreError as exc:
            ack.ok, ack.error = False, str(exc)
            event(log, logging.WARNING, "snapshot not stored", checkpoint=checkpoint_id, replica=str(rid),
                  error=str(exc))
        try:
            deliver(self.control.Acknowledge, cpb.CheckpointAcks(worker=self.worker, attempt=self.attempt,
                                                                 checkpoint_id=checkpoint_id, acks=[ack]))
        except grpc.RpcError as exc:
            event(log, logging.WARNING, "acknowledgement not delivered", checkpoint=checkpoint_id,
                  error=str(exc.details()))

    def close(self) -> None:
        self.persist.shutdown(wait=True)


TRANSIENT = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)


def deliver(call, request, attempts: int = 3, timeout: float = 10.0, pause: float = 0.5):
    """``call(request)``, tried again while the coordinator is unreachable or slow: a lost
    acknowledgement would hold its checkpoint (and a savepoint waiting on it) until the
    round times out. The coordinator takes a repeated acknowledgement or report once."""
    for attempt in range(1, attempts + 1):
        try:
            return call(request, timeout=timeout)
        except grpc.RpcError as exc:
            if attempt == attempts or exc.code() not in TRANSIENT:
                raise
            event(log, logging.INFO, "coordinator did not answer; trying again", attempt=attempt,
                  error=str(exc.details()))
            time.sleep(pause * attempt)
