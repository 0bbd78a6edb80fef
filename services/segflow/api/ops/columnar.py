"""Columnar operations on Arrow record batches (``read_csv(columnar=True)``)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from ...runtime.operators import aggregate as agg
from ...runtime.operators import stateless as sl
from ...runtime.operators.columnar import Aggregation, KeepRows, LocalColumnarAggregate
from ..core import StreamCore, T, _named, _record_function

if TYPE_CHECKING:
    from ..stream import KeyedStream, Stream


class ColumnarOps(StreamCore[T]):
    def map_batches(self, fn: Callable[[T], Any]) -> "Stream[Any]":
        """Columnar: ``fn(record_batch)`` returns a record batch (or a pyarrow table) per
        record batch; compute with ``pyarrow.compute`` over whole columns.

        Examples:
            >>> import pathlib, pyarrow.compute as pc
            >>> _ = pathlib.Path("bids.csv").write_text("auction,price\\n1,150\\n2,90\\n")
            >>> env = segflow.StreamEnvironment(parallelism=1)
            >>> cents = env.read_csv("bids.csv", columnar=True).map_batches(lambda b: pc.multiply(b["price"], 100))
            >>> out = cents.map(lambda column: column.to_pylist()).collect()
            >>> _ = env.execute()
            >>> out.get()
            [[15000, 9000]]
        """
        return self._per_record("map_batches", fn, sl.Map)

    def filter_batches(self, predicate: Callable[[T], Any]) -> "Stream[T]":
        """Columnar: keeps the rows of each record batch where ``predicate(record_batch)``, a
        boolean array (e.g. ``pyarrow.compute.greater(batch["price"], 100)``), is true.

        Examples:
            >>> import pathlib, pyarrow.compute as pc
            >>> _ = pathlib.Path("bids.csv").write_text("auction,price\\n1,150\\n2,90\\n")
            >>> env = segflow.StreamEnvironment(parallelism=1)
            >>> big = env.read_csv("bids.csv", columnar=True).filter_batches(lambda b: pc.greater(b["price"], 100))
            >>> out = big.map(lambda batch: batch.to_pylist()).collect()
            >>> _ = env.execute()
            >>> out.get()
            [[{'auction': 1, 'price': 150}]]
        """
        _record_function("filter_batches", predicate, False)
        return self._chain(_named("filter_batches", predicate), lambda: sl.Map(KeepRows(predicate), False))

    def group_by_aggregate(self, keys: str | list[str],
                           **results: tuple[str, str]) -> "KeyedStream[Any, dict[str, Any]]":
        """Columnar: ``(key, {name: value})`` per key of the record batches, e.g.
        ``group_by_aggregate("auction", bids=("price", "count"), total=("price", "sum"))``;
        functions: sum, count (non-null values), min, max, mean. Each replica aggregates
        its record batches with Arrow's kernels; only per-key partials cross the shuffle.
        A key of several columns is a tuple.

        Examples:
            >>> import pathlib
            >>> _ = pathlib.Path("bids.csv").write_text("auction,price\\n1,150\\n2,90\\n1,120\\n")
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> bids = env.read_csv("bids.csv", columnar=True)
            >>> out = bids.group_by_aggregate("auction", bids=("price", "count"), top=("price", "max")).collect()
            >>> _ = env.execute()
            >>> sorted(out.get())
            [(1, {'bids': 2, 'top': 150}), (2, {'bids': 1, 'top': 90})]
        """
        aggregation = Aggregation.of(keys, results)
        return self._two_stage(f"group_by_aggregate({','.join(aggregation.keys)})",
                               lambda: LocalColumnarAggregate(aggregation),
                               lambda: agg.KeyedFold(aggregation.merge), finish=aggregation.finish)
