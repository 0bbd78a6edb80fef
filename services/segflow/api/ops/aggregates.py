"""Folds and reductions: over the whole stream (one replica, or associative with local
pre-aggregation), and per key (``group_by_*``, and fold/reduce of a keyed stream)."""
from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Any, Callable

from ...runtime.operators import aggregate as agg
from ..core import A, K, StreamCore, T, V, _callable, _named

if TYPE_CHECKING:
    from ..stream import KeyedStream, Stream


def add_pairs(a: tuple[Any, Any], b: tuple[Any, Any]) -> tuple[Any, Any]:
    """Partial (sum, count) pairs of group_by_avg, added."""
    return a[0] + b[0], a[1] + b[1]


class AggregateOps(StreamCore[T]):
    def fold(self, init: A, fn: Callable[[A, T], A]) -> "Stream[A]":
        """``acc = fn(acc, record)`` over the whole stream, from ``init``; one replica does
        it all. Emits ``acc`` at end of stream.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> out = env.from_iterable(["a", "bb", "ccc"]).fold(0, lambda n, s: n + len(s)).collect()
            >>> _ = env.execute()
            >>> out.get()
            [6]
        """
        _callable("fold", fn)
        return self._single("fold")._chain(_named("fold", fn), lambda: agg.Fold(fn, init), stateful=True)._untimed()

    def reduce(self, fn: Callable[[T, T], T]) -> "Stream[T]":
        """Like :meth:`fold` with the first record as the initial accumulator.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> out = env.from_iterable([3, 9, 4]).reduce(max).collect()
            >>> _ = env.execute()
            >>> out.get()
            [9]
        """
        _callable("reduce", fn)
        return self._single("reduce")._chain(_named("reduce", fn), lambda: agg.Fold(fn), stateful=True)._untimed()

    def fold_assoc(self, init: A, local: Callable[[A, T], A], combine: Callable[[A, A], A]) -> "Stream[A]":
        """Associative fold: each replica folds its records with ``local`` (from ``init``),
        then one replica combines the partial results with ``combine`` (from ``init``).
        Only one partial per replica crosses to the combining replica.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> words = env.from_iterable(["a", "bb", "ccc"]).shuffle()
            >>> out = words.fold_assoc(0, lambda n, s: n + len(s), lambda a, b: a + b).collect()
            >>> _ = env.execute()
            >>> out.get()
            [6]
        """
        _callable("fold_assoc", local)
        _callable("fold_assoc", combine)
        partial = self._chain(_named("fold_assoc.local", local), lambda: agg.Fold(local, init, combine),
                              stateful=True)
        return partial._single("fold_assoc")._chain(
            _named("fold_assoc.combine", combine), lambda: agg.Fold(combine, init), stateful=True)._untimed()

    def reduce_assoc(self, fn: Callable[[T, T], T]) -> "Stream[T]":
        """Associative reduce: a local reduce per replica, then one replica combines.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> out = env.from_iterable(range(1, 6)).shuffle().reduce_assoc(lambda a, b: a * b).collect()
            >>> _ = env.execute()
            >>> out.get()
            [120]
        """
        _callable("reduce_assoc", fn)
        partial = self._chain(_named("reduce_assoc.local", fn), lambda: agg.Fold(fn, combine=fn), stateful=True)
        return partial._single("reduce_assoc")._chain(
            _named("reduce_assoc.combine", fn), lambda: agg.Fold(fn), stateful=True)._untimed()

    def group_by_fold(self, key: Callable[[T], K], init: A, local: Callable[[A, T], A],
                      combine: Callable[[A, A], A]) -> "KeyedStream[K, A]":
        """Per-key associative fold with local pre-aggregation: ``local(acc, record)`` per
        replica, then ``combine(acc, partial)`` after the shuffle.

        Examples:
            Characters per first letter:

            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> words = env.from_iterable(["ant", "bee", "asp"]).shuffle()
            >>> out = words.group_by_fold(lambda w: w[0], 0, lambda n, w: n + len(w), lambda a, b: a + b).collect()
            >>> _ = env.execute()
            >>> sorted(out.get())
            [('a', 6), ('b', 3)]
        """
        for fn in (key, local, combine):
            _callable("group_by_fold", fn)
        return self._two_stage(_named("group_by_fold", key), lambda: agg.LocalKeyedFold(key, local, combine, init),
                               lambda: agg.KeyedFold(combine, init))

    def group_by_reduce(self, key: Callable[[T], K], fn: Callable[[T, T], T]) -> "KeyedStream[K, T]":
        """Per-key associative reduce of records, with local pre-aggregation.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> words = env.from_iterable(["ant", "bee", "asp"]).shuffle()
            >>> out = words.group_by_reduce(lambda w: w[0], max).collect()
            >>> _ = env.execute()
            >>> sorted(out.get())
            [('a', 'asp'), ('b', 'bee')]
        """
        _callable("group_by_reduce", key)
        _callable("group_by_reduce", fn)
        return self._two_stage(_named("group_by_reduce", key), lambda: agg.LocalKeyedFold(key, fn, fn),
                               lambda: agg.KeyedFold(fn))

    def group_by_count(self, key: Callable[[T], Any] | None = None) -> "KeyedStream[Any, int]":
        """``(key, number of records)`` per key; without ``key`` the record is the key.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> out = env.from_iterable(["a b", "b"]).flat_map(str.split).group_by_count().collect()
            >>> _ = env.execute()
            >>> sorted(out.get())
            [('a', 1), ('b', 2)]
        """
        if key is not None:
            _callable("group_by_count", key)
        return self._two_stage(_named("group_by_count", key), lambda: agg.LocalCount(key), agg.KeyedSum)

    def group_by_sum(self, key: Callable[[T], K], value: Callable[[T], Any] | None = None) -> "KeyedStream[K, Any]":
        """``(key, sum of value(record))`` per key (the record itself without ``value``).

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> orders = env.from_iterable([("ann", 30), ("bob", 5), ("ann", 12)])
            >>> out = orders.group_by_sum(lambda o: o[0], lambda o: o[1]).collect()
            >>> _ = env.execute()
            >>> sorted(out.get())
            [('ann', 42), ('bob', 5)]
        """
        _callable("group_by_sum", key)
        get = value if value is not None else (lambda x: x)
        return self._two_stage(_named("group_by_sum", key),
                               lambda: agg.LocalKeyedFold(key, lambda acc, x: acc + get(x), operator.add, 0),
                               agg.KeyedSum)

    def group_by_avg(self, key: Callable[[T], K], value: Callable[[T], Any] | None = None) -> "KeyedStream[K, float]":
        """``(key, mean of value(record))`` per key (the record itself without ``value``).

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> orders = env.from_iterable([("ann", 30), ("bob", 5), ("ann", 12)])
            >>> out = orders.group_by_avg(lambda o: o[0], lambda o: o[1]).collect()
            >>> _ = env.execute()
            >>> sorted(out.get())
            [('ann', 21.0), ('bob', 5.0)]
        """
        _callable("group_by_avg", key)
        get = value if value is not None else (lambda x: x)
        return self._two_stage(
            _named("group_by_avg", key),
            lambda: agg.LocalKeyedFold(key, lambda acc, x: (acc[0] + get(x), acc[1] + 1), add_pairs, (0, 0)),
            lambda: agg.KeyedFold(add_pairs, (0, 0)),
            finish=lambda p: p[0] / p[1])

    def _extreme_element(self, name: str, key: Callable[[T], Any], by: Callable[[T], Any] | None,
                         pick: Callable[[Any, Any], bool]) -> "KeyedStream[Any, Any]":
        _callable(name, key)
        measure = by if by is not None else (lambda x: x)

        def choose(a: Any, b: Any) -> Any:
            return b if pick(measure(b), measure(a)) else a
        return self._two_stage(_named(name, key), lambda: agg.LocalKeyedFold(key, choose, choose),
                               lambda: agg.KeyedFold(choose))

    def group_by_min_element(self, key: Callable[[T], K], by: Callable[[T], Any] | None = None) -> "KeyedStream[K, T]":
        """Per key, the record with the smallest ``by(record)`` (the first one on ties).

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> orders = env.from_iterable([("ann", 30), ("bob", 5), ("ann", 12)])
            >>> out = orders.group_by_min_element(lambda o: o[0], by=lambda o: o[1]).collect()
            >>> _ = env.execute()
            >>> sorted(out.get())
            [('ann', ('ann', 12)), ('bob', ('bob', 5))]
        """
        return self._extreme_element("group_by_min_element", key, by, lambda b, a: b < a)

    def group_by_max_element(self, key: Callable[[T], K], by: Callable[[T], Any] | None = None) -> "KeyedStream[K, T]":
        """Per key, the record with the largest ``by(record)`` (the first one on ties).

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> orders = env.from_iterable([("ann", 30), ("bob", 5), ("ann", 12)])
            >>> out = orders.group_by_max_element(lambda o: o[0], by=lambda o: o[1]).collect()
            >>> _ = env.execute()
            >>> sorted(out.get())
            [('ann', ('ann', 30)), ('bob', ('bob', 5))]
        """
        return self._extreme_element("group_by_max_element", key, by, lambda b, a: b > a)


class KeyedAggregateOps(StreamCore[tuple[K, V]]):
    """fold and reduce per key of a keyed stream (no shuffle: the records are partitioned)."""

    def fold(self, init: A, fn: Callable[[A, V], A]) -> "KeyedStream[K, A]":
        """Per key: ``acc = fn(acc, value)`` from ``init``; emits ``(key, acc)`` at end.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> orders = env.from_iterable([("ann", 30), ("bob", 5), ("ann", 12)])
            >>> out = orders.group_by(lambda o: o[0]).fold(0, lambda total, o: total + o[1]).collect()
            >>> _ = env.execute()
            >>> sorted(out.get())
            [('ann', 42), ('bob', 5)]
        """
        _callable("fold", fn)
        return self._chain(_named("fold", fn), lambda: agg.KeyedFold(fn, init), keyed=True,
                           stateful=True)._untimed()

    def reduce(self, fn: Callable[[V, V], V]) -> "KeyedStream[K, V]":
        """Per key: ``acc = fn(acc, value)`` from the key's first value.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> words = env.from_iterable(["ant", "bee", "asp"]).group_by(lambda w: w[0])
            >>> out = words.reduce(lambda a, b: a + "," + b).collect()
            >>> _ = env.execute()
            >>> sorted(out.get())
            [('a', 'ant,asp'), ('b', 'bee')]
        """
        _callable("reduce", fn)
        return self._chain(_named("reduce", fn), lambda: agg.KeyedFold(fn), keyed=True, stateful=True)._untimed()
