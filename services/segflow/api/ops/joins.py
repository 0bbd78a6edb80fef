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
        sort-merge) strategies; finish it with ``.inner()``, ``.left()`` or ``.outer()``.
        Broadcasting a small right side saves shuffling the large left one.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> orders = env.from_iterable([("ann", 30), ("bob", 5), ("ann", 12)]).shuffle()
            >>> names = env.from_iterable([("ann", "Ann Lee"), ("bob", "Bob Ray")])
            >>> joined = orders.join_with(names, lambda o: o[0], lambda n: n[0]).ship_broadcast_right().inner()
            >>> out = joined.map(lambda key, pair: (pair[1][1], pair[0][1])).drop_key().collect()
            >>> _ = env.execute()
            >>> sorted(out.get())
            [('Ann Lee', 12), ('Ann Lee', 30), ('Bob Ray', 5)]
        """
        from ..join import JoinBuilder
        return JoinBuilder(self, right, key_left, key_right)

    def join(self, right: "Stream[U]", key_left: Callable[[T], K],
             key_right: Callable[[U], K]) -> "KeyedStream[K, tuple[T, U]]":
        """Inner join on ``key_left(l) == key_right(r)``: ``(key, (l, r))``.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> orders = env.from_iterable([("ann", 30), ("cid", 7)])
            >>> names = env.from_iterable([("ann", "Ann Lee"), ("bob", "Bob Ray")])
            >>> out = orders.join(names, lambda o: o[0], lambda n: n[0]).collect()
            >>> _ = env.execute()
            >>> out.get()
            [('ann', (('ann', 30), ('ann', 'Ann Lee')))]
        """
        return self.join_with(right, key_left, key_right).inner()

    def left_join(self, right: "Stream[U]", key_left: Callable[[T], K],
                  key_right: Callable[[U], K]) -> "KeyedStream[K, tuple[T, U | None]]":
        """``(key, (l, r))``, and ``(key, (l, None))`` for left records without a match.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> orders = env.from_iterable([("ann", 30), ("cid", 7)])
            >>> names = env.from_iterable([("ann", "Ann Lee"), ("bob", "Bob Ray")])
            >>> out = orders.left_join(names, lambda o: o[0], lambda n: n[0]).collect()
            >>> _ = env.execute()
            >>> sorted(out.get())
            [('ann', (('ann', 30), ('ann', 'Ann Lee'))), ('cid', (('cid', 7), None))]
        """
        return self.join_with(right, key_left, key_right).left()

    def outer_join(self, right: "Stream[U]", key_left: Callable[[T], K],
                   key_right: Callable[[U], K]) -> "KeyedStream[K, tuple[T | None, U | None]]":
        """Like :meth:`left_join`, plus ``(key, (None, r))`` for unmatched right records.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> orders = env.from_iterable([("ann", 30), ("cid", 7)])
            >>> names = env.from_iterable([("ann", "Ann Lee"), ("bob", "Bob Ray")])
            >>> out = orders.outer_join(names, lambda o: o[0], lambda n: n[0]).collect()
            >>> _ = env.execute()
            >>> for record in sorted(out.get()): print(record)
            ('ann', (('ann', 30), ('ann', 'Ann Lee')))
            ('bob', (None, ('bob', 'Bob Ray')))
            ('cid', (('cid', 7), None))
        """
        return self.join_with(right, key_left, key_right).outer()

    def interval_join(self, right: "Stream[U]", lower: Any, upper: Any) -> "Stream[tuple[T, U]]":
        """Pairs ``(l, r)`` with ``t(l) - lower <= t(r) <= t(l) + upper`` (inner, one
        replica for non-keyed streams; per key on keyed streams). Both streams need
        timestamps (:meth:`add_timestamps`).

        Examples:
            Purchases at most 1 s after a view:

            >>> env = segflow.StreamEnvironment(parallelism=1)
            >>> in_order = segflow.WatermarkStrategy.monotonous()
            >>> views = env.from_iterable([("view", 1_000), ("view", 9_000)]).add_timestamps(lambda r: r[1], in_order)
            >>> buys = env.from_iterable([("buy", 1_500)]).add_timestamps(lambda r: r[1], in_order)
            >>> out = views.interval_join(buys, 0, 1_000).collect()
            >>> _ = env.execute()
            >>> out.get()
            [(('view', 1000), ('buy', 1500))]
        """
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
        """``n`` streams with the same records as this one: a stream feeds one operator
        only, so this is how one source feeds several pipelines.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> evens, odds = env.from_iterable(range(6)).split(2)
            >>> out_evens = evens.filter(lambda x: x % 2 == 0).collect()
            >>> out_odds = odds.filter(lambda x: x % 2 == 1).collect()
            >>> _ = env.execute()
            >>> sorted(out_evens.get()), sorted(out_odds.get())
            ([0, 2, 4], [1, 3, 5])
        """
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
        """The records of both streams (same kind: both keyed or neither).

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> out = env.from_iterable([1, 2]).concat(env.from_iterable([3])).collect()
            >>> _ = env.execute()
            >>> sorted(out.get())
            [1, 2, 3]
        """
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
        stream's leftovers are dropped.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> out = env.from_iterable(["a", "b", "c"]).zip(env.from_iterable([1, 2])).collect()
            >>> _ = env.execute()
            >>> out.get()
            [('a', 1), ('b', 2)]
        """
        from ...runtime.operators.joins import Zip
        return self.env._merge("zip", [self, other], [Strategy.FORWARD, Strategy.FORWARD], Zip,
                               keyed=False, max_parallelism=1)
