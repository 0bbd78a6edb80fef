"""The ``aligned`` protocol at a replica: asynchronous barrier snapshots (Carbone et al.,
Lightweight Asynchronous Snapshots, Algorithm 1; Algorithm 2 for loops).

A barrier *n* blocks its channel until barriers *n* have arrived on every regular input;
then the replica snapshots its state, forwards the barrier and releases what the blocked
channels delivered meanwhile. Loop back-edges are never blocked: what they deliver between
the snapshot and their barrier is recorded as channel state (the back-edge log).
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from ..runtime.elements import Barrier
from .barriers import BarrierTiming, Channel, CheckpointBook, InProgress
from .replica import ReplicaCheckpointing

if TYPE_CHECKING:
    from ..runtime.executor import ReplicaExecutor


class AlignedSnapshots(ReplicaCheckpointing):
    def __init__(self, executor: "ReplicaExecutor", sink: Any):
        super().__init__(executor, sink)
        channels = executor.input_channels()
        back_edges = executor.back_edge_inputs()
        regular = {c for c in channels if c[0] not in back_edges}
        self.book = CheckpointBook(channels, regular, self.aligned_channels(regular))
        self.stash: dict[Channel, list] = {}      # messages of blocked channels, in order

    def aligned_channels(self, regular: set[Channel]) -> set[Channel]:
        """The channels a barrier blocks; the others are recorded."""
        return regular

    # -------------------------------------------------------------- hooks
    def admit(self, index: int, sender: int, element: Any) -> Any:
        book = self.book
        channel = (index, sender)
        if channel in book.blocked:
            self.stash.setdefault(channel, []).append((index, sender, element))
            return None
        if book.active and type(element) is not Barrier:
            for cp in book.recording(channel):
                cp.recordings.setdefault(channel, []).append(element)
        return element

    def on_barrier(self, index: int, sender: int, barrier: Barrier) -> None:
        book = self.book
        channel = (index, sender)
        if channel in book.terminated or barrier.checkpoint_id <= book.completed:
            return
        cp = book.start(barrier.checkpoint_id)
        if channel in cp.waiting_aligned:
            cp.waiting_aligned.discard(channel)
            book.blocked.add(channel)
        else:
            cp.waiting_recorded.discard(channel)
        self._maybe_snapshot(cp)

    def on_trigger(self, checkpoint_id: int) -> None:
        """Sources start checkpoints when told; so do replicas no barrier can reach any more.

        The worker's trigger and the end of an upstream travel different ways, so a trigger
        can arrive while the last regular input's Terminate is still on its way. It is
        kept until then: a loop's head outlives its input and no barrier would ever start
        that checkpoint there (the loop stalled behind the half-aligned barrier)."""
        book = self.book
        if checkpoint_id <= book.completed or checkpoint_id in book.active:
            return
        if not book.regular_inputs_closed():
            book.deferred.add(checkpoint_id)
            return
        self._maybe_snapshot(book.start(checkpoint_id))

    def on_channel_closed(self, channel: Channel) -> None:
        book = self.book
        book.terminated.add(channel)
        for cp in list(book.active.values()):
            cp.waiting_aligned.discard(channel)
            cp.waiting_recorded.discard(channel)
            self._maybe_snapshot(cp)
        if book.deferred and book.regular_inputs_closed() and not self.executor.finished:
            deferred, book.deferred = sorted(book.deferred), set()
            for checkpoint_id in deferred:
                self.on_trigger(checkpoint_id)

    def closed_channels(self) -> set[Channel]:
        return self.book.terminated

    def restore_closed_channels(self, channels: set[Channel]) -> None:
        self.book.terminated = set(channels)

    # ------------------------------------------------------------ snapshot
    def _maybe_snapshot(self, cp: InProgress) -> None:
        book = self.book
        executor = self.executor
        if not cp.snapshotted and not cp.waiting_aligned:
            began = time.perf_counter()
            cp.alignment = time.monotonic() - cp.started
            cp.state = executor.capture(cp.checkpoint_id)
            executor.forward(Barrier(cp.checkpoint_id))
            executor.barrier_seconds += time.perf_counter() - began
            for channel in sorted(book.blocked):
                executor.replay(self.stash.pop(channel, []))
            book.blocked.clear()
        state = cp.state
        if state is not None and not cp.waiting_recorded:      # snapshotted, and every channel recorded
            del book.active[cp.checkpoint_id]
            book.completed = max(book.completed, cp.checkpoint_id)
            self.report(cp.checkpoint_id, state, cp.recordings, BarrierTiming(cp.arrived, cp.alignment), False)
