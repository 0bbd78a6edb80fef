"""Per-record operations: map, filter, flat_map and their kin, and the stateful rich_* maps."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable

from ...runtime.operators import stateless as sl
from ..core import StreamCore, T, U, _callable, _named

if TYPE_CHECKING:
    from ..stream import Stream


class StatelessOps(StreamCore[T]):
    def map(self, fn: Callable[[T], U]) -> "Stream[U]":
        """One output record per input record: ``fn(record)``.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> out = env.from_iterable([1, 2, 3]).shuffle().map(lambda x: x * 10).collect()
            >>> _ = env.execute()
            >>> sorted(out.get())
            [10, 20, 30]

            On a keyed stream ``fn(key, value)`` makes the new value; the key is kept:

            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> words = env.from_iterable(["ab", "c"]).group_by(len)
            >>> out = words.map(lambda length, word: word.upper()).collect()
            >>> _ = env.execute()
            >>> sorted(out.get())
            [(1, 'C'), (2, 'AB')]
        """
        return self._per_record("map", fn, sl.Map)

    def filter(self, predicate: Callable[[T], Any]) -> "Stream[T]":
        """Keep the records for which ``predicate(record)`` is true.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> out = env.from_iterable(range(10)).shuffle().filter(lambda x: x % 3 == 0).collect()
            >>> _ = env.execute()
            >>> sorted(out.get())
            [0, 3, 6, 9]
        """
        return self._per_record("filter", predicate, sl.Filter)

    def flat_map(self, fn: Callable[[T], Iterable[U]]) -> "Stream[U]":
        """Every record becomes the records of the iterable ``fn(record)``.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> out = env.from_iterable(["to be", "or not"]).flat_map(str.split).collect()
            >>> _ = env.execute()
            >>> sorted(out.get())
            ['be', 'not', 'or', 'to']
        """
        return self._per_record("flat_map", fn, sl.FlatMap)

    def filter_map(self, fn: Callable[[T], U | None]) -> "Stream[U]":
        """``fn(record)``, dropping the records for which it returns ``None``: a map and
        a filter in one call, e.g. for parsing that may fail.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> lines = env.from_iterable(["7", "x", "12"])
            >>> out = lines.filter_map(lambda s: int(s) if s.isdigit() else None).collect()
            >>> _ = env.execute()
            >>> sorted(out.get())
            [7, 12]
        """
        return self._per_record("filter_map", fn, sl.FilterMap)

    def flatten(self) -> "Stream[Any]":
        """A stream of iterables becomes the stream of their elements.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> out = env.from_iterable([[1, 2], [], [3]]).flatten().collect()
            >>> _ = env.execute()
            >>> sorted(out.get())
            [1, 2, 3]
        """
        keyed = self.keyed
        return self._chain("flatten", lambda: sl.FlatMap(sl.records_themselves, keyed))

    def inspect(self, fn: Callable[[T], Any]) -> "Stream[T]":
        """Call ``fn(record)`` for its side effect (logging, a metric); records pass
        unchanged.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=1)
            >>> out = env.from_iterable([1, 2]).inspect(print).map(lambda x: -x).collect()
            >>> _ = env.execute()
            1
            2
            >>> out.get()
            [-1, -2]
        """
        return self._per_record("inspect", fn, sl.Inspect)

    def _rich(self, mode: str, factory: Callable[[], Callable[..., Any]]) -> "Stream[Any]":
        _callable(f"rich_{mode}", factory)
        keyed = self.keyed
        return self._chain(_named(f"rich_{mode}", factory), lambda: sl.Rich(factory, mode, keyed),
                           stateful=True)

    def rich_map(self, factory: Callable[[], Callable[[T], U]]) -> "Stream[U]":
        """A stateful map: ``factory()`` makes the function, once per replica (per key on a
        keyed stream), so it may keep state between records.

        Examples:
            A running count per key:

            >>> def numbering():
            ...     seen = 0
            ...     def number(key, value):
            ...         nonlocal seen
            ...         seen += 1
            ...         return seen
            ...     return number
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> keyed = env.from_iterable(["a", "b", "a"]).group_by(lambda x: x)
            >>> out = keyed.rich_map(numbering).collect()
            >>> _ = env.execute()
            >>> sorted(out.get())
            [('a', 1), ('a', 2), ('b', 1)]
        """
        return self._rich("map", factory)

    def rich_flat_map(self, factory: Callable[[], Callable[[T], Iterable[U]]]) -> "Stream[U]":
        """A stateful flat_map: ``factory()`` makes the function, once per replica (per key
        on a keyed stream), which returns an iterable of records per record and may keep
        state between them.

        Examples:
            Emit each word the first time it is seen:

            >>> def first_sightings():
            ...     seen = set()
            ...     def new_words(line):
            ...         words = [w for w in line.split() if w not in seen]
            ...         seen.update(words)
            ...         return words
            ...     return new_words
            >>> env = segflow.StreamEnvironment(parallelism=1)
            >>> out = env.from_iterable(["a b", "b c a"]).rich_flat_map(first_sightings).collect()
            >>> _ = env.execute()
            >>> out.get()
            ['a', 'b', 'c']
        """
        return self._rich("flat_map", factory)

    def rich_filter_map(self, factory: Callable[[], Callable[[T], U | None]]) -> "Stream[U]":
        """A stateful filter_map: ``factory()`` makes the function, once per replica (per
        key on a keyed stream); records for which it returns ``None`` are dropped.

        Examples:
            Drop repeated values of each key:

            >>> def changes():
            ...     last = None
            ...     def changed(key, value):
            ...         nonlocal last
            ...         value, last = (None if value == last else value), value
            ...         return value
            ...     return changed
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> readings = env.from_iterable([("t1", 20), ("t1", 20), ("t1", 21), ("t2", 5)])
            >>> out = readings.group_by(lambda r: r[0]).map(lambda k, r: r[1]).rich_filter_map(changes).collect()
            >>> _ = env.execute()
            >>> sorted(out.get())
            [('t1', 20), ('t1', 21), ('t2', 5)]
        """
        return self._rich("filter_map", factory)
