"""Where records go: shuffle, key_by, group_by, a block's parallelism and batching."""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Self

from ...errors import PipelineError
from ...plan.graph import BatchMode, Strategy
from ...runtime.operators import stateless as sl
from ..core import StreamCore, T, U, _callable, _named

if TYPE_CHECKING:
    from ..stream import KeyedStream, Stream


class PartitioningOps(StreamCore[T]):
    def shuffle(self) -> "Stream[T]":
        """Spread records evenly over the replicas of the next block."""
        return self._split("shuffle", Strategy.ROUND_ROBIN, keyed=False)

    def key_by(self, key: Callable[[T], U]) -> "KeyedStream[U, T]":
        """Key records by ``key(record)`` without moving them (they must already be
        partitioned by that key, e.g. by a parallel source that splits on it)."""
        _callable("key_by", key)
        keyed = self._chain(_named("key_by", key), lambda: sl.KeyBy(key), keyed=True)
        keyed.block.keys_in_place = True
        return keyed

    def group_by(self, key: Callable[[T], U]) -> "KeyedStream[U, T]":
        """Partition records by ``key(record)``: records with equal keys meet in one replica."""
        return self.key_by(key)._split("group_by", Strategy.HASH, keyed=True)

    def max_parallelism(self, n: int) -> "Stream[T]":
        """Continue in a new block with at most ``n`` replicas (until the next split)."""
        if not isinstance(n, int) or n < 1:
            raise PipelineError(f"max_parallelism needs an integer >= 1, got {n!r}")
        return self._split(f"max_parallelism({n})", Strategy.FORWARD, max_parallelism=n)

    def batch_mode(self, mode: BatchMode) -> Self:
        """Batching of this block's output and of the blocks after it (right after a source,
        of the source's too: in Noir they are one block)."""
        if not isinstance(mode, BatchMode):
            raise PipelineError("batch_mode needs BatchMode.fixed(n) or BatchMode.adaptive(n, seconds)")
        self.block.batch_mode = mode
        self.env._batch_mode = mode
        graph = self.env.graph
        inputs = graph.inputs_of(self.block.id)
        if len(inputs) == 1 and graph.blocks[inputs[0].src].is_source:
            graph.blocks[inputs[0].src].batch_mode = mode
        return self
