"""Window operators: count, event-time and processing-time; tumbling, sliding, session.

A window collects the values of one key (or of the whole stream for ``window_all``) and,
when it closes, ``aggregate(values)`` turns them into one output record (or several, for
window joins) timestamped with the window's end (time windows) or the largest timestamp
of its records (count windows). Watermark ``w`` promises that later records have
timestamps ``>= w``: a time window ``[start, end)`` closes once the watermark reaches
``end``; a session closes once the watermark passes its last record plus the gap.
Records later than that are dropped. At end of stream every open window is emitted.
"""
from __future__ import annotations

import heapq
import math
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

from ...errors import PipelineError
from ..elements import Batch
from ..hashing import stable_hash
from ..operator import CHAIN, ENGINE_ONLY, Delegating, Operator, Output, UserCall
from ..rescale import earliest_watermark, split_by_key
from ..sentinels import NO_KEY


@dataclass(frozen=True)
class Window:
    """The window a window function is applied to: ``[start, end)`` in event (or
    processing) time, and its key (``None`` for ``window_all``). For count windows,
    ``start`` and ``end`` are the first and last of its records' timestamps (both ``None``
    for records without timestamps), so ``end`` is inclusive there."""
    start: Any
    end: Any
    key: Any = None


class WindowResult(NamedTuple):
    """A window aggregation's result with its window (``.with_window()``)."""
    window: Window
    value: Any


class WindowAware:
    """Marks a window function that takes the window first: ``fn(window, values)``."""

    def __init__(self, fn: Callable[[Window, list[Any]], Any]):
        self.fn = fn

    def __call__(self, window: Window, values: list[Any]) -> Any:
        return self.fn(window, values)


def apply_window_function(aggregate: Callable[..., Any], key: Any, start: Any, end: Any, values: list[Any]) -> Any:
    """``aggregate(values)``, or ``aggregate(Window(start, end, key), values)`` for a
    :class:`WindowAware` one; the engine and the Spark translation both call this."""
    if isinstance(aggregate, WindowAware):
        return aggregate(Window(start, end, key), values)
    return aggregate(values)


def needs_timestamps(op: Operator, stamped: bool) -> bool:
    """Event-time windows: timestamped in, timestamped (by window end) out."""
    if not stamped:
        raise unstamped(op.name, op.location)
    return True


def unstamped(name: str, location: str) -> PipelineError:
    """An event-time window's input without event times: which window, and what to do
    (raised while the pipeline is built; again at run time, for a stream the builder
    could not see)."""
    return PipelineError(f"{name} (defined at {location}) needs timestamped records: call add_timestamps "
                         "before the window (sources, hash joins, zips and aggregates give none)")


class WindowOperator(Operator):
    """Shared driver: splits records into (key, value), asks the subclass for windows."""

    spark_step = CHAIN

    def __init__(self, aggregate: Callable[[list[Any]], Any], keyed: bool, flat: bool = False):
        self.aggregate = aggregate
        self.keyed = keyed
        self.flat = flat
        self.call = UserCall(self)
        self.out_items: list[Any] = []
        self.out_stamps: list[Any] = []

    def emit(self, key: Any, values: list[Any], ts: Any, start: Any = None, end: Any = None) -> None:
        """Aggregate one window ``[start, end)`` (bounds unknown for count windows)."""
        try:
            result = apply_window_function(self.aggregate, key if self.keyed else None, start, end, values)
        except Exception as exc:
            raise self.call.error(exc, 0, values, self.describe(key, start, end)) from exc
        results = result if self.flat else (result,)
        for r in results:
            self.out_items.append((key, r) if self.keyed else r)
            self.out_stamps.append(ts)

    def describe(self, key: Any, start: Any, end: Any) -> str:
        """The window, for error messages: its bounds and, per key, its key."""
        return self._keyed(key, f"window [{start}, {end})")

    def _keyed(self, key: Any, window: str) -> str:
        return f"{window} of key {key!r}" if self.keyed else window

    def drain(self) -> Output:
        if not self.out_items:
            return None
        items, stamps = self.out_items, self.out_stamps
        self.out_items, self.out_stamps = [], []
        return Batch(items, None if all(s is None for s in stamps) else stamps)

    def split(self, item: Any) -> tuple[Any, Any]:
        return (item[0], item[1]) if self.keyed else (NO_KEY, item)

    def process(self, batch: Batch) -> Output:
        stamps = batch.timestamps
        for i, item in enumerate(batch.items):
            key, value = self.split(item)
            self.add(key, value, None if stamps is None else stamps[i])
        self.call.seen += len(batch.items)
        return self.drain()

    def add(self, key: Any, value: Any, ts: Any) -> None:
        raise NotImplementedError


class CountWindows(WindowOperator):
    """Sliding count windows per key: emit at ``size`` values, then drop the oldest ``step``.

    At end of stream the open window is emitted if it holds values not yet emitted.
    """

    state_fields = ("buffers", "watermark")

    def rescale(self, states: list[dict[Any, Any]], index: int, replicas: int) -> dict[Any, Any]:
        return {"buffers": split_by_key(states, "buffers", index, replicas),
                "watermark": earliest_watermark(states)}

    def __init__(self, size: int, step: int, aggregate: Callable[..., Any], keyed: bool, flat: bool = False):
        super().__init__(aggregate, keyed, flat)
        self.size = size
        self.step = step
        self.buffers: dict[Any, Any] = {}
        self.watermark: Any = None

    def add(self, key: Any, value: Any, ts: Any) -> None:
        state = self.buffers.get(key)
        if state is None:
            state = self.buffers[key] = [deque(), deque(), 0]
        values, stamps, _ = state
        values.append(value)
        stamps.append(ts)
        state[2] += 1
        if len(values) == self.size:
            self._fire(key, state)
            for _ in range(min(self.step, len(values))):
                values.popleft()
                stamps.popleft()

    def _fire(self, key: Any, state: list[Any]) -> None:
        values, stamps, _ = state
        state[2] = 0
        known = [s for s in stamps if s is not None]
        first, last = (min(known), max(known)) if known else (None, None)
        ts = last
        if ts is not None and self.watermark is not None and self.watermark > ts:
            ts = self.watermark
        self.emit(key, list(values), ts, first, last)

    def describe(self, key: Any, start: Any, end: Any) -> str:
        return self._keyed(key, "count window")

    def on_watermark(self, ts: Any) -> Output:
        self.watermark = ts
        return None

    def on_end(self) -> Output:
        for key, state in self.buffers.items():
            if state[2] > 0:
                self._fire(key, state)
        self.buffers = {}
        self.watermark = None
        return self.drain()


class TimeWindows(WindowOperator):
    """Aligned sliding (or tumbling, step == size) windows over record timestamps."""

    state_fields = ("windows", "ends", "order", "watermark")

    def rescale(self, states: list[dict[Any, Any]], index: int, replicas: int) -> dict[Any, Any]:
        windows = split_by_key(states, "windows", index, replicas, key=lambda slot: slot[0])
        slots = sorted(windows, key=lambda slot: (slot[1], stable_hash(slot[0])))
        ends = [(start + self.size, order, key, start) for order, (key, start) in enumerate(slots)]
        heapq.heapify(ends)
        return {"windows": windows, "ends": ends, "order": len(ends), "watermark": earliest_watermark(states)}

    def __init__(self, size: Any, step: Any, aggregate: Callable[..., Any], keyed: bool, flat: bool = False):
        super().__init__(aggregate, keyed, flat)
        self.size = size
        self.step = step
        self.windows: dict[Any, Any] = {}      # (key, start) -> values
        self.ends: list[Any] = []         # heap of (end, order, key, start)
        self.order = 0
        self.watermark: Any = None

    def add(self, key: Any, value: Any, ts: Any) -> None:
        if ts is None:
            raise unstamped(self.name, self.location)
        size, step = self.size, self.step
        first = (math.floor((ts - size) / step) + 1) * step
        start = first
        while start <= ts:
            end = start + size
            if self.watermark is None or end > self.watermark:
                slot = (key, start)
                values = self.windows.get(slot)
                if values is None:
                    values = self.windows[slot] = []
                    heapq.heappush(self.ends, (end, self.order, key, start))
                    self.order += 1
                values.append(value)
            start += step

    def _close_until(self, limit: Any) -> None:
        ends = self.ends
        while ends and (limit is None or ends[0][0] <= limit):
            end, _, key, start = heapq.heappop(ends)
            self.emit(key, self.windows.pop((key, start)), end, start, end)

    def timestamps_after(self, stamped: bool) -> bool:
        return needs_timestamps(self, stamped)

    def on_watermark(self, ts: Any) -> Output:
        self.watermark = ts
        self._close_until(ts)
        return self.drain()

    def on_end(self) -> Output:
        self._close_until(None)
        self.watermark = None
        self.order = 0
        return self.drain()


class SessionWindows(WindowOperator):
    """Per-key sessions: records at most ``gap`` apart share a window; end = last + gap."""

    state_fields = ("sessions", "deadlines", "order", "watermark")

    def rescale(self, states: list[dict[Any, Any]], index: int, replicas: int) -> dict[Any, Any]:
        sessions = split_by_key(states, "sessions", index, replicas)
        deadlines = [(s[1] + self.gap, order, key)
                     for order, (key, s) in enumerate((k, s) for k, ss in sessions.items() for s in ss)]
        heapq.heapify(deadlines)
        return {"sessions": sessions, "deadlines": deadlines, "order": len(deadlines),
                "watermark": earliest_watermark(states)}

    def __init__(self, gap: Any, aggregate: Callable[..., Any], keyed: bool, flat: bool = False):
        super().__init__(aggregate, keyed, flat)
        self.gap = gap
        self.sessions: dict[Any, Any] = {}     # key -> list[Any] of [first_ts, last_ts, [(ts, value)]]
        self.deadlines: list[Any] = []    # heap of (last + gap, order, key)
        self.order = 0
        self.watermark: Any = None

    def add(self, key: Any, value: Any, ts: Any) -> None:
        if ts is None:
            raise unstamped(self.name, self.location)
        if self.watermark is not None and ts < self.watermark:
            return
        gap = self.gap
        merged = [ts, ts, [(ts, value)]]
        keep = []
        for session in self.sessions.get(key, []):
            if session[0] - gap <= ts <= session[1] + gap:
                merged[0] = min(merged[0], session[0])
                merged[1] = max(merged[1], session[1])
                merged[2].extend(session[2])
            else:
                keep.append(session)
        keep.append(merged)
        self.sessions[key] = keep
        heapq.heappush(self.deadlines, (merged[1] + gap, self.order, key))
        self.order += 1

    def _close(self, key: Any, session: list[Any]) -> None:
        records = sorted(session[2], key=lambda r: r[0])
        self.emit(key, [v for _, v in records], session[1] + self.gap, session[0], session[1] + self.gap)

    def timestamps_after(self, stamped: bool) -> bool:
        return needs_timestamps(self, stamped)

    def on_watermark(self, ts: Any) -> Output:
        self.watermark = ts
        while self.deadlines and self.deadlines[0][0] < ts:
            _, _, key = heapq.heappop(self.deadlines)
            sessions = self.sessions.get(key, [])
            still_open = []
            for session in sorted(sessions, key=lambda s: s[0]):
                if session[1] + self.gap < ts:
                    self._close(key, session)
                else:
                    still_open.append(session)
            if still_open:
                self.sessions[key] = still_open
            else:
                self.sessions.pop(key, None)
        return self.drain()

    def on_end(self) -> Output:
        closing = [(s[1] + self.gap, order, key, s)
                   for order, (key, sessions) in enumerate(self.sessions.items()) for s in sessions]
        for _, _, key, session in sorted(closing, key=lambda c: (c[0], c[1])):
            self._close(key, session)
        self.sessions = {}
        self.deadlines = []
        self.watermark = None
        return self.drain()


class ProcessingTime(Delegating):
    """Wraps a time-window operator: stamps records with the wall clock on arrival and
    advances the inner operator's watermark with the clock, on batches and idle ticks."""

    spark_step = ENGINE_ONLY

    def __init__(self, inner: WindowOperator, clock: Callable[[], float] = time.time):
        self.inner = inner
        self.clock = clock

    def process(self, batch: Batch) -> Output:
        now = self.clock()
        stamped = Batch(batch.items, [now] * len(batch.items))
        return self._merge(self.inner.process(stamped), self.inner.on_watermark(now))

    def on_tick(self, _monotonic: float) -> Output:
        return self.inner.on_watermark(self.clock())

    def spark_refusal(self) -> tuple[str, str] | None:
        return ("processing-time windows depend on when records are read, which a batch run does not define",
                "use EventTimeWindow after add_timestamps, or run the job on the segflow engine")

    def on_watermark(self, ts: Any) -> Output:
        return None

    def on_end(self) -> Output:
        return self.inner.on_end()

    @staticmethod
    def _merge(a: Output, b: Output) -> Output:
        parts = [p for p in (a, b) if p is not None]
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else parts


class TagInputs(Operator):
    """Head of a window join block: tags each value with its side, 0 (left) or 1 (right)."""

    spark_step = "tag_inputs"

    def __init__(self, keyed: bool):
        self.keyed = keyed

    def process_input(self, input_index: int, batch: Batch) -> Output:
        if self.keyed:
            items = [(k, (input_index, v)) for k, v in batch.items]
        else:
            items = [(input_index, x) for x in batch.items]
        return Batch(items, batch.timestamps)


def window_join_pairs(tagged: list[Any]) -> list[Any]:
    """Cartesian product of a window's left and right values."""
    left = [v for side, v in tagged if side == 0]
    right = [v for side, v in tagged if side == 1]
    return [(a, b) for a in left for b in right]
