"""Windowed streams: choose how each window becomes a record."""
from __future__ import annotations

import copy
import functools
from typing import TYPE_CHECKING, Any, Callable

from ..errors import PipelineError
from ..plan.graph import Strategy
from ..runtime.operators.windows import TagInputs, window_join_pairs
from .stream import KeyedStream, Stream, _callable, _named
from .windows import WindowDescription

if TYPE_CHECKING:
    pass


class WindowedStream:
    """A stream grouped into windows; every aggregation below returns a plain stream
    (keyed, with ``(key, result)`` records, for :class:`KeyedWindowedStream`)."""

    def __init__(self, stream: Stream, window: WindowDescription):
        if not isinstance(window, WindowDescription):
            raise PipelineError("window needs CountWindow, EventTimeWindow or ProcessingTimeWindow")
        self.stream = stream
        self.window = window

    def _aggregate(self, name: str, aggregate: Callable[[list], Any]) -> Stream:
        stream, window = self.stream, self.window
        keyed = stream.keyed
        out = stream._chain(f"{window.name}.{name}", lambda: window.make(aggregate, keyed), stateful=True)
        out.block.timestamped = True
        return out

    def first(self) -> Stream:
        return self._aggregate("first", lambda values: values[0])

    def fold(self, init: Any, fn: Callable) -> Stream:
        _callable("window fold", fn)
        return self._aggregate(_named("fold", fn),
                               lambda values: functools.reduce(fn, values, copy.deepcopy(init)))

    def reduce(self, fn: Callable) -> Stream:
        _callable("window reduce", fn)
        return self._aggregate(_named("reduce", fn), lambda values: functools.reduce(fn, values))

    def map(self, fn: Callable) -> Stream:
        """``fn(list of the window's records)`` per window."""
        _callable("window map", fn)
        return self._aggregate(_named("map", fn), fn)

    def sum(self) -> Stream:
        return self._aggregate("sum", sum)

    def min(self) -> Stream:
        return self._aggregate("min", min)

    def max(self) -> Stream:
        return self._aggregate("max", max)

    def count(self) -> Stream:
        return self._aggregate("count", len)

    def join(self, other: "WindowedStream") -> Stream:
        """Window by window, every pair ``(l, r)`` of the two streams' records (both must
        use the same window description)."""
        if isinstance(other, WindowedStream) and other.stream.keyed != self.stream.keyed:
            raise PipelineError("a window join needs both streams keyed (.group_by(key).window(...)) or "
                                "neither (.window_all(...))")
        if type(other) is not type(self) or other.window != self.window:
            raise PipelineError("a window join needs two streams windowed the same way "
                                f"(got {self.window.name} and {getattr(other, 'window', other)!r})")
        keyed = self.stream.keyed
        window = self.window
        strategy = Strategy.HASH if keyed else Strategy.FORWARD
        merged = self.stream.env._merge(
            "window_join", [self.stream, other.stream], [strategy, strategy],
            lambda: TagInputs(keyed), keyed=keyed, max_parallelism=None if keyed else 1)
        out = merged._chain(f"{window.name}.join", lambda: window.make(window_join_pairs, keyed, flat=True),
                            stateful=True)
        out.block.timestamped = True
        return out


class KeyedWindowedStream(WindowedStream):
    """Windows per key of a :class:`KeyedStream`."""

    def __init__(self, stream: KeyedStream, window: WindowDescription):
        super().__init__(stream, window)
