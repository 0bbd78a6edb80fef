"""Sources: iterables, per-replica iterables, text and CSV files split by byte ranges,
and a deterministic, optionally rate-limited generator."""
from __future__ import annotations

import csv
import io
import os
import time
from itertools import islice
from typing import Any, Callable, Iterable, Iterator

from ..elements import Batch
from ..executor import SourceOperator
from ..operator import Output

CHUNK = 1 << 20


class IterableSource(SourceOperator):
    """Reads a Python iterable (one replica)."""

    def __init__(self, iterable: Iterable):
        self.iterable = iterable
        self.iterator: Iterator | None = None

    def poll(self, max_items: int) -> Batch | None:
        if self.iterator is None:
            self.iterator = iter(self.iterable)
        items = list(islice(self.iterator, max_items))
        return Batch(items) if items else None


class ParallelSource(SourceOperator):
    """Each replica reads ``make(replica_index, replicas)``."""

    def __init__(self, make: Callable[[int, int], Iterable]):
        self.make = make
        self.iterator: Iterator | None = None

    def poll(self, max_items: int) -> Batch | None:
        if self.iterator is None:
            self.iterator = iter(self.make(self.ctx.index, self.ctx.replicas))
        items = list(islice(self.iterator, max_items))
        return Batch(items) if items else None


def byte_range(size: int, index: int, replicas: int) -> tuple[int, int]:
    """The bytes ``[start, end)`` of a file that replica ``index`` of ``replicas`` owns."""
    return size * index // replicas, size * (index + 1) // replicas


class LineReader:
    """Yields the lines whose first byte lies in ``[start, end)``, decoded as UTF-8.

    Splitting on line starts means every line is read by exactly one replica, whatever the
    number of replicas.
    """

    def __init__(self, path: str, start: int, end: int):
        self.path = path
        self.start = start
        self.end = end

    def chunks(self) -> Iterator[list[str]]:
        with open(self.path, "rb") as f:
            pos = self.start
            if pos > 0:
                f.seek(pos - 1)
                pos += len(f.readline()) - 1
            if pos >= self.end:
                return
            carry = b""          # unread bytes starting at file offset ``pos`` (< end)
            while True:
                chunk = f.read(CHUNK)
                data = carry + chunk
                if not chunk:
                    if data:
                        yield self._lines(data)
                    return
                limit = self.end - pos
                if len(data) >= limit:
                    cut = data.find(b"\n", limit - 1)
                    if cut != -1:
                        yield self._lines(data[:cut])
                        return
                    carry = data
                    continue
                cut = data.rfind(b"\n")
                if cut == -1:
                    carry = data
                    continue
                yield self._lines(data[:cut])
                carry = data[cut + 1:]
                pos += cut + 1

    @staticmethod
    def _lines(region: bytes) -> list[str]:
        text = region.decode("utf-8", "replace")
        if "\r" in text:
            text = text.replace("\r\n", "\n")
        return text.split("\n")


class TextFileSource(SourceOperator):
    """One record per line of a text file; replicas read disjoint byte ranges."""

    def __init__(self, path: str):
        self.path = path
        self.chunks: Iterator[list[str]] | None = None
        self.pending: list[str] = []
        self.offset = 0

    def open(self, ctx) -> None:
        super().open(ctx)
        size = os.path.getsize(self.path)
        start, end = byte_range(size, ctx.index, ctx.replicas)
        self.chunks = LineReader(self.path, start, end).chunks()

    def poll(self, max_items: int) -> Batch | None:
        while self.offset >= len(self.pending):
            nxt = next(self.chunks, None)
            if nxt is None:
                return None
            self.pending, self.offset = nxt, 0
        items = self.pending[self.offset:self.offset + max_items]
        self.offset += len(items)
        return Batch(items)


class CsvSource(TextFileSource):
    """Rows of a CSV file (records without embedded newlines), read in parallel.

    With headers, rows are dicts keyed by the header names; otherwise lists of strings.
    """

    def __init__(self, path: str, delimiter: str, has_headers: bool):
        super().__init__(path)
        self.delimiter = delimiter
        self.has_headers = has_headers
        self.header: list[str] | None = None
        self.skip_first = False

    def open(self, ctx) -> None:
        super().open(ctx)
        if self.has_headers:
            with open(self.path, encoding="utf-8", newline="") as f:
                self.header = next(csv.reader(f, delimiter=self.delimiter), [])
            self.skip_first = ctx.index == 0

    def poll(self, max_items: int) -> Batch | None:
        batch = super().poll(max_items)
        if batch is None:
            return None
        lines = [line for line in batch.items if line]
        if self.skip_first and lines:
            lines = lines[1:]
            self.skip_first = False
        rows = list(csv.reader(io.StringIO("\n".join(lines)), delimiter=self.delimiter)) if lines else []
        if self.header is not None:
            header = self.header
            rows = [dict(zip(header, row)) for row in rows]
        return Batch(rows)


class GeneratorSource(SourceOperator):
    """Record ``i`` is ``make(i)``; replica ``r`` of ``n`` produces ``i = r, r + n, ...``.

    Deterministic: the same ``count`` gives the same records whatever the parallelism.
    ``count=None`` is unbounded; ``rate`` caps the records per second of the whole source.
    """

    def __init__(self, make: Callable[[int], Any], count: int | None, rate: float | None):
        self.make = make
        self.count = count
        self.rate = rate
        self.next_index = 0
        self.produced = 0
        self.started = 0.0

    def open(self, ctx) -> None:
        super().open(ctx)
        self.next_index = ctx.index
        self.started = time.monotonic()

    def poll(self, max_items: int) -> Batch | None:
        n = self.ctx.replicas
        if self.count is not None and self.next_index >= self.count:
            return None
        want = max_items
        if self.rate is not None:
            allowed = int((time.monotonic() - self.started) * self.rate / n) - self.produced
            if allowed <= 0:
                time.sleep(min(0.01, n / self.rate))
                return Batch([])
            want = min(want, allowed)
        stop = self.next_index + want * n
        if self.count is not None:
            stop = min(stop, self.count)
        make = self.make
        items = [make(i) for i in range(self.next_index, stop, n)]
        self.next_index += len(items) * n
        self.produced += len(items)
        return Batch(items)

    def process(self, batch: Batch) -> Output:
        return batch
