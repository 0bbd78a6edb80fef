"""The execution plan: how many replicas each block gets and which worker runs each.

Pure and deterministic: every process that plans the same graph for the same workers gets
the same plan. Placement follows Noir: workers are taken in lexicographic order and each
accepts up to ``slots`` replicas of one block, so single-instance blocks land on the first.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from ..errors import PipelineError
from .graph import Edge, JobGraph, Strategy


@dataclass(frozen=True)
class Worker:
    name: str
    slots: int


_REPLICA_NAME = re.compile(r"b(\d+)\.r(\d+)")


def replica_name(block: int, index: int) -> str:
    """A replica's one name (``b1.r0``): in messages and logs, in the state store's keys,
    and as the uncoordinated protocols' process names; :func:`parse_replica_name` reads it."""
    return f"b{block}.r{index}"


def parse_replica_name(name: str) -> tuple[int, int] | None:
    """``(block, index)`` of a name :func:`replica_name` wrote; None for anything else."""
    match = _REPLICA_NAME.fullmatch(name)
    return (int(match.group(1)), int(match.group(2))) if match else None


@dataclass(frozen=True)
class ReplicaId:
    block: int
    index: int

    def __str__(self) -> str:
        return replica_name(self.block, self.index)


@dataclass
class ExecutionPlan:
    graph: JobGraph
    workers: list[Worker]
    replicas: dict[int, int]                 # block id -> replica count
    placement: dict[ReplicaId, str]          # replica -> worker name
    resolved: dict[int, Strategy]            # edge index -> strategy actually used

    def replica_ids(self, block_id: int) -> list[ReplicaId]:
        return [ReplicaId(block_id, i) for i in range(self.replicas[block_id])]

    def all_replicas(self) -> list[ReplicaId]:
        return [r for b in self.graph.blocks for r in self.replica_ids(b.id)]

    def edge_index(self, edge: Edge) -> int:
        return self.graph.edges.index(edge)

    def strategy(self, edge: Edge) -> Strategy:
        return self.resolved[self.edge_index(edge)]

    def destinations(self, edge: Edge, sender: int) -> list[int]:
        """Receiver replica indices that ``sender`` may send to on ``edge``."""
        n_dst = self.replicas[edge.dst]
        if self.strategy(edge) is Strategy.FORWARD:
            return [sender if n_dst > 1 else 0]
        return list(range(n_dst))

    def senders(self, edge: Edge, receiver: int) -> list[int]:
        """Sender replica indices whose control elements ``receiver`` must align on ``edge``."""
        n_src = self.replicas[edge.src]
        if self.strategy(edge) is Strategy.FORWARD and self.replicas[edge.dst] > 1:
            return [receiver]
        return list(range(n_src))


def group_workers(groups: Sequence[Sequence[int]], workers: list[Worker]) -> dict[int, list[Worker]] | None:
    """Block -> the workers of its group, when each group can have workers of its own:
    the sorted workers dealt out in consecutive shares, as equal as they go (the first
    groups get one more). None when there are fewer workers than groups."""
    if not groups or len(workers) < len(groups):
        return None
    ordered = sorted(workers, key=lambda w: w.name)
    share, extra = divmod(len(ordered), len(groups))
    own: dict[int, list[Worker]] = {}
    start = 0
    for i, group in enumerate(groups):
        size = share + (1 if i < extra else 0)
        for block in group:
            own[block] = ordered[start:start + size]
        start += size
    return own


def plan(graph: JobGraph, workers: list[Worker], pinned: dict[int, int] | None = None,
         groups: Sequence[Sequence[int]] = ()) -> ExecutionPlan:
    """Decide replica counts, placement and resolved edge strategies. ``pinned`` fixes the
    replica count of some blocks (a rescaled restore keeps its sources as they were).
    ``groups``: blocks that get workers of their own (placement by segment), when there
    are as many workers as groups (:func:`group_workers`); each block of a group then has
    as many replicas as its workers' slots. With fewer workers, every block is spread
    over every worker, as without groups."""
    if not workers:
        raise PipelineError("cannot plan a job without workers")
    workers = sorted(workers, key=lambda w: w.name)
    total = sum(w.slots for w in workers)
    if total < 1:
        raise PipelineError("the workers offer no slots; give each at least one")
    own = (group_workers(groups, workers) if not pinned else None) or {}
    workers_of = {b.id: own.get(b.id, workers) for b in graph.blocks}
    replicas = {}
    for b in graph.blocks:
        available = sum(w.slots for w in workers_of[b.id])
        replicas[b.id] = max(1, min(available, b.max_parallelism or available))
    pinned = pinned or {}
    replicas.update(pinned)
    placement: dict[ReplicaId, str] = {}
    for block in graph.blocks:
        if block.id in pinned:          # may exceed the slots (a restore on fewer workers): deal them out
            for index in range(replicas[block.id]):
                placement[ReplicaId(block.id, index)] = workers[index % len(workers)].name
            continue
        remaining = replicas[block.id]
        index = 0
        for worker in workers_of[block.id]:
            take = min(worker.slots, remaining)
            for _ in range(take):
                placement[ReplicaId(block.id, index)] = worker.name
                index += 1
            remaining -= take
            if remaining == 0:
                break
    resolved: dict[int, Strategy] = {}
    for i, edge in enumerate(graph.edges):
        strategy = edge.strategy
        if strategy is Strategy.FORWARD:
            n_src, n_dst = replicas[edge.src], replicas[edge.dst]
            if n_src != n_dst and n_dst != 1:
                strategy = Strategy.ROUND_ROBIN
        resolved[i] = strategy
    return ExecutionPlan(graph, workers, replicas, placement, resolved)


def pinned_blocks(graph: JobGraph, counts: dict[int, int], slots: int | None = None) -> dict[int, int]:
    """The blocks a rescaled restore keeps at their snapshot's replica count ``counts``:
    the sources (their positions are per replica); the blocks fed only by forward edges
    from pinned blocks of the same count, so that what a source replica produces still
    reaches one replica in order (watermarks generated after a source depend on it); and,
    on fewer ``slots``, the sink blocks (their pending output is named by replica)."""
    pinned = {b.id: counts[b.id] for b in graph.blocks if b.id in counts and (
        b.is_source or (slots is not None and counts[b.id] > slots and not graph.outputs_of(b.id)))}
    for block in graph.blocks:
        inputs = graph.inputs_of(block.id)
        if block.id in pinned or block.id not in counts or not inputs:
            continue
        if all(e.strategy is Strategy.FORWARD and not e.feedback and pinned.get(e.src) == counts[block.id]
               for e in inputs):
            pinned[block.id] = counts[block.id]
    return pinned

