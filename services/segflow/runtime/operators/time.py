"""Event time: assigning timestamps and generating watermarks in band."""
from __future__ import annotations

from typing import Any, Callable

from ..elements import Batch, Watermark
from ..operator import Operator, Output, UserCall


class AddTimestamps(Operator):
    """Stamps records with ``timestamp(record)``; ``watermark(record, ts)`` may return a
    watermark, which is emitted right after that record (the batch is cut there)."""

    def __init__(self, timestamp: Callable, watermark: Callable | None):
        self.timestamp = timestamp
        self.watermark = watermark
        self.call = UserCall(self)

    def process(self, batch: Batch) -> Output:
        items = batch.items
        try:
            stamps = [self.timestamp(x) for x in items]
        except Exception as exc:
            self.call.fail(exc, items, self.timestamp)
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
