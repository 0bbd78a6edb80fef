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
    (as Flink's ProcessWindowFunction context or SQL's ``window_start``/``window_end``).

    Examples:
        >>> env = segflow.StreamEnvironment(parallelism=1)
        >>> windows = env.from_iterable([4, 1, 7, 3, 9]).window_all(segflow.CountWindow.sliding(3, 2))
        >>> out = windows.max().collect()
        >>> _ = env.execute()
        >>> out.get()
        [7, 9]
    """

    def __init__(self, stream: StreamCore[Any], window: WindowDescription, emit_window: bool = False):
        if not isinstance(window, WindowDescription):
            raise PipelineError("window needs CountWindow, EventTimeWindow or ProcessingTimeWindow")
        self.stream = stream
        self.window = window
        self.emit_window = emit_window

    def with_window(self) -> "WindowedStream":
        """The same windows, whose aggregations emit ``WindowResult(window, value)``, for
        results that need the window's bounds.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=1)
            >>> stamped = env.from_iterable([1_000, 4_000, 12_000]).add_timestamps(lambda t: t)
            >>> windows = stamped.window_all(segflow.EventTimeWindow.tumbling(10_000)).with_window()
            >>> out = windows.count().map(lambda r: (r.window.start, r.window.end, r.value)).collect()
            >>> _ = env.execute()
            >>> out.get()
            [(0, 10000, 2), (10000, 20000, 1)]
        """
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
        (``start``, ``end``, ``key``).

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> bids = env.from_iterable([(1, 10, 1_000), (1, 25, 3_000), (2, 7, 4_000)]).add_timestamps(lambda b: b[2])
            >>> windows = bids.group_by(lambda b: b[0]).window(segflow.EventTimeWindow.tumbling(10_000))
            >>> out = windows.process(lambda w, bs: (w.start, w.end, max(b[1] for b in bs))).collect()
            >>> _ = env.execute()
            >>> sorted(out.get())
            [(1, (0, 10000, 25)), (2, (0, 10000, 7))]
        """
        _callable("window process", fn)
        return self._aggregate(_named("process", fn), WindowAware(fn))

    def first(self) -> "Stream[Any]":
        """The first record of each window (in arrival order).

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=1)
            >>> out = env.from_iterable("abcde").window_all(segflow.CountWindow.tumbling(2)).first().collect()
            >>> _ = env.execute()
            >>> out.get()
            ['a', 'c', 'e']
        """
        return self._aggregate("first", lambda values: values[0])

    def fold(self, init: Any, fn: Callable[..., Any]) -> "Stream[Any]":
        """``acc = fn(acc, record)`` over each window's records, from a copy of ``init``.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=1)
            >>> windows = env.from_iterable("abcde").window_all(segflow.CountWindow.tumbling(2))
            >>> out = windows.fold("", lambda acc, c: c + acc).collect()
            >>> _ = env.execute()
            >>> out.get()
            ['ba', 'dc', 'e']
        """
        _callable("window fold", fn)
        return self._aggregate(_named("fold", fn),
                               lambda values: functools.reduce(fn, values, copy.deepcopy(init)))

    def reduce(self, fn: Callable[..., Any]) -> "Stream[Any]":
        """``acc = fn(acc, record)`` over each window's records, from its first.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> sales = env.from_iterable([("ann", 3), ("bob", 1), ("ann", 4)]).group_by(lambda s: s[0])
            >>> windows = sales.map(lambda k, s: s[1]).window(segflow.CountWindow.tumbling(2))
            >>> out = windows.reduce(lambda a, b: a * b).collect()
            >>> _ = env.execute()
            >>> sorted(out.get())
            [('ann', 12), ('bob', 1)]
        """
        _callable("window reduce", fn)
        return self._aggregate(_named("reduce", fn), lambda values: functools.reduce(fn, values))

    def map(self, fn: Callable[..., Any]) -> "Stream[Any]":
        """``fn(list of the window's records)`` per window.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=1)
            >>> windows = env.from_iterable([5, 1, 4, 2]).window_all(segflow.CountWindow.tumbling(2))
            >>> out = windows.map(sorted).collect()
            >>> _ = env.execute()
            >>> out.get()
            [[1, 5], [2, 4]]
        """
        _callable("window map", fn)
        return self._aggregate(_named("map", fn), fn)

    def sum(self) -> "Stream[Any]":
        """The sum of each window's records.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=1)
            >>> stamped = env.from_iterable([(1, 500), (2, 1_500), (3, 1_900)]).add_timestamps(lambda r: r[1])
            >>> windows = stamped.map(lambda r: r[0]).window_all(segflow.EventTimeWindow.tumbling(1_000))
            >>> out = windows.sum().collect()
            >>> _ = env.execute()
            >>> out.get()
            [1, 5]
        """
        return self._aggregate("sum", sum)

    def min(self) -> "Stream[Any]":
        """The smallest record of each window.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=1)
            >>> windows = env.from_iterable([4, 1, 7, 3]).window_all(segflow.CountWindow.tumbling(2))
            >>> out = windows.min().collect()
            >>> _ = env.execute()
            >>> out.get()
            [1, 3]
        """
        return self._aggregate("min", min)

    def max(self) -> "Stream[Any]":
        """The largest record of each window.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=1)
            >>> windows = env.from_iterable([4, 1, 7, 3]).window_all(segflow.CountWindow.tumbling(2))
            >>> out = windows.max().collect()
            >>> _ = env.execute()
            >>> out.get()
            [4, 7]
        """
        return self._aggregate("max", max)

    def count(self) -> "Stream[Any]":
        """The number of records of each window.

        Examples:
            Sessions of a user's clicks, closed by 30 s without one:

            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> clicks = env.from_iterable([("ann", 0), ("ann", 10_000), ("ann", 90_000), ("bob", 5_000)])
            >>> sessions = clicks.add_timestamps(lambda c: c[1]).group_by(lambda c: c[0])
            >>> out = sessions.window(segflow.EventTimeWindow.session(30_000)).count().collect()
            >>> _ = env.execute()
            >>> sorted(out.get())
            [('ann', 1), ('ann', 2), ('bob', 1)]
        """
        return self._aggregate("count", len)

    def join(self, other: "WindowedStream") -> "Stream[Any]":
        """Window by window, every pair ``(l, r)`` of the two streams' records (both must
        use the same window description).

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=1)
            >>> seconds = segflow.EventTimeWindow.tumbling(1_000)
            >>> left = env.from_iterable([("a", 100), ("b", 900), ("c", 1_200)]).add_timestamps(lambda r: r[1])
            >>> right = env.from_iterable([(1, 500), (2, 1_500)]).add_timestamps(lambda r: r[1])
            >>> out = left.window_all(seconds).join(right.window_all(seconds)).collect()
            >>> _ = env.execute()
            >>> sorted((l[0], r[0]) for l, r in out.get())
            [('a', 1), ('b', 1), ('c', 2)]
        """
        return self._merged(other, "join", window_join_pairs, flat=True)

    def cogroup(self, other: "WindowedStream", fn: Callable[..., Any]) -> "Stream[Any]":
        """Window by window, ``fn(window, left records, right records)`` (both streams
        windowed the same way; a side without records in the window gets ``[]``).

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=1)
            >>> seconds = segflow.EventTimeWindow.tumbling(1_000)
            >>> left = env.from_iterable([("a", 100), ("b", 900), ("c", 2_200)]).add_timestamps(lambda r: r[1])
            >>> right = env.from_iterable([(1, 500), (2, 1_500)]).add_timestamps(lambda r: r[1])
            >>> both = left.window_all(seconds).cogroup(
            ...     right.window_all(seconds), lambda w, ls, rs: (w.start, len(ls), len(rs)))
            >>> out = both.collect()
            >>> _ = env.execute()
            >>> out.get()
            [(0, 2, 1), (1000, 0, 1), (2000, 1, 0)]
        """
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
    """Windows per key of a :class:`KeyedStream`: each key's records are windowed
    apart, and the results come as ``(key, result)`` records.

    Examples:
        >>> env = segflow.StreamEnvironment(parallelism=2)
        >>> keyed = env.from_iterable(range(7)).group_by(lambda x: x % 2)
        >>> out = keyed.window(segflow.CountWindow.tumbling(2)).count().collect()
        >>> _ = env.execute()
        >>> sorted(out.get())
        [(0, 2), (0, 2), (1, 1), (1, 2)]
    """

    def __init__(self, stream: StreamCore[Any], window: WindowDescription, emit_window: bool = False):
        super().__init__(stream, window, emit_window)
