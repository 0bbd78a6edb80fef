"""The ``segment`` protocol at a replica: aligned barriers plus segment backup (Shen,
Segment Backup, §3.4-3.5).

Every replica snapshots its state per version as in ABS. A *connector* replica also keeps
what it sends on each output channel, barriers included, and hands it over with each
snapshot as that version's part of its pending window (the worker persists the part
before the snapshot). Each element is pickled as it is sent: receivers in this process
share the objects, and what the window keeps must be what went out.

After a restore (see :mod:`.segment_plan`) a connector first replays its window parts
(first..last) to the segments restarted behind it, then goes on; on input channels whose
sender restarted at an older version it drops everything up to its own version's barrier,
which its restored state already reflects. Sources that restarted behind the newest
restored version take the missing versions at once, so every channel carries every
barrier up to it and alignment downstream never waits for a barrier that cannot come.
"""
from __future__ import annotations

import pickle
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from ..errors import SegflowError
from ..runtime.channels import Outlet
from ..runtime.elements import Barrier, Batch
from .aligned import AlignedSnapshots
from .barriers import Channel

if TYPE_CHECKING:
    from ..runtime.executor import ReplicaExecutor

PartReader = Callable[[int], "bytes | None"]       # version -> this replica's stored window part


@dataclass
class WindowPart:
    """What a connector replica sent in one version: pickled elements per output channel."""

    channels: dict[tuple[int, int], list[bytes]]
    records: int


class WindowRecorder(Outlet):
    """One output channel of a connector replica: sends, and keeps what it sent."""

    __slots__ = ("inner", "kept", "records")

    def __init__(self, inner: Outlet):
        self.inner = inner
        self.kept: list[bytes] = []
        self.records = 0

    def send(self, element: Any) -> None:
        self.kept.append(pickle.dumps(element, protocol=5))
        if type(element) is Batch:
            self.records += len(element.items)
        self.inner.send(element)


class MissingWindowPart(SegflowError):
    """A replay needs a window part the state store does not hold."""


class SegmentSnapshots(AlignedSnapshots):
    def __init__(self, executor: "ReplicaExecutor", sink: Any, connector: bool):
        super().__init__(executor, sink)
        self.recorders: dict[tuple[int, int], WindowRecorder] = {}
        self.destination: dict[tuple[int, int], int] = {}      # channel key -> receiving block
        self.dropping: dict[Channel, int] = {}
        self.replays: dict[int, tuple[int, int]] = {}           # receiving block -> versions to replay
        self.read_part: PartReader | None = None
        if connector:
            for position, (block, sender) in enumerate(executor.router.by_destination()):
                for d, outlet in enumerate(sender.outlets):
                    recorder = WindowRecorder(outlet)
                    sender.outlets[d] = recorder
                    self.recorders[(position, d)] = recorder
                    self.destination[(position, d)] = block

    def restart(self, version: int, dropping: dict[Channel, int], replays: dict[int, tuple[int, int]],
                read_part: PartReader) -> None:
        """Set up a restore at ``version``: channels to drop through a barrier, window
        versions to replay per receiving block, and how to read this replica's parts."""
        self.book.completed = version
        self.dropping = dict(dropping)
        self.replays = {b: r for b, r in replays.items() if r[0] <= r[1]}
        self.read_part = read_part

    # -------------------------------------------------------------- hooks
    def admit(self, index: int, sender: int, element: Any) -> Any:
        if self.dropping:
            through = self.dropping.get((index, sender))
            if through is not None:
                if type(element) is Barrier and element.checkpoint_id >= through:
                    del self.dropping[(index, sender)]
                    return element
                return None
        return super().admit(index, sender, element)

    def on_start(self) -> None:
        if not self.replays:
            return
        assert self.read_part is not None
        first = min(r[0] for r in self.replays.values())
        last = max(r[1] for r in self.replays.values())
        for version in range(first, last + 1):
            wanted = [key for key in self.recorders if self._replays(key, version)]
            if not wanted:
                continue
            blob = self.read_part(version)
            if blob is None:
                ctx = self.executor.ctx
                raise MissingWindowPart(f"the pending window of block {ctx.block} replica {ctx.index} lacks "
                                        f"version {version}: the state store lost it; restore an older job state")
            part = pickle.loads(blob)
            for key in wanted:
                inner = self.recorders[key].inner
                for element in part.get(key, ()):
                    inner.send(pickle.loads(element))
        self.replays = {}

    def _replays(self, key: tuple[int, int], version: int) -> bool:
        first, last = self.replays.get(self.destination[key], (1, 0))
        return first <= version <= last

    def window_part(self) -> WindowPart | None:
        if not self.recorders:
            return None            # not a connector, or a sink: nothing to replay from it
        part = WindowPart({}, 0)
        for key, recorder in self.recorders.items():
            if recorder.kept:
                part.channels[key] = recorder.kept
                part.records += recorder.records
                recorder.kept, recorder.records = [], 0
        return part
