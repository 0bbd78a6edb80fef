"""Event time: assigning timestamps and generating watermarks in band."""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from typing import Any, Callable

from ...errors import PipelineError
from ..elements import IDLE, Batch, Watermark
from ..operator import Operator, Output, UserCall


@dataclass(frozen=True)
class WatermarkStrategy:
    """How ``add_timestamps`` makes watermarks from the timestamps it assigns, as Flink's
    WatermarkStrategy: the watermark trails the largest timestamp seen by ``bound``
    (records may come that much out of order; later ones are late), is emitted after a
    batch (never after every record) and, with :meth:`every`, only when it reaches the
    next multiple of ``interval``. With :meth:`with_idleness`, a stream without records
    for that many seconds of wall-clock time is idle: operators that align watermarks
    across inputs stop waiting for it until it sends records again.

    Examples:
        With a bound of 2 s the record at 9 000, behind 10 200, still lands in its window;
        with ``monotonous()`` the watermark has passed 10 000 and it is late, so dropped
        (batches of one record, so that a watermark follows every record):

        >>> def counts(strategy):
        ...     env = segflow.StreamEnvironment(parallelism=1)
        ...     times = env.from_iterable([500, 10_200, 9_000, 10_900]).batch_mode(segflow.BatchMode.fixed(1))
        ...     stamped = times.add_timestamps(lambda t: t, strategy)
        ...     out = stamped.window_all(segflow.EventTimeWindow.tumbling(10_000)).count().collect()
        ...     _ = env.execute()
        ...     return out.get()
        >>> strategies = segflow.WatermarkStrategy
        >>> counts(strategies.bounded_out_of_orderness(2_000)), counts(strategies.monotonous())
        ([2, 2], [1, 2])
    """

    bound: Any = 0
    interval: Any = None
    idleness: float | None = None

    @classmethod
    def bounded_out_of_orderness(cls, bound: Any) -> "WatermarkStrategy":
        """Records may come up to ``bound`` (in the timestamps' unit) after a later one:
        the watermark trails the largest timestamp seen by ``bound``.

        Examples:
            >>> strategy = segflow.WatermarkStrategy.bounded_out_of_orderness(2_000)
            >>> strategy.next_watermark(largest=10_000, emitted=None)
            8000
        """
        if not bound >= 0:
            raise PipelineError(f"the out-of-orderness bound must be >= 0, got {bound!r}")
        return cls(bound=bound)

    @classmethod
    def monotonous(cls) -> "WatermarkStrategy":
        """Timestamps never decrease: the watermark is the largest timestamp seen.

        Examples:
            >>> segflow.WatermarkStrategy.monotonous().next_watermark(largest=10_000, emitted=None)
            10000
        """
        return cls(bound=0)

    def every(self, interval: Any) -> "WatermarkStrategy":
        """Emit a watermark only when it reaches the next multiple of ``interval``: fewer
        watermarks for downstream operators to handle.

        Examples:
            >>> strategy = segflow.WatermarkStrategy.monotonous().every(5_000)
            >>> strategy.next_watermark(largest=12_000, emitted=None)
            10000
            >>> strategy.next_watermark(largest=14_000, emitted=10_000) is None
            True
        """
        if not interval > 0:
            raise PipelineError(f"the watermark interval must be positive, got {interval!r}")
        return replace(self, interval=interval)

    def with_idleness(self, seconds: float) -> "WatermarkStrategy":
        """A stream without records for ``seconds`` of wall-clock time is idle, so a join
        or union of it with busy streams does not wait for its watermark.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=1)
            >>> strategy = segflow.WatermarkStrategy.monotonous().with_idleness(5.0)
            >>> out = env.from_iterable([100, 200]).add_timestamps(lambda t: t, strategy).collect()
            >>> _ = env.execute()
            >>> strategy.idleness, out.get()
            (5.0, [100, 200])
        """
        if not seconds > 0:
            raise PipelineError(f"the idleness timeout must be positive (seconds), got {seconds!r}")
        return replace(self, idleness=seconds)

    def next_watermark(self, largest: Any, emitted: Any) -> Any:
        """The watermark to emit after seeing ``largest`` (``emitted``: the last one sent,
        None for none), or None when it would not advance."""
        candidate = largest - self.bound
        if self.interval is not None:
            candidate = math.floor(candidate / self.interval) * self.interval
        return candidate if emitted is None or candidate > emitted else None


class AddTimestamps(Operator):
    """Stamps records with ``timestamp(record)``. Watermarks come from a
    :class:`WatermarkStrategy`, or from ``watermark(record, ts)``, which may return one to
    emit right after that record (the batch is cut there)."""

    spark_step = "add_timestamps"

    state_fields = ("largest", "emitted")

    def __init__(self, timestamp: Callable[..., Any], watermark: Callable[..., Any] | WatermarkStrategy | None):
        self.timestamp = timestamp
        self.strategy = watermark if isinstance(watermark, WatermarkStrategy) else None
        self.watermark = None if isinstance(watermark, WatermarkStrategy) else watermark
        self.call = UserCall(self)
        self.largest: Any = None      # the largest timestamp seen (strategies)
        self.emitted: Any = None      # the last watermark emitted (strategies)
        self.idle = False
        self.last_record = time.monotonic()

    def timestamps_after(self, stamped: bool) -> bool:
        return True

    def process(self, batch: Batch) -> Output:
        items = batch.items
        try:
            stamps = list(map(self.timestamp, items))
        except Exception as exc:
            self.call.fail(exc, items, self.timestamp)
        if self.strategy is not None:
            return self._by_strategy(Batch(items, stamps))
        if self.watermark is None:
            self.call.seen += len(items)
            return Batch(items, stamps)
        out: list[Any] = []
        start = 0
        wm = self.watermark
        i = 0
        try:
            for i in range(len(items)):
                w = wm(items[i], stamps[i])
                if w is not None:
                    out.append(Batch(items[start:i + 1], stamps[start:i + 1]))
                    out.append(Watermark(w))
                    start = i + 1
        except Exception as exc:
            raise self.call.error(exc, i, items[i]) from exc
        self.call.seen += len(items)
        if start < len(items):
            out.append(Batch(items[start:], stamps[start:]))
        return out

    def _by_strategy(self, batch: Batch) -> Output:
        self.call.seen += len(batch.items)
        if not batch.items or batch.timestamps is None:
            return batch
        strategy = self.strategy
        assert strategy is not None, "only a strategy's watermarks come here"
        self.last_record = time.monotonic()
        top = max(batch.timestamps)
        if self.largest is None or top > self.largest:
            self.largest = top
        w = strategy.next_watermark(self.largest, self.emitted)
        if w is None and self.idle:
            w = self.emitted           # active again: a watermark tells the receivers so
        self.idle = False
        if w is None:
            return batch
        self.emitted = w
        return [batch, Watermark(w)]

    def on_tick(self, now: float) -> Output:
        strategy = self.strategy
        if strategy is None or strategy.idleness is None or self.idle:
            return None
        if now - self.last_record < strategy.idleness:
            return None
        self.idle = True
        return [IDLE]
