"""Multi-input heads on Spark: concat, key joins (after a shuffle by key, or against a
broadcast right side), the interval join, zip and the window joins' tagging head.

The inputs meet in the block's partitions. Before they do, each record is tagged with its
side where the head needs it: ``(key, (side, value))`` on keyed streams, ``(side,
record)`` otherwise; side 0 is the left input.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Iterator

from ..errors import PipelineError
from ..plan.graph import Strategy
from ..runtime.operators.joins import INNER, LEFT, OUTER, Concat, HashJoin, IntervalJoin, SortMergeJoin, Zip
from ..runtime.operators.windows import TagInputs
from . import steps
from .errors import PartitionFn
from .flows import Flow, Mark, carry_time, exchange, records_of
from .translate import Step, then

if TYPE_CHECKING:
    from pyspark import Broadcast

    from ..plan.graph import BlockSpec
    from .runner import Translation


# ------------------------------------------------------------------------ heads
@steps.head("concat")
def concat(t: "Translation", block: "BlockSpec", head: Concat) -> Flow:
    sources, strategies = t.inputs(block)
    return exchange(list(zip(sources, strategies)), t.replicas(block))


@steps.head("tag_inputs")
def tag_inputs(t: "Translation", block: "BlockSpec", head: TagInputs) -> Flow:
    return _merged(t, block, head, head.keyed, *t.inputs(block))


@steps.head("key_join")
def key_join(t: "Translation", block: "BlockSpec", head: HashJoin | SortMergeJoin) -> Flow:
    sources, strategies = t.inputs(block)
    if strategies[1] is Strategy.BROADCAST:
        return _broadcast_join(t, block, head, sources[0], strategies[0], sources[1])
    merged = _merged(t, block, head, True, sources, strategies)
    return t.run_step(block, head, merged, Step(then(records_of(merged.stamped), hash_join(head.kind)), False))


@steps.head("interval_join")
def interval(t: "Translation", block: "BlockSpec", head: IntervalJoin) -> Flow:
    merged = _merged(t, block, head, head.keyed, *t.inputs(block))
    if not merged.stamped:
        raise PipelineError(f"{head.name} (defined at {head.location}) needs timestamped streams on both "
                            "sides: call add_timestamps first")
    return t.run_step(block, head, merged, Step(interval_join(head.lower, head.upper, head.keyed), True))


@steps.head("zip")
def zipped(t: "Translation", block: "BlockSpec", head: Zip) -> Flow:
    merged = _merged(t, block, head, False, *t.inputs(block))
    return t.run_step(block, head, merged, Step(then(records_of(merged.stamped), zip_pairs), False))


def _merged(t: "Translation", block: "BlockSpec", head: Any, keyed: bool, sources: list[Flow],
            strategies: list[Strategy]) -> Flow:
    """The inputs, each record tagged with its side, in the block's partitions."""
    tagged = [t.run_step(block, head, source, _tagging(side, keyed, source.stamped))
              for side, source in enumerate(sources)]
    return exchange(list(zip(tagged, strategies)), t.replicas(block))


def _tagging(side: int, keyed: bool, stamped: bool) -> Step:
    fn = tag(side, keyed)
    return Step(fn if not stamped else carry_time(fn), stamped)


def _broadcast_join(t: "Translation", block: "BlockSpec", head: HashJoin | SortMergeJoin, left: Flow,
                    strategy: Strategy, right: Flow) -> Flow:
    """Ship broadcast-right: the right side goes to every worker once, the left side
    stays where it is."""
    table: dict = {}
    for k, v in right.rdd.mapPartitions(records_of(right.stamped)).collect():
        table.setdefault(k, []).append(v)
    broadcast = t.sc.broadcast(table)
    t.broadcasts.append(broadcast)
    left = exchange([(left, strategy)], t.replicas(block))
    join = then(records_of(left.stamped), broadcast_join(head.kind, broadcast))
    return t.run_step(block, head, left, Step(join, False))


# ------------------------------------------------------------- partition functions


def tag(side: int, keyed: bool) -> PartitionFn:
    if keyed:
        return lambda records: ((k, (side, v)) for k, v in records)
    return lambda records: ((side, x) for x in records)


def hash_join(kind: str) -> PartitionFn:
    """Both sides of the partition's keys: every matching pair, and the unmatched records
    of the left (left, outer) and right (outer) side with ``None`` for the other."""
    def run(records: Iterable) -> Iterator:
        left: dict = {}
        right: dict = {}
        for k, (side, v) in records:
            (right if side else left).setdefault(k, []).append(v)
        for k, lefts in left.items():
            rights = right.get(k)
            if rights:
                yield from ((k, (a, b)) for a in lefts for b in rights)
            elif kind != INNER:
                yield from ((k, (a, None)) for a in lefts)
        if kind == OUTER:
            for k, rights in right.items():
                if k not in left:
                    yield from ((k, (None, r)) for r in rights)
    return run


def broadcast_join(kind: str, right: "Broadcast") -> PartitionFn:
    """Left records of the partition against the whole right side (key -> values)."""
    def run(records: Iterable) -> Iterator:
        table = right.value
        for k, a in records:
            rights = table.get(k)
            if rights:
                yield from ((k, (a, b)) for b in rights)
            elif kind == LEFT:
                yield (k, (a, None))
    return run


def interval_join(lower: Any, upper: Any, keyed: bool) -> PartitionFn:
    """Pairs ``(l, r)`` with ``t(l) - lower <= t(r) <= t(l) + upper``, emitted when the
    later of the two arrives, timestamped with the later time. A watermark drops the
    buffered records no on-time record can match any more."""
    def run(elements: Iterable) -> Iterator:
        buffers: tuple[dict, dict] = ({}, {})
        for e in elements:
            if type(e) is Mark:
                _prune(buffers[0], lambda t: t + upper >= e.ts)
                _prune(buffers[1], lambda q: q + lower >= e.ts)
                yield e
                continue
            t, item = e
            if keyed:
                key, (side, value) = item
            else:
                key, (side, value) = None, item
            buffers[side].setdefault(key, []).append((t, value))
            for q, other in buffers[1 - side].get(key, ()):
                if side == 0:
                    ok, pair = t - lower <= q <= t + upper, (value, other)
                else:
                    ok, pair = q - lower <= t <= q + upper, (other, value)
                if ok:
                    yield (max(t, q), (key, pair) if keyed else pair)
    return run


def _prune(buffer: dict, keep: Any) -> None:
    for key in list(buffer):
        kept = [(t, v) for t, v in buffer[key] if keep(t)]
        if kept:
            buffer[key] = kept
        else:
            del buffer[key]


def zip_pairs(records: Iterable) -> Iterator:
    """The i-th left record with the i-th right record; the longer side's rest is dropped."""
    sides: tuple[list, list] = ([], [])
    for side, x in records:
        sides[side].append(x)
    return zip(*sides)
