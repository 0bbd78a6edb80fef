"""Turning one replica of an execution plan into a ready executor.

Shared by the in-process runtime and the worker service: they differ only in how an
outlet reaches a receiver (``outlet_for``): an in-memory inbox, or a gRPC stream.
"""
from __future__ import annotations

import threading
from typing import Callable

from ..plan.graph import Edge
from ..plan.placement import ExecutionPlan, ReplicaId
from .channels import Inbox, Outlet
from .executor import ReplicaExecutor
from .inputs import InputState
from .operator import ReplicaContext
from .routing import EdgeSender, Router

OutletFactory = Callable[[Edge, int], Outlet]


def build_executor(execution: ExecutionPlan, replica: ReplicaId, inbox: Inbox | None,
                   outlet_for: OutletFactory, deliver: Callable[[int, list], None],
                   cancel: threading.Event, transactional: bool = False,
                   restored_from: int = 0) -> ReplicaExecutor:
    graph = execution.graph
    block = graph.blocks[replica.block]
    inputs = [InputState(execution.senders(e, replica.index), e.replay, e.feedback)
              for e in graph.inputs_of(block.id)]
    ports: dict[int, list[EdgeSender]] = {}
    destinations: dict[int, int] = {}
    for edge in graph.outputs_of(block.id):
        outlets = [outlet_for(edge, d) for d in execution.destinations(edge, replica.index)]
        sender = EdgeSender(execution.strategy(edge), outlets, block.batch_mode, replica.index)
        ports.setdefault(edge.port, []).append(sender)
        destinations[id(sender)] = edge.dst
    router = Router(ports, destinations)
    ctx = ReplicaContext(block.id, replica.index, execution.replicas[block.id],
                         execution.placement[replica], router.send_port, deliver,
                         [s.count for s in inputs], transactional, restored_from)
    return ReplicaExecutor(block, ctx, inputs, inbox, router, cancel)
