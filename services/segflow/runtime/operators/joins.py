"""Two-input operators: key joins (hash and sort-merge), interval join, zip, concat.

Input 0 is the left side, input 1 the right side. Key joins receive ``(key, value)``
records and emit ``(key, (left, right))``; a missing side is ``None`` for left and outer
joins.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import deque
from heapq import heappop, heappush
from typing import Any

from ...errors import PipelineError
from ..elements import Batch
from ..operator import Operator, Output
from ..rescale import owned, sides_of, split_by_key

INNER, LEFT, OUTER = "inner", "left", "outer"


class HashJoin(Operator):
    """Local hash join. Inner joins stream results as matches appear (symmetric hash
    join); left and outer joins need both sides complete, so they emit at end of stream."""

    spark_step = "key_join"

    state_fields = ("tables",)

    def __init__(self, kind: str, partitioned: bool = False):
        self.kind = kind
        self.partitioned = partitioned      # both sides shipped by key (not broadcast)
        self.tables: tuple[dict, dict] = ({}, {})

    def rescale(self, states: list[dict], index: int, replicas: int) -> dict:
        if not self.partitioned:
            return super().rescale(states, index, replicas)
        return {"tables": tuple(split_by_key(sides_of(states, "tables", side), "tables", index, replicas)
                                for side in (0, 1))}

    def process_input(self, input_index: int, batch: Batch) -> Output:
        mine = self.tables[input_index]
        if self.kind != INNER:
            for k, v in batch.items:
                mine.setdefault(k, []).append(v)
            return None
        other = self.tables[1 - input_index]
        out: list[Any] = []
        for k, v in batch.items:
            mine.setdefault(k, []).append(v)
            matches = other.get(k)
            if matches:
                if input_index == 0:
                    out.extend((k, (v, r)) for r in matches)
                else:
                    out.extend((k, (lv, v)) for lv in matches)
        return Batch(out) if out else None

    def on_end(self) -> Output:
        left, right = self.tables
        self.tables = ({}, {})
        if self.kind == INNER:
            return None
        out: list[Any] = []
        for k, lefts in left.items():
            rights = right.get(k)
            if rights:
                out.extend((k, (lv, r)) for lv in lefts for r in rights)
            else:
                out.extend((k, (lv, None)) for lv in lefts)
        if self.kind == OUTER:
            for k, rights in right.items():
                if k not in left:
                    out.extend((k, (None, r)) for r in rights)
        return Batch(out) if out else None


class SortMergeJoin(Operator):
    """Local sort-merge join: buffers both sides, sorts by key at end of stream, merges."""

    spark_step = "key_join"

    state_fields = ("sides",)

    def __init__(self, kind: str, partitioned: bool = False):
        self.kind = kind
        self.partitioned = partitioned      # both sides shipped by key (not broadcast)
        self.sides: tuple[list, list] = ([], [])

    def rescale(self, states: list[dict], index: int, replicas: int) -> dict:
        if not self.partitioned:
            return super().rescale(states, index, replicas)
        return {"sides": tuple([kv for state in states for kv in state["sides"][side] if owned(kv[0], index, replicas)]
                               for side in (0, 1))}

    def process_input(self, input_index: int, batch: Batch) -> Output:
        self.sides[input_index].extend(batch.items)
        return None

    def on_end(self) -> Output:
        left, right = self.sides
        self.sides = ([], [])
        try:
            left.sort(key=lambda kv: kv[0])
            right.sort(key=lambda kv: kv[0])
        except TypeError as exc:
            raise TypeError(f"sort-merge join needs keys that can be ordered ({exc}); "
                            "use .local_hash() for unorderable keys") from exc
        out: list[Any] = []
        i = j = 0
        while i < len(left) or j < len(right):
            if j >= len(right) or (i < len(left) and left[i][0] < right[j][0]):
                k = left[i][0]
                i2 = i
                while i2 < len(left) and left[i2][0] == k:
                    i2 += 1
                if self.kind != INNER:
                    out.extend((k, (lv, None)) for _, lv in left[i:i2])
                i = i2
            elif i >= len(left) or right[j][0] < left[i][0]:
                k = right[j][0]
                j2 = j
                while j2 < len(right) and right[j2][0] == k:
                    j2 += 1
                if self.kind == OUTER:
                    out.extend((k, (None, r)) for _, r in right[j:j2])
                j = j2
            else:
                k = left[i][0]
                i2, j2 = i, j
                while i2 < len(left) and left[i2][0] == k:
                    i2 += 1
                while j2 < len(right) and right[j2][0] == k:
                    j2 += 1
                out.extend((k, (lv, r)) for _, lv in left[i:i2] for _, r in right[j:j2])
                i, j = i2, j2
        return Batch(out) if out else None


class TimeIndex:
    """The buffered records of one key and side, sorted by timestamp: a range of times is
    found and an expired prefix dropped by bisection, never by a scan of the buffer."""

    __slots__ = ("times", "values")

    def __init__(self, t: Any, value: Any) -> None:
        self.times: list = [t]
        self.values: list = [value]

    def insert(self, t: Any, value: Any) -> None:
        """Add a record older than the newest (the join appends the others itself)."""
        i = bisect_right(self.times, t)
        self.times.insert(i, t)
        self.values.insert(i, value)

    def drop_before(self, limit: Any) -> bool:
        """Drop the records at ``t < limit``; whether none is left."""
        k = bisect_left(self.times, limit)
        del self.times[:k], self.values[:k]
        return not self.times


def unstamped_side(name: str, location: str, side: int) -> PipelineError:
    """An interval join's input (0 left, 1 right) without event times (raised while the
    pipeline is built; again at run time, for a stream the builder could not see)."""
    return PipelineError(f"{name} (defined at {location}) needs timestamped streams on both sides; its "
                         f"{'left' if side == 0 else 'right'} input has none: call add_timestamps on it")


class IntervalJoin(Operator):
    """Pairs a left record at ``t`` with every right record at ``q``, ``t - lower <= q <=
    t + upper`` (inner only). Output is timestamped ``max(t, q)``.

    Each side keeps its records per key in a :class:`TimeIndex`: a record finds its
    partners by two bisections, and a watermark ``w`` drops the left records at ``t + upper
    < w`` and the right ones at ``q + lower < w`` (no later record can pair with them). A
    heap of ``(oldest t, key)`` per side says which keys hold expired records, so a
    watermark visits only those (one bisection each), not every buffered key: the cost
    does not grow with the buffers or the watermarks. A key enters its heap when its
    oldest record changes (it is new, a record older than all arrived, or a watermark
    dropped a prefix), not once per record. The heaps follow from the buffers and are
    rebuilt on restore."""

    spark_step = "interval_join"

    state_fields = ("buffers",)

    def __init__(self, lower: Any, upper: Any, keyed: bool):
        self.lower = lower
        self.upper = upper
        self.keyed = keyed
        self.buffers: tuple[dict, dict] = ({}, {})
        self.expiry: tuple[list, list] = ([], [])
        self.pushed = 0               # ties in the heaps go by insertion, never by key

    def rescale(self, states: list[dict], index: int, replicas: int) -> dict:
        """Keyed: each key's records move to the replica that owns it now; not keyed, the
        join has one replica."""
        return {"buffers": tuple(split_by_key(sides_of(states, "buffers", side), "buffers", index, replicas)
                                 for side in (0, 1))}

    def restore(self, state: dict) -> None:
        super().restore(state)
        self.expiry = ([], [])
        for side, buffers in enumerate(self.buffers):
            for key, index in buffers.items():
                self._watch(side, key, index.times[0])

    def _watch(self, side: int, key: Any, oldest: Any) -> None:
        self.pushed += 1
        heappush(self.expiry[side], (oldest, self.pushed, key))

    def process_input(self, input_index: int, batch: Batch) -> Output:
        if batch.timestamps is None:
            raise unstamped_side(self.name, self.location, input_index)
        mine = self.buffers[input_index]
        other = self.buffers[1 - input_index]
        left_side = input_index == 0
        # A left record at t meets right ones at [t - lower, t + upper]; a right one at q
        # meets left ones at [q - upper, q + lower].
        before, after = (self.lower, self.upper) if left_side else (self.upper, self.lower)
        keyed = self.keyed
        out: list[Any] = []
        stamps: list[Any] = []
        emit, stamp = out.append, stamps.append
        find_mine, find_partners = mine.get, other.get
        items = batch.items if keyed else [(None, x) for x in batch.items]
        for (key, value), t in zip(items, batch.timestamps):
            index = find_mine(key)
            if index is None:
                mine[key] = TimeIndex(t, value)
                self._watch(input_index, key, t)
            elif t >= index.times[-1]:         # records mostly come in time order
                index.times.append(t)
                index.values.append(value)
            else:
                if t < index.times[0]:
                    self._watch(input_index, key, t)
                index.insert(t, value)
            partners = find_partners(key)
            if partners is None:
                continue
            times = partners.times
            i, j = bisect_left(times, t - before), bisect_right(times, t + after)
            if j - i == 1:      # mostly one partner (a bid's auction): no slices, no inner loop
                o = partners.values[i]
                pair = (value, o) if left_side else (o, value)
                emit((key, pair) if keyed else pair)
                q = times[i]
                stamp(t if t >= q else q)
                continue
            for q, o in zip(times[i:j], partners.values[i:j]):
                pair = (value, o) if left_side else (o, value)
                emit((key, pair) if keyed else pair)
                stamp(t if t >= q else q)
        return Batch(out, stamps) if out else None

    def on_watermark(self, ts: Any) -> Output:
        for side, (buffers, expiry, reach) in enumerate(zip(self.buffers, self.expiry, (self.upper, self.lower))):
            limit = ts - reach
            expired = set()
            while expiry and expiry[0][0] < limit:
                expired.add(heappop(expiry)[2])
            for key in expired:
                index = buffers.get(key)
                if index is None:
                    continue
                if index.drop_before(limit):
                    del buffers[key]
                else:
                    self._watch(side, key, index.times[0])
        return None

    def on_end(self) -> Output:
        self.buffers = ({}, {})
        self.expiry = ([], [])
        return None


class Zip(Operator):
    """Pairs the i-th left record with the i-th right record; leftovers are dropped."""

    spark_step = "zip"

    state_fields = ("queues",)

    def __init__(self) -> None:
        self.queues: tuple[deque, deque] = (deque(), deque())

    def process_input(self, input_index: int, batch: Batch) -> Output:
        left, right = self.queues
        self.queues[input_index].extend(batch.items)
        n = min(len(left), len(right))
        if not n:
            return None
        return Batch([(left.popleft(), right.popleft()) for _ in range(n)])

    def on_end(self) -> Output:
        self.queues = (deque(), deque())
        return None


class Concat(Operator):
    """Union of its inputs: records pass through; control is aligned by the executor."""

    spark_step = "concat"

