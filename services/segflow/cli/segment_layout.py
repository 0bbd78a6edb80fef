"""``segflow plan --connectors/--placement``: the job as segment backup runs it, on the
workers ``segflow run --parallelism N`` starts (w0..wN-1, one slot each), with each
block's segment and, with ``--placement segment``, the workers of its group."""
from __future__ import annotations

from ..checkpoint.connectors import segment_topology
from ..checkpoint.segment_placement import placement_groups, placement_note
from ..checkpoint.segments import segment_numbers
from ..plan.graph import JobGraph
from ..plan.placement import ExecutionPlan, Worker, plan


def block_roles(graph: JobGraph, connectors: str) -> dict[int, str]:
    """Block -> "connector" or "segment N" (segments numbered from 1, upstream first)."""
    topology = segment_topology(graph, connectors)
    return {**{c: "connector" for c in topology.connectors},
            **{b: f"segment {n}" for b, n in segment_numbers(topology).items()}}


def segment_plan(graph: JobGraph, workers: int, connectors: str, placement: str) -> tuple[ExecutionPlan, dict, str]:
    """The plan, each block's role, and a line saying how it was placed."""
    groups = placement_groups(segment_topology(graph, connectors)) if placement == "segment" else ()
    local = [Worker(f"w{i}", 1) for i in range(workers)]
    execution = plan(graph, local, groups=groups)
    note = placement_note(groups, workers) if groups else "placement: every block spread over every worker"
    return execution, block_roles(graph, connectors), note
