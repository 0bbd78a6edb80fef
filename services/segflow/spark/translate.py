"""How one operator of a block's chain runs on a partition: a pure mapping from the
engine's operator (built by the API) to a function over the partition's elements.

Users' functions are applied as they are, one partition at a time (Spark's
``mapPartitions``): the per-record cost is the user's function, not Spark's. Operators
that need Spark itself (sources, sinks, merges, keyed aggregations, iterations) are
translated by the runner and its helpers, not here.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from itertools import chain
from typing import Any, Callable, Iterator

from ..errors import PipelineError
from ..runtime.operator import Operator
from ..runtime.operators import aggregate as agg
from ..runtime.operators import iteration as loops
from ..runtime.operators import joins as two
from ..runtime.operators import sinks
from ..runtime.operators import sources as src
from ..runtime.operators import stateless as sl
from ..runtime.operators.time import AddTimestamps, WatermarkStrategy
from ..runtime.operators.windows import CountWindows, ProcessingTime, SessionWindows, TagInputs, TimeWindows
from . import windows
from .errors import PartitionFn, UnsupportedOnSpark
from .flows import Mark, carry_time, records_of

NOTHING = agg.Fold._NOTHING      # a fold without an initial value is a reduce


@dataclass(frozen=True)
class Step:
    """An operator on Spark: the function over a partition, and whether its output is
    timestamped."""

    partition: PartitionFn
    stamped: bool


def then(first: PartitionFn, second: PartitionFn) -> PartitionFn:
    return lambda elements: second(first(elements))


# ------------------------------------------------------------------ record operators
def _map(op: sl.Map) -> PartitionFn:
    fn = op.fn
    if op.keyed:
        return lambda records: ((k, fn(k, v)) for k, v in records)
    return lambda records: map(fn, records)


def _filter(op: sl.Filter) -> PartitionFn:
    fn = op.fn
    if op.keyed:
        return lambda records: (kv for kv in records if fn(*kv))
    return lambda records: filter(fn, records)


def _flat_map(op: sl.FlatMap) -> PartitionFn:
    fn = op.fn
    if fn is None:     # flatten
        if op.keyed:
            return lambda records: ((k, y) for k, v in records for y in v)
        return chain.from_iterable
    if op.keyed:
        return lambda records: ((k, y) for k, v in records for y in fn(k, v))
    return lambda records: chain.from_iterable(map(fn, records))


def _filter_map(op: sl.FilterMap) -> PartitionFn:
    fn = op.fn
    if op.keyed:
        return lambda records: ((k, y) for k, y in ((k, fn(k, v)) for k, v in records) if y is not None)
    return lambda records: (y for y in map(fn, records) if y is not None)


def _key_by(op: sl.KeyBy) -> PartitionFn:
    fn = op.fn
    return lambda records: ((fn(x), x) for x in records)


def _drop_key(op: sl.DropKey) -> PartitionFn:
    return lambda records: (v for _, v in records)


def _inspect(op: sl.Inspect) -> PartitionFn:
    fn, keyed = op.fn, op.keyed

    def run(records: Iterator) -> Iterator:
        for x in records:
            if keyed:
                fn(*x)
            else:
                fn(x)
            yield x
    return run


_RICH_OUTPUTS: dict[str, Callable[[Any], Any]] = {
    "map": lambda y: (y,),
    "filter_map": lambda y: () if y is None else (y,),
    "flat_map": lambda y: y,
}


def _rich(op: sl.Rich) -> PartitionFn:
    """One function from ``factory()`` per partition (the engine's replica), or per key."""
    factory, keyed, outputs = op.factory, op.keyed, _RICH_OUTPUTS[op.mode]

    def per_partition(records: Iterator) -> Iterator:
        fn = None
        for x in records:
            if fn is None:
                fn = factory()
            yield from outputs(fn(x))

    def per_key(records: Iterator) -> Iterator:
        fns: dict = {}
        for k, v in records:
            fn = fns.get(k)
            if fn is None:
                fn = fns[k] = factory()
            for y in outputs(fn(k, v)):
                yield (k, y)
    return per_key if keyed else per_partition


def _map_values(op: agg.MapValues) -> PartitionFn:
    fn = op.fn
    return lambda records: ((k, fn(v)) for k, v in records)


_RECORD: dict[type, Callable[[Any], PartitionFn]] = {
    sl.Map: _map, sl.Filter: _filter, sl.FlatMap: _flat_map, sl.FilterMap: _filter_map,
    sl.KeyBy: _key_by, sl.DropKey: _drop_key, sl.Inspect: _inspect, sl.Rich: _rich,
    agg.MapValues: _map_values,
}


# --------------------------------------------------------------------------- folds
def fold_all(fn: Callable, init: Any) -> PartitionFn:
    """The engine's non-keyed fold of one replica: one result, or none for an empty reduce."""
    def run(records: Iterator) -> list:
        if init is not NOTHING:
            return [functools.reduce(fn, records, agg.fresh(init))]
        records = iter(records)
        first = next(records, NOTHING)
        return [] if first is NOTHING else [functools.reduce(fn, records, first)]
    return run


def fold_by_key(fn: Callable, init: Any) -> PartitionFn:
    """Per-key fold of a partition, keys in order of first appearance."""
    def run(records: Iterator) -> Iterator:
        acc: dict = {}
        for k, v in records:
            if k in acc:
                acc[k] = fn(acc[k], v)
            else:
                acc[k] = v if init is NOTHING else fn(agg.fresh(init), v)
        return iter(acc.items())
    return run


# ------------------------------------------------------------------------ event time
def add_timestamps(stamp: Callable, watermark: Callable | None, strategy: WatermarkStrategy | None,
                   stamped: bool) -> PartitionFn:
    """Stamp records; a watermark the user's function returns follows its record, and a
    strategy's follows each record that advances it (bounded input: idleness means
    nothing here)."""
    def run(elements: Iterator) -> Iterator:
        largest = emitted = None
        for e in elements:
            if type(e) is Mark:
                yield e
                continue
            x = e[1] if stamped else e
            ts = stamp(x)
            yield (ts, x)
            if strategy is not None:
                largest = ts if largest is None or ts > largest else largest
                w = strategy.next_watermark(largest, emitted)
                if w is not None:
                    emitted = w
                    yield Mark(w)
            elif watermark is not None:
                w = watermark(x, ts)
                if w is not None:
                    yield Mark(w)
    return run


def step(op: Operator, stamped: bool) -> Step:
    """The Spark form of a one-input operator of a chain, on a (un)timestamped flow."""
    kind = type(op)
    record = _RECORD.get(kind)
    if record is not None:
        fn = record(op)
        return Step(carry_time(fn) if stamped else fn, stamped)
    if kind is agg.Fold:
        return Step(then(records_of(stamped), fold_all(op.fn, op.init)), False)
    if kind is agg.KeyedFold:
        return Step(then(records_of(stamped), fold_by_key(op.fn, op.init)), False)
    if kind is AddTimestamps:
        return Step(add_timestamps(op.timestamp, op.watermark, op.strategy, stamped), True)
    if kind is CountWindows:
        return Step(windows.count_windows(op.size, op.step, op.aggregate, op.keyed, op.flat, stamped), stamped)
    if kind in (TimeWindows, SessionWindows):
        if not stamped:
            raise PipelineError(f"{op.name} (defined at {op.location}) needs timestamped records: "
                                "call add_timestamps before the window")
        if kind is TimeWindows:
            return Step(windows.time_windows(op.size, op.step, op.aggregate, op.keyed, op.flat), True)
        return Step(windows.session_windows(op.gap, op.aggregate, op.keyed, op.flat), True)
    raise TypeError(f"{op.name} ({kind.__name__}) is not a one-input operator of a chain")


# Operators the runner translates itself: sources, sinks, multi-input heads, the stages of
# keyed pre-aggregations and the parts of iterations.
_BY_RUNNER = (src.IterableSource, src.ParallelSource, src.TextFileSource, src.JsonLinesSource, src.CsvSource,
              src.GeneratorSource,
              sinks.CollectSink, sinks.ForEachSink, sinks.FileSink, two.Concat, two.HashJoin, two.SortMergeJoin,
              two.IntervalJoin, two.Zip, TagInputs, agg.LocalCount, agg.LocalKeyedFold, agg.KeyedSum,
              loops.IterationStart, loops.IterationEnd, loops.IterationLeader)
TRANSLATED = frozenset(_RECORD) | {agg.Fold, agg.KeyedFold, AddTimestamps, CountWindows, TimeWindows,
                                   SessionWindows} | frozenset(_BY_RUNNER)


def refuse(op: Operator) -> None:
    """Raise :class:`UnsupportedOnSpark` for an operator without a meaning in a batch run
    (checked for the whole job before Spark starts)."""
    kind = type(op)
    if kind is ProcessingTime:
        raise UnsupportedOnSpark(op.name, op.location,
                                 "processing-time windows depend on when records are read, which a batch "
                                 "run does not define",
                                 "use EventTimeWindow after add_timestamps, or run the job on the segflow engine")
    if kind is src.GeneratorSource and op.count is None:
        raise UnsupportedOnSpark(op.name, op.location, "a generator without a count never ends",
                                 "give generate(..., count=N) for a bounded run, or run the stream on the "
                                 "segflow engine")
    if kind not in TRANSLATED:
        raise UnsupportedOnSpark(op.name, op.location, f"there is no Spark translation of {kind.__name__}",
                                 "run the job on the segflow engine")
