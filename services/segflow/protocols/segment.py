"""``segment``: segment backup (Segment Backup, chapters 3 and 4). Aligned barriers, and
connectors that keep the pending windows of their output; a restore puts each block at its
own version (the adjusted state) and replays each segment from its nearest upstream
connector, planned from the state store alone (:mod:`.segment_backup`).

Both sides of the family: the coordinator's restore plan and window ledger, and each
replica's hooks (``checkpoint.segment``: connectors record their window parts).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from ..checkpoint import layout
from ..checkpoint.regional import RegionalRecovery
from ..checkpoint.replayable import replayable_blocks
from ..checkpoint.replica import ReplicaCheckpointing
from ..checkpoint.segment import SegmentSnapshots
from ..checkpoint.segment_placement import placement_groups
from ..checkpoint.segment_plan import WindowSize
from ..checkpoint.segments import segment_numbers
from ..plan.placement import ReplicaId, Worker, plan
from ..redaction import redact_url
from ..runtime.channels import Outlet
from ..v1 import control_pb2 as cpb
from .coordinator_side import CoordinatorSide, ProtocolContext
from .replica_side import ReplicaSide
from .segment_backup import SegmentBackup

if TYPE_CHECKING:
    from ..plan.graph import Edge
    from ..plan.placement import ExecutionPlan
    from ..runtime.executor import ReplicaExecutor


class SegmentBackupSide(CoordinatorSide):
    def __init__(self, context: ProtocolContext) -> None:
        super().__init__(context)
        self.backup = SegmentBackup(context.graph, context.settings.connectors, context.catalog, context.cleanup)
        self.groups = placement_groups(self.backup.topology) if context.settings.placement == "segment" else ()

    def _choose_restore(self) -> None:
        settings, catalog, checks = self.context.settings, self.context.catalog, self.context.checks
        self._resume_end()
        if self.wanted not in ("", "latest", "auto"):
            checks.same_layout(catalog.resolve(self.wanted))   # complete, or a clear error
        elif settings.restore and self.backup.has_state():
            checks.same_layout(max(catalog.complete_ids(), default=0))
        elif settings.restore:
            checks.nothing_of_this_protocol(f"no checkpoint of job {settings.job_name!r} in "
                                            f"{redact_url(settings.state_url)} to restore")

    def prepare(self, attempt: int, workers: list[Worker]) -> list[int]:
        """Each attempt's restore is planned from the store: what the lost run made durable."""
        execution = plan(self.context.graph, workers, groups=self.groups)
        replicas = execution.replicas
        self.backup.replayable = replayable_blocks(execution)
        again = self.wanted if attempt == 0 or self.finished else "latest"
        self.plan = self.backup.plan(attempt, replicas, again)
        return sorted(self.backup.connectors)

    def recover(self, lost: str, workers: list[str], last_complete: int | None) -> None:
        """Nothing to choose now: :meth:`prepare` plans the next attempt from the store."""

    def regional(self, lost: str, owners: Mapping[tuple[int, int], str]) -> RegionalRecovery[int] | None:
        return self.backup.regional(lost, owners) if self.groups else None

    def restart_region(self, attempt: int, region: RegionalRecovery[int], through: int) -> None:
        self.backup.restart_region(attempt, region, through)

    def region_registered(self) -> None:
        self.backup.delete_region_leftovers()

    def acknowledged(self, checkpoint_id: int, ack: cpb.ReplicaAck) -> None:
        if ack.ok:
            self.backup.acknowledged(ack.block, ack.replica, checkpoint_id, ack.window_bytes, ack.window_records)

    def placement_groups(self) -> tuple[tuple[int, ...], ...]:
        return self.groups

    def notes(self) -> list[str]:
        return [self.backup.connectors_chosen_by]

    def block_segments(self) -> dict[int, int]:
        return segment_numbers(self.backup.topology)

    def excluded(self, key: str) -> None:
        """A window part a replay needed is missing or damaged: a regional recovery's plan
        no longer counts on it (its connector joins the region, or everything restarts)."""
        super().excluded(key)
        part = layout.window_of(key)
        if part is not None:
            self.backup.lose_part(part[0], part[2])

    def restoring(self) -> str:
        return "segment backup: each connector's pending window"

    @property
    def connectors(self) -> set[int]:
        return set(self.backup.connectors)

    def window_sizes(self) -> dict[int, WindowSize]:
        return self.backup.window_sizes()


class SegmentReplicas(ReplicaSide):
    """Notes where each outgoing channel leads: a regional recovery reopens a connector's
    channels into the restarted blocks (``SegmentSnapshots.rewire``)."""

    def __init__(self, checkpointing: cpb.Checkpointing, execution: "ExecutionPlan", mine: list[ReplicaId],
                 attempt: int) -> None:
        super().__init__(checkpointing, execution, mine, attempt)
        self.targets: dict[ReplicaId, dict[int, tuple["Edge", int]]] = {}

    def outlet(self, replica: ReplicaId, edge: "Edge", destination: int, outlet: Outlet) -> Outlet:
        self.targets.setdefault(replica, {})[id(outlet)] = (edge, destination)
        return outlet

    def checkpointing(self, replica: ReplicaId, executor: "ReplicaExecutor", agent: Any) -> ReplicaCheckpointing:
        catalog = agent.catalog
        return SegmentSnapshots(executor, agent, connector=replica.block in self.settings.connectors,
                                targets=self.targets.get(replica, {}),
                                read_part=lambda v: catalog.read_window(replica.block, replica.index, v),
                                memory=self.settings.window_memory_bytes)
