"""``aligned`` and ``unaligned``: coordinated barriers cut one complete checkpoint of every
replica at once (Asynchronous Barrier Snapshots; unaligned: Checkpointing Protocols
Compared), and every recovery restores the newest complete one, at the replica counts it
was taken at or rescaled.

Both sides of the family: the coordinator's choice of checkpoint, and each replica's
barrier hooks (``checkpoint.aligned``, ``checkpoint.unaligned``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..checkpoint.adoption import restore_point
from ..checkpoint.aligned import AlignedSnapshots
from ..checkpoint.replica import ReplicaCheckpointing
from ..checkpoint.unaligned import UnalignedSnapshots
from ..errors import SegflowError
from ..plan.placement import ReplicaId, Worker, pinned_blocks, plan
from ..runtime.elements import checkpoint_label
from .coordinator_side import CoordinatorSide, ProtocolContext
from .replica_side import ReplicaSide

if TYPE_CHECKING:
    from ..runtime.executor import ReplicaExecutor


class NoIntactCheckpoint(SegflowError):
    """Every complete checkpoint failed its integrity check: nothing is left to restore."""


class CompleteCheckpoints(CoordinatorSide):
    restores_other_jobs = True

    def __init__(self, context: ProtocolContext) -> None:
        super().__init__(context)
        self._counts: tuple[int, dict] = (0, {})     # (checkpoint, its replica count per block)

    def _choose_restore(self) -> None:
        catalog, checks = self.context.catalog, self.context.checks
        self._resume_end()
        restore = restore_point(catalog, self.wanted, checks.refuse_other_layout, self.context.settings.s3_endpoint)
        try:
            self.restore_id = catalog.resolve(restore) if restore else 0
        except SegflowError as exc:
            held = checks.held_by_other_protocols()
            raise SegflowError(f"{exc}; {held}" if held else str(exc)) from None
        if restore == "auto" and not self.restore_id:
            checks.nothing_of_this_protocol("")
        checks.same_layout(self.restore_id)

    def recover(self, lost: str, workers: list[str], last_complete: int | None) -> None:
        catalog = self.context.catalog
        if catalog.excluded:
            self.restore_id = max(catalog.complete_ids(), default=0)     # the newest intact one
            if not self.restore_id:
                raise NoIntactCheckpoint("no intact checkpoint is left to restore")
        elif last_complete is not None:
            self.restore_id = last_complete

    def rescaling(self, workers: list[Worker]) -> tuple[dict, dict]:
        """See :func:`pinned_blocks`: blocks a snapshot fixes at its replica count."""
        if not self.restore_id:
            return {}, {}
        if self._counts[0] != self.restore_id:
            self._counts = (self.restore_id, self.context.catalog.replica_counts(self.restore_id))
        counts = self._counts[1]
        graph = self.context.graph
        pinned = pinned_blocks(graph, counts, sum(w.slots for w in workers))
        planned = plan(graph, workers, pinned).replicas
        changed = any(counts.get(b, n) != n for b, n in planned.items())
        return (counts if changed else {}), pinned

    def restoring(self) -> str:
        return f"checkpoint {checkpoint_label(self.restore_id)}" if self.restore_id else "the start (no checkpoint yet)"

    def remove_unfinished(self) -> None:
        """A checkpoint still in progress can never complete: its parts go (a restore never
        takes them, but they would mislead whoever reads the store)."""
        self.context.cleanup.unfinished_checkpoints()


class AlignedReplicas(ReplicaSide):
    def checkpointing(self, replica: ReplicaId, executor: "ReplicaExecutor", agent: Any) -> ReplicaCheckpointing:
        return AlignedSnapshots(executor, agent)


class UnalignedReplicas(ReplicaSide):
    def checkpointing(self, replica: ReplicaId, executor: "ReplicaExecutor", agent: Any) -> ReplicaCheckpointing:
        return UnalignedSnapshots(executor, agent)
