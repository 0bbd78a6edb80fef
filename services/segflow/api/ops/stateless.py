"""Per-record operations: map, filter, flat_map and their kin, and the stateful rich_* maps."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable

from ...runtime.operators import stateless as sl
from ..core import StreamCore, T, U, _callable, _named

if TYPE_CHECKING:
    from ..stream import Stream


class StatelessOps(StreamCore[T]):
    def map(self, fn: Callable[[T], U]) -> "Stream[U]":
        """One output record per input record: ``fn(record)``."""
        return self._per_record("map", fn, sl.Map)

    def filter(self, predicate: Callable[[T], Any]) -> "Stream[T]":
        """Keep the records for which ``predicate(record)`` is true."""
        return self._per_record("filter", predicate, sl.Filter)

    def flat_map(self, fn: Callable[[T], Iterable[U]]) -> "Stream[U]":
        """Every record becomes the records of the iterable ``fn(record)``."""
        return self._per_record("flat_map", fn, sl.FlatMap)

    def filter_map(self, fn: Callable[[T], U | None]) -> "Stream[U]":
        """``fn(record)``, dropping the records for which it returns ``None``."""
        return self._per_record("filter_map", fn, sl.FilterMap)

    def flatten(self) -> "Stream[Any]":
        """A stream of iterables becomes the stream of their elements."""
        keyed = self.keyed
        return self._chain("flatten", lambda: sl.FlatMap(sl.records_themselves, keyed))

    def inspect(self, fn: Callable[[T], Any]) -> "Stream[T]":
        """Call ``fn(record)`` for its side effect; records pass unchanged."""
        return self._per_record("inspect", fn, sl.Inspect)

    def _rich(self, mode: str, factory: Callable[[], Callable[..., Any]]) -> "Stream[Any]":
        _callable(f"rich_{mode}", factory)
        keyed = self.keyed
        return self._chain(_named(f"rich_{mode}", factory), lambda: sl.Rich(factory, mode, keyed),
                           stateful=True)

    def rich_map(self, factory: Callable[[], Callable[[T], U]]) -> "Stream[U]":
        """A stateful map: ``factory()`` makes the function, once per replica (per key on a
        keyed stream), so it may keep state between records."""
        return self._rich("map", factory)

    def rich_flat_map(self, factory: Callable[[], Callable[[T], Iterable[U]]]) -> "Stream[U]":
        return self._rich("flat_map", factory)

    def rich_filter_map(self, factory: Callable[[], Callable[[T], U | None]]) -> "Stream[U]":
        return self._rich("filter_map", factory)
