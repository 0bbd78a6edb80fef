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

import functools
import pickle
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping

from ..errors import SegflowError
from ..plan.graph import DEFAULT_BATCH_MODE
from ..runtime.channels import Cancelled, Outlet
from ..runtime.elements import Barrier, Batch
from .aligned import AlignedSnapshots
from .barriers import Channel

if TYPE_CHECKING:
    from ..plan.graph import Edge
    from ..runtime.executor import ReplicaExecutor

PartReader = Callable[[int], "bytes | None"]       # version -> this replica's stored window part


@dataclass
class WindowPart:
    """What a connector replica sent in one version: pickled elements per output channel;
    ``spilled``: parts of earlier versions its channels dropped from memory at this
    barrier (the worker logs it: checkpoints are not completing)."""

    channels: dict[tuple[int, int], list[bytes]]
    records: int
    spilled: int = 0


def part_bytes(part: list[bytes]) -> int:
    return sum(map(len, part))


def coalesced(elements: Iterable[Any], most: int) -> Iterator[Any]:
    """``elements`` with each run of consecutive batches joined into batches of up to
    ``most`` records (a batch already larger passes alone), control elements in their
    place. A window keeps batches as they went out, small ones when a slow stream's batch
    timeout sent them; a replay has its whole backlog at hand, so it sends full batches,
    as the live path would have. The records, their order and every barrier stay."""
    run: list[Batch] = []
    size = 0
    for element in elements:
        if type(element) is not Batch:
            if run:
                yield joined(run)
                run, size = [], 0
            yield element
            continue
        if run and size + len(element.items) > most:
            yield joined(run)
            run, size = [], 0
        run.append(element)
        size += len(element.items)
    if run:
        yield joined(run)


def joined(batches: list[Batch]) -> Batch:
    """One batch of ``batches``' records in order, born when the oldest of them was."""
    if len(batches) == 1:
        return batches[0]
    items = [item for batch in batches for item in batch.items]
    stamps = None
    if batches[0].timestamps is not None:
        stamps = [stamp for batch in batches for stamp in batch.timestamps or ()]
        assert len(stamps) == len(items), "a channel's batches are all timestamped or none is"
    borns = [batch.born for batch in batches if batch.born is not None]
    return Batch(items, stamps, min(borns) if borns else None)


class WindowRecorder(Outlet):
    """One output channel of a connector replica: sends, and keeps what it sent.

    Under a regional recovery (:mod:`.regional`) the receiver may restart while this
    replica runs on. A send that fails then is dropped, not raised: the window keeps it,
    and :meth:`rewire` replays the window into the restarted receiver's new channel. The
    parts of versions not yet complete everywhere stay in memory (``parts``) beside the
    store's copy, so a replay never waits for a part still being written. While checkpoints
    do not complete (a restarted region that cannot finish one) they would pile up: past
    ``limit`` bytes the oldest go (``spilled`` counts them), and a replay reads them back
    from the store, whose copy a later snapshot vouches for. A replay sends batches of up to
    ``batch`` records, its edge's batch size: a block set to send every record at once
    (``BatchMode.fixed(1)``) replays one record a batch too, since each block finishes a
    batch before it passes any of it on, and a restarted chain then works in turn on one
    batch instead of side by side on single records."""

    __slots__ = ("inner", "kept", "records", "parts", "lock", "cancel", "detached", "limit", "held", "spilled",
                 "gone", "batch")

    def __init__(self, inner: Outlet, cancel: threading.Event, limit: int = 0, batch: int = DEFAULT_BATCH_MODE.size):
        self.inner = inner
        self.batch = batch                            # records a replay sends at most in one batch
        self.kept: list[bytes] = []
        self.records = 0
        self.parts: dict[int, list[bytes]] = {}       # version -> what this channel carried in it
        self.lock = threading.Lock()
        self.cancel = cancel                          # its attempt's: a send failing after it raises
        self.detached = False                         # the receiver went; sends are only kept
        self.limit = limit                            # bytes of ``parts`` kept in memory (0: no bound)
        self.held = 0                                 # bytes in ``parts`` now
        self.spilled = 0                              # parts dropped from memory at the bound
        self.gone: set[int] = set()                   # their versions, until complete everywhere

    def send(self, element: Any) -> None:
        data = pickle.dumps(element, protocol=5)
        with self.lock:
            self.kept.append(data)
            if type(element) is Batch:
                self.records += len(element.items)
            if not self.detached:
                self._forward(self.inner, element)

    def _forward(self, outlet: Outlet, element: Any) -> None:
        """Lock held: send on ``outlet``; a receiver gone while this attempt runs detaches it."""
        try:
            outlet.send(element)
        except (ConnectionError, Cancelled):
            if self.cancel.is_set():
                raise
            self.detached = True

    def take_part(self, version: int) -> tuple[list[bytes], int]:
        """What this channel carried since the previous part: version ``version``'s part."""
        with self.lock:
            kept, records = self.kept, self.records
            self.kept, self.records = [], 0
            self.parts[version] = kept
            self.held += part_bytes(kept)
            self._spill()
            return kept, records

    def _spill(self) -> None:
        """Lock held: past the bound, forget the oldest parts but the newest (its write to
        the store has only begun); a replay reads the forgotten ones from the store."""
        while self.limit and self.held > self.limit and len(self.parts) > 1:
            oldest = min(self.parts)
            self.held -= part_bytes(self.parts.pop(oldest))
            self.gone.add(oldest)
            self.spilled += 1

    def forget_through(self, version: int) -> None:
        """Versions up to ``version`` are complete everywhere: a replay reads them from the
        store. Called on the worker's command thread, which must not wait for a replay in
        progress: then the next completion forgets them."""
        if not self.lock.acquire(blocking=False):
            return
        try:
            for old in [v for v in self.parts if v <= version]:
                self.held -= part_bytes(self.parts.pop(old))
            self.gone = {v for v in self.gone if v > version}
        finally:
            self.lock.release()

    def rewire(self, outlet: Outlet, first: int, through: int, stored: Callable[[int], list[bytes]]) -> Outlet:
        """Replay versions ``first`` to ``through`` (from memory, else ``stored(version)``:
        this channel's part in the store), every later part still in memory, then what was
        sent since the newest part, into ``outlet``, and send on it from now on; the
        replica's own sends wait meanwhile. Returns the outlet it replaces. If ``outlet``'s
        receiver goes too, the channel is detached again: a later rewire replays again."""
        with self.lock:
            self.detached = False
            for element in coalesced(self._window(first, through, stored), self.batch):
                if not self.detached:
                    self._forward(outlet, element)
            replaced, self.inner = self.inner, outlet
            return replaced

    def _window(self, first: int, through: int, stored: Callable[[int], list[bytes]]) -> Iterator[Any]:
        """Lock held: what a rewire replays, element by element (see :meth:`rewire`)."""
        later = sorted(v for v in {*self.parts, *self.gone} if v > through and v >= first)
        for version in [*range(first, through + 1), *later]:
            for data in self.parts[version] if version in self.parts else stored(version):
                yield pickle.loads(data)
        for data in self.kept:
            yield pickle.loads(data)


class MissingWindowPart(SegflowError):
    """A replay needs a window part the state store does not hold. ``part``: its block,
    replica and version, which the worker reports: the coordinator recovers without it."""

    def __init__(self, message: str, part: tuple[int, int, int]):
        super().__init__(message)
        self.part = part


class SegmentSnapshots(AlignedSnapshots):
    def __init__(self, executor: "ReplicaExecutor", sink: Any, connector: bool,
                 targets: Mapping[int, tuple["Edge", int]] | None = None, read_part: PartReader | None = None,
                 memory: int = 0):
        """``targets``: ``id(outlet)`` -> the edge and receiving replica it sends to (what a
        rewire reopens); ``read_part``: this replica's stored window parts; ``memory``:
        bytes of window parts its output channels keep in memory together (0: no bound)."""
        super().__init__(executor, sink)
        self.recorders: dict[tuple[int, int], WindowRecorder] = {}
        self.destination: dict[tuple[int, int], int] = {}      # channel key -> receiving block
        self.targets: dict[tuple[int, int], tuple["Edge", int]] = {}
        self.dropping: dict[Channel, int] = {}
        self.replays: dict[int, tuple[int, int]] = {}           # receiving block -> versions to replay
        self.read_part = read_part
        self.spilled = 0                # parts the recorders had spilled at the last barrier
        if connector:
            senders = list(executor.router.by_destination())
            share = memory // max(1, sum(len(sender.outlets) for _, sender in senders))
            for position, (block, sender) in enumerate(senders):
                for d, outlet in enumerate(sender.outlets):
                    recorder = WindowRecorder(outlet, executor.stop, share if memory else 0, sender.size)
                    sender.outlets[d] = recorder
                    self.recorders[(position, d)] = recorder
                    self.destination[(position, d)] = block
                    if targets is not None and id(outlet) in targets:
                        self.targets[(position, d)] = targets[id(outlet)]

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
            part = self._part(self.read_part, version, "a restore replays")
            for key in wanted:
                recorder = self.recorders[key]
                for element in coalesced(map(pickle.loads, part.get(key, ())), recorder.batch):
                    recorder.inner.send(element)
        self.replays = {}

    def _replays(self, key: tuple[int, int], version: int) -> bool:
        first, last = self.replays.get(self.destination[key], (1, 0))
        return first <= version <= last

    def window_part(self, checkpoint_id: int) -> WindowPart | None:
        if not self.recorders:
            return None            # not a connector, or a sink: nothing to replay from it
        part = WindowPart({}, 0)
        for key, recorder in self.recorders.items():
            kept, records = recorder.take_part(checkpoint_id)
            if kept:
                part.channels[key] = kept
                part.records += records
        spilled = sum(recorder.spilled for recorder in self.recorders.values())
        part.spilled, self.spilled = spilled - self.spilled, spilled
        return part

    def window_parts_spilled(self) -> int:
        return self.spilled

    def completed(self, checkpoint_id: int) -> None:
        for recorder in self.recorders.values():
            recorder.forget_through(checkpoint_id)

    def detached(self) -> bool:
        """Some output channel lost its receiver and waits for a rewire."""
        return any(recorder.detached for recorder in self.recorders.values())

    def rewire(self, consumer: int, outlet_for: Callable[["Edge", int], Outlet], first: int,
               through: int) -> list[Outlet]:
        """A regional recovery restarted block ``consumer`` at version ``first - 1``: replay
        this replica's window (the store holds ``first`` to ``through``, memory the rest)
        into a new channel to each replica of it this one sends to (``outlet_for(edge,
        replica)``), then go on live. Returns the outlets replaced."""
        assert self.read_part is not None, "a connector is rewired once its checkpointing is set up"
        read = self.read_part
        replaced = []
        for key, recorder in sorted(self.recorders.items()):
            if self.destination[key] == consumer:
                edge, replica = self.targets[key]
                replaced.append(recorder.rewire(outlet_for(edge, replica), first, through,
                                                functools.partial(self._stored, read, key)))
        return replaced

    def _stored(self, read: PartReader, key: tuple[int, int], version: int) -> list[bytes]:
        return self._part(read, version, "a regional recovery replays").get(key, [])

    def _part(self, read: PartReader, version: int, replay: str) -> dict[tuple[int, int], list[bytes]]:
        """This replica's stored window part of ``version``, per output channel; ``replay``
        says which replay needs it (the worker reports a missing one: the coordinator
        recovers without it)."""
        blob = read(version)
        if blob is None:
            ctx = self.executor.ctx
            raise MissingWindowPart(f"the pending window of block {ctx.block} replica {ctx.index} lacks version "
                                    f"{version}, which {replay}: the state store lost it; restore an older job state",
                                    (ctx.block, ctx.index, version))
        channels: dict[tuple[int, int], list[bytes]] = pickle.loads(blob)
        return channels
