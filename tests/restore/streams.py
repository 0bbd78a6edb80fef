"""Random inputs for the restore property: event lists of batches (with or without
timestamps), watermarks, idle ticks and ends of stream, and the crash that interrupts them."""
from __future__ import annotations

import pickle

import cloudpickle
from hypothesis import strategies as st

from .drive import Interruption, Placement

KEYS = ("a", "b", "c", 7, (1, "x"))
small_ints = st.integers(-5, 20)


def keyed(values: st.SearchStrategy = small_ints) -> st.SearchStrategy:
    """``(key, value)`` records over a few keys of several types."""
    return st.tuples(st.sampled_from(KEYS), values)


def arrow_batches() -> st.SearchStrategy:
    """Arrow record batches of a key column ``k`` and a value column ``v`` (some nulls)."""
    import pyarrow as pa
    rows = st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.one_of(st.none(), small_ints)), max_size=6)
    schema = pa.schema([("k", pa.string()), ("v", pa.int64())])
    return rows.map(lambda r: pa.record_batch([[k for k, _ in r], [v for _, v in r]], schema=schema))


@st.composite
def event_lists(draw, items: st.SearchStrategy = small_ints, inputs: int = 1, stamps: str = "maybe",
                rounds: int = 2, ticks: bool = False) -> list:
    """Batches on ``inputs`` inputs with watermarks between them, each round closed by an end
    of stream. ``stamps``: "always", "never" or "maybe" (per round). Timestamps mostly grow,
    some are late, and watermarks never go back."""
    events: list = []
    clock = 0
    for _ in range(draw(st.integers(1, rounds))):
        stamped = stamps == "always" or stamps == "maybe" and draw(st.booleans())
        for _ in range(draw(st.integers(0, 8))):
            kind = draw(st.sampled_from(["batch", "batch", "wm", "tick"] if ticks else ["batch", "batch", "wm"]))
            if kind == "wm" and stamped:
                clock += draw(st.integers(0, 6))
                events.append(("wm", clock))
            elif kind == "tick":
                events.append(("tick",))
            elif kind == "batch":
                values = draw(st.lists(items, max_size=5))
                times = None
                if stamped:
                    times = []
                    for _ in values:
                        clock += draw(st.integers(0, 3))
                        times.append(clock - draw(st.sampled_from([0, 0, 0, 2, 5])))
                events.append(("batch", draw(st.integers(0, inputs - 1)), values, times))
        events.append(("end",))
    return events


@st.composite
def polls(draw) -> list:
    """A source's polls before the end (the driver drains it after them)."""
    return [("poll", n) for n in draw(st.lists(st.integers(1, 4), max_size=8))]


@st.composite
def interruptions(draw, events: list) -> Interruption:
    cut = draw(st.integers(0, len(events)))
    return Interruption(cut=cut, lost=draw(st.integers(0, len(events) - cut)), completed=draw(st.booleans()),
                        pickler=draw(st.sampled_from([pickle, cloudpickle])))


@st.composite
def placements(draw) -> Placement:
    replicas = draw(st.integers(1, 3))
    return Placement(index=draw(st.integers(0, replicas - 1)), replicas=replicas)
