"""Folds and reductions over a whole stream (emitted at end of stream), per key or not.

Associative variants run in two stages: a local stage in the upstream block that emits
partial results at end of stream, and a combining stage after the shuffle, so only
partials cross the network (Noir Fig. 5.1).
"""
from __future__ import annotations

import copy
import functools
import operator
from collections import Counter
from typing import Any, Callable

from ..elements import Batch
from ..operator import CHAIN, Delegating, Operator, Output, UserCall
from ..rescale import split_by_key
from ..sentinels import NOTHING

_IMMUTABLE = (int, float, complex, str, bytes, bool, tuple, frozenset, type(None))


def fresh(value: Any) -> Any:
    """A private copy of an initial accumulator (user inits may be mutable lists or dicts)."""
    return value if isinstance(value, _IMMUTABLE) else copy.deepcopy(value)


class Fold(Operator):
    """Non-keyed fold: ``acc = fn(acc, record)``; emits ``acc`` at end of stream.

    With ``init`` left out it is a reduce: the first record starts the accumulator and
    nothing is emitted for an empty stream.
    """

    spark_step = CHAIN

    _NOTHING = NOTHING
    state_fields = ("acc",)

    def snapshot(self) -> dict:
        return {"acc": None if self.acc is self._NOTHING else self.acc, "empty": self.acc is self._NOTHING}

    def restore(self, state: dict) -> None:
        self.acc = self._NOTHING if state["empty"] else state["acc"]

    def __init__(self, fn: Callable, init: Any = _NOTHING, combine: Callable | None = None):
        self.fn = fn
        self.init = init
        self.combine = combine
        self.call = UserCall(self)
        self.acc = self._start()

    def rescale(self, states: list[dict], index: int, replicas: int) -> dict:
        """A local stage's partial results (``combine`` given) all go to the first new
        replica, combined; the others start afresh. A whole-stream fold has one replica."""
        if self.combine is None:
            return super().rescale(states, index, replicas)
        partials = [state["acc"] for state in states if not state["empty"]] if index == 0 else []
        if not partials:
            start = self._start()
            return {"acc": None if start is self._NOTHING else start, "empty": start is self._NOTHING}
        return {"acc": functools.reduce(self.combine, partials), "empty": False}

    def _start(self) -> Any:
        return self._NOTHING if self.init is self._NOTHING else fresh(self.init)

    def process(self, batch: Batch) -> Output:
        fn = self.fn
        acc = self.acc
        items = batch.items
        start = 0
        if acc is self._NOTHING and items:
            acc = items[0]
            start = 1
        i = start
        try:
            for i in range(start, len(items)):
                acc = fn(acc, items[i])
        except Exception as exc:
            raise self.call.error(exc, i, items[i]) from exc
        self.call.seen += len(items)
        self.acc = acc
        return None

    def timestamps_after(self, stamped: bool) -> bool:
        return False

    def on_end(self) -> Output:
        acc, self.acc = self.acc, self._start()
        return None if acc is self._NOTHING else Batch([acc])


class KeyedFold(Operator):
    """Per-key fold over ``(key, value)`` records; emits ``(key, acc)`` at end of stream."""

    spark_step = CHAIN

    state_fields = ("acc",)

    def rescale(self, states: list[dict], index: int, replicas: int) -> dict:
        return {"acc": split_by_key(states, "acc", index, replicas)}

    def __init__(self, fn: Callable, init: Any = Fold._NOTHING):
        self.fn = fn
        self.init = init
        self.call = UserCall(self)
        self.acc: dict = {}

    def process(self, batch: Batch) -> Output:
        self.fold(batch.items)
        return None

    def fold(self, items: list, key: Callable | None = None) -> None:
        """Folds ``(key, value)`` pairs or, given ``key``, the records themselves under
        ``key(record)``: the local stage of group_by_fold keys and folds in one loop, with
        no list of pairs in between."""
        fn, acc, first = self.fn, self.acc, self._first
        get = acc.get
        i = 0
        try:
            if key is None:
                for i, (k, v) in enumerate(items):
                    held = get(k, NOTHING)
                    acc[k] = first(v) if held is NOTHING else fn(held, v)
            else:
                for i, v in enumerate(items):
                    k = key(v)
                    held = get(k, NOTHING)
                    acc[k] = first(v) if held is NOTHING else fn(held, v)
        except Exception as exc:
            raise self.call.error(exc, i, items[i]) from exc
        self.call.seen += len(items)

    def _first(self, value: Any) -> Any:
        """A key's first accumulator: the value itself for a reduce, else ``fn(init, value)``."""
        if self.init is NOTHING:
            return value
        return self.fn(fresh(self.init), value)

    def timestamps_after(self, stamped: bool) -> bool:
        return False

    def on_end(self) -> Output:
        acc, self.acc = self.acc, {}
        return Batch(list(acc.items())) if acc else None


class LocalCount(Operator):
    """First stage of group_by_count: counts keys with ``collections.Counter`` (C speed)."""

    spark_step = "pre_aggregate"

    state_fields = ("counts",)

    def rescale(self, states: list[dict], index: int, replicas: int) -> dict:
        return {"counts": Counter(split_by_key(states, "counts", index, replicas, combine=operator.add))}

    def __init__(self, key: Callable | None):
        self.key = key
        self.call = UserCall(self)
        self.counts: Counter = Counter()

    def process(self, batch: Batch) -> Output:
        items = batch.items
        try:
            self.counts.update(items if self.key is None else map(self.key, items))
        except Exception as exc:
            self.call.fail(exc, items, hash if self.key is None else self.key)     # unkeyed: an unhashable record
        self.call.seen += len(items)
        return None

    def on_end(self) -> Output:
        counts, self.counts = self.counts, Counter()
        return Batch(list(counts.items())) if counts else None


class KeyedSum(Operator):
    """Adds up values per key: combines partial counts and sums."""

    spark_step = CHAIN

    state_fields = ("acc",)

    def rescale(self, states: list[dict], index: int, replicas: int) -> dict:
        return {"acc": split_by_key(states, "acc", index, replicas)}

    def __init__(self) -> None:
        self.acc: dict = {}

    def process(self, batch: Batch) -> Output:
        acc = self.acc
        get = acc.get
        for k, v in batch.items:
            acc[k] = get(k, 0) + v
        return None

    def on_end(self) -> Output:
        acc, self.acc = self.acc, {}
        return Batch(list(acc.items())) if acc else None


class LocalKeyedFold(Delegating):
    """First stage of group_by_fold/reduce: keys records with ``key`` and folds per key;
    ``combine`` (the final stage's function) joins partial results when rescaled."""

    spark_step = "pre_aggregate"

    def __init__(self, key: Callable, fn: Callable, combine: Callable, init: Any = Fold._NOTHING):
        self.key = key
        self.combine = combine
        self.inner: KeyedFold = KeyedFold(fn, init)

    def rescale(self, states: list[dict], index: int, replicas: int) -> dict:
        return {"acc": split_by_key(states, "acc", index, replicas, combine=self.combine)}

    def process(self, batch: Batch) -> Output:
        self.inner.fold(batch.items, self.key)
        return None

    def on_end(self) -> Output:
        return self.inner.on_end()


class MapValues(Operator):
    """Applies an engine-provided function to the value of each keyed record (e.g. avg)."""

    spark_step = CHAIN

    def __init__(self, fn: Callable):
        self.fn = fn

    def process(self, batch: Batch) -> Output:
        f = self.fn
        return Batch([(k, f(v)) for k, v in batch.items], batch.timestamps)
