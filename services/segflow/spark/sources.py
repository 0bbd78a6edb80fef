"""Sources as RDDs with one partition per source replica, each reading what the engine's
replica reads: the iterable (one replica), ``make(index, replicas)``, the lines whose
first byte lies in the replica's byte range of a file, or records ``i = index, index +
replicas, ...`` of a generator."""
from __future__ import annotations

import csv
import os
from functools import partial
from itertools import islice
from typing import TYPE_CHECKING, Callable, Iterable, Iterator

from ..runtime.operators import sources as src
from ..runtime.operators.columnar import ArrowCsvSource, CsvColumns, csv_record_batches
from ..runtime.operators.csv_records import RecordMaker, record_maker, records
from . import steps

if TYPE_CHECKING:
    from pyspark import RDD, SparkContext

ROWS_AT_A_TIME = 1024


def read_lines(path: str, index: int, replicas: int) -> Iterator[str]:
    """The lines of replica ``index``: those starting in ``[size*index//replicas,
    size*(index+1)//replicas)``. A line loses its ``\\n`` and then a ``\\r`` before it;
    bytes that are not UTF-8 become U+FFFD."""
    return (line for _, line in _offset_lines(path, index, replicas))


def read_jsonl(path: str, index: int, replicas: int) -> Iterator:
    """The JSON values of replica ``index``'s lines, as the engine's source reads them."""
    offsets: list[int] = []

    def lines() -> Iterator[str]:
        for offset, line in _offset_lines(path, index, replicas):
            offsets.append(offset)
            yield line
    return src.parse_json_lines(path, lines(), offsets.__getitem__)


def _offset_lines(path: str, index: int, replicas: int) -> Iterator[tuple[int, str]]:
    """``(byte offset, line)`` of replica ``index``'s lines (see :func:`read_lines`)."""
    size = os.path.getsize(path)
    start, end = size * index // replicas, size * (index + 1) // replicas
    with open(path, "rb") as f:
        if start > 0:
            f.seek(start - 1)
            f.readline()            # the line running over ``start`` began in the replica before
        position = f.tell()
        while position < end:
            raw = f.readline()
            if not raw:
                return
            start_of_line = position
            position += len(raw)
            if raw.endswith(b"\n"):
                raw = raw[:-2] if raw.endswith(b"\r\n") else raw[:-1]
            yield start_of_line, raw.decode("utf-8", "replace")


def read_csv(path: str, delimiter: str, has_headers: bool, index: int, replicas: int) -> Iterator:
    """CSV rows of the replica's lines (empty lines skipped): dicts by header, or lists."""
    lines = (line for line in read_lines(path, index, replicas) if line)
    if not has_headers:
        return csv.reader(lines, delimiter=delimiter)
    with open(path, encoding="utf-8", newline="") as f:
        header = next(csv.reader(f, delimiter=delimiter), [])
    if index == 0:
        next(lines, None)
    return _records(record_maker(header), header, csv.reader(lines, delimiter=delimiter))


def _records(make: RecordMaker, header: list[str], rows: Iterable[list[str]]) -> Iterator[dict]:
    """Each row as the engine's CSV source makes it (``records``: by the header's compiled
    maker, a row longer or shorter than the header zipped), a batch of rows at a time."""
    while batch := list(islice(rows, ROWS_AT_A_TIME)):
        yield from records(make, header, partial(iter, batch))


@steps.source("iterable")
def from_iterable(sc: "SparkContext", op: src.IterableSource, replicas: int) -> "RDD":
    return sc.parallelize(list(op.iterable), replicas)


def _per_replica(sc: "SparkContext", replicas: int, read: Callable[[int], Iterable]) -> "RDD":
    """One partition per replica, holding ``read(replica index)``."""
    return sc.parallelize(range(replicas), replicas).mapPartitionsWithIndex(lambda i, _: iter(read(i)))


@steps.source("parallel")
def from_parallel(sc: "SparkContext", op: src.ParallelSource, replicas: int) -> "RDD":
    make = op.make
    return _per_replica(sc, replicas, lambda i: make(i, replicas))


@steps.source("read_csv")
def csv_rows(sc: "SparkContext", op: src.CsvSource, replicas: int) -> "RDD":
    path, delimiter, headers = op.path, op.delimiter, op.has_headers
    return _per_replica(sc, replicas, lambda i: read_csv(path, delimiter, headers, i, replicas))


@steps.source("arrow_csv")
def csv_batches(sc: "SparkContext", op: ArrowCsvSource, replicas: int) -> "RDD":
    path, columns = op.path, CsvColumns.of(op.path, op.delimiter, op.has_headers, op.types)
    return _per_replica(sc, replicas, lambda i: csv_record_batches(path, columns, i, replicas))


@steps.source("read_text")
def text_lines(sc: "SparkContext", op: src.TextFileSource, replicas: int) -> "RDD":
    path = op.path
    return _per_replica(sc, replicas, lambda i: read_lines(path, i, replicas))


@steps.source("read_jsonl")
def json_lines(sc: "SparkContext", op: src.JsonLinesSource, replicas: int) -> "RDD":
    path = op.path
    return _per_replica(sc, replicas, lambda i: read_jsonl(path, i, replicas))


@steps.source("generate")
def generated(sc: "SparkContext", op: src.GeneratorSource, replicas: int) -> "RDD":
    """Bounded (see GeneratorSource.spark_refusal); a rate limit changes no record."""
    make, total = op.make, op.count
    assert total is not None, "an unbounded generator is refused before translation"
    return _per_replica(sc, replicas, lambda i: map(make, range(i, total, replicas)))
