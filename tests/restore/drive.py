"""Driving one runtime operator by hand, as the executor would, and restoring it.

A *run* feeds a list of events to an operator and records everything it produces: records
with their timestamps, control elements, side outputs and deliveries. The restore property
compares an uninterrupted run with one that is snapshotted at a cut, pickled, restored into
a fresh operator built by the same factory, and continued; they must record the same.

Events are tuples: ``("batch", input, items, stamps)``, ``("wm", ts)``, ``("end",)``,
``("control", input, element)`` (heads that handle control themselves), ``("tick",)``
(processing-time operators) and ``("poll", n)`` (sources).
"""
from __future__ import annotations

import pickle
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

from segflow.runtime.elements import Batch, Control, Watermark
from segflow.runtime.operator import Operator, ReplicaContext
from segflow.runtime.elements import FINAL_CHECKPOINT

CHECKPOINT = 1


class BareObjectInState(AssertionError):
    """A snapshot holds a plain ``object()``: a marker that a restore turns into another object."""


@dataclass
class Placement:
    """Where the replica under test runs, and the clock of processing-time operators."""

    index: int = 0
    replicas: int = 1
    now: float = 0.0


@dataclass
class Recorder:
    """What one run saw; ``muted`` while a crashed instance keeps running past its snapshot."""

    log: list = field(default_factory=list)
    muted: bool = False

    def add(self, entry: tuple) -> None:
        if not self.muted:
            self.log.append(entry)

    def output(self, out: Any) -> None:
        for element in [] if out is None else out if isinstance(out, list) else [out]:
            self.element("out", element)

    def element(self, where: str, element: Any) -> None:
        if isinstance(element, Batch):
            stamps = element.timestamps or [None] * len(element.items)
            for item, ts in zip(element.items, stamps):
                self.add((where, "record", item, ts))
        elif isinstance(element, Watermark):
            self.add((where, "watermark", element.ts))
        elif isinstance(element, Control):
            self.add((where, element))
        else:
            raise TypeError(f"an operator produced {element!r}, which is neither a batch nor a control element")


def context(recorder: Recorder, placement: Placement, restored_from: int = 0) -> ReplicaContext:
    return ReplicaContext(
        block=0, index=placement.index, replicas=placement.replicas, worker="test",
        side_output=lambda port, element: recorder.element(f"port {port}", element),
        deliver=lambda sink, items: recorder.add(("delivered", sink, list(items))),
        input_senders=[1, 1, 1], transactional=True, restored_from=restored_from)


def apply(op: Operator, event: tuple, recorder: Recorder, placement: Placement, position: int) -> None:
    """Feed one event to ``op`` and record what it produces."""
    placement.now = 10.0 * position
    kind = event[0]
    if kind == "batch":
        _, port, items, stamps = event
        out = op.process_input(port, Batch(list(items), None if stamps is None else list(stamps)))
    elif kind == "wm":
        out = op.on_watermark(event[1])
    elif kind == "end":
        out = op.on_end()
    elif kind == "control":
        out = op.on_input_control(event[1], 0, event[2])
    elif kind == "tick":
        out = op.on_tick(placement.now)
    elif kind == "poll":
        out = op.poll(event[1])
    else:
        raise ValueError(f"unknown event kind {kind!r}")
    recorder.output(out)


def finish(op: Operator, recorder: Recorder) -> None:
    """What the executor does after a source's last event: drain it; then the job's final
    checkpoint completes (exactly-once sinks publish their last epoch)."""
    if hasattr(op, "poll"):
        while (batch := op.poll(3)) is not None:
            recorder.output(batch)
    op.on_checkpoint_complete(FINAL_CHECKPOINT)


def uninterrupted(make: Callable[[], Operator], events: list, placement: Placement) -> list:
    recorder = Recorder()
    op = make()
    op.open(context(recorder, placement))
    for position, event in enumerate(events):
        apply(op, event, recorder, placement, position)
    finish(op, recorder)
    op.close()
    return recorder.log


@dataclass(frozen=True)
class Interruption:
    """Where the run is cut and how the crash goes: ``lost`` events are processed by the
    crashed instance after its snapshot (their effects must not survive), and the snapshot's
    checkpoint may have completed before the crash."""

    cut: int
    lost: int
    completed: bool
    pickler: Any = pickle


def restored(make: Callable[[], Operator], events: list, placement: Placement, crash: Interruption) -> list:
    recorder = Recorder()
    op = make()
    op.open(context(recorder, placement))
    for position, event in enumerate(events[:crash.cut]):
        apply(op, event, recorder, placement, position)
    op.prepare_snapshot(CHECKPOINT)
    blob = crash.pickler.dumps(op.snapshot())
    recorder.muted = True
    if crash.completed:
        op.on_checkpoint_complete(CHECKPOINT)
    for position, event in enumerate(events[crash.cut:crash.cut + crash.lost], crash.cut):
        apply(op, event, recorder, placement, position)
    recorder.muted = False

    state = crash.pickler.loads(blob)
    assert_no_bare_objects(state)
    fresh = make()
    fresh.restore(state)
    fresh.open(context(recorder, placement, restored_from=CHECKPOINT))
    for position, event in enumerate(events[crash.cut:], crash.cut):
        apply(fresh, event, recorder, placement, position)
    finish(fresh, recorder)
    fresh.close()
    return recorder.log


def assert_no_bare_objects(state: Any, path: str = "state") -> None:
    """Fail if any value reachable from ``state`` is a plain ``object()``."""
    seen: set[int] = set()
    pending = deque([(state, path)])
    while pending:
        value, where = pending.popleft()
        if id(value) in seen:
            continue
        seen.add(id(value))
        if type(value) is object:
            raise BareObjectInState(f"{where} is a bare object(); use a segflow.runtime.sentinels marker "
                                    "or a value type, which keep their meaning through pickling")
        if isinstance(value, dict):
            pending.extend((k, f"{where} key {k!r}") for k in value)
            pending.extend((v, f"{where}[{k!r}]") for k, v in value.items())
        elif isinstance(value, (list, tuple, set, frozenset, deque)):
            pending.extend((v, f"{where}[{i}]") for i, v in enumerate(value))
        elif not isinstance(value, type):
            pending.extend((v, f"{where}.{k}") for k, v in _attributes(value))


def _attributes(value: Any) -> list[tuple[str, Any]]:
    """The instance attributes of ``value``, from its ``__dict__`` and its slots."""
    found = list(getattr(value, "__dict__", {}).items())
    for klass in type(value).__mro__:
        for name in getattr(klass, "__slots__", ()):
            if name != "__dict__" and hasattr(value, name):
                found.append((name, getattr(value, name)))
    return found
