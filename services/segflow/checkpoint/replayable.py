"""Which blocks could replay exactly after a regional recovery restarts them (the first
three conditions of :mod:`.regional`'s doc; the planner checks the fourth, their producers).

A block replays exactly when, from its restored version on, it sends every output channel
the same elements in the same order as before. That holds when the job declared its
functions deterministic (``StreamEnvironment.declare_deterministic``), the block is not a
source (a source's barriers fall where the coordinator's rounds happened to find it), none
of its operators acts on the wall clock between records (idleness, processing-time
windows), and each of its replicas reads exactly one input channel: one input edge, not a
loop's, from one sender replica. Several channels interleave as they arrive, and a replay
interleaves them anew.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..plan.placement import ExecutionPlan


def replayable_blocks(execution: "ExecutionPlan") -> frozenset[int]:
    """The blocks of ``execution`` that could replay exactly (see the module's doc)."""
    graph = execution.graph
    if not graph.deterministic:
        return frozenset()
    replayable = set()
    for block in graph.blocks:
        inputs = graph.inputs_of(block.id)
        if block.is_source or len(inputs) != 1 or inputs[0].feedback or any(op.clocked for op in block.operators):
            continue
        if all(len(execution.senders(inputs[0], index)) == 1 for index in range(execution.replicas[block.id])):
            replayable.add(block.id)
    return frozenset(replayable)
