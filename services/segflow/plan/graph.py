"""The job graph: blocks of chained operators and the edges between them.

The fluent API builds this graph directly, as Noir does: operators append to the current
block, and an operator that needs the network or a different partitioning closes the block
and opens a new one. Block ids are assigned in build order, so the same job code and
parameters always give the same graph.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Callable


class Strategy(enum.Enum):
    """How an edge forwards records from its sender replicas to its receiver replicas."""

    FORWARD = "forward"        # Noir's OnlyOne: replica i -> replica i (or n -> 1, or rebalanced)
    HASH = "hash"              # Noir's GroupBy: by stable hash of the record's key
    ROUND_ROBIN = "round-robin"  # Noir's Random, made deterministic: records dealt in turn
    BROADCAST = "broadcast"    # Noir's All: every record to every replica


@dataclass(frozen=True)
class BatchMode:
    """When a block's output batcher sends: at ``size`` records, or also after ``timeout`` s.
    Set with :meth:`~segflow.Stream.batch_mode`; the default is ``adaptive(1024, 0.05)``.

    Examples:
        >>> str(segflow.BatchMode.fixed(256)), str(segflow.BatchMode.adaptive(1024, 0.05))
        ('fixed(256)', 'adaptive(1024, 0.05s)')
    """

    size: int
    timeout: float | None

    @staticmethod
    def fixed(size: int) -> "BatchMode":
        """Send every ``size`` records (and at end of stream): the most throughput, but a
        slow stream's records wait until a batch fills.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> out = env.from_iterable(range(5)).batch_mode(segflow.BatchMode.fixed(2)).shuffle().collect()
            >>> _ = env.execute()
            >>> sorted(out.get())
            [0, 1, 2, 3, 4]
        """
        if size < 1:
            raise ValueError(f"batch size must be >= 1, got {size}")
        return BatchMode(size, None)

    @staticmethod
    def adaptive(size: int, timeout: float) -> "BatchMode":
        """Send every ``size`` records, or ``timeout`` seconds after a batch's first record:
        full batches when busy, bounded latency when not.

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> quick = env.from_iterable(range(3)).batch_mode(segflow.BatchMode.adaptive(100, 0.01))
            >>> out = quick.shuffle().map(lambda x: x * 2).collect()
            >>> _ = env.execute()
            >>> sorted(out.get())
            [0, 2, 4]
        """
        if size < 1 or timeout <= 0:
            raise ValueError(f"adaptive batch mode needs size >= 1 and timeout > 0, got {size}, {timeout}")
        return BatchMode(size, timeout)

    def __str__(self) -> str:
        return f"fixed({self.size})" if self.timeout is None else f"adaptive({self.size}, {self.timeout}s)"


DEFAULT_BATCH_MODE = BatchMode.adaptive(1024, 0.05)


@dataclass
class OperatorSpec:
    """One operator of a block: a name for humans and a factory for its runtime instance.

    ``factory`` is called once per replica, in the process that runs the replica; the
    closures it captures are never serialized (every process rebuilds the graph from code).
    """

    name: str
    factory: Callable[[], Any]
    location: str = "?"
    stateful: bool = False
    clocked: bool = False    # acts on the wall clock between records (idleness, processing time)


@dataclass
class Edge:
    """Records flow from ``src`` block (output ``port``) into input ``dst_input`` of ``dst``."""

    src: int
    dst: int
    strategy: Strategy
    dst_input: int = 0
    port: int = 0
    feedback: bool = False   # closes a cycle: sends never block (no deadlock in loops)
    replay: bool = False     # a side input entering a loop body: replayed every iteration


@dataclass
class BlockSpec:
    """A chain of operators that runs as one unit on each of its replicas."""

    id: int
    operators: list[OperatorSpec] = field(default_factory=list)
    max_parallelism: int | None = None
    batch_mode: BatchMode = DEFAULT_BATCH_MODE
    is_source: bool = False
    scope: int | None = None        # the iteration scope the block belongs to
    keyed: bool = False             # its records are (key, value) partitioned by key
    keys_in_place: bool = False     # keyed by key_by without moving: a key may be on every replica
    timestamped: bool = False
    closed: bool = False
    expected_records: int | None = None     # a source that knows how many records it will read

    @property
    def label(self) -> str:
        return " -> ".join(op.name for op in self.operators) or "(empty)"

    @property
    def name(self) -> str:
        """Short: its first operator's name (progress lines, metric labels)."""
        return self.operators[0].name if self.operators else "pass"


@dataclass
class JobGraph:
    """Blocks and edges, plus the sinks whose results come back to the caller."""

    blocks: list[BlockSpec] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    compacted: bool = False     # plan.compact ran: block ids are final
    deterministic: bool = False     # declared so (StreamEnvironment.declare_deterministic)

    def new_block(self, **kwargs: Any) -> BlockSpec:
        block = BlockSpec(id=len(self.blocks), **kwargs)
        self.blocks.append(block)
        return block

    def connect(self, src: BlockSpec, dst: BlockSpec, strategy: Strategy, **kwargs: Any) -> Edge:
        edge = Edge(src.id, dst.id, strategy, **kwargs)
        self.edges.append(edge)
        return edge

    def inputs_of(self, block_id: int) -> list[Edge]:
        return sorted((e for e in self.edges if e.dst == block_id), key=lambda e: e.dst_input)

    def outputs_of(self, block_id: int) -> list[Edge]:
        return [e for e in self.edges if e.src == block_id]
