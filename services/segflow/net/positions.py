"""How far each inbound channel got, so a kept consumer can skip what a restarted sender
sends again (a regional recovery's kept consumers: ``checkpoint.regional.Skip``).

A channel is one (sender replica, receiver replica, input). Its *position* counts the
elements its receiver took: each record of a batch, each barrier, each end of stream (the
*counted* elements; watermarks, idle marks and flush requests are not counted: a replay may
place them elsewhere). At each barrier it notes the count (``marks``), until that version
completes. A sender restarted at version ``v`` that replays exactly sends again, on this
channel, everything after its barrier ``v``: the first ``count - marks[v]`` counted elements
of the new connection are skipped (with whatever uncounted ones come among them), the rest
taken. The connection of the attempt before is fenced at that moment: whatever it still
delivers is dropped, since the new connection sends it again.

Counting happens where elements enter the receiver's inbox, so what is counted is what the
receiver takes (its inbox is read to the end unless the receiver itself is lost, and then it
restarts, with no use for its count).
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from ..errors import SegflowError
from ..runtime.elements import Barrier, Batch, EndOfStream, Terminate

ChannelKey = tuple[int, int, int, int, int]      # (src block, src replica, dst block, dst replica, dst input)


class SkipImpossible(SegflowError):
    """A kept consumer cannot tell what a restarted sender sends again: it never passed (or
    forgot) that sender's barrier of the version restored. The worker fails its attempt and
    the coordinator recovers again, restarting this consumer too."""


def counted(element: Any) -> int:
    """The counted elements ``element`` holds (see the module's doc)."""
    if type(element) is Batch:
        return len(element.items)
    return 1 if type(element) in (Barrier, EndOfStream, Terminate) else 0


def without_first(batch: Batch, n: int) -> Batch:
    """``batch`` without its first ``n`` records."""
    stamps = batch.timestamps[n:] if batch.timestamps is not None else None
    return Batch(batch.items[n:], stamps, batch.born)


@dataclass
class Position:
    """One channel's count across its connections (see the module's doc)."""

    count: int = 0
    marks: dict[int, int] = field(default_factory=lambda: {0: 0})   # barrier id -> count just after it
    skip: int = 0                       # counted elements the connection now open still skips
    connection: str = ""                # the attempt whose connection delivers ("" any)

    def admit(self, element: Any) -> Any:
        """What of ``element`` the receiver takes (None: nothing), counting it."""
        n = counted(element)
        if self.skip:
            if n <= self.skip:
                self.skip -= n
                return None
            assert type(element) is Batch, "only a batch holds more than one counted element"
            element, n, self.skip = without_first(element, self.skip), n - self.skip, 0
        self.count += n
        if type(element) is Barrier:
            self.marks[element.checkpoint_id] = self.count
        return element


class ChannelPositions:
    """The positions of a worker's inbound channels; the data plane admits every element
    through :meth:`admit`, a kept worker's rewire calls :meth:`resend`."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.positions: dict[ChannelKey, Position] = {}

    def open(self, key: ChannelKey, attempt: str) -> Position:
        """A connection of ``attempt`` opens channel ``key``: it delivers from now on, unless a
        rewire already named another attempt's connection."""
        with self.lock:
            position = self.positions.setdefault(key, Position())
            if not position.connection:
                position.connection = attempt
            return position

    def admit(self, position: Position, attempt: str, element: Any) -> Any:
        """What the receiver takes of ``element``, which the connection of ``attempt``
        delivered (None: nothing; a fenced connection delivers nothing)."""
        with self.lock:
            if position.connection != attempt:
                return None
            return position.admit(element)

    def resend(self, producer: int, consumer: int, version: int, attempt: str) -> dict[ChannelKey, int]:
        """Block ``producer`` restarted at ``version`` in ``attempt`` and sends its output to
        ``consumer`` again: from now on only ``attempt``'s connections deliver on those
        channels, and each skips what was taken after the producer's barrier ``version``.
        Returns the skip per channel."""
        skips = {}
        with self.lock:
            for key, position in self.positions.items():
                if key[0] != producer or key[2] != consumer:
                    continue
                mark = position.marks.get(version)
                if mark is None:
                    raise SkipImpossible(
                        f"block {consumer} replica {key[3]} cannot skip what block {producer} replica {key[1]} sends "
                        f"again from version {version}: it has not passed (or has forgotten) that barrier; the "
                        "recovery restarts it too")
                position.skip, position.connection = position.count - mark, attempt
                skips[key] = position.skip
        return skips

    def forget_through(self, version: int) -> None:
        """Versions up to ``version`` are complete: no restart goes below it, so the marks
        before it go."""
        with self.lock:
            for position in self.positions.values():
                for old in [v for v in position.marks if v < version]:
                    del position.marks[old]
