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
    """A stream of records, not partitioned by key. Made by a source of
    :class:`~segflow.StreamEnvironment`; each operation returns the stream going on, and a
    stream feeds one operation only (:meth:`split` feeds several).

    Examples:
        >>> env = segflow.StreamEnvironment(parallelism=2)
        >>> out = env.from_iterable(range(6)).shuffle().filter(lambda x: x % 2).map(str).collect()
        >>> _ = env.execute()
        >>> sorted(out.get())
        ['1', '3', '5']
    """


class KeyedStream(KeyedAggregateOps[K, V], KeyedWindowOps[K, V], Stream[tuple[K, V]]):  # type: ignore[misc]
    """A stream of ``(key, value)`` records partitioned by key, made by ``group_by`` or
    ``key_by``: per-record functions get ``key, value`` as two arguments, and ``fold``,
    ``reduce`` and ``window`` work per key.

    Examples:
        >>> env = segflow.StreamEnvironment(parallelism=2)
        >>> keyed = env.from_iterable(["apple", "avocado", "banana"]).group_by(lambda w: w[0])
        >>> out = keyed.map(lambda first, word: len(word)).fold(0, max).collect()
        >>> _ = env.execute()
        >>> sorted(out.get())
        [('a', 7), ('b', 6)]
    """

    keyed = True

    if TYPE_CHECKING:   # the per-record functions receive key and value (StatelessOps runs them)
        def map(self, fn: Callable[[K, V], U]) -> "KeyedStream[K, U]": ...  # type: ignore[override]
        def filter(self, predicate: Callable[[K, V], Any]) -> "KeyedStream[K, V]": ...  # type: ignore[override]
        def flat_map(self, fn: Callable[[K, V], Iterable[U]]) -> "KeyedStream[K, U]": ...  # type: ignore[override]
        def filter_map(self, fn: Callable[[K, V], U | None]) -> "KeyedStream[K, U]": ...  # type: ignore[override]
        def inspect(self, fn: Callable[[K, V], Any]) -> "KeyedStream[K, V]": ...  # type: ignore[override]

    def unkey(self) -> Stream[tuple[K, V]]:
        """A plain stream of the ``(key, value)`` pairs (nothing moves), for operations
        that take one argument per record, or a join (which needs plain streams).

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> keyed = env.from_iterable([3, 4, 5]).group_by(lambda x: x % 2)
            >>> out = keyed.unkey().map(lambda pair: f"{pair[0]}:{pair[1]}").collect()
            >>> _ = env.execute()
            >>> sorted(out.get())
            ['0:4', '1:3', '1:5']
        """
        self._consume("unkey")
        return self._next(self.block, keyed=False)

    def drop_key(self) -> Stream[V]:
        """A plain stream of the values (nothing moves), e.g. after a keyed aggregation
        whose key is also in the value.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> keyed = env.from_iterable([3, 4, 5]).group_by(lambda x: x % 2)
            >>> out = keyed.drop_key().collect()
            >>> _ = env.execute()
            >>> sorted(out.get())
            [3, 4, 5]
        """
        return self._chain("drop_key", sl.DropKey, keyed=False)

    def shuffle(self) -> Stream[tuple[K, V]]:
        """The ``(key, value)`` pairs, spread evenly over the next block's replicas (the
        key no longer decides where a record goes, so the stream is plain).

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> keyed = env.from_iterable([3, 4]).group_by(lambda x: x % 2)
            >>> out = keyed.shuffle().collect()
            >>> _ = env.execute()
            >>> sorted(out.get())
            [(0, 4), (1, 3)]
        """
        return self.unkey().shuffle()

    def key_by(self, key: Callable[..., Any]) -> NoReturn:
        """Refused: the stream is keyed already. Go back to a plain stream first.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=1)
            >>> env.from_iterable([1]).group_by(str).key_by(str)
            Traceback (most recent call last):
            ...
            segflow.errors.PipelineError: the stream is keyed already: call .unkey() or .drop_key() first
        """
        raise PipelineError("the stream is keyed already: call .unkey() or .drop_key() first")

    def group_by(self, key: Callable[..., Any]) -> NoReturn:
        """Refused: the stream is keyed already. To key it anew, drop the key first.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> keyed = env.from_iterable(["ab", "c"]).group_by(len)
            >>> out = keyed.drop_key().group_by(str.isupper).fold(0, lambda n, w: n + 1).collect()
            >>> _ = env.execute()
            >>> out.get()
            [(False, 2)]
        """
        raise PipelineError("the stream is keyed already: call .unkey() or .drop_key() first")

    def window_all(self, window: "WindowDescription") -> "WindowedStream":
        """Windows over the values of the whole stream (one replica); the keys are dropped.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> keyed = env.from_iterable([1, 2, 3, 4]).group_by(lambda x: x % 2)
            >>> out = keyed.window_all(segflow.CountWindow.tumbling(4)).map(sorted).collect()
            >>> _ = env.execute()
            >>> out.get()
            [[1, 2, 3, 4]]
        """
        return self.drop_key().window_all(window)
