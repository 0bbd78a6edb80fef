"""Placement by segment (``--placement segment``): which blocks share workers, so that
losing one worker touches as few segments as regional recovery must restart.

A lost worker restarts the blocks it ran, their consumers and the plain blocks feeding
them (:mod:`.regional`). So a worker should run the blocks of one segment only: its plain
blocks, with the connectors it ends (a connector ending several, as a join does, goes
with the first). Losing such a worker restarts that segment and what is downstream of
it; the connectors feeding the segment keep running and replay. Connectors that end no
segment (the sources) each form a group of their own: a source shares no worker with the
segments it feeds, whose loss then never rewinds it.
"""
from __future__ import annotations

from .segments import Topology, segments


def placement_note(groups: tuple[tuple[int, ...], ...], workers: int) -> str:
    """How ``workers`` workers place ``groups``, in one line (the run's status, segflow plan)."""
    listed = "; ".join(" ".join(map(str, group)) for group in groups)
    if workers < len(groups):
        return (f"placement by segment needs a worker for each of its {len(groups)} groups of blocks ({listed}) "
                f"and the job has {workers}: every block is spread over every worker")
    return f"placement by segment: {len(groups)} groups of blocks ({listed}), each on workers of its own"


def placement_groups(topology: Topology[int]) -> tuple[tuple[int, ...], ...]:
    """The blocks, partitioned into the groups that get workers of their own, in the
    order of the topology (upstream first)."""
    order = {n: i for i, n in enumerate(topology.nodes)}
    placed: set[int] = set()
    groups: list[tuple[int, ...]] = []
    for node in topology.nodes:                   # the sources first: nothing feeds them
        if topology.is_connector(node) and not topology.predecessors(node):
            groups.append((node,))
            placed.add(node)
    for segment in segments(topology):
        members = set(segment.inner) | {c for c in segment.downstream if c not in placed}
        if members:
            groups.append(tuple(sorted(members, key=order.__getitem__)))
            placed |= members
    return tuple(sorted(groups, key=lambda group: order[group[0]]))
