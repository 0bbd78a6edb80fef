"""Streams on Spark: an RDD whose partitions are the engine's replicas, and the edges
between blocks as narrow dependencies, coalesces and shuffles.

Inside a partition, records keep the order in which the engine's replica would process
them if it drained its senders one after the other (input 0 first, then sender 0 first).
That order is what order-sensitive operators (count windows, folds, rich maps, zip) see,
so a shuffle sorts each partition by (input, sender, position) after the exchange.

A timestamped stream carries ``(timestamp, record)`` pairs and :class:`Mark` watermarks in
band, as the engine does. Crossing an edge, marks are aligned like the engine's
StartBlock: the frontier is the least of the last watermarks of every sender, and only
an advancing frontier goes on downstream.
"""
from __future__ import annotations

from dataclasses import dataclass
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

from ..errors import PipelineError
from ..plan.graph import Strategy
from ..runtime.operator import Operator
from ..runtime.hashing import stable_hash
from .errors import PartitionFn

if TYPE_CHECKING:
    from pyspark import RDD

_POSITION_BITS = 40      # records per partition told apart in the order of a shuffle
_SENDER_BITS = 20        # senders per input


@dataclass(frozen=True, slots=True)
class Mark:
    """A watermark between the records of a partition; ``sender`` names its origin while
    it crosses an edge."""

    ts: Any
    sender: Any = 0


@dataclass
class Flow:
    """A stream on Spark. ``partial`` is a local pre-aggregation (group_by_count, ...)
    not applied yet: Spark fuses it with the combining stage after the shuffle."""

    rdd: "RDD"
    stamped: bool = False
    partial: Operator | None = None

    @property
    def partitions(self) -> int:
        return self.rdd.getNumPartitions()


def records_of(stamped: bool) -> PartitionFn:
    """The plain records of a partition (timestamps and marks dropped)."""
    if not stamped:
        return iter
    return lambda elements: (e[1] for e in elements if type(e) is not Mark)


def carry_time(partition: PartitionFn) -> PartitionFn:
    """Apply a record-at-a-time function to a timestamped partition: each output keeps
    the timestamp of the record it came from, and marks stay between the same records.

    ``partition`` must be lazy and consume one record before producing its outputs (map,
    filter, generators), which is how every record operator is written."""
    def run(elements: Iterable) -> Iterator:
        now: list = [None]
        marks: list = []

        def records() -> Iterator:
            for e in elements:
                if type(e) is Mark:
                    marks.append(e)
                else:
                    now[0] = e[0]
                    yield e[1]
        for out in partition(records()):
            if marks:
                yield from marks
                marks.clear()
            yield (now[0], out)
        yield from marks
    return run


def align(senders: int) -> PartitionFn:
    """Watermark alignment at a block's input (the engine's StartBlock)."""
    def run(elements: Iterable) -> Iterator:
        latest: dict = {}
        frontier = None
        for e in elements:
            if type(e) is not Mark:
                yield e
                continue
            latest[e.sender] = e.ts
            if len(latest) == senders:
                low = min(latest.values())
                if frontier is None or low > frontier:
                    frontier = low
                    yield Mark(low)
    return run


def _router(strategy: Strategy, n: int, stamped: bool) -> Callable[[int, int, Any], int]:
    """``(sender, position, record) -> destination partition`` for one edge."""
    if strategy is Strategy.HASH:
        if stamped:
            return lambda sender, i, e: stable_hash(e[1][0]) % n
        return lambda sender, i, e: stable_hash(e[0]) % n
    if strategy is Strategy.ROUND_ROBIN:
        return lambda sender, i, e: (sender + i) % n
    if strategy is Strategy.FORWARD:
        return (lambda sender, i, e: 0) if n == 1 else (lambda sender, i, e: sender)
    raise ValueError(f"no record routing for a {strategy.value} edge")


def _senders(strategy: Strategy, n_src: int, n: int) -> int:
    """Senders a receiver aligns on, as the engine's plan counts them."""
    return 1 if strategy is Strategy.FORWARD and n > 1 else n_src


def _to_partition(d: int) -> int:
    return d


def exchange(inputs: list[tuple[Flow, Strategy]], n: int) -> Flow:
    """The input of a block with ``n`` replicas, fed by ``inputs`` (flow, edge strategy).

    Forwarding between equal partition counts stays narrow and a forward into one replica
    is a coalesce; everything else is a shuffle keyed by destination partition."""
    stamped = {flow.stamped for flow, _ in inputs}
    if len(stamped) > 1:
        raise PipelineError("a block cannot merge a timestamped stream with an untimestamped one on Spark: "
                            "call add_timestamps on both (or on neither)")
    stamped_out = stamped.pop()
    senders = sum(_senders(strategy, flow.partitions, n) for flow, strategy in inputs)
    if len(inputs) == 1:
        flow, strategy = inputs[0]
        if strategy is Strategy.FORWARD and flow.partitions == n:
            rdd = flow.rdd.mapPartitions(align(1), preservesPartitioning=True) if stamped_out else flow.rdd
            return Flow(rdd, stamped_out)
        if strategy is Strategy.FORWARD and n == 1:
            return _coalesce(flow, senders)
    return _shuffle(inputs, n, stamped_out, senders)


def _coalesce(flow: Flow, senders: int) -> Flow:
    """All partitions into one, concatenated in partition order."""
    if not flow.stamped:
        return Flow(flow.rdd.coalesce(1))

    def tag(sender: int, elements: Iterable) -> Iterator:
        return (Mark(e.ts, sender) if type(e) is Mark else e for e in elements)
    return Flow(flow.rdd.mapPartitionsWithIndex(tag).coalesce(1).mapPartitions(align(senders)), True)


def _shuffle(inputs: list[tuple[Flow, Strategy]], n: int, stamped: bool, senders: int) -> Flow:
    tagged = []
    for index, (flow, strategy) in enumerate(inputs):
        to = _router(strategy, n, stamped)
        everywhere = range(n) if strategy is not Strategy.FORWARD else None

        def tag(sender: int, elements: Iterable, index: int = index, to: Callable = to,
                everywhere: range | None = everywhere) -> Iterator:
            base = ((index << _SENDER_BITS) | sender) << _POSITION_BITS
            for i, e in enumerate(elements):
                if type(e) is Mark:
                    mark = Mark(e.ts, (index, sender))
                    for d in (everywhere if everywhere is not None else (to(sender, i, e),)):
                        yield d, (base + i, mark)
                else:
                    yield to(sender, i, e), (base + i, e)
        tagged.append(flow.rdd.mapPartitionsWithIndex(tag))
    merged = tagged[0] if len(tagged) == 1 else tagged[0].context.union(tagged)
    by_position = itemgetter(0)

    def in_order(pairs: Iterable) -> Iterator:
        return (e for _, e in sorted((value for _, value in pairs), key=by_position))
    rdd = merged.partitionBy(n, _to_partition).mapPartitions(in_order)
    if stamped:
        rdd = rdd.mapPartitions(align(senders))
    return Flow(rdd, stamped)
