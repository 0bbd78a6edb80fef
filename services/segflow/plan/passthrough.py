"""Removing pass-through blocks: blocks without operators that only forward records.

The fluent API opens a block whenever records must move, so some blocks end up empty:
``group_by`` followed by a join opens one block for the shuffle and the join opens
another, and ``split`` after a source opens one between the source and its branches.
An empty block costs a thread, a channel hop and a second batching of every record
(and, after a shuffle, a second shuffle), and changes nothing the records' receivers can
see: its upstream block can send to its receivers directly. Removing it is done once,
when the graph is complete, before anything plans, runs or shows the graph, so block ids
stay dense and the same in every process that builds the job.
"""
from __future__ import annotations

from .graph import Edge, JobGraph, Strategy
from .renumber import renumber

# Receivers that get the same records whatever the sender's parallelism.
_PARTITION_BY_RECORD = (Strategy.HASH, Strategy.BROADCAST)


def elide_pass_through_blocks(graph: JobGraph) -> None:
    """Remove every block that can be removed (see :func:`_removable`) and renumber the
    rest in build order. Idempotent; mutates ``graph`` and its blocks, whose ids change."""
    removed = set()
    for block in graph.blocks:
        inputs = [e for e in graph.edges if e.dst == block.id]
        outputs = [e for e in graph.edges if e.src == block.id]
        if not _removable(graph, block.id, inputs, outputs):
            continue
        (incoming,) = inputs
        for edge in outputs:
            edge.src, edge.port = incoming.src, incoming.port
            if edge.strategy is Strategy.FORWARD:
                edge.strategy = incoming.strategy
        graph.edges.remove(incoming)
        removed.add(block.id)
    if removed:
        renumber(graph, removed)


def _removable(graph: JobGraph, block_id: int, inputs: list[Edge], outputs: list[Edge]) -> bool:
    """An empty, non-source block outside iterations, with one input and at least one
    output, none of them a loop's feedback or side input; when the block limits its own
    replicas differently from its sender, only if its receivers partition by record (a
    hash or broadcast edge), so the limit could not matter to them."""
    block = graph.blocks[block_id]
    if block.operators or block.is_source or block.scope is not None:
        return False
    if len(inputs) != 1 or not outputs:
        return False
    if any(e.feedback or e.replay for e in inputs + outputs):
        return False
    sender = graph.blocks[inputs[0].src]
    if block.max_parallelism == sender.max_parallelism:
        return True
    return all(e.strategy in _PARTITION_BY_RECORD for e in outputs)

