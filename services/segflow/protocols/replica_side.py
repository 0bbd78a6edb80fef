"""What a worker asks of a checkpoint protocol for the replicas it runs.

A worker makes one :class:`ReplicaSide` per attempt, from the protocol its assignment names
(:mod:`.registry`), before it wires its replicas: the side may wrap each outgoing channel
(the uncoordinated protocols log what they send) and gives each replica's executor its
protocol hooks (a ``checkpoint.replica.ReplicaCheckpointing``). The hooks themselves live in
``checkpoint`` beside the algorithm they run; this object only says which one a replica gets
and what it is built with.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

from ..checkpoint.protocols import CheckpointProtocol
from ..checkpoint.replica import ReplicaCheckpointing
from ..plan.placement import ReplicaId
from ..runtime.channels import Outlet
from ..v1 import control_pb2 as cpb

if TYPE_CHECKING:
    from ..plan.graph import Edge
    from ..plan.placement import ExecutionPlan
    from ..runtime.executor import ReplicaExecutor


class ReplicaSide(ABC):
    """``checkpointing``: the assignment's settings; ``execution``: the attempt's plan (the
    same on every worker); ``mine``: this worker's replicas; ``attempt``: its number."""

    def __init__(self, checkpointing: cpb.Checkpointing, execution: "ExecutionPlan", mine: list[ReplicaId],
                 attempt: int) -> None:
        self.settings = checkpointing
        self.protocol = CheckpointProtocol.parse(checkpointing.protocol)
        self.execution = execution
        self.mine = mine
        self.attempt = attempt

    def outlet(self, replica: ReplicaId, edge: "Edge", destination: int, outlet: Outlet) -> Outlet:
        """The outlet ``replica`` sends on ``edge`` to replica ``destination`` through."""
        return outlet

    @abstractmethod
    def checkpointing(self, replica: ReplicaId, executor: "ReplicaExecutor", agent: Any) -> ReplicaCheckpointing:
        """``replica``'s protocol hooks; ``agent``: the worker's checkpoint agent (it
        persists snapshots and acknowledges them)."""
