"""Windowed streams: choose how each window becomes a record."""
from __future__ import annotations

import copy
import functools
from typing import TYPE_CHECKING, Any, Callable

from ..errors import PipelineError
from ..plan.graph import Strategy
from ..runtime.operators.windows import (TagInputs, Window, WindowAware, WindowResult, apply_window_function,
                                         unstamped, window_join_pairs)
from .call_site import caller_location
from .core import StreamCore, _callable, _named
from .windows import WindowDescription

if TYPE_CHECKING:
    from .stream import Stream


class WindowedStream:
    """A stream grouped into windows; every aggregation below returns a plain stream
    (keyed, with ``(key, result)`` records, for :class:`KeyedWindowedStream`).

    Window functions see the window's records; :meth:`process` also gets the
    :class:`~segflow.Window` itself (``start``, ``end``, ``key``), and after
    :meth:`with_window` every aggregation's result comes as ``WindowResult(window, value)``
    (as Flink's ProcessWindowFunction context or SQL's ``window_start``/``window_end``)."""

    def __init__(self, stream: StreamCore[Any], window: WindowDescription, emit_window: bool = False):
        if not isinstance(window, WindowDescription):
            raise PipelineError("window needs CountWindow, EventTimeWindow or ProcessingTimeWindow")
        self.stream = stream
        self.window = window
        self.emit_window = emit_window

    def with_window(self) -> "WindowedStream":
        """The same windows, whose aggregations emit ``WindowResult(window, value)``."""
        return type(self)(self.stream, self.window, emit_window=True)

    def _aggregate(self, name: str, aggregate: Callable[..., Any]) -> "Stream[Any]":
        stream, window = self.stream, self.window
        self._require_timestamps(name, [stream])
        keyed = stream.keyed
        if self.emit_window:
            base = aggregate
            aggregate = WindowAware(lambda w, values: WindowResult(
                w, apply_window_function(base, w.key, w.start, w.end, values)))
        stamped = stream.block.timestamped
        out = stream._chain(f"{window.name}.{name}", lambda: window.make(aggregate, keyed), stateful=True,
                            clocked=window.clocked)
        out.block.timestamped = window.stamps_results(stamped)
        return out

    def _require_timestamps(self, name: str, streams: list[StreamCore[Any]]) -> None:
        """Event-time windows need event times; whether a stream has them is known while
        the pipeline is built, so the mistake is named before the job starts."""
        if self.window.needs_timestamps and not all(s.block.timestamped for s in streams):
            raise unstamped(f"{self.window.name}.{name}", caller_location())

    def process(self, fn: Callable[..., Any]) -> "Stream[Any]":
        """``fn(window, records)`` per window, with the :class:`~segflow.Window`
        (``start``, ``end``, ``key``)."""
        _callable("window process", fn)
        return self._aggregate(_named("process", fn), WindowAware(fn))

    def first(self) -> "Stream[Any]":
        return self._aggregate("first", lambda values: values[0])

    def fold(self, init: Any, fn: Callable[..., Any]) -> "Stream[Any]":
        _callable("window fold", fn)
        return self._aggregate(_named("fold", fn),
                               lambda values: functools.reduce(fn, values, copy.deepcopy(init)))

    def reduce(self, fn: Callable[..., Any]) -> "Stream[Any]":
        _callable("window reduce", fn)
        return self._aggregate(_named("reduce", fn), lambda values: functools.reduce(fn, values))

    def map(self, fn: Callable[..., Any]) -> "Stream[Any]":
        """``fn(list of the window's records)`` per window."""
        _callable("window map", fn)
        return self._aggregate(_named("map", fn), fn)

    def sum(self) -> "Stream[Any]":
        return self._aggregate("sum", sum)

    def min(self) -> "Stream[Any]":
        return self._aggregate("min", min)

    def max(self) -> "Stream[Any]":
        return self._aggregate("max", max)

    def count(self) -> "Stream[Any]":
        return self._aggregate("count", len)

    def join(self, other: "WindowedStream") -> "Stream[Any]":
        """Window by window, every pair ``(l, r)`` of the two streams' records (both must
        use the same window description)."""
        return self._merged(other, "join", window_join_pairs, flat=True)

    def cogroup(self, other: "WindowedStream", fn: Callable[..., Any]) -> "Stream[Any]":
        """Window by window, ``fn(window, left records, right records)`` (both streams
        windowed the same way; a side without records in the window gets ``[]``)."""
        _callable("window cogroup", fn)

        def grouped(window: Window, tagged: list[tuple[int, Any]]) -> Any:
            return fn(window, [v for side, v in tagged if side == 0], [v for side, v in tagged if side == 1])
        return self._merged(other, _named("cogroup", fn), WindowAware(grouped), flat=False)

    def _merged(self, other: "WindowedStream", name: str, aggregate: Callable[..., Any], flat: bool) -> "Stream[Any]":
        if isinstance(other, WindowedStream) and other.stream.keyed != self.stream.keyed:
            raise PipelineError(f"a window {name} needs both streams keyed (.group_by(key).window(...)) or "
                                "neither (.window_all(...))")
        if type(other) is not type(self) or other.window != self.window:
            raise PipelineError(f"a window {name} needs two streams windowed the same way "
                                f"(got {self.window.name} and {getattr(other, 'window', other)!r})")
        self._require_timestamps(name, [self.stream, other.stream])
        keyed = self.stream.keyed
        window = self.window
        strategy = Strategy.HASH if keyed else Strategy.FORWARD
        merged = self.stream.env._merge(
            f"window_{name}", [self.stream, other.stream], [strategy, strategy],
            lambda: TagInputs(keyed), keyed=keyed, max_parallelism=None if keyed else 1)
        out = merged._chain(f"{window.name}.{name}", lambda: window.make(aggregate, keyed, flat=flat),
                            stateful=True, clocked=window.clocked)
        out.block.timestamped = window.stamps_results(all(s.block.timestamped for s in (self.stream, other.stream)))
        return out


class KeyedWindowedStream(WindowedStream):
    """Windows per key of a :class:`KeyedStream`."""

    def __init__(self, stream: StreamCore[Any], window: WindowDescription, emit_window: bool = False):
        super().__init__(stream, window, emit_window)
