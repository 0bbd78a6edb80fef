"""Streams that meet: key joins (with a choice of strategies), the interval join, concat
and zip; and split, which feeds several pipelines from one stream."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from ...errors import PipelineError
from ...plan.graph import Strategy
from ..call_site import caller_location
from ..core import K, StreamCore, T, U

if TYPE_CHECKING:
    from ..join import JoinBuilder
    from ..stream import KeyedStream, Stream


class JoinOps(StreamCore[T]):
    def join_with(self, right: "Stream[U]", key_left: Callable[[T], K], key_right: Callable[[U], K]) -> "JoinBuilder":
        """Start a join with a choice of ship (hash / broadcast-right) and local (hash /
        sort-merge) strategies; finish it with ``.inner()``, ``.left()`` or ``.outer()``."""
        from ..join import JoinBuilder
        return JoinBuilder(self, right, key_left, key_right)

    def join(self, right: "Stream[U]", key_left: Callable[[T], K],
             key_right: Callable[[U], K]) -> "KeyedStream[K, tuple[T, U]]":
        """Inner join on ``key_left(l) == key_right(r)``: ``(key, (l, r))``."""
        return self.join_with(right, key_left, key_right).inner()

    def left_join(self, right: "Stream[U]", key_left: Callable[[T], K],
                  key_right: Callable[[U], K]) -> "KeyedStream[K, tuple[T, U | None]]":
        """``(key, (l, r))``, and ``(key, (l, None))`` for left records without a match."""
        return self.join_with(right, key_left, key_right).left()

    def outer_join(self, right: "Stream[U]", key_left: Callable[[T], K],
                   key_right: Callable[[U], K]) -> "KeyedStream[K, tuple[T | None, U | None]]":
        """Like :meth:`left_join`, plus ``(key, (None, r))`` for unmatched right records."""
        return self.join_with(right, key_left, key_right).outer()

    def interval_join(self, right: "Stream[U]", lower: Any, upper: Any) -> "Stream[tuple[T, U]]":
        """Pairs ``(l, r)`` with ``t(l) - lower <= t(r) <= t(l) + upper`` (inner, one
        replica for non-keyed streams; per key on keyed streams)."""
        from ...runtime.operators.joins import IntervalJoin, unstamped_side
        if self.keyed != right.keyed:
            raise PipelineError("interval_join needs both streams keyed or both not keyed")
        sides: tuple[StreamCore[Any], ...] = (self, right)
        for side, stream in enumerate(sides):
            if not stream.block.timestamped:
                raise unstamped_side("interval_join", caller_location(), side)
        keyed = self.keyed
        strategy = Strategy.HASH if keyed else Strategy.FORWARD
        out = self.env._merge("interval_join", [self, right], [strategy, strategy],
                              lambda: IntervalJoin(lower, upper, keyed), keyed=keyed,
                              max_parallelism=None if keyed else 1)
        out.block.timestamped = True
        return out

    def split(self, n: int) -> "list[Stream[T]]":
        """``n`` streams with the same records as this one."""
        if not isinstance(n, int) or n < 1:
            raise PipelineError(f"split needs an integer >= 1, got {n!r}")
        self._consume("split")
        outs = []
        for _ in range(n):
            block = self.env._new_block(self.block)
            self.env.graph.connect(self.block, block, Strategy.FORWARD)
            outs.append(self._next(block))
        return outs

    def concat(self, other: "Stream[T]") -> "Stream[T]":
        """The records of both streams (same kind: both keyed or neither)."""
        from ...runtime.operators.joins import Concat
        if self.keyed != other.keyed:
            raise PipelineError("concat needs both streams keyed or both not keyed")
        timestamped = self.block.timestamped
        if timestamped != other.block.timestamped:
            raise PipelineError("concat needs both streams timestamped or neither: call add_timestamps on "
                                f"the {'other' if timestamped else 'first'} stream too")
        strategy = Strategy.HASH if self.keyed else Strategy.FORWARD
        out = self.env._merge("concat", [self, other], [strategy, strategy], Concat, keyed=self.keyed)
        out.block.timestamped = timestamped
        return out

    def zip(self, other: "Stream[U]") -> "Stream[tuple[T, U]]":
        """Pairs ``(a, b)`` of the i-th records of both streams (one replica); the longer
        stream's leftovers are dropped."""
        from ...runtime.operators.joins import Zip
        return self.env._merge("zip", [self, other], [Strategy.FORWARD, Strategy.FORWARD], Zip,
                               keyed=False, max_parallelism=1)
