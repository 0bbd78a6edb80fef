"""Record-at-a-time transformations applied to whole batches.

On a keyed stream records are ``(key, value)`` and user functions receive ``(key, value)``
as two arguments; the key is kept. Timestamps, when present, follow their records.
"""
from __future__ import annotations

from itertools import compress, starmap
from typing import Any, Callable

from ..elements import Batch
from ..operator import CHAIN, Operator, Output, UserCall
from ..rescale import split_by_key


class _UserOperator(Operator):
    spark_step = CHAIN

    def __init__(self, fn: Callable, keyed: bool):
        self.fn = fn
        self.keyed = keyed
        self.call = UserCall(self)

    def probe(self, item: Any) -> Any:
        return self.fn(*item) if self.keyed else self.fn(item)

    def results(self, items: list) -> list:
        """``fn`` of every record, in one C-level loop (``map``/``starmap``); a failure is
        retried record by record to name the one that fails."""
        try:
            out = list(starmap(self.fn, items) if self.keyed else map(self.fn, items))
        except Exception as exc:
            self.call.fail(exc, items, self.probe)
        self.call.seen += len(items)
        return out


class Map(_UserOperator):
    def process(self, batch: Batch) -> Output:
        values = self.results(batch.items)
        out = [(kv[0], y) for kv, y in zip(batch.items, values)] if self.keyed else values
        return Batch(out, batch.timestamps)


class Filter(_UserOperator):
    def process(self, batch: Batch) -> Output:
        items = batch.items
        keep = self.results(items)
        stamps = batch.timestamps
        return Batch(list(compress(items, keep)), None if stamps is None else list(compress(stamps, keep)))


def records_themselves(*record: Any) -> Any:
    """``flatten``'s function for :class:`FlatMap`: a record (a keyed one's value) is the
    iterable of its elements. FlatMap iterates the records directly when it sees it."""
    return record[-1]


class FlatMap(_UserOperator):
    """``fn`` returns an iterable (``records_themselves``: flatten)."""

    def probe(self, item: Any) -> Any:
        if self.fn is records_themselves:
            return list(item[1] if self.keyed else item)
        return list(super().probe(item))

    def process(self, batch: Batch) -> Output:
        f = self.fn
        items = batch.items
        try:
            if batch.timestamps is not None:
                return self._timestamped(batch)
            if f is records_themselves:
                out = [(k, y) for k, v in items for y in v] if self.keyed else [y for x in items for y in x]
            elif self.keyed:
                out = [(k, y) for k, v in items for y in f(k, v)]
            else:
                out = [y for x in items for y in f(x)]
        except Exception as exc:
            self.call.fail(exc, items, self.probe)
        self.call.seen += len(items)
        return Batch(out)

    def _timestamped(self, batch: Batch) -> Batch:
        out: list = []
        stamps: list = []
        assert batch.timestamps is not None, "only timestamped batches come here"
        for x, t in zip(batch.items, batch.timestamps):
            produced = self.probe(x)
            if self.keyed:
                produced = [(x[0], y) for y in produced]
            out.extend(produced)
            stamps.extend([t] * len(produced))
        self.call.seen += len(batch.items)
        return Batch(out, stamps)


class FilterMap(_UserOperator):
    """``fn`` returns a value or ``None`` to drop the record."""

    def process(self, batch: Batch) -> Output:
        items = batch.items
        produced = self.results(items)
        keep = [y is not None for y in produced]
        if self.keyed:
            out = [(x[0], y) for x, y in zip(items, produced) if y is not None]
        else:
            out = list(compress(produced, keep))
        stamps = batch.timestamps
        return Batch(out, None if stamps is None else list(compress(stamps, keep)))


class KeyBy(_UserOperator):
    """Turns records into ``(key_fn(record), record)``."""

    def __init__(self, fn: Callable):
        super().__init__(fn, keyed=False)

    def process(self, batch: Batch) -> Output:
        return Batch(list(zip(self.results(batch.items), batch.items)), batch.timestamps)


class DropKey(Operator):
    spark_step = CHAIN

    def process(self, batch: Batch) -> Output:
        return Batch([v for _, v in batch.items], batch.timestamps)


class Inspect(_UserOperator):
    """Calls ``fn`` on every record for its side effect and passes the records on."""

    def process(self, batch: Batch) -> Output:
        for i, x in enumerate(batch.items):
            try:
                self.probe(x)
            except Exception as exc:
                raise self.call.error(exc, i, x) from exc
        self.call.seen += len(batch.items)
        return batch


class Rich(Operator):
    """rich_map / rich_flat_map / rich_filter_map: a stateful function per replica, or per key.

    ``factory()`` makes a fresh function; on a keyed stream each key gets its own. The
    state starts over at every end of stream (Noir's FlushAndRestart).
    """

    spark_step = CHAIN

    def __init__(self, factory: Callable[[], Callable], mode: str, keyed: bool):
        self.factory = factory
        self.mode = mode
        self.keyed = keyed
        self.call = UserCall(self)
        self.fn: Callable | None = None
        self.per_key: dict = {}

    state_fields = ("fn", "per_key")

    def rescale(self, states: list[dict], index: int, replicas: int) -> dict:
        """Per key, each key's function moves to the replica that owns the key now; one
        function per replica has no owner to move to."""
        if not self.keyed:
            return super().rescale(states, index, replicas)
        return {"fn": None, "per_key": split_by_key(states, "per_key", index, replicas)}

    def process(self, batch: Batch) -> Output:
        out: list = []
        times = batch.timestamps
        stamps: list | None = [] if times is not None else None
        mode = self.mode
        items = batch.items
        i = 0
        try:
            for i, x in enumerate(items):
                if self.keyed:
                    key, value = x
                    fn = self.per_key.get(key)
                    if fn is None:
                        fn = self.per_key[key] = self.factory()
                    y = fn(key, value)
                else:
                    if self.fn is None:
                        self.fn = self.factory()
                    y = self.fn(x)
                if mode == "map":
                    produced = [y]
                elif mode == "filter_map":
                    produced = [] if y is None else [y]
                else:
                    produced = list(y)
                if self.keyed:
                    produced = [(x[0], p) for p in produced]
                out.extend(produced)
                if stamps is not None and times is not None:
                    stamps.extend([times[i]] * len(produced))
        except Exception as exc:
            raise self.call.error(exc, i, items[i]) from exc
        self.call.seen += len(items)
        return Batch(out, stamps)

    def on_end(self) -> Output:
        self.fn = None
        self.per_key = {}
        return None
