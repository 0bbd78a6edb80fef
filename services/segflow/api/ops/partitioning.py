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
        """Spread records evenly over the replicas of the next block (round robin), e.g.
        after a one-replica source, so the work after it runs in parallel.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> out = env.from_iterable(range(4)).shuffle().map(lambda x: x * x).collect()
            >>> _ = env.execute()
            >>> sorted(out.get())
            [0, 1, 4, 9]
        """
        return self._split("shuffle", Strategy.ROUND_ROBIN, keyed=False)

    def key_by(self, key: Callable[[T], U]) -> "KeyedStream[U, T]":
        """Key records by ``key(record)`` without moving them (they must already be
        partitioned by that key, e.g. by a parallel source that splits on it).

        Examples:
            Each replica makes the records of its own keys, so none need to move:

            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> own = env.from_parallel(lambda i, n: [(i, "x"), (i, "y")])
            >>> out = own.key_by(lambda r: r[0]).fold(0, lambda n, r: n + 1).collect()
            >>> _ = env.execute()
            >>> sorted(out.get())
            [(0, 2), (1, 2)]
        """
        _callable("key_by", key)
        keyed = self._chain(_named("key_by", key), lambda: sl.KeyBy(key), keyed=True)
        keyed.block.keys_in_place = True
        return keyed

    def group_by(self, key: Callable[[T], U]) -> "KeyedStream[U, T]":
        """Partition records by ``key(record)``: records with equal keys meet in one replica.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> by_parity = env.from_iterable(range(5)).group_by(lambda x: x % 2)
            >>> out = by_parity.reduce(lambda a, b: a + b).collect()
            >>> _ = env.execute()
            >>> sorted(out.get())
            [(0, 6), (1, 4)]
        """
        return self.key_by(key)._split("group_by", Strategy.HASH, keyed=True)

    def max_parallelism(self, n: int) -> "Stream[T]":
        """Continue in a new block with at most ``n`` replicas (until the next split), e.g.
        for a step that calls a service that allows ``n`` connections.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> out = env.from_iterable([1, 2, 3]).shuffle().max_parallelism(1).map(str).collect()
            >>> _ = env.execute()
            >>> sorted(out.get())
            ['1', '2', '3']
        """
        if not isinstance(n, int) or n < 1:
            raise PipelineError(f"max_parallelism needs an integer >= 1, got {n!r}")
        return self._split(f"max_parallelism({n})", Strategy.FORWARD, max_parallelism=n)

    def batch_mode(self, mode: BatchMode) -> Self:
        """Batching of this block's output and of the blocks after it (right after a source,
        of the source's too: in Noir they are one block). Small fixed batches lower
        latency; large ones raise throughput.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> small = env.from_iterable(range(5)).batch_mode(segflow.BatchMode.fixed(2))
            >>> out = small.shuffle().map(lambda x: x + 1).collect()
            >>> _ = env.execute()
            >>> sorted(out.get())
            [1, 2, 3, 4, 5]
        """
        if not isinstance(mode, BatchMode):
            raise PipelineError("batch_mode needs BatchMode.fixed(n) or BatchMode.adaptive(n, seconds)")
        self.block.batch_mode = mode
        self.env._batch_mode = mode
        graph = self.env.graph
        inputs = graph.inputs_of(self.block.id)
        if len(inputs) == 1 and graph.blocks[inputs[0].src].is_source:
            graph.blocks[inputs[0].src].batch_mode = mode
        return self
