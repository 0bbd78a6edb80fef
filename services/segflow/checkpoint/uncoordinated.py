"""The replica side of the ``uncoordinated`` and ``cic`` protocols.

Every replica checkpoints on its own jittered timer. It counts what it sends and processes
on each channel (a channel is a (sender replica, receiver replica) pair) and
logs what it sends; a checkpoint stores the state, the counters and the log segment sent
since the previous checkpoint, so after a failure the coordinator can compute a recovery
line from the counters alone (segflow.checkpoint.recovery_line) and receivers can replay
exactly the in-transit ranges from the senders' logs. With ``cic`` every element also
carries the sender's HMNR data and a replica takes a forced checkpoint before delivering
an element when the HMNR rule asks for it (segflow.checkpoint.hmnr).
"""
from __future__ import annotations

import random
import time
from typing import TYPE_CHECKING, Any

from ..runtime.channels import Outlet
from ..runtime.elements import Batch
from . import hmnr
from .replica import ReplicaCheckpointing

if TYPE_CHECKING:
    from ..runtime.executor import ReplicaExecutor

Channel = tuple[str, str]          # (sender process, receiver process)


def size(element: Any) -> int:
    """How far an element advances its channel's sequence: one per record, one per control
    element. Counting records, not batches, keeps sequence numbers deterministic: a sender
    that starts again regenerates the same records, but not necessarily the same batches."""
    return len(element.items) if type(element) is Batch else 1


def cut(logged: list, first: int, last: int) -> list:
    """The elements of ``[(first seq, element), ...]`` covering sequence ``first..last``,
    with batches sliced to the range."""
    out = []
    for start, element in logged:
        end = start + size(element) - 1
        if end < first or start > last:
            continue
        if type(element) is Batch and (start < first or end > last):
            lo, hi = max(first, start) - start, min(last, end) - start + 1
            stamps = element.timestamps[lo:hi] if element.timestamps is not None else None
            element = Batch(element.items[lo:hi], stamps, element.born)
        out.append(element)
    return out


class Piggybacked:
    """An element with protocol data attached (HMNR), as it crosses a channel."""

    __slots__ = ("element", "meta")

    def __init__(self, element: Any, meta: bytes):
        self.element = element
        self.meta = meta


class LocalCheckpoints:
    """Counters, logs, timer and (for ``cic``) the HMNR state of one replica."""

    def __init__(self, process: str, interval: float, processes: list[str], cic: bool, seed: int):
        self.process = process
        self.interval = interval
        self.rng = random.Random(seed)
        self.index = 0                      # the last local checkpoint taken (0: initial state)
        self.sent: dict[Channel, int] = {}
        self.processed: dict[Channel, int] = {}
        self.log: dict[Channel, list] = {}  # (first seq, element) sent since the last checkpoint
        self.order = {p: i for i, p in enumerate(processes)}
        self.hmnr = hmnr.HmnrState(self.order[process], len(processes)) if cic else None
        self.forced = 0
        self.next_due = time.monotonic() + self._jittered()

    def _jittered(self) -> float:
        return self.interval * self.rng.uniform(0.5, 1.5)

    def due(self, now: float) -> bool:
        return now >= self.next_due

    # -- channels
    def sending(self, channel: Channel, element: Any) -> Any:
        """Count and log an element going out; returns what to put on the wire."""
        start = self.sent.get(channel, 0) + 1
        self.sent[channel] = start + size(element) - 1
        self.log.setdefault(channel, []).append((start, element))
        if self.hmnr is None:
            return element
        return Piggybacked(element, hmnr.encode(self.hmnr.on_send(self.order[channel[1]])))

    def must_force(self, meta: bytes) -> bool:
        return self.hmnr is not None and self.hmnr.must_force(hmnr.decode(meta))

    def delivered(self, channel: Channel, element: Any, meta: bytes | None) -> None:
        self.processed[channel] = self.processed.get(channel, 0) + size(element)
        if self.hmnr is not None and meta:
            self.hmnr.on_deliver(hmnr.decode(meta))

    # -- checkpoints
    def take(self, forced: bool = False) -> tuple[int, dict, dict]:
        """A new local checkpoint: its index, the record fields and the log segment."""
        self.index += 1
        if forced:
            self.forced += 1
        if self.hmnr is not None:
            self.hmnr.on_checkpoint()
        segment = {c: entries for c, entries in self.log.items() if entries}
        self.log = {}
        self.next_due = time.monotonic() + self._jittered()
        record = {"sent": dict(self.sent), "processed": dict(self.processed),
                  "hmnr": self.hmnr.snapshot() if self.hmnr is not None else None, "forced": forced}
        return self.index, record, segment

    def restore(self, index: int, record: dict) -> None:
        self.index = index
        self.sent = dict(record["sent"])
        self.processed = dict(record["processed"])
        if self.hmnr is not None and record.get("hmnr") is not None:
            self.hmnr = hmnr.HmnrState.from_snapshot(record["hmnr"])


class LoggingOutlet(Outlet):
    """Counts, logs and (cic) piggybacks every element sent on one channel."""

    __slots__ = ("inner", "channel", "book")

    def __init__(self, inner: Outlet, channel: Channel, book: LocalCheckpoints):
        self.inner = inner
        self.channel = channel
        self.book = book

    def send(self, element: Any) -> None:
        self.inner.send(self.book.sending(self.channel, element))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class UncoordinatedCheckpoints(ReplicaCheckpointing):
    """The replica's hooks for ``uncoordinated`` and ``cic``: checkpoint when the timer is
    due (and, for ``cic``, before delivering an element whose HMNR data forces one),
    count every delivered element, and take a last checkpoint at the end."""

    def __init__(self, executor: "ReplicaExecutor", sink: Any, local: LocalCheckpoints,
                 channel_of: dict[tuple[int, int], Channel]):
        super().__init__(executor, sink)
        self.local = local
        self.channel_of = channel_of          # (input index, sender replica) -> process channel

    def admit(self, index: int, sender: int, element: Any) -> Any:
        meta = None
        if type(element) is Piggybacked:
            meta, element = element.meta, element.element
            if self.local.must_force(meta):
                self._checkpoint(forced=True)
        self.local.delivered(self.channel_of[(index, sender)], element, meta)
        return element

    def on_turn(self, now: float) -> None:
        if self.local.due(now):
            self._checkpoint()

    def on_end(self) -> None:
        self._checkpoint()

    def _checkpoint(self, forced: bool = False) -> None:
        executor = self.executor
        # What this replica produced before the checkpoint must count as sent: records
        # still waiting in the batchers would be in neither the snapshot nor the log.
        executor.router.flush()
        state = executor.capture(self.local.index + 1)
        index, record, segment = self.local.take(forced)
        self.sink.local_done(executor.ctx.block, executor.ctx.index, index, state, record, segment)
