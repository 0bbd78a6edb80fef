"""``segflow coordinator``: one per job. Tracks workers and, with a checkpointing
protocol, runs checkpoint rounds, records complete checkpoints in the state store,
garbage-collects old ones, and recovers lost workers from the last complete checkpoint.
"""
from __future__ import annotations

import logging
import os
import pickle
import queue
import sys
import threading
import time
import uuid
from concurrent import futures

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from ..checkpoint.local_records import StateNoLongerKept
from ..checkpoint.recovery_line import CheckpointRecord
from ..checkpoint.regional import RegionalRecovery
from ..checkpoint.segment_placement import placement_note
from ..disaster.lease import fenced_message, says_fenced
from ..errors import EXIT_FENCED, EXIT_STORE_UNREACHABLE, SegflowError
from ..jobs.loader import JobModule, build_job
from ..net import PROTOCOL_VERSION
from ..net.control_codec import counts_of, recovery_fields
from ..net.limits import GRPC_OPTIONS, RESULTS_LIMIT, results_too_large
from ..observability.history import JobHistory
from ..observability.http import ObservabilityServer
from ..observability.logs import event
from ..observability.metrics import ServiceMetrics
from ..plan.placement import Worker, parse_replica_name, plan, replica_name
from ..protocols.complete import NoIntactCheckpoint
from ..redaction import redact
from ..security.guard import ANY_ROLE, RoleGuard, refuse
from ..security.identities import Role
from ..security.identity_env import identity_from_env
from ..security.tls import peer_of, server_credentials
from ..settings import CheckpointSettings, Config
from ..state import StateStoreError
from ..state.sealing import TamperedState
from ..v1 import control_pb2 as cpb
from ..v1 import control_pb2_grpc as cpb_grpc
from .bookkeeping import CheckpointBookkeeping
from .checkpoints import BlockDelays
from .job_view import JobView, LiveState
from .lease_wait import HeldCalls, await_lease
from .standby_view import ShownView, StandbyView
from .parent import watch_parent
from .recovery_report import recovery_entry
from .replacement import DeferredReplacement
from .spawner import WorkerSpawner
from .state import JobState, Phase, RegistrationError, ReplicaReport

log = logging.getLogger("segflow.coordinator")

HEARTBEAT_SECONDS = 0.5
HEARTBEAT_TIMEOUT = 3.0
STARTUP_TIMEOUT = 10.0      # before a worker's first heartbeat in an attempt (JobState's doc)
SAVEPOINT_SECONDS = 120.0      # a Savepoint call waits this long for a round to start, and again for it to end

_WORKER, _CLIENT = frozenset({Role.WORKER}), frozenset({Role.CLIENT})
# Who may call what: workers run the job, clients (the CLI, the operator) follow and steer it.
METHOD_ROLES = {
    **{f"/segflow.v1.Coordinator/{m}": _WORKER for m in ("Register", "Heartbeat", "Finish", "Acknowledge", "Report")},
    **{f"/segflow.v1.Coordinator/{m}": _CLIENT for m in ("Watch", "Cancel", "Savepoint")},
    "/grpc.health.v1.Health/Check": ANY_ROLE,
}

_PHASES = {Phase.WAITING_FOR_WORKERS: cpb.JobUpdate.WAITING_FOR_WORKERS, Phase.RUNNING: cpb.JobUpdate.RUNNING,
           Phase.SUCCEEDED: cpb.JobUpdate.SUCCEEDED, Phase.FAILED: cpb.JobUpdate.FAILED,
           Phase.RECOVERING: cpb.JobUpdate.RECOVERING}


class CoordinatorServicer(cpb_grpc.CoordinatorServicer):
    def __init__(self, spec: JobModule, workers: int, graph, settings: CheckpointSettings, standby_workers: int = 0):
        self.spec = spec
        self.job_id = uuid.uuid4().hex[:12]
        self.graph = graph
        self.settings = settings
        self.state = JobState(workers, HEARTBEAT_TIMEOUT, recoverable=settings.enabled,
                              two_phase=settings.enabled, standby_workers=standby_workers,
                              startup_timeout=STARTUP_TIMEOUT)
        self.block_names = {b.id: b.name for b in graph.blocks}
        self.lock = threading.Condition()
        self.results_bytes = 0      # what workers sent for collect(), pickled
        self.commands: dict[str, queue.Queue] = {}
        self.done = threading.Event()
        self.reported = threading.Event()
        self.spawner: WorkerSpawner | None = None
        self.history = JobHistory()
        self.checkpoints: CheckpointBookkeeping | None = None
        self._placement: tuple[tuple, dict] = ((), {})    # ((attempt, workers), replica -> worker)
        self._rewire: tuple[RegionalRecovery[int], frozenset[str]] | None = None   # kept workers to rewire
        self._replacement: DeferredReplacement | None = None      # standbys to start again once due
        if settings.enabled:
            self.checkpoints = CheckpointBookkeeping(graph, settings, self.history, self._broadcast, self.fenced,
                                                     self._final_failed)
        self.groups = self.checkpoints.side.placement_groups() if self.checkpoints else ()
        for note in self.checkpoints.side.notes() if self.checkpoints else []:
            event(log, logging.INFO, "protocol", note=note)
            self.state.events.append(note)
        if self.groups and workers < len(self.groups):
            why = placement_note(self.groups, workers)
            event(log, logging.WARNING, "placement", note=why)
            self.state.events.append(why)
        self.view = JobView(graph, settings.job_name, settings.protocol.value if settings.enabled else "none",
                            settings.interval, self.checkpoints.side.connectors if self.checkpoints else set(),
                            self.checkpoints.side.block_segments() if self.checkpoints else {})

    # ------------------------------------------------------------ helpers
    def _broadcast(self, command: cpb.Command) -> None:
        for q in self.commands.values():
            q.put(command)

    def _changed(self) -> None:
        """Call with the lock held, after any change of state."""
        if self.state.over and not self.done.is_set():
            if self.state.phase is Phase.FAILED:
                event(log, logging.ERROR, "job failed", error=self.state.error)
                self._broadcast(cpb.Command(kind=cpb.Command.STOP, reason=self.state.error))
            else:
                event(log, logging.INFO, "job succeeded")
            self.done.set()
        self.lock.notify_all()

    def _book(self) -> CheckpointBookkeeping:
        """The checkpoints of a job that must have them: only a checkpointed job recovers, or
        commits its end (``recoverable`` and ``two_phase`` are ``settings.enabled``)."""
        assert self.checkpoints is not None, "a recovery or an end commit in a job without checkpoints"
        return self.checkpoints

    def _replicas(self) -> set:
        return set(self._owners())

    def _rescaling(self, workers: list[Worker]) -> tuple[dict, dict]:
        """Lock held. For a restore: ``(replica counts of the snapshot if the plan's differ,
        pinned block counts)``."""
        return self.checkpoints.side.rescaling(workers) if self.checkpoints is not None else ({}, {})

    def _worker_infos(self) -> list[cpb.WorkerInfo]:
        """Lock held: the attempt's workers as every worker plans with them, by slot."""
        slot = self.state.slot
        return [cpb.WorkerInfo(name=slot(w.name), data_address=w.data_address, slots=w.slots, identity=w.name)
                for w in sorted(self.state.workers.values(), key=lambda w: slot(w.name))]

    def _assignment(self, worker: str) -> cpb.Assignment:
        """``worker``'s assignment: every worker's is the same but for its slot."""
        slot = self.state.slot
        workers = sorted(self.state.workers.values(), key=lambda w: slot(w.name))
        placed = [Worker(slot(w.name), w.slots) for w in workers]
        restore_replicas, pinned = self._rescaling(placed)
        s, book = self.settings, self.checkpoints
        connectors = book.side.prepare(self.state.attempt, placed) if book is not None else []
        groups = self.groups if not pinned else ()
        return cpb.Assignment(
            protocol_version=PROTOCOL_VERSION, job_id=f"{self.job_id}-a{self.state.attempt}",
            job=cpb.JobModule(target=self.spec.target, function=self.spec.function, params=self.spec.params),
            workers=self._worker_infos(), slot=slot(worker),
            placement_groups=[cpb.PlacementGroup(blocks=g) for g in groups],
            heartbeat_seconds=HEARTBEAT_SECONDS, attempt=self.state.attempt,
            checkpointing=cpb.Checkpointing(protocol=s.protocol.value, interval_seconds=s.interval,
                                            state_url=s.state_url, s3_endpoint=s.s3_endpoint,
                                            retain=s.retain, job_name=s.job_name, connectors=connectors,
                                            lease_owner=s.lease_owner, lease_generation=s.lease_generation,
                                            window_memory_bytes=int(s.window_memory_mb * 2 ** 20)),
            restore_checkpoint=book.side.restore_id if book else 0, restore_replicas=restore_replicas,
            pinned_replicas=pinned, **recovery_fields(book.side.plan if book else None))

    def _lost(self, name: str, why: str, damaged: str = "") -> None:
        """Lock held. Start a recovery (of the region the loss touches, when the protocol
        restarts regions: ``checkpoint.regional``), or fail the job. ``damaged``: the stored
        key whose loss caused it (the recovery grows past what needed it)."""
        attempt, slot = self.state.attempt, self.state.slot(name)
        region = self._region(slot)
        keep = self._kept(region) if region is not None else frozenset()
        if not self.state.lost(name, why, time.monotonic(), keep=keep):
            self._changed()
            return
        book = self._book()
        try:
            if region is None:
                book.recover(slot, self._worker_names())
            else:
                book.recover_region(self.state.attempt, region)
        except NoIntactCheckpoint as exc:
            self.state.fail(f"{exc} after losing {name}: {why}", time.monotonic())
            self._changed()
            return
        except StateNoLongerKept as exc:
            self.state.fail(f"cannot recover after losing {name} ({why}): {exc}", time.monotonic())
            self._changed()
            return
        if book.metrics is not None:
            book.metrics.recoveries.inc()
        self.history.recovery(recovery_entry(time.time(), name, why, book.side.restoring(), region, self.block_names,
                                             damaged))
        event(log, logging.WARNING, "recovering", lost=name, reason=why, attempt=self.state.attempt,
              **({"damaged": damaged} if damaged else {}),
              restore_checkpoint=book.side.restore_id or "none (from the start)",
              **({"regional": region.describe(self.block_names), "kept": sorted(keep)} if region else {}))
        self._rewire = (region, keep) if region is not None else None
        restart = cpb.Command(kind=cpb.Command.RESTART, reason=f"recovery after losing {name} (attempt {attempt})")
        for worker, commands in self.commands.items():
            if worker not in keep:
                commands.put(restart)
        # The queues stay: a worker that registered but has not sent its first heartbeat yet
        # finds its queue (and the RESTART in it) when it does; registering again replaces it.
        promoted = self.state.promoted
        if promoted is not None:
            self.commands[promoted] = queue.Queue()        # it joins the new attempt, told nothing of the old
            event(log, logging.WARNING, "standby takes over", standby=promoted, slot=slot)
            if self.state.start_if_all_registered(time.monotonic()):
                self._attempt_started()
        if self.spawner is not None:
            if promoted is None:
                self.spawner.start(name)
            else:
                self.spawner.start_later(name)
                self._replacement = DeferredReplacement(time.monotonic(), self._newest_complete())
        self._changed()

    def _region(self, slot: str) -> RegionalRecovery[int] | None:
        """Lock held: the regional recovery of losing ``slot``, if only part of the job must
        restart (None: all of it, as always before the job's end is being committed)."""
        if self.checkpoints is None or self.state.commit_sent or self.state.phase is not Phase.RUNNING:
            return None
        return self.checkpoints.side.regional(slot, self._owners())

    def _kept(self, region: RegionalRecovery[int]) -> frozenset[str]:
        """Lock held: the workers that run only blocks ``region`` keeps running."""
        slots = {worker for (block, _), worker in self._owners().items() if block in region.kept}
        return frozenset(name for name in self.state.workers if self.state.slot(name) in slots)

    def _rewire_kept(self) -> None:
        """Lock held, the regional attempt started: the workers it kept send to the restarted
        replicas from now on, after replaying their connectors' windows into them."""
        if self._rewire is None:
            return
        region, keep = self._rewire
        self._rewire = None
        rewire = cpb.Rewire(job_id=f"{self.job_id}-a{self.state.attempt}", attempt=self.state.attempt,
                            workers=self._worker_infos(),
                            replays=[cpb.WindowReplay(connector=r.connector, successor=r.consumer, first=r.first,
                                                      last=r.through) for r in region.replays if r.live],
                            skips=[cpb.ChannelSkip(producer=k.producer, consumer=k.consumer, version=k.version)
                                   for k in region.skips])
        for name in keep:
            if name in self.commands:
                self.commands[name].put(cpb.Command(kind=cpb.Command.REWIRE, rewire=rewire))

    def _attempt_started(self) -> None:
        """Lock held: every slot has its worker; the attempt's checkpoint rounds begin."""
        if self.checkpoints is not None:
            if self._rewire is not None:
                self.checkpoints.side.region_registered()
            self.checkpoints.reset(self._replicas(), time.monotonic(), self.state.attempt)
        self._rewire_kept()

    def _owners(self) -> dict:
        """Lock held: which worker runs each replica, (block, index) -> name, in this attempt
        (while it recovers: in the last, whose slots it keeps)."""
        if self.state.phase is Phase.RECOVERING and self._placement[1]:
            return self._placement[1]
        workers = sorted((self.state.slot(w.name), w.slots) for w in self.state.workers.values())
        if self._placement[0] != (self.state.attempt, workers):
            registered = [Worker(name, slots) for name, slots in workers]
            _, pinned = self._rescaling(registered)
            execution = plan(self.graph, registered, pinned, self.groups)
            self._placement = ((self.state.attempt, workers), {(r.block, r.index): execution.placement[r]
                                                               for r in execution.all_replicas()})
        return self._placement[1]

    @staticmethod
    def _as_worker(context, worker: str) -> None:
        """A worker speaks only for itself: the name in a request is the one in its certificate."""
        peer = peer_of(context)
        if peer is None or peer.name != worker:
            refuse(context, f"a request for worker {worker!r} from {peer.name if peer else 'an unknown caller'!r}")

    def _owns(self, context, worker: str, replicas) -> None:
        """Lock held: refuse a worker speaking for replicas placed elsewhere in this attempt."""
        owners, slot = self._owners(), self.state.slot(worker)
        foreign = sorted({r for r in replicas if owners.get(r) != slot})
        if foreign:
            refuse(context, f"worker {worker!r} does not run replica(s) "
                            f"{', '.join(replica_name(b, i) for b, i in foreign)} in attempt {self.state.attempt}")

    def _worker_names(self) -> list[str]:
        """Lock held: the registered workers (before any registers, the expected names)."""
        return list(self.state.names) or [f"w{i}" for i in range(self.state.expected)]

    def Report(self, request, context):
        self._as_worker(context, request.worker)
        with self.lock:
            self._owns(context, request.worker, [_replica_of(request.process)])
            if self.checkpoints is None or not self.state.in_attempt(request.worker, request.attempt) \
                    or not request.ok:
                if not request.ok:
                    event(log, logging.WARNING, "local checkpoint failed", process=request.process,
                          index=request.index, error=request.error)
                return cpb.Ack()
            self.checkpoints.local_checkpoint(CheckpointRecord(request.process, request.index, counts_of(request.sent),
                                                               counts_of(request.processed)), self._worker_names())
        return cpb.Ack()

    # ---------------------------------------------------------------- RPCs
    def Register(self, request, context):
        self._as_worker(context, request.worker)
        if request.protocol_version != PROTOCOL_VERSION:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION,
                          f"incompatible protocol version {request.protocol_version}: the coordinator "
                          f"speaks version {PROTOCOL_VERSION}; run the same segflow on every worker")
        with self.lock:
            try:
                started = self.state.register(request.worker, request.data_address, request.metrics_address,
                                              request.slots or 1, request.pid, time.monotonic(),
                                              standby=request.standby)
            except RegistrationError as exc:
                context.abort(grpc.StatusCode.FAILED_PRECONDITION, str(exc))
            if self.state.is_standby(request.worker):
                event(log, logging.INFO, "standby worker registered", worker=request.worker)
                self._changed()
                if not self._standing_by(request.worker, context):
                    return cpb.Assignment()
            else:
                self.commands[request.worker] = queue.Queue()
                event(log, logging.INFO, "worker registered", worker=request.worker, attempt=self.state.attempt)
            attempt = self.state.attempt
            if started:
                self._attempt_started()
            self._changed()
            while self.state.phase in (Phase.WAITING_FOR_WORKERS, Phase.RECOVERING) \
                    and self.state.attempt == attempt:
                self.lock.wait(0.5)
                if not context.is_active():
                    return cpb.Assignment()
            if self.state.over or self.state.attempt != attempt:
                context.abort(grpc.StatusCode.ABORTED, self.state.error or "a newer attempt started")
            try:
                return self._assignment(request.worker)
            except (SegflowError, StateStoreError) as exc:
                self.state.fail(f"cannot restore the job: {exc}", time.monotonic())
                self._changed()
                context.abort(grpc.StatusCode.FAILED_PRECONDITION, self.state.error)

    def _standing_by(self, worker: str, context) -> bool:
        """Lock held: keep a standby's registration open until a recovery takes it (True)
        or it goes (its call ends) or the job ends (False: the empty assignment tells the
        standby there is nothing left to stand by for, and it exits 0)."""
        while self.state.is_standby(worker) and not self.state.over:
            self.lock.wait(0.5)
            if not context.is_active():
                self.state.unregister(worker)
                self._changed()
                return False
        return not self.state.over and worker in self.state.workers

    def Heartbeat(self, request_iterator, context):
        name_box: list[str] = []
        commands: futures.Future = futures.Future()     # the worker's queue, once its first status named it

        def read():
            attempt = None
            try:
                for status in request_iterator:
                    if not name_box:
                        self._as_worker(context, status.worker)
                        name_box.append(status.worker)
                        attempt = self.state.attempt
                        with self.lock:
                            commands.set_result(self.commands.get(status.worker))
                    elif status.worker != name_box[0]:
                        refuse(context, f"a heartbeat stream of {name_box[0]!r} spoke for {status.worker!r}")
                    counters = {(r.block, r.replica): r.records_in for r in status.replicas}
                    load = {(r.block, r.replica): ReplicaReport(r.records_out, r.inbox, r.blocked_seconds,
                                                                r.latency_seconds, r.barrier_seconds)
                            for r in status.replicas}
                    with self.lock:
                        self._received(self.state.heartbeat(status.worker, counters, time.monotonic(), load))
            except grpc.RpcError:
                pass
            finally:
                if not commands.done():
                    commands.set_result(None)
                elif commands.result() is not None:
                    commands.result().put(None)          # the stream's end: the loop below returns
                if name_box:
                    with self.lock:
                        if attempt is not None and self.state.in_attempt(name_box[0], attempt):
                            self._lost(name_box[0], "its heartbeat stream broke (process gone?)")

        threading.Thread(target=read, name="heartbeat-reader", daemon=True).start()
        my_queue = commands.result()
        while my_queue is not None:
            command = my_queue.get()
            if command is None:
                return
            yield command

    def _received(self, grown: dict[int, int]) -> None:
        """Lock held: count what a worker's replicas received since its last report."""
        if self.checkpoints is not None and self.checkpoints.metrics is not None:
            self.checkpoints.metrics.records_received(grown)

    def Finish(self, request, context):
        self._as_worker(context, request.worker)
        counters = {(r.block, r.replica): r.records_in for r in request.status.replicas}
        with self.lock:
            self.results_bytes += len(request.results)
            gathered = self.results_bytes
        ok, error = request.ok, request.error
        if gathered > RESULTS_LIMIT:
            ok, error = False, results_too_large(gathered)
        results = pickle.loads(request.results) if request.results and ok else {}
        with self.lock:
            if request.tampered_key and self._tampered(request.worker, request.tampered_key, request.error):
                return cpb.Ack()
            self._received(self.state.heartbeat(request.worker, counters, time.monotonic()))
            decision = self.state.finished(request.worker, ok, error, request.peer_failure,
                                           results, time.monotonic(), committed=request.committed)
            if decision == "commit":
                self._book().final_checkpoint()
            self._changed()
        return cpb.Ack()

    def _tampered(self, worker: str, key: str, error: str) -> bool:
        """Lock held. A worker's restore read a blob that failed its integrity check:
        recover from what is intact (an older checkpoint, lower segment versions, an
        earlier recovery line). False when this job cannot recover (the error fails it)."""
        if self.checkpoints is None or not self.state.recoverable or worker not in self.state.workers:
            return False
        event(log, logging.ERROR, "stored state failed its integrity check or is missing", key=key, worker=worker)
        self.state.events.append(f"{key} failed its integrity check or is missing; restoring without it")
        self.checkpoints.exclude(key)
        self._lost(worker, f"it read missing or tampered state ({key}): {error}", damaged=key)
        return True

    def Acknowledge(self, request, context):
        self._as_worker(context, request.worker)
        with self.lock:
            self._owns(context, request.worker, [(a.block, a.replica) for a in request.acks])
            if self.checkpoints is not None and self.state.in_attempt(request.worker, request.attempt):
                self.checkpoints.acknowledge(request.checkpoint_id, request.acks)
        return cpb.Ack()

    def fenced(self, reason: str) -> None:
        """The lease is lost: nothing more may be published, so the job ends here (the
        lock is reentrant: called from a checkpoint's end too)."""
        self._fail_unless_over(fenced_message(f"{reason}; this cluster no longer holds the job's lease"))

    def _fail_unless_over(self, error: str) -> None:
        with self.lock:
            if not self.state.over:
                self.state.fail(error, time.monotonic())
                self._changed()

    def remove_unfinished_checkpoints(self) -> None:
        """At the end, delete what can never complete, unless the lease no longer lets this
        process write: the store may be another cluster's by now, and its checkpoint in
        progress would lose parts."""
        book = self.checkpoints
        if book is None:
            return
        refusal = book.fence.refusal() if book.fence is not None else ""
        if refusal:
            event(log, logging.WARNING, "unfinished checkpoints left in the store", reason=refusal)
            return
        book.side.remove_unfinished()

    @property
    def exit_code(self) -> int:
        """0 once the job succeeded; EXIT_FENCED when the lease stopped it; 1 otherwise."""
        if self.state.phase is Phase.SUCCEEDED:
            return 0
        return EXIT_FENCED if says_fenced(self.state.error) else 1

    def _final_failed(self) -> None:
        """Lock held: the checkpoint of the job's end failed; try it again in a second."""
        self.state.commit_sent = False
        threading.Timer(1.0, self._retry_final).start()

    def _retry_final(self) -> None:
        with self.lock:
            if self.state.phase is Phase.RUNNING and not self.state.commit_sent and \
                    all(w.finished for w in self.state.workers.values()):
                self.state.commit_sent = True
                self._book().final_checkpoint()

    def Savepoint(self, request, context):
        book = self.checkpoints
        if book is None:
            return cpb.SavepointReply(error="this job runs without checkpoints (--checkpoint-protocol none)")
        if not self.settings.protocol.takes_savepoints:
            return cpb.SavepointReply(error=f"{self.settings.protocol.no_savepoints()}; its stored stable line "
                                            "restores the job: --restore latest")
        if book.side.finished:
            return cpb.SavepointReply(error="the job had finished and this run resumed from its end, which its "
                                            "final checkpoint keeps: a restore resumes from it (--restore latest)")
        with self.lock:
            ready = self.lock.wait_for(lambda: self.state.over or (self.state.phase is Phase.RUNNING and book.idle),
                                       SAVEPOINT_SECONDS)
            if self.state.over:
                return cpb.SavepointReply(error="the job is over")
            if not ready:
                return cpb.SavepointReply(error="timed out waiting for the checkpoint in progress")
            waiter = book.start_savepoint()
        if not waiter.ended.wait(SAVEPOINT_SECONDS):
            return cpb.SavepointReply(error=f"checkpoint {waiter.checkpoint_id} did not end within "
                                            f"{SAVEPOINT_SECONDS:.0f} s")
        if waiter.error:
            return cpb.SavepointReply(error=waiter.error)
        return cpb.SavepointReply(checkpoint_id=waiter.checkpoint_id, location=book.location(waiter.checkpoint_id))

    def Cancel(self, request, context):
        self.cancel(request.reason or "by the caller")
        return cpb.Ack()

    def cancel(self, reason: str) -> None:
        """Ends the job, unless it is over already (a job that succeeded stays so). The
        coordinator then exits without lingering for watchers: whoever cancels knows how
        the job ends (a caller), or nobody is left to watch it (a parent gone)."""
        self._fail_unless_over(f"cancelled: {reason}")
        self.reported.set()

    def _update(self) -> cpb.JobUpdate:
        state = self.state
        blocks = [cpb.BlockProgress(block=b, name=self.block_names.get(b, ""), records_in=n)
                  for b, n in sorted(state.progress().items())]
        update = cpb.JobUpdate(phase=_PHASES[state.phase], error=redact(state.error), recoveries=state.recoveries,
                               blocks=blocks)
        if state.events:
            update.event = redact("; ".join(state.events))
            state.events.clear()
        if self.checkpoints is not None:
            self.checkpoints.describe(update)
        if state.started_at is not None:
            update.seconds = (state.ended_at or time.monotonic()) - state.started_at
        if state.phase is Phase.SUCCEEDED:
            update.results = pickle.dumps(state.results, protocol=5)
        return update

    def web_state(self) -> dict:
        """The web view's ``/api/job``."""
        with self.lock:
            state, book = self.state, self.checkpoints
            seconds = (state.ended_at or time.monotonic()) - state.started_at if state.started_at else 0.0
            live = LiveState(self.job_id, state.phase.name, redact(state.error), seconds, state.recoveries,
                             book.side.restored() if book else "", self._owners() if state.workers else {},
                             {r: n for w in state.workers.values() for r, n in w.counters.items()},
                             state.replica_loads(), book.side.window_sizes() if book else {},
                             [(w.name, w.pid, w.finished, w.metrics_address, state.slot(w.name))
                              for w in sorted(state.workers.values(), key=lambda w: w.name)],
                             book.block_delays() if book else BlockDelays(),
                             standby=[(w.name, w.pid) for w in state.standby.values()])
            return self.view.render(live, self.history, time.monotonic())

    def Watch(self, request, context):
        while context.is_active():
            with self.lock:
                self.lock.wait(0.5)
                update = self._update()
            yield update
            if update.phase in (cpb.JobUpdate.SUCCEEDED, cpb.JobUpdate.FAILED):
                self.reported.set()
                return

    def monitor(self) -> None:
        while not self.done.wait(0.1):
            with self.lock:
                now = time.monotonic()
                silent = self.state.check(now)
                if silent is not None:
                    self._lost(*silent)
                if not self.state.over:
                    self._respawn_exited()
                    self._start_replacements(now)
                running = self.state.phase is Phase.RUNNING
                if self.checkpoints is not None and (running or self.state.commit_sent):
                    self.checkpoints.tick(now, trigger=running and not self.state.commit_sent)
                self._changed()

    def _newest_complete(self) -> int | None:
        """Lock held: the newest complete checkpoint's id (None: none, or no checkpointing)."""
        complete = self.checkpoints.tracker.last_complete if self.checkpoints is not None else None
        return complete.checkpoint_id if complete is not None else None

    def _start_replacements(self, now: float) -> None:
        """Lock held: start the lost workers' new standby processes once the recovery that
        took a standby has caught up (``coordinator.replacement``)."""
        if self.spawner is None or self._replacement is None:
            return
        if self._replacement.due(now, self.state.phase is Phase.RUNNING, self._newest_complete()):
            self._replacement = None
            self.spawner.start_deferred()

    def _respawn_exited(self) -> None:
        """Lock held. A local worker process that exited unexpectedly is a lost worker."""
        if self.spawner is None:
            return
        for name in self.spawner.exited():
            code = self.spawner.processes[name].returncode
            if self.state.is_standby(name) or (name in self.spawner.started_standby and name not in self.state.workers):
                event(log, logging.WARNING, "standby worker exited", worker=name, exit_code=code)
                self.state.unregister(name)
                self.spawner.start(name, standby=True)
                continue
            if self.state.phase is Phase.RUNNING or self.state.is_kept(name):
                if name in self.state.workers and not self.state.workers[name].committed:
                    self._lost(name, f"its process exited (code {code})")
                continue
            if not self.state.recoverable and self.state.attempt == 0 and code not in (None, 0):
                pid = self.spawner.processes[name].pid
                self.state.fail(f"lost worker {name} (pid {pid}): it exited with code {code} before the job started",
                                time.monotonic())
                return
            self.state.unregister(name)
            self.spawner.start(name)


STORE_WAIT_ENV = "SEGFLOW_STORE_WAIT_SECONDS"


def store_wait() -> float:
    """How long a starting coordinator waits for an unreachable state store (default 60 s)."""
    raw = os.environ.get(STORE_WAIT_ENV, "60")
    try:
        seconds = float(raw)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds < float("inf"):
        raise SegflowError(f"{STORE_WAIT_ENV} must be a number of seconds >= 0, got {raw!r}")
    return seconds


def _when_the_store_answers(make):
    """``make()``, tried again with back-off while the state store cannot be reached (a
    restart during a store outage waits it out instead of failing the job)."""
    deadline, delay = time.monotonic() + store_wait(), 1.0
    while True:
        try:
            return make()
        except TamperedState:
            raise
        except StateStoreError as exc:
            if time.monotonic() + delay > deadline:
                raise
            event(log, logging.WARNING, "state store unreachable; trying again", error=str(exc), seconds=delay)
            time.sleep(delay)
            delay = min(delay * 2, 10.0)


def _failed(exc: SegflowError, announce) -> int:
    """Say why the coordinator cannot run the job; its exit code (the store's own when it
    could not be reached: the operator waits that out instead of failing the job)."""
    print(f"coordinator failed: {redact(str(exc))}", file=announce, flush=True)
    unreachable = isinstance(exc, StateStoreError) and not isinstance(exc, TamperedState)
    return EXIT_STORE_UNREACHABLE if unreachable else 1


def _replica_of(process: str) -> tuple[int, int]:
    """``"b1.r0"`` -> (1, 0); anything else names no replica (and is refused as foreign)."""
    return parse_replica_name(process) or (-1, -1)


def serve(spec: JobModule, workers: int, listen: str, settings: CheckpointSettings,
          spawner: WorkerSpawner | None = None, announce=sys.stdout, linger: float = 10.0,
          metrics_port: int = 0, metrics_host: str = "", parent: int | None = None, standby_workers: int = 0) -> int:
    """Run the coordinator until the job ends (plus ``linger`` s for watchers); exit code.
    ``spawner``: the local run's workers, already starting, told the address once it is
    known. ``metrics_port``/``metrics_host``: where ``/metrics`` and the web view are
    served (0: a free port; no host: the control address's). ``parent``: the pid of the
    ``segflow run`` that started this coordinator; the job is cancelled once it is gone."""
    env, _ = build_job(spec, Config(parallelism=workers))
    settings = settings.named(spec.default_name())

    def make(settings: CheckpointSettings) -> CoordinatorServicer:
        return _when_the_store_answers(lambda: CoordinatorServicer(spec, workers, env.graph, settings,
                                                                   standby_workers))
    held = HeldCalls() if settings.await_lease else None
    try:
        servicer = make(settings) if held is None else None
    except SegflowError as exc:
        return _failed(exc, announce)
    identity = identity_from_env()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=64, thread_name_prefix="control"),
                         options=GRPC_OPTIONS, interceptors=[RoleGuard(METHOD_ROLES)])
    cpb_grpc.add_CoordinatorServicer_to_server(held or servicer, server)
    health_servicer = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    host = listen.rpartition(":")[0]
    port = server.add_secure_port(listen, server_credentials(identity))
    server.start()
    health_servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    metrics = ServiceMetrics()
    if held is not None:
        shown = ShownView(StandbyView(settings, held))
    else:
        assert servicer is not None
        shown = ShownView(servicer.web_state)
    web = ObservabilityServer(metrics.registry, shown)
    try:
        metrics_address = f"{host}:{web.start(metrics_host or host, metrics_port)}"
    except SegflowError as exc:
        print(f"coordinator failed: {exc}", file=announce, flush=True)
        server.stop(grace=0)
        return 1
    if held is not None:
        print(f"coordinator standing by on {host}:{port} until cluster {settings.lease_owner!r} holds the job's "
              f"lease; web http://{metrics_address}/", file=announce, flush=True)
        if spawner is not None:
            spawner.announce(f"{host}:{port}")       # its workers register now, and wait with it
        try:
            servicer = make(await_lease(settings, held.cancelled))
        except SegflowError as exc:
            web.stop()
            server.stop(grace=0)
            return _failed(exc, announce)
        held.open(servicer)
        shown.view = servicer.web_state
    assert servicer is not None
    if servicer.checkpoints is not None:
        servicer.checkpoints.metrics = metrics.checkpoint_metrics(servicer.block_names)
    address = f"{host}:{port}"
    print(f"coordinator listening on {address} metrics {metrics_address} job {servicer.job_id} "
          f"web http://{metrics_address}/", file=announce, flush=True)
    if spawner is not None:
        servicer.spawner = spawner
        spawner.announce(address)
    threading.Thread(target=servicer.monitor, name="monitor", daemon=True).start()
    if parent is not None:
        threading.Thread(target=watch_parent, args=(parent, servicer.cancel, servicer.done),
                         name="parent-watch", daemon=True).start()
    fence = servicer.checkpoints.fence if servicer.checkpoints is not None else None
    if fence is not None:
        threading.Thread(target=fence.watch, args=(servicer.fenced, servicer.done),
                         name="lease-fence", daemon=True).start()
    try:
        servicer.done.wait()
        servicer.reported.wait(linger)
    finally:
        # The web server's loop notices a stop only every SHUTDOWN_POLL (20 ms): stopped
        # alongside the rest, it no longer adds that to the end of every local run.
        web_stopped = threading.Thread(target=web.stop, name="http-stop")
        web_stopped.start()
        if servicer.spawner is not None:
            servicer.spawner.stop_all()
        server.stop(grace=2).wait()
        servicer.remove_unfinished_checkpoints()
        web_stopped.join()
    return servicer.exit_code
