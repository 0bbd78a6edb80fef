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
    """``left.join_with(right, key_left, key_right).ship_hash().local_hash().inner()``."""

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
        """Both sides are partitioned by key (the default)."""
        return self._choose(ship="hash")

    def ship_broadcast_right(self) -> "JoinBuilder":
        """The left side stays where it is; every replica gets the whole right side."""
        return self._choose(ship="broadcast_right")

    def local_hash(self) -> "JoinBuilder":
        """Match with hash tables (the default; inner joins emit as matches appear)."""
        return self._choose(local="hash")

    def local_sort_merge(self) -> "JoinBuilder":
        """Sort both sides by key at end of stream, then merge (keys must be orderable)."""
        return self._choose(local="sort_merge")

    def _choose(self, ship: str = "", local: str = "") -> "JoinBuilder":
        """Keys of _SHIPS and _LOCALS; the one not given stays as it was."""
        self.ship, self.local = ship or self.ship, local or self.local
        return self

    def inner(self) -> "KeyedStream[Any, Any]":
        return self._build(INNER)

    def left(self) -> "KeyedStream[Any, Any]":
        return self._build(LEFT)

    def outer(self) -> "KeyedStream[Any, Any]":
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
