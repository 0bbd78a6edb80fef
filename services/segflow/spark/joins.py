"""Two-input operators on a partition: key joins (after a shuffle by key, or against a
broadcast right side), the interval join and zip.

Before the inputs meet in one partition each record is tagged with its side: ``(key,
(side, value))`` on keyed streams, ``(side, record)`` otherwise; side 0 is the left input.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator

from ..runtime.operators.joins import INNER, LEFT, OUTER
from .errors import PartitionFn
from .flows import Mark

if TYPE_CHECKING:
    from pyspark import Broadcast


def tag(side: int, keyed: bool) -> PartitionFn:
    if keyed:
        return lambda records: ((k, (side, v)) for k, v in records)
    return lambda records: ((side, x) for x in records)


def hash_join(kind: str) -> PartitionFn:
    """Both sides of the partition's keys: every matching pair, and the unmatched records
    of the left (left, outer) and right (outer) side with ``None`` for the other."""
    def run(records: Iterator) -> Iterator:
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
    def run(records: Iterator) -> Iterator:
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
    def run(elements: Iterator) -> Iterator:
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


def zip_pairs(records: Iterator) -> Iterator:
    """The i-th left record with the i-th right record; the longer side's rest is dropped."""
    sides: tuple[list, list] = ([], [])
    for side, x in records:
        sides[side].append(x)
    return zip(*sides)
