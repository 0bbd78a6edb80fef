"""Chaining the block after a source into the source's block, as Noir does.

The fluent API opens a block after every source (the stream's operators go there, and a
source's block owns nothing but the read position). Kept apart, the two cost a thread per
replica, a queue between them and a second batching of every record; on a record-heavy
job that hop was about a fifth of the CPU time (the CSV aggregate at N=1 took 0.79 of it
once chained: the map after the source touched every record again on another thread, out
of the cache). The source's executor already pushes
its batches through the rest of its chain, and a checkpoint captures the whole chain on
the source's thread at the barrier, so the chained block behaves as the two did.
"""
from __future__ import annotations

from .graph import BlockSpec, Edge, JobGraph, Strategy
from .renumber import renumber


def chain_into_sources(graph: JobGraph) -> None:
    """Merge each source's only successor into it where :func:`_chainable` allows, and
    renumber the blocks in build order; mutates ``graph``. One successor per source: the
    block after it may be chainable in turn, so :func:`~segflow.plan.compact.compact`
    runs this once per graph."""
    removed = set()
    for source in graph.blocks:
        if not source.is_source:
            continue
        outputs = graph.outputs_of(source.id)
        if len(outputs) != 1:
            continue
        (edge,) = outputs
        successor = graph.blocks[edge.dst]
        if not _chainable(graph, source, successor, edge):
            continue
        _absorb(source, successor)
        graph.edges.remove(edge)
        for out in graph.outputs_of(successor.id):
            out.src = source.id
        removed.add(successor.id)
    if removed:
        renumber(graph, removed)


def _chainable(graph: JobGraph, source: BlockSpec, successor: BlockSpec, edge: Edge) -> bool:
    """A forward edge to a block fed by nothing else, outside iterations, whose replicas
    and batches are the source's (one replica of each, in order: the edge already paired
    them one to one). Not a block with an operator that acts on the clock between records:
    a source's read may block its thread (a user's iterator waiting for data), and an
    idle stream must still be declared idle, a processing-time window still closed."""
    if edge.strategy is not Strategy.FORWARD or edge.feedback or edge.replay:
        return False
    if successor.scope is not None or source.scope is not None:
        return False
    if len(graph.inputs_of(successor.id)) != 1 or any(op.clocked for op in successor.operators):
        return False
    if any(e.feedback or e.replay for e in graph.outputs_of(successor.id)):
        return False
    return successor.max_parallelism == source.max_parallelism and successor.batch_mode == source.batch_mode


def _absorb(source: BlockSpec, successor: BlockSpec) -> None:
    source.operators.extend(successor.operators)
    source.keyed = successor.keyed
    source.keys_in_place = successor.keys_in_place
    source.timestamped = successor.timestamped
    source.closed = successor.closed
