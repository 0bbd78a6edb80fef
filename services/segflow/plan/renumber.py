"""Dense block ids after a pass removed blocks: the same in every process that builds the job."""
from __future__ import annotations

from .graph import JobGraph


def renumber(graph: JobGraph, removed: set[int]) -> None:
    """Drop the ``removed`` blocks and number the rest ``0..n-1`` in build order, edges too."""
    graph.blocks = [b for b in graph.blocks if b.id not in removed]
    new_id = {}
    for index, block in enumerate(graph.blocks):
        new_id[block.id] = index
        block.id = index
    for edge in graph.edges:
        edge.src, edge.dst = new_id[edge.src], new_id[edge.dst]
