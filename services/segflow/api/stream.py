"""Stream and KeyedStream: the fluent pipeline API.

Each method appends an operator to the stream's current block, or closes the block and
opens a new one when records must move between replicas. A stream can be consumed once
(as in Noir); use :meth:`Stream.split` to feed several pipelines from one stream.

On a :class:`KeyedStream` records are ``(key, value)`` pairs and functions receive
``key, value`` as two arguments; the key is kept.

The methods live with their family in ``segflow.api.ops`` (one module each: stateless,
partitioning, aggregates, columnar, event time, windows, joins, iterations, sinks; why
classes, see ``segflow.api.core``); a new operation goes into its family's module, a new
family into the bases below.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable, NoReturn

from ..errors import PipelineError
from ..runtime.operators import stateless as sl
from .core import K, T, U, V
from .ops.aggregates import AggregateOps, KeyedAggregateOps
from .ops.columnar import ColumnarOps
from .ops.event_time import EventTimeOps
from .ops.iterations import IterationOps
from .ops.joins import JoinOps
from .ops.partitioning import PartitioningOps
from .ops.sinks import SinkOps
from .ops.stateless import StatelessOps
from .ops.windows import KeyedWindowOps, WindowOps

if TYPE_CHECKING:
    from .windowed import WindowedStream
    from .windows import WindowDescription


class Stream(StatelessOps[T], PartitioningOps[T], AggregateOps[T], ColumnarOps[T], EventTimeOps[T],
             WindowOps[T], JoinOps[T], IterationOps[T], SinkOps[T]):
    """A stream of records, not partitioned by key."""


class KeyedStream(KeyedAggregateOps[K, V], KeyedWindowOps[K, V], Stream[tuple[K, V]]):  # type: ignore[misc]
    """A stream of ``(key, value)`` records partitioned by key."""

    keyed = True

    if TYPE_CHECKING:   # the per-record functions receive key and value (StatelessOps runs them)
        def map(self, fn: Callable[[K, V], U]) -> "KeyedStream[K, U]": ...  # type: ignore[override]
        def filter(self, predicate: Callable[[K, V], Any]) -> "KeyedStream[K, V]": ...  # type: ignore[override]
        def flat_map(self, fn: Callable[[K, V], Iterable[U]]) -> "KeyedStream[K, U]": ...  # type: ignore[override]
        def filter_map(self, fn: Callable[[K, V], U | None]) -> "KeyedStream[K, U]": ...  # type: ignore[override]
        def inspect(self, fn: Callable[[K, V], Any]) -> "KeyedStream[K, V]": ...  # type: ignore[override]

    def unkey(self) -> Stream[tuple[K, V]]:
        """A plain stream of the ``(key, value)`` pairs (nothing moves)."""
        self._consume("unkey")
        return self._next(self.block, keyed=False)

    def drop_key(self) -> Stream[V]:
        """A plain stream of the values (nothing moves)."""
        return self._chain("drop_key", sl.DropKey, keyed=False)

    def shuffle(self) -> Stream[tuple[K, V]]:
        return self.unkey().shuffle()

    def key_by(self, key: Callable[..., Any]) -> NoReturn:
        raise PipelineError("the stream is keyed already: call .unkey() or .drop_key() first")

    def group_by(self, key: Callable[..., Any]) -> NoReturn:
        raise PipelineError("the stream is keyed already: call .unkey() or .drop_key() first")

    def window_all(self, window: "WindowDescription") -> "WindowedStream":
        return self.drop_key().window_all(window)
