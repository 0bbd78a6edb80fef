"""``uncoordinated`` and ``cic``: every replica checkpoints on its own timer (``cic`` also
when piggybacked HMNR clocks force one), logs what it sends, and a recovery computes the
newest consistent line of local checkpoints, replaying the in-transit messages from the
senders' logs (Checkpointing Protocols Compared). The protocols place one replica per
worker slot and restore at the parallelism the job ran with.

Both sides of the family: the coordinator's records of local checkpoints, stable lines and
recovery lines; each replica's counters, channel logs and timer (``checkpoint.uncoordinated``).
"""
from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from ..checkpoint.local_records import LocalCheckpointRecords, StoredLine, decode_line, encode_line
from ..checkpoint.recovery_line import CheckpointRecord, Process
from ..checkpoint.replica import ReplicaCheckpointing
from ..checkpoint.restore_plan import LineRestore
from ..checkpoint.uncoordinated import LocalCheckpoints, LoggingOutlet, UncoordinatedCheckpoints
from ..errors import SegflowError
from ..observability.logs import event
from ..plan.placement import ExecutionPlan, ReplicaId, Worker, plan, replica_name
from ..redaction import redact_url
from ..runtime.channels import Outlet
from ..v1 import control_pb2 as cpb
from .coordinator_side import CoordinatorSide, ProtocolContext
from .replica_side import ReplicaSide

if TYPE_CHECKING:
    from ..plan.graph import Edge
    from ..runtime.executor import ReplicaExecutor

log = logging.getLogger("segflow.coordinator")


class LocalCheckpointLines(CoordinatorSide):
    periodic_rounds = False

    def __init__(self, context: ProtocolContext) -> None:
        super().__init__(context)
        self.records = LocalCheckpointRecords(context.settings.retain)
        self.stored_line: StoredLine | None = None          # the line a whole-job restart restores
        self._one_slot: tuple[tuple[str, ...], ExecutionPlan] | None = None     # (workers, their plan)

    def _choose_restore(self) -> None:
        """The job restores from the stable line the store holds (the newest consistent line
        of local checkpoints), or starts afresh and clears what earlier runs stored (this
        run's checkpoints reuse their numbers)."""
        settings, catalog = self.context.settings, self.context.catalog
        if settings.restore not in ("", "latest", "auto"):
            raise SegflowError(f"--restore {settings.restore}: the {settings.protocol.value} protocol restores the "
                               "job's newest stable line of local checkpoints: use --restore latest (or auto); "
                               "complete checkpoints and savepoints restore with the protocol that took them "
                               "(aligned, unaligned or segment)")
        data = catalog.read_stable_line() if settings.restore else None
        if data is None:
            if settings.restore:
                self.context.checks.nothing_of_this_protocol(
                    f"no stable line of job {settings.job_name!r} in {redact_url(settings.state_url)} to restore: no "
                    "local checkpoint of every replica was stored yet")
            catalog.clear_local()
            return
        try:
            self.stored_line = decode_line(data)
        except ValueError as exc:
            raise SegflowError(f"the stored stable line of job {settings.job_name!r} cannot be read ({exc}): "
                               "restart the job without --restore") from exc
        self.context.checks.refuse_other_layout(self.stored_line.layout,
                                                f"the stored stable line of job {settings.job_name!r}")
        event(log, logging.WARNING, "restoring", line={r.process: r.index for r in self.stored_line.line},
              job=settings.job_name)

    # ------------------------------------------------------------ local checkpoints
    def _one_slot_plan(self, workers: list[str]) -> ExecutionPlan:
        """The plan with one slot per worker, as these protocols place their processes
        (kept until the workers change: every report asks for it)."""
        key = tuple(workers)
        if self._one_slot is None or self._one_slot[0] != key:
            self._one_slot = (key, plan(self.context.graph, [Worker(w, 1) for w in key]))
        return self._one_slot[1]

    def processes(self, workers: list[str]) -> list[str]:
        """Every replica's process name, placed one slot per worker."""
        return sorted(replica_name(r.block, r.index) for r in self._one_slot_plan(workers).all_replicas())

    def local_checkpoint(self, record: CheckpointRecord, workers: list[str]) -> None:
        """Tell the processes whose stable line advanced, and remove (in the background)
        what no recovery line can go back to."""
        processes = self.processes(workers)
        advanced = self.records.add(record, processes)
        for process, index in sorted(advanced.items()):
            self.context.broadcast(cpb.Command(kind=cpb.Command.CHECKPOINT_COMPLETE, checkpoint_id=index,
                                               process=str(process)))      # a replica's name
        if advanced:
            cleanup = self.context.cleanup
            cleanup.stable_line(encode_line(self.records.stable_line(), processes, time.time(), self.context.layout))
            checkpoints, segments = self.records.newly_collectable()
            if checkpoints or segments:
                cleanup.local_checkpoints(checkpoints, segments)

    def excluded(self, key: str) -> None:
        super().excluded(key)
        local = self.context.catalog.local_of(key)
        if local is not None:
            self.records.forget(*local)

    # ------------------------------------------------------------ recovery
    def recover(self, lost: str, workers: list[str], last_complete: int | None) -> None:
        """Rollback propagation from the lost worker's processes (their newest checkpoints).
        Once the job's end is complete (every protocol's last checkpoint is coordinated),
        the end is what a recovery restores: the output up to it is committed."""
        if last_complete is not None:
            self.restore_id, self.plan = last_complete, None
            return
        execution = self._one_slot_plan(workers)
        failed = {replica_name(r.block, r.index) for r in execution.all_replicas() if execution.placement[r] == lost}
        result = self.records.recover(self.processes(workers), failed)
        self.plan = LineRestore(result.line, result.replay)
        event(log, logging.WARNING, "recovery line", line=result.line, useless=result.useless,
              replay={f"{a}>{b}": r for (a, b), r in result.replay.items()})

    def prepare(self, attempt: int, workers: list[Worker]) -> list[int]:
        """The first attempt of a restore from the stored stable line: every replica from its
        checkpoint on the line, in-transit messages replayed from the senders' logs."""
        if self.stored_line is not None and attempt == 0:
            self._restore_stable_line(self.stored_line, [w.name for w in workers])
        return []

    def _restore_stable_line(self, stored_line: StoredLine, workers: list[str]) -> None:
        line, stored = stored_line.line, stored_line.processes
        processes = self.processes(workers)
        if sorted(stored) != processes:
            raise SegflowError(f"the stored stable line is of {len(stored)} replicas, this run has {len(processes)}: "
                               "the uncoordinated protocols restore at the parallelism the job ran with")
        self.records.seed(line, self._tidy_around({r.process: r.index for r in line}))
        result = self.records.recover(processes, set(processes))
        self.plan = LineRestore(result.line, result.replay)
        self.stored_line = None

    def _tidy_around(self, line: dict[Process, int]) -> dict[Process, set[int]]:
        """What earlier runs stored around the restored ``line``: past it, removed now
        (this run numbers its checkpoints from the line on); checkpoints before it, removed
        in the background; log segments before it (returned) go with the line's own, as
        retention decides (a replay may still read them)."""
        catalog = self.context.catalog
        past_blobs, past_logs, earlier_blobs = set(), set(), set()
        earlier_logs: dict[Process, set[int]] = {}
        for p, (blobs, logs) in catalog.local_indices().items():
            at = line.get(p, 0)
            past_blobs |= {(p, i) for i in blobs if i > at}
            past_logs |= {(p, i) for i in logs if i > at}
            earlier_blobs |= {(p, i) for i in blobs if i < at}
            earlier_logs[p] = {i for i in logs if i < at}
        catalog.delete_local(past_blobs, past_logs)
        self.context.cleanup.local_checkpoints(earlier_blobs, set())
        return earlier_logs

    def restoring(self) -> str:
        return "the recovery line of local checkpoints"


class LocalReplicas(ReplicaSide):
    """Each replica's counters, channel log and timer, made before the replicas are wired:
    their outgoing channels log through them."""

    def __init__(self, checkpointing: cpb.Checkpointing, execution: ExecutionPlan, mine: list[ReplicaId],
                 attempt: int) -> None:
        super().__init__(checkpointing, execution, mine, attempt)
        processes = sorted(replica_name(r.block, r.index) for r in execution.all_replicas())
        self.local = {r: LocalCheckpoints(replica_name(r.block, r.index), checkpointing.interval_seconds, processes,
                                          cic=self.protocol.communication_induced,
                                          seed=hash((r.block, r.index, attempt)))
                      for r in mine}

    def outlet(self, replica: ReplicaId, edge: "Edge", destination: int, outlet: Outlet) -> Outlet:
        return LoggingOutlet(outlet, process_channel(edge, replica.index, destination), self.local[replica])

    def checkpointing(self, replica: ReplicaId, executor: "ReplicaExecutor", agent: Any) -> ReplicaCheckpointing:
        execution = self.execution
        channel_of = {(e.dst_input, s): process_channel(e, s, replica.index)
                      for e in execution.graph.inputs_of(replica.block) for s in execution.senders(e, replica.index)}
        return UncoordinatedCheckpoints(executor, agent, self.local[replica], channel_of)


def process_channel(edge: "Edge", sender: int, destination: int) -> tuple[str, str]:
    """An edge's channel between two replicas, as these protocols name it."""
    return replica_name(edge.src, sender), replica_name(edge.dst, destination)
