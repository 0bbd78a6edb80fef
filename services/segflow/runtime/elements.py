"""The stream grammar: data batches and in-band control elements.

A stream is ``((Batch | Watermark | FlushBatch | Barrier | IterationUpdate)* EndOfStream)+
Terminate``. Records always travel in batches because the per-record cost of the Python
interpreter is the engine's main cost; control elements travel between batches, in band,
so every channel keeps them in order with the data.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class Batch:
    """A run of records, with one timestamp per record when the stream is timestamped."""

    __slots__ = ("items", "timestamps", "born")

    def __init__(self, items: list, timestamps: list | None = None, born: float | None = None):
        self.items = items
        self.timestamps = timestamps
        self.born = born   # wall-clock time the oldest record entered the job, for latency

    def __len__(self) -> int:
        return len(self.items)

    def __repr__(self) -> str:
        return f"Batch({len(self.items)} items{', timestamped' if self.timestamps is not None else ''})"


class Control:
    """Base of the control elements; they carry no records."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class Watermark(Control):
    """Promise that no later record on this stream has a timestamp below ``ts``."""

    ts: Any


@dataclass(frozen=True, slots=True)
class Idle(Control):
    """The stream has had no records for a while: a receiver aligning watermarks leaves
    this sender out until it sends a watermark again (Flink's idle watermark status)."""


@dataclass(frozen=True, slots=True)
class FlushBatch(Control):
    """Ask batchers downstream to send what they hold (adaptive batching)."""


@dataclass(frozen=True, slots=True)
class EndOfStream(Control):
    """Noir's FlushAndRestart: the stream (or one iteration of it) is over.

    Operators emit what they hold and return to their initial state.
    """


@dataclass(frozen=True, slots=True)
class Terminate(Control):
    """The computation is over; replicas stop once every input has terminated."""


@dataclass(frozen=True, slots=True)
class Barrier(Control):
    """A checkpoint barrier (marker) with the checkpoint id.

    ``meta`` is the extension point for protocol data (e.g. segment-backup versions).
    """

    checkpoint_id: int
    meta: Any = None


FINAL_CHECKPOINT = 2 ** 62         # the barrier id of the job's end: commits whatever is still pending
FINAL_NAME = "final"               # how users name it (--restore, `segflow checkpoints`)


def checkpoint_label(checkpoint_id: int) -> str:
    return FINAL_NAME if checkpoint_id == FINAL_CHECKPOINT else str(checkpoint_id)


@dataclass(frozen=True, slots=True)
class IterationUpdate(Control):
    """The iteration leader's decision, carried in band through a loop body.

    Travelling in band is what makes the state lock: on every channel the new state
    precedes the data of the iteration that must see it.
    """

    scope: int
    iteration: int
    state: Any
    proceed: bool


END = EndOfStream()
TERMINATE = Terminate()
FLUSH = FlushBatch()
IDLE = Idle()
