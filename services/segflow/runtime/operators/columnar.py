"""The columnar path (issue 16): records that are Arrow record batches, read from CSV files
by byte ranges like the other file sources, transformed a whole batch at a time and
aggregated per key by Arrow's compute kernels, so that no Python code runs per row.

The engine moves, snapshots and restores a record batch like any other record; only the
operators here look inside one. A source's position is the byte offset after the last
region it emitted, so a restored replica goes on from there, as the line sources do.
"""
from __future__ import annotations

import io
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator

from ...errors import JobFailed, PipelineError
from ...extras import require
from ..elements import Batch
from ..executor import SourceOperator
from ..operator import CHAIN, Operator, Output
from .sources import CHUNK, LineReader, byte_range, line_number

if TYPE_CHECKING:
    import pyarrow as pa

FUNCTIONS = ("sum", "count", "min", "max", "mean")
# How the partials of each function combine: counts add up, like sums.
COMBINE = {"sum": "sum", "count": "sum", "min": "min", "max": "max"}
COMPACT_AFTER = 64      # partial tables a local aggregate keeps before it combines them


def arrow(what: str) -> Any:
    return require("pyarrow", what)


def as_table(item: Any) -> "pa.Table":
    """A record of a columnar stream (a record batch, or a table a user function made)."""
    pa = arrow("the columnar path")
    if isinstance(item, pa.Table):
        return item
    if isinstance(item, pa.RecordBatch):
        return pa.Table.from_batches([item])
    raise ColumnarInputError(f"a columnar operator got a {type(item).__name__}, not an Arrow record batch: "
                        "read with read_csv(..., columnar=True) and return record batches from map_batches")


class ColumnarInputError(JobFailed):
    """A columnar operator's input is not what it needs (not record batches, or a column
    it aggregates is missing)."""


# ------------------------------------------------------------------------------ reading CSV
@dataclass(frozen=True)
class CsvColumns:
    """The columns of a CSV file: names from its header (else f0, f1, ...) and types
    inferred from its first chunk, or given. Every replica infers the same."""

    delimiter: str
    has_headers: bool
    names: tuple[str, ...]
    types: tuple[tuple[str, Any], ...]

    @staticmethod
    def of(path: str, delimiter: str, has_headers: bool, types: dict | None) -> "CsvColumns":
        pacsv = require("pyarrow.csv", "read_csv(columnar=True)")
        pa = arrow("read_csv(columnar=True)")
        with open(path, "rb") as f:
            sample = f.read(CHUNK)
        if len(sample) == CHUNK:
            sample = sample[:sample.rfind(b"\n") + 1]
        if not sample.strip():
            return CsvColumns(delimiter, has_headers, (), ())
        try:
            table = pacsv.read_csv(io.BytesIO(sample), read_options=pacsv.ReadOptions(
                autogenerate_column_names=not has_headers, use_threads=False),
                parse_options=pacsv.ParseOptions(delimiter=delimiter))
        except pa.ArrowInvalid as exc:
            raise BadCsvRegion(path, 1, exc) from exc
        inferred = {f.name: pa.string() if pa.types.is_null(f.type) else f.type for f in table.schema}
        unknown = set(types or {}) - set(inferred)
        if unknown:
            raise PipelineError(f"read_csv(columnar=True): types for columns {sorted(unknown)} that {path} does not "
                                f"have; its columns are {table.schema.names}")
        inferred.update(types or {})
        return CsvColumns(delimiter, has_headers, tuple(table.schema.names), tuple(inferred.items()))

    def parse(self, path: str, offset: int, region: bytes) -> list:
        """The record batches of ``region``, the whole lines at byte ``offset`` of the file."""
        if offset == 0 and self.has_headers:
            newline = region.find(b"\n")
            region = region[newline + 1:] if newline != -1 else b""
        if not self.names or not region.strip():
            return []
        pacsv = require("pyarrow.csv", "read_csv(columnar=True)")
        pa = arrow("read_csv(columnar=True)")
        try:
            table = pacsv.read_csv(io.BytesIO(region), read_options=pacsv.ReadOptions(
                column_names=list(self.names), use_threads=False),
                parse_options=pacsv.ParseOptions(delimiter=self.delimiter),
                convert_options=pacsv.ConvertOptions(column_types=dict(self.types)))
        except pa.ArrowInvalid as exc:
            first = line_number(path, offset) + (1 if offset == 0 and self.has_headers else 0)
            raise BadCsvRegion(path, first, exc) from exc
        return table.to_batches()


class BadCsvRegion(JobFailed):
    """Lines of a CSV file that Arrow cannot read as the file's columns."""

    def __init__(self, path: str, first_line: int, cause: Exception):
        super().__init__(f"{path}, in the lines from line {first_line} on (rows counted from there): {cause}; "
                         "fix the file, or give the column's type with read_csv(..., columnar=True, types={...})")
        self.path, self.line = path, first_line


def csv_regions(path: str, start: int, end: int, chunk: int) -> Iterator[tuple[int, int, bytes]]:
    """``(window end, offset, lines)`` of the lines that start in each ``chunk``-aligned
    window of ``[start, end)``: a replica resumed at a window's end reads the same regions
    as one that never stopped, so its record batches are the same too."""
    while start < end:
        window_end = min(end, (start // chunk + 1) * chunk)
        for offset, region, _ in LineReader(path, start, window_end, chunk).regions():
            yield window_end, offset, region
        start = window_end


def csv_record_batches(path: str, columns: CsvColumns, index: int, replicas: int,
                       chunk: int = CHUNK) -> Iterator:
    """Replica ``index``'s record batches, as the engine's source reads them (Spark's too)."""
    start, end = byte_range(os.path.getsize(path), index, replicas)
    for _, offset, region in csv_regions(path, start, end, chunk):
        yield from columns.parse(path, offset, region)


class ArrowCsvSource(SourceOperator):
    """``read_csv(..., columnar=True)``: Arrow record batches of the lines that start in
    each ``chunk`` bytes of the replica's byte range."""

    spark_step = "arrow_csv"

    state_fields = ("position",)

    def __init__(self, path: str, delimiter: str, has_headers: bool, types: dict | None = None,
                 chunk: int = CHUNK):
        self.path = path
        self.delimiter = delimiter
        self.has_headers = has_headers
        self.types = types
        self.chunk = chunk
        self.position: int | None = None     # where the next window starts
        self.regions: Iterator | None = None

    def open(self, ctx) -> None:
        super().open(ctx)
        self.columns = CsvColumns.of(self.path, self.delimiter, self.has_headers, self.types)
        start, self.end = byte_range(os.path.getsize(self.path), ctx.index, ctx.replicas)
        if self.position is None:
            self.position = start

    def poll(self, max_items: int) -> Batch | None:
        if self.regions is None:
            assert self.position is not None, "open() places the replica's byte range"
            self.regions = csv_regions(self.path, self.position, self.end, self.chunk)
        region = next(self.regions, None)
        if region is None:
            self.position = self.end
            return None
        self.position, offset, data = region
        return Batch(self.columns.parse(self.path, offset, data))

    def restore(self, state: dict) -> None:
        self.position = state["position"]
        self.regions = None


# --------------------------------------------------------------------------- aggregating
@dataclass(frozen=True)
class Aggregation:
    """``group_by_aggregate``'s request: key columns and named ``(column, function)``
    results. Partials are Arrow's per-key results of the functions that combine (a mean is
    a sum and a count), one column each, named ``column_function``."""

    keys: tuple[str, ...]
    results: tuple[tuple[str, str, str], ...]      # (name, column, function)

    @staticmethod
    def of(keys: str | list[str] | tuple[str, ...], results: dict[str, Any]) -> "Aggregation":
        keys = (keys,) if isinstance(keys, str) else tuple(keys)
        if not keys or not all(isinstance(k, str) and k for k in keys):
            raise PipelineError(f"group_by_aggregate needs a key column name or a list of them, got {keys!r}")
        if not results:
            raise PipelineError("group_by_aggregate needs at least one result, e.g. total=('price', 'sum')")
        checked = []
        for name, spec in results.items():
            if not (isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], str) and spec[1] in FUNCTIONS):
                raise PipelineError(f"group_by_aggregate: {name}={spec!r} must be (column, function) with a "
                                    f"function of {', '.join(FUNCTIONS)}")
            checked.append((name, spec[0], spec[1]))
        return Aggregation(keys, tuple(checked))

    @property
    def partials(self) -> list[tuple[str, str]]:
        """``(column, function)`` of every partial, each once, in a fixed order."""
        wanted: list[tuple[str, str]] = []
        for _, column, function in self.results:
            for part in ((column, "sum"), (column, "count")) if function == "mean" else ((column, function),):
                if part not in wanted:
                    wanted.append(part)
        return wanted

    def _grouped(self, table: "pa.Table", functions: list[tuple[str, str]]) -> "pa.Table":
        """Per key of ``table``, ``function(column)`` for each pair, as the partial columns."""
        pa = arrow("group_by_aggregate")
        missing = [c for c in (*self.keys, *(column for column, _ in functions)) if c not in table.column_names]
        if missing:
            raise ColumnarInputError(f"group_by_aggregate: the record batches have no column {missing[0]!r}; they have "
                                f"{table.column_names}")
        out = table.group_by(list(self.keys), use_threads=False).aggregate(functions)
        names = [f"{c}_{f}" for c, f in self.partials]
        return pa.table([out[k] for k in self.keys] + [out[f"{c}_{f}"] for c, f in functions],
                        names=[*self.keys, *names])

    def partial(self, table: "pa.Table") -> "pa.Table":
        return self._grouped(table, self.partials)

    def combine(self, tables: list) -> "pa.Table":
        """The partial tables ``tables`` as one, with one row per key."""
        partials = arrow("group_by_aggregate").concat_tables(tables)
        return self._grouped(partials, [(f"{c}_{f}", COMBINE[f]) for c, f in self.partials])

    def records(self, partials: "pa.Table") -> list[tuple]:
        """``(key, partial values)`` per key: a key of several columns is a tuple."""
        keys = [partials[k].to_pylist() for k in self.keys]
        values = zip(*(partials[f"{c}_{f}"].to_pylist() for c, f in self.partials))
        return list(zip(keys[0] if len(keys) == 1 else zip(*keys), values))

    def merge(self, a: tuple, b: tuple) -> tuple:
        """Two partials of one key as one (a missing sum, min or max is None)."""
        merged = []
        for (_, function), x, y in zip(self.partials, a, b):
            if x is None or y is None:
                merged.append(y if x is None else x)
            elif function in ("sum", "count"):
                merged.append(x + y)
            else:
                merged.append(min(x, y) if function == "min" else max(x, y))
        return tuple(merged)

    def finish(self, partial: tuple) -> dict:
        at = {part: i for i, part in enumerate(self.partials)}
        out = {}
        for name, column, function in self.results:
            if function == "mean":
                total, count = partial[at[(column, "sum")]], partial[at[(column, "count")]]
                out[name] = total / count if count else None
            else:
                out[name] = partial[at[(column, function)]]
        return out


class LocalColumnarAggregate(Operator):
    """First stage of ``group_by_aggregate``: per-key partials of each record batch (Arrow's
    hash aggregation), combined now and then; at end of stream one ``(key, partials)``
    record per key goes to the shuffle."""

    spark_step = CHAIN

    state_fields = ("partials",)

    def __init__(self, aggregation: Aggregation):
        self.aggregation = aggregation
        self.parts: list = []

    @property
    def partials(self) -> "pa.Table | None":
        self._compact()
        return self.parts[0] if self.parts else None

    @partials.setter
    def partials(self, table: "pa.Table | None") -> None:
        self.parts = [] if table is None else [table]

    def _compact(self) -> None:
        if len(self.parts) > 1:
            self.parts = [self.aggregation.combine(self.parts)]

    def process(self, batch: Batch) -> Output:
        partial = self.aggregation.partial
        self.parts.extend(partial(as_table(item)) for item in batch.items)
        if len(self.parts) >= COMPACT_AFTER:
            self._compact()
        return None

    def timestamps_after(self, stamped: bool) -> bool:
        return False

    def on_end(self) -> Output:
        partials, self.partials = self.partials, None
        return Batch(self.aggregation.records(partials)) if partials is not None and partials.num_rows else None

    def rescale(self, states: list[dict], index: int, replicas: int) -> dict:
        """Partials may go anywhere (the shuffle after this stage sorts keys): all to replica 0."""
        tables = [s["partials"] for s in states if s["partials"] is not None]
        if index or not tables:
            return {"partials": None}
        return {"partials": self.aggregation.combine(tables)}


class KeepRows:
    """``filter_batches``'s function: the rows of a record batch where ``predicate`` is true."""

    def __init__(self, predicate: Any):
        self.predicate = predicate

    def __call__(self, batch: Any) -> Any:
        return batch.filter(self.predicate(batch))
