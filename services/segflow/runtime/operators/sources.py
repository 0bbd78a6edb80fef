"""Sources: iterables, per-replica iterables, text and CSV files split by byte ranges,
and a deterministic, optionally rate-limited generator."""
from __future__ import annotations

import csv
import json
import os
import random
import time
from functools import partial
from itertools import islice, repeat
from typing import Any, Callable, Iterable, Iterator

from ...errors import JobFailed
from ..elements import Batch
from ..executor import SourceOperator
from ..operator import Output
from .csv_records import RecordMaker, record_maker, records

CHUNK = 1 << 20


class _IteratorSource(SourceOperator):
    """Reads an iterator; its position is the number of records consumed, so a restored
    source re-creates the iterator and skips that many (the iterable must give the same
    records again: a list, a range, a deterministic generator function)."""

    state_fields = ("consumed",)

    def __init__(self) -> None:
        self.iterator: Iterator | None = None
        self.consumed = 0

    def records(self) -> Iterable:
        raise NotImplementedError

    def poll(self, max_items: int) -> Batch | None:
        if self.iterator is None:
            self.iterator = islice(iter(self.records()), self.consumed, None)
        items = list(islice(self.iterator, max_items))
        self.consumed += len(items)
        return Batch(items) if items else None


class IterableSource(_IteratorSource):
    """Reads a Python iterable (one replica)."""

    spark_step = "iterable"

    def __init__(self, iterable: Iterable):
        super().__init__()
        self.iterable = iterable

    def records(self) -> Iterable:
        return self.iterable


class ParallelSource(_IteratorSource):
    """Each replica reads ``make(replica_index, replicas)``."""

    spark_step = "parallel"

    def __init__(self, make: Callable[[int, int], Iterable]):
        super().__init__()
        self.make = make

    def records(self) -> Iterable:
        return self.make(self.ctx.index, self.ctx.replicas)


def byte_range(size: int, index: int, replicas: int) -> tuple[int, int]:
    """The bytes ``[start, end)`` of a file that replica ``index`` of ``replicas`` owns."""
    return size * index // replicas, size * (index + 1) // replicas


class LineReader:
    """Yields the lines whose first byte lies in ``[start, end)``, decoded as UTF-8.

    Splitting on line starts means every line is read by exactly one replica, whatever the
    number of replicas.
    """

    def __init__(self, path: str, start: int, end: int, chunk: int = CHUNK):
        self.path = path
        self.start = start
        self.end = end
        self.chunk = chunk

    def chunks(self) -> Iterator[tuple[int, bytes, list[str]]]:
        """``(file offset of the region, raw region bytes, its lines)`` in file order."""
        for pos, region, terminated in self.regions():
            yield pos, region, self._lines(region, terminated)

    def regions(self) -> Iterator[tuple[int, bytes, bool]]:
        """``(file offset, whole lines of about ``chunk`` bytes without the last newline,
        whether a newline followed)`` in file order."""
        with open(self.path, "rb") as f:
            pos = self.start
            if pos > 0:
                f.seek(pos - 1)
                pos += len(f.readline()) - 1
            if pos >= self.end:
                return
            carry = b""          # unread bytes starting at file offset ``pos`` (< end)
            while True:
                chunk = f.read(self.chunk)
                data = carry + chunk
                if not chunk:
                    if data:
                        yield pos, data, False
                    return
                limit = self.end - pos
                if len(data) >= limit:
                    cut = data.find(b"\n", limit - 1)
                    if cut != -1:
                        yield pos, data[:cut], True
                        return
                    carry = data
                    continue
                cut = data.rfind(b"\n")
                if cut == -1:
                    carry = data
                    continue
                yield pos, data[:cut], True
                carry = data[cut + 1:]
                pos += cut + 1

    @staticmethod
    def _lines(region: bytes, terminated: bool) -> list[str]:
        """The region's lines; a line ended by CRLF loses its CR (``terminated``: the
        region's last line was followed by a newline)."""
        if b"\r" in region:
            region = region.replace(b"\r\n", b"\n")
            if terminated and region.endswith(b"\r"):
                region = region[:-1]
        return region.decode("utf-8", "replace").split("\n")


class TextFileSource(SourceOperator):
    """One record per line of a text file; replicas read disjoint byte ranges.

    Its position is the byte offset of the next unread line, so a restored replica
    continues exactly where its snapshot was taken.
    """

    spark_step = "read_text"

    def __init__(self, path: str):
        self.path = path
        self.chunks: Iterator[tuple[int, bytes, list[str]]] | None = None
        self.region_start = 0
        self.region = b""
        self.pending: list[str] = []
        self.offset = 0
        self.resume_at: int | None = None

    def open(self, ctx) -> None:
        super().open(ctx)
        self.end = byte_range(os.path.getsize(self.path), ctx.index, ctx.replicas)[1]

    def _start(self) -> int:
        """Where reading (re)starts: the restored position, else this replica's range."""
        if self.resume_at is not None:
            return self.resume_at
        return byte_range(os.path.getsize(self.path), self.ctx.index, self.ctx.replicas)[0]

    def _reader(self) -> Iterator[tuple[int, bytes, list[str]]]:
        return LineReader(self.path, self._start(), self.end).chunks()

    def poll(self, max_items: int) -> Batch | None:
        if self.chunks is None:
            self.chunks = self._reader()
        while self.offset >= len(self.pending):
            nxt = next(self.chunks, None)
            if nxt is None:
                self.pending, self.offset = [], 0
                self.region_start, self.region = self.end, b""
                return None
            self.region_start, self.region, self.pending = nxt
            self.offset = 0
        items = self.pending[self.offset:self.offset + max_items]
        self.offset += len(items)
        return Batch(items)

    def position(self) -> int:
        """Byte offset of the next line this replica has not emitted."""
        if self.chunks is None:       # nothing read since the start or the restore
            return self._start()
        return self._line_offset(self.offset)

    def _line_offset(self, index: int) -> int:
        """Byte offset of the line ``pending[index]`` (past the region: where the next starts)."""
        if index >= len(self.pending):
            return self.region_start + len(self.region) + 1
        at = -1
        for _ in range(index):
            at = self.region.index(b"\n", at + 1)
        return self.region_start + at + 1

    def bad_line(self, index: int, what: str, cause: Exception) -> "BadInputLine":
        """The error for line ``pending[index]``, with its 1-based line number in the file
        (counted only now: a replica reads from the middle of the file)."""
        return BadInputLine(self.path, line_number(self.path, self._line_offset(index)), what,
                            self.pending[index], cause)

    def snapshot(self) -> dict:
        return {"position": self.position()}

    def restore(self, state: dict) -> None:
        self.resume_at = state["position"]
        self.chunks = None
        self.pending, self.offset = [], 0


def line_number(path: str, offset: int) -> int:
    """The 1-based number of the line that starts at byte ``offset`` of the file."""
    with open(path, "rb") as f:
        return f.read(offset).count(b"\n") + 1


def parse_json_lines(path: str, lines: Iterable[str], offset_of: Callable[[int], int]) -> Iterator[Any]:
    """The JSON values of ``lines``, blank ones skipped; a bad line raises
    :class:`BadInputLine`, with its number from ``offset_of(i)``, the byte offset of the
    i-th line (asked only then). The engine's and the Spark translation's one reader."""
    loads = json.loads
    for i, line in enumerate(lines):
        if not line or line.isspace():
            continue
        try:
            yield loads(line)
        except ValueError as exc:
            raise BadInputLine(path, line_number(path, offset_of(i)), "JSON", line, exc) from exc


class BadInputLine(JobFailed):
    """A line of an input file that cannot be read as its format says."""

    def __init__(self, path: str, line: int, what: str, text: str, cause: Exception):
        shown = text if len(text) <= 120 else text[:117] + "..."
        super().__init__(f"{path} line {line}: not {what} ({cause}): {shown!r}; fix or remove the line")
        self.path, self.line = path, line


class JsonLinesSource(TextFileSource):
    """One JSON value per line of a file (``.jsonl``), read in parallel like text; blank
    lines are skipped and a bad line fails the job naming the file and line number."""

    spark_step = "read_jsonl"

    def poll(self, max_items: int) -> Batch | None:
        first = self.offset
        batch = super().poll(max_items)
        if batch is None:
            return None
        return Batch(list(parse_json_lines(self.path, batch.items, lambda i: self._line_offset(first + i))))


def plain_lines(lines: list[str], delimiter: str) -> bool:
    """Whether ``csv.reader`` gives exactly ``line.split(delimiter)`` for every line: no
    quote, line break or NUL in any line, no empty line (no row for the csv module), a
    one-character delimiter, no line longer than the csv module's field size limit (which
    it refuses). Most CSV files are such, and ``str.split`` parses them in two thirds of the
    time. Each character is looked for with ``in`` (a memchr over the batch's text): a
    regular expression's character class took 0.19 s per two million bids, ``in`` 0.01 s."""
    if len(delimiter) != 1 or "" in lines:
        return False
    text = "".join(lines)
    if '"' in text or "\r" in text or "\n" in text or "\x00" in text:
        return False
    return not lines or max(map(len, lines)) <= csv.field_size_limit()


def split_rows(lines: list[str], delimiter: str) -> Iterator[list[str]]:
    return map(str.split, lines, repeat(delimiter))


class CsvSource(TextFileSource):
    """Rows of a CSV file (records without embedded newlines), read in parallel.

    With headers, rows are dicts keyed by the header names; otherwise lists of strings.
    """

    spark_step = "read_csv"

    def __init__(self, path: str, delimiter: str, has_headers: bool):
        super().__init__(path)
        self.delimiter = delimiter
        self.has_headers = has_headers
        self.header: list[str] | None = None
        self.make_record: RecordMaker | None = None
        self.skip_first = False
        self.restored = False

    def open(self, ctx) -> None:
        super().open(ctx)
        if self.has_headers:
            with open(self.path, encoding="utf-8", newline="") as f:
                self.header = next(csv.reader(f, delimiter=self.delimiter), [])
            self.make_record = record_maker(self.header)
            if not self.restored:    # a restored source has the snapshot's skip_first
                self.skip_first = ctx.index == 0

    def poll(self, max_items: int) -> Batch | None:
        first = self.offset
        batch = super().poll(max_items)
        if batch is None:
            return None
        lines = list(filter(None, batch.items))
        if self.skip_first and lines:
            lines = lines[1:]
            self.skip_first = False
        if plain_lines(lines, self.delimiter):
            rows = partial(split_rows, lines, self.delimiter)     # lazy: no list of rows in between
        else:
            rows = partial(iter, self._csv_module_rows(first, batch.items, lines))
        if self.header is None or self.make_record is None:       # made with the header
            return Batch(list(rows()))
        return Batch(records(self.make_record, self.header, rows))

    def _csv_module_rows(self, first: int, items: list[str], lines: list[str]) -> list[list[str]]:
        try:
            return list(csv.reader(lines, delimiter=self.delimiter))
        except csv.Error as exc:
            raise self._bad_row(first, items, exc) from exc

    def _bad_row(self, first: int, lines: list[str], cause: csv.Error) -> BadInputLine:
        """The line of ``lines`` (from ``pending[first]``) that the CSV reader refuses."""
        for i, line in enumerate(lines):
            try:
                list(csv.reader([line], delimiter=self.delimiter, strict=True))
            except csv.Error as again:
                return self.bad_line(first + i, "CSV", again)
        return self.bad_line(first, "CSV", cause)

    def snapshot(self) -> dict:
        return {**super().snapshot(), "skip_first": self.skip_first}

    def restore(self, state: dict) -> None:
        super().restore(state)
        self.skip_first = state["skip_first"]
        self.restored = True


ARRIVALS = ("steady", "poisson")


class Pace:
    """Caps one source replica at ``rate`` records per second (``None``: no cap).

    ``arrivals``: ``"steady"`` spaces the records evenly; ``"poisson"`` draws the gaps
    between them from an exponential distribution (a Poisson process, as queueing models
    assume; seeded by ``seed``, so a run's schedule repeats). A Poisson process has no
    memory, so a restored schedule draws on from where it resumes.

    A restored source passes what it had produced. By default its schedule resumes there, as
    if the time it was down had not passed. Given ``since`` (the wall-clock time at which the
    schedule began, kept in the source's state), it catches up instead: what the schedule
    owed while the job was down may go at once, as a queue's backlog would."""

    def __init__(self, rate: float | None, produced: int = 0, since: float | None = None,
                 arrivals: str = "steady", seed: int = 0):
        self.rate = rate
        behind = produced / rate if rate else 0.0
        if since is not None:
            behind = max(behind, time.time() - since)
        self.started = time.monotonic() - behind
        self.gaps: random.Random | None = None
        if rate and arrivals == "poisson":
            self.gaps = random.Random(seed)
            self.due = produced / rate + self.gaps.expovariate(rate)     # schedule time of the next record

    @property
    def since(self) -> float:
        """The wall-clock time at which this schedule began (record 0 was due)."""
        return time.time() - (time.monotonic() - self.started)

    def allowance(self, produced: int, want: int) -> int:
        """How many of ``want`` records may go now; 0 (after a short sleep) when none may."""
        if self.rate is None:
            return want
        elapsed = time.monotonic() - self.started
        if self.gaps is None:
            allowed = int(elapsed * self.rate) - produced
            wait = (produced + 1) / self.rate - elapsed
        else:
            allowed = 0
            while allowed < want and self.due <= elapsed:
                allowed += 1
                self.due += self.gaps.expovariate(self.rate)
            wait = self.due - elapsed
        if allowed <= 0:
            time.sleep(min(0.01, wait))
            return 0
        return min(want, allowed)


class GeneratorSource(SourceOperator):
    """Record ``i`` is ``make(i)``; replica ``r`` of ``n`` produces ``i = r, r + n, ...``.

    Deterministic: the same ``count`` gives the same records whatever the parallelism.
    ``count=None`` is unbounded; ``rate`` caps the records per second of the whole source;
    ``catch_up`` makes a restored paced source produce what its schedule owed at once (see
    :class:`Pace`), for which the state keeps when the schedule began (``since``);
    ``arrivals`` spaces the records evenly or as a Poisson process (seeded by the replica).
    """

    spark_step = "generate"

    state_fields = ("next_index", "produced", "since")
    restored = False

    def spark_refusal(self) -> tuple[str, str] | None:
        if self.count is not None:
            return None
        return ("a generator without a count never ends",
                "give generate(..., count=N) for a bounded run, or run the stream on the segflow engine")

    def __init__(self, make: Callable[[int], Any], count: int | None, rate: float | None,
                 catch_up: bool = False, arrivals: str = "steady"):
        self.make, self.count = make, count
        self.rate, self.catch_up, self.arrivals = rate, catch_up, arrivals      # the pace
        self.next_index = 0
        self.produced = 0
        self.since: float | None = None

    def open(self, ctx) -> None:
        super().open(ctx)
        if not self.restored:
            self.next_index = ctx.index
        self.pace = Pace(self.rate / ctx.replicas if self.rate else None, self.produced,
                         self.since if self.catch_up else None, self.arrivals, seed=ctx.index)
        self.since = self.pace.since

    def restore(self, state: dict) -> None:
        super().restore(state)
        self.restored = True

    def poll(self, max_items: int) -> Batch | None:
        n = self.ctx.replicas
        if self.count is not None and self.next_index >= self.count:
            return None
        want = self.pace.allowance(self.produced, max_items)
        if not want:
            return Batch([])
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
