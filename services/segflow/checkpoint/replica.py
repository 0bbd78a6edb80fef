"""What a replica does for fault tolerance: the hooks a block replica's executor calls.

One subclass per protocol (:mod:`.aligned`, :mod:`.unaligned`, :mod:`.uncoordinated`, which
also serves ``cic``). The executor knows nothing of protocols: it asks its
``ReplicaCheckpointing`` to admit every element arriving on a channel, hands it barriers,
closed channels and a turn on every loop; the protocol calls back into the executor to
capture the replica's state, forward a barrier and replay held-back messages.
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable

from ..runtime.channels import Outlet
from ..runtime.elements import Barrier
from .barriers import BarrierTiming, Channel

if TYPE_CHECKING:
    from ..plan.graph import Edge
    from ..runtime.executor import ReplicaExecutor


class ReplicaCheckpointing:
    """The hooks, with what a replica does without a protocol of its own for each."""

    def __init__(self, executor: "ReplicaExecutor", sink: Any):
        self.executor = executor
        self.sink = sink           # the worker's agent: persists snapshots and acknowledges

    def admit(self, index: int, sender: int, element: Any) -> Any:
        """An element arrived on channel ``(index, sender)``: the element to process now,
        or ``None`` when the protocol holds it back."""
        return element

    def on_barrier(self, index: int, sender: int, barrier: Barrier) -> None:
        self.executor.forward(barrier)

    def on_trigger(self, checkpoint_id: int) -> None:
        """The worker asks this replica to start checkpoint ``checkpoint_id``."""

    def on_channel_closed(self, channel: Channel) -> None:
        """The channel terminated: it will send nothing more, barriers included."""

    def on_turn(self, now: float) -> None:
        """Called on every turn of the replica's loop (timers live here)."""

    def on_end(self) -> None:
        """The replica has processed its last element."""

    def on_start(self) -> None:
        """The replica's thread starts, before it processes anything (replays go here)."""

    def finished_snapshot(self, checkpoint_id: int) -> None:
        """The replica's thread is done: hand its final state to checkpoint ``checkpoint_id``
        (every protocol's last checkpoint, the job's end, is coordinated)."""
        self.report(checkpoint_id, self.executor.capture(checkpoint_id), {}, BarrierTiming(), True)

    def report(self, checkpoint_id: int, state: bytes, channels: dict, timing: BarrierTiming,
               finished: bool) -> None:
        """Hand a finished snapshot to the worker, with whatever the protocol keeps beside it
        (its time counts as the replica's time on barriers)."""
        began = time.perf_counter()
        ctx = self.executor.ctx
        self.sink.snapshot_done(ctx.block, ctx.index, checkpoint_id, state, channels, timing, finished,
                                self.window_part(checkpoint_id))
        self.executor.barrier_seconds += time.perf_counter() - began

    def window_part(self, checkpoint_id: int) -> Any:
        """What this replica sent since its previous snapshot (that of ``checkpoint_id``
        now), if the protocol keeps it (segment backup's pending window: a
        ``segment.WindowPart``)."""
        return None

    def window_parts_spilled(self) -> int:
        """Window parts dropped from memory at its bound (segment backup's connectors)."""
        return 0

    def completed(self, checkpoint_id: int) -> None:
        """Checkpoint ``checkpoint_id`` is complete everywhere (from the worker's thread)."""

    def detached(self) -> bool:
        """Whether an output channel lost its receiver and waits for a rewire (segment
        backup's regional recovery; a replica of another protocol fails instead)."""
        return False

    def rewire(self, consumer: int, outlet_for: Callable[["Edge", int], Outlet], first: int,
               through: int) -> list[Outlet]:
        """Reopen the channels to block ``consumer``, restarted at version ``first - 1``,
        replaying what they carried since (segment backup's connectors keep it, in the store
        up to ``through``; nothing else does); returns the outlets replaced."""
        return []

    def closed_channels(self) -> set[Channel]:
        """Part of every snapshot: channels that owe no barrier after a restore."""
        return set()

    def restore_closed_channels(self, channels: set[Channel]) -> None:
        """From a snapshot: see :meth:`closed_channels`."""
