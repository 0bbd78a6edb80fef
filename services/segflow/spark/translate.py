"""How one operator of a block's chain runs on a partition: the engine's own operator,
run over the partition as a replica would run it (segflow.spark.partition), so Spark
computes what the engine computes. What an operator needs for that it declares itself
(``spark_step = CHAIN``, ``timestamps_after``, ``spark_refusal``); adding one touches no
code here.

``add_timestamps`` has a step of its own: on bounded input a watermark follows the very
record that advances it, where the engine waits for the end of a batch.

Operators that need Spark itself (sources, sinks, merges, keyed pre-aggregations,
iterations) name steps that the other modules of this package register
(segflow.spark.steps).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

from ..runtime.operator import CHAIN, Operator
from ..runtime.operators.time import AddTimestamps, WatermarkStrategy
from . import steps
from .errors import PartitionFn, UnsupportedOnSpark
from .flows import Mark
from .partition import over_partition


@dataclass(frozen=True)
class Step:
    """An operator on Spark: the function over a partition, and whether its output is
    timestamped."""

    partition: PartitionFn
    stamped: bool


def then(first: PartitionFn, second: PartitionFn) -> PartitionFn:
    return lambda elements: second(first(elements))


# ------------------------------------------------------------------------ event time
def add_timestamps(stamp: Callable, watermark: Callable | None, strategy: WatermarkStrategy | None,
                   stamped: bool) -> PartitionFn:
    """Stamp records; a watermark the user's function returns follows its record, and a
    strategy's follows each record that advances it (bounded input: idleness means
    nothing here)."""
    def run(elements: Iterable) -> Iterator:
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


@steps.chain("add_timestamps")
def stamping(op: AddTimestamps, stamped: bool) -> Step:
    return Step(add_timestamps(op.timestamp, op.watermark, op.strategy, stamped), True)


@steps.chain(CHAIN)
def step(op: Operator, stamped: bool) -> Step:
    """The Spark form of a one-input operator of a chain, on a (un)timestamped flow."""
    stamped_out = op.timestamps_after(stamped)
    return Step(over_partition(op, stamped, stamped_out), stamped_out)


def refuse(op: Operator) -> None:
    """Raise :class:`UnsupportedOnSpark` for an operator without a meaning in a batch run
    (checked for the whole job before Spark starts)."""
    refusal = op.spark_refusal()
    if refusal is not None:
        raise UnsupportedOnSpark(op.name, op.location, *refusal)
