"""Keyed aggregations with local pre-aggregation (group_by_count, _sum, _avg, _fold,
_reduce, _min_element, _max_element) as Spark's map-side combining aggregations.

The engine runs them in two stages: a local stage per replica, a shuffle of the partial
results by key, and a combining stage. Spark's ``reduceByKey`` / ``aggregateByKey`` /
``combineByKey`` are exactly that, with the same functions.
"""
from __future__ import annotations

import operator
from collections import Counter
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

from ..runtime.hashing import stable_hash
from ..runtime.operator import Operator
from ..runtime.operators import aggregate as agg
from ..runtime.sentinels import NOTHING
from . import steps

if TYPE_CHECKING:
    from pyspark import RDD

Wrap = Callable[[Operator, Callable], Callable]    # a user function as the operator calls it

steps.register("pre_aggregate", steps.PreAggregate())     # LocalCount, LocalKeyedFold


def _combining(head: Operator) -> tuple[Callable, Any]:
    """The combining stage's function and initial value."""
    if type(head) is agg.KeyedSum:
        return operator.add, 0
    if type(head) is agg.KeyedFold:
        return head.fn, head.init
    raise TypeError(f"{head.name} is not the combining stage of a keyed pre-aggregation")


def _count(key: Callable | None) -> Callable[[Iterable], Iterator]:
    """group_by_count's local stage at C speed."""
    if key is None:
        return lambda records: iter(Counter(records).items())
    return lambda records: iter(Counter(map(key, records)).items())


def combine_by_key(rdd: "RDD", local: Operator, head: Operator, partitions: int, wrap: Wrap) -> "RDD":
    """``(key, result)`` per key, hash-partitioned into ``partitions`` like the engine.

    ``local`` is the local stage (LocalCount or LocalKeyedFold), ``head`` the combining
    stage. The engine's combining stage starts from the initial value, so the combined
    partials are folded into it last (the same result for an associative function)."""
    combine, init = _combining(head)
    combine = wrap(head, combine)
    if isinstance(local, agg.LocalCount):
        key = None if local.key is None else wrap(local, local.key)
        combined = rdd.mapPartitions(_count(key)).reduceByKey(combine, partitions, stable_hash)
    else:
        assert isinstance(local, agg.LocalKeyedFold), f"{type(local).__name__} is no local stage"
        key, fold, local_init = wrap(local, local.key), wrap(local, local.inner.fn), local.inner.init
        keyed = rdd.map(lambda x: (key(x), x))
        if local_init is NOTHING:
            combined = keyed.combineByKey(_first, fold, combine, partitions, stable_hash)
        else:
            combined = keyed.aggregateByKey(local_init, fold, combine, partitions, stable_hash)
    if init is NOTHING:
        return combined
    return combined.mapValues(lambda acc: combine(agg.fresh(init), acc))


def _first(value: Any) -> Any:
    return value
