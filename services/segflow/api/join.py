"""Key joins with a choice of ship strategy (how records meet) and local strategy (how a
replica matches them), as in Noir's ``join_with``."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, cast

from ..errors import PipelineError
from ..plan.graph import Strategy
from ..runtime.operators import stateless as sl
from ..runtime.operators.joins import INNER, LEFT, OUTER, HashJoin, SortMergeJoin
from .core import StreamCore, _callable, _named

if TYPE_CHECKING:
    from .stream import KeyedStream


_SHIPS = {"hash": (Strategy.HASH, Strategy.HASH), "broadcast_right": (Strategy.FORWARD, Strategy.BROADCAST)}
_LOCALS = {"hash": HashJoin, "sort_merge": SortMergeJoin}


class JoinBuilder:
    """``left.join_with(right, key_left, key_right).ship_hash().local_hash().inner()``:
    how the records meet (ship) and how a replica matches them (local), then the kind of
    join. The results are ``(key, (left record, right record))``.

    Examples:
        >>> env = segflow.StreamEnvironment(parallelism=2)
        >>> users = env.from_iterable([(1, "ann"), (2, "bob")])
        >>> visits = env.from_iterable([(1, "/home"), (1, "/cart"), (3, "/faq")])
        >>> joined = users.join_with(visits, lambda u: u[0], lambda v: v[0]).local_sort_merge().left()
        >>> out = joined.map(lambda key, pair: (pair[0][1], pair[1] and pair[1][1])).drop_key().collect()
        >>> _ = env.execute()
        >>> sorted(out.get())
        [('ann', '/cart'), ('ann', '/home'), ('bob', None)]
    """

    def __init__(self, left: StreamCore[Any], right: StreamCore[Any], key_left: Callable[[Any], Any],
                 key_right: Callable[[Any], Any]):
        _callable("join", key_left)
        _callable("join", key_right)
        if left.keyed or right.keyed:
            raise PipelineError("join works on non-keyed streams: call .unkey() or .drop_key() first")
        self.left_stream, self.right_stream = left, right   # not .left: that is the left join
        self.key_left, self.key_right = key_left, key_right
        self.ship = "hash"
        self.local = "hash"

    def ship_hash(self) -> "JoinBuilder":
        """Both sides are partitioned by key (the default): each record crosses to the
        replica of its key once, whatever the sides' sizes.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> left, right = env.from_iterable(["ab", "cd"]), env.from_iterable(["a1", "c2"])
            >>> joined = left.join_with(right, lambda s: s[0], lambda s: s[0]).ship_hash().inner()
            >>> out = joined.drop_key().collect()
            >>> _ = env.execute()
            >>> sorted(out.get())
            [('ab', 'a1'), ('cd', 'c2')]
        """
        return self._choose(ship="hash")

    def ship_broadcast_right(self) -> "JoinBuilder":
        """The left side stays where it is; every replica gets the whole right side: for
        a small right side (a lookup table) and a large left one, which then never moves.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> events = env.from_parallel(lambda i, n: [("de", i), ("fr", i)])
            >>> countries = env.from_iterable([("de", "Germany"), ("fr", "France")])
            >>> joined = events.join_with(countries, lambda e: e[0], lambda c: c[0]).ship_broadcast_right().inner()
            >>> out = joined.map(lambda code, pair: pair[1][1]).drop_key().collect()
            >>> _ = env.execute()
            >>> sorted(out.get())
            ['France', 'France', 'Germany', 'Germany']
        """
        return self._choose(ship="broadcast_right")

    def local_hash(self) -> "JoinBuilder":
        """Match with hash tables (the default; inner joins emit as matches appear).

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> left, right = env.from_iterable([1, 2, 3]), env.from_iterable([2, 3, 4])
            >>> out = left.join_with(right, lambda x: x, lambda x: x).local_hash().inner().collect()
            >>> _ = env.execute()
            >>> sorted(out.get())
            [(2, (2, 2)), (3, (3, 3))]
        """
        return self._choose(local="hash")

    def local_sort_merge(self) -> "JoinBuilder":
        """Sort both sides by key at end of stream, then merge (keys must be orderable):
        no hash table of a side, but no result before the inputs end.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> left, right = env.from_iterable([3, 1, 2]), env.from_iterable([2, 3, 4])
            >>> out = left.join_with(right, lambda x: x, lambda x: x).local_sort_merge().inner().collect()
            >>> _ = env.execute()
            >>> sorted(out.get())
            [(2, (2, 2)), (3, (3, 3))]
        """
        return self._choose(local="sort_merge")

    def _choose(self, ship: str = "", local: str = "") -> "JoinBuilder":
        """Keys of _SHIPS and _LOCALS; the one not given stays as it was."""
        self.ship, self.local = ship or self.ship, local or self.local
        return self

    def inner(self) -> "KeyedStream[Any, Any]":
        """The pairs of records with equal keys: ``(key, (l, r))``.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> left, right = env.from_iterable(["a", "b"]), env.from_iterable(["b", "c"])
            >>> out = left.join_with(right, str, str).inner().collect()
            >>> _ = env.execute()
            >>> out.get()
            [('b', ('b', 'b'))]
        """
        return self._build(INNER)

    def left(self) -> "KeyedStream[Any, Any]":
        """The inner pairs, and ``(key, (l, None))`` for each left record without a match.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> left, right = env.from_iterable(["a", "b"]), env.from_iterable(["b", "c"])
            >>> out = left.join_with(right, str, str).left().collect()
            >>> _ = env.execute()
            >>> sorted(out.get())
            [('a', ('a', None)), ('b', ('b', 'b'))]
        """
        return self._build(LEFT)

    def outer(self) -> "KeyedStream[Any, Any]":
        """The left join's records, and ``(key, (None, r))`` for each unmatched right one.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> left, right = env.from_iterable(["a", "b"]), env.from_iterable(["b", "c"])
            >>> out = left.join_with(right, str, str).outer().collect()
            >>> _ = env.execute()
            >>> sorted(out.get(), key=str)
            [('a', ('a', None)), ('b', ('b', 'b')), ('c', (None, 'c'))]
        """
        return self._build(OUTER)

    def _build(self, kind: str) -> "KeyedStream[Any, Any]":
        if kind == OUTER and self.ship == "broadcast_right":
            raise PipelineError("an outer join cannot ship broadcast-right (unmatched right records "
                                "would be emitted by every replica): use .ship_hash()")
        key_left, key_right = self.key_left, self.key_right
        left = self.left_stream._chain(_named("join.key_left", key_left), lambda: sl.KeyBy(key_left), keyed=True)
        right = self.right_stream._chain(_named("join.key_right", key_right), lambda: sl.KeyBy(key_right), keyed=True)
        local, partitioned = _LOCALS[self.local], self.ship == "hash"
        joined = left.env._merge(f"{kind}_join({self.ship}, {self.local})", [left, right], list(_SHIPS[self.ship]),
                                 lambda: local(kind, partitioned), keyed=True)
        return cast("KeyedStream[Any, Any]", joined)     # _merge makes a KeyedStream when keyed
