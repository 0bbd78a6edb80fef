"""Event time: records get timestamps, and watermarks say how far time has come."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from ...errors import PipelineError
from ...runtime.operators.time import AddTimestamps, WatermarkStrategy
from ..core import StreamCore, T, _callable, _named

if TYPE_CHECKING:
    from ..stream import Stream


class EventTimeOps(StreamCore[T]):
    def add_timestamps(self, timestamp: Callable[[T], Any],
                       watermark: Callable[[T, Any], Any] | WatermarkStrategy | None = None) -> "Stream[T]":
        """Give each record the event time ``timestamp(record)``. Watermarks (no later
        record is older) come from a :class:`~segflow.WatermarkStrategy` (bounded
        out-of-orderness, monotonous, emission interval, idleness), or from
        ``watermark(record, ts)``, which may return one after any record. Event-time
        windows and :meth:`interval_join` need them.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=1)
            >>> clicks = env.from_iterable([("a", 1_000), ("b", 2_500), ("a", 11_000)])
            >>> stamped = clicks.add_timestamps(lambda c: c[1], segflow.WatermarkStrategy.monotonous())
            >>> out = stamped.window_all(segflow.EventTimeWindow.tumbling(10_000)).count().collect()
            >>> _ = env.execute()
            >>> out.get()
            [2, 1]
        """
        _callable("add_timestamps", timestamp)
        if watermark is not None and not isinstance(watermark, WatermarkStrategy):
            _callable("add_timestamps' watermark", watermark)
        if self.keyed:
            raise PipelineError("add_timestamps works on a non-keyed stream: call it before group_by")
        idles = isinstance(watermark, WatermarkStrategy) and watermark.idleness is not None
        out = self._chain(_named("add_timestamps", timestamp), lambda: AddTimestamps(timestamp, watermark),
                          clocked=idles)
        out.block.timestamped = True
        return out
