"""``segflow worker``: one process (or pod) that runs its share of a job's replicas.

Life of a worker: serve the data plane and metrics, register with the coordinator, get
the job and the worker list, plan the job exactly as every other worker does, wire its
replicas (in-memory channels to local receivers, gRPC streams to remote ones), restore
them from a checkpoint if told to, run them, report the outcome. A heartbeat stream to
the coordinator carries counters and brings back commands (checkpoint, commit, restart,
stop); if it breaks, the worker stops its replicas. After a RESTART (a recovery) the
worker registers again for the next attempt.
"""
from __future__ import annotations

import logging
import os
import pickle
import queue
import sys
import threading
import time
from concurrent import futures

import grpc
from setproctitle import getproctitle, setproctitle
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from ..checkpoint import layout
from ..checkpoint.catalog import Catalog
from ..checkpoint.protocols import CheckpointProtocol
from ..checkpoint.segment import MissingWindowPart
from ..coordinator import ADDRESS_FROM_STDIN
from ..disaster.fence import lease_fence
from ..errors import SegflowError
from ..jobs.loader import JobModule, build_job
from ..net import PROTOCOL_VERSION
from ..net.dataplane import (DATA_PLANE_ROLES, ChannelMetrics, DataPlaneServicer, Lookup, Owner, Receivers,
                             RemoteOutlet, stop_serving)
from ..net.positions import ChannelPositions
from ..net.limits import GRPC_OPTIONS, RESULTS_LIMIT, results_too_large
from ..observability.http import ObservabilityServer
from ..observability.logs import event
from ..observability.metrics import ReplicaLoad, ServiceMetrics
from ..plan.placement import ExecutionPlan, ReplicaId, Worker, plan
from ..protocols.registry import family
from ..protocols.replica_side import ReplicaSide
from ..runtime.affinity import worker_core_from_env
from ..runtime.channels import Inbox, LocalOutlet
from ..runtime.elements import FINAL_CHECKPOINT
from ..runtime.local import INBOX_CAPACITY, INBOX_RECORDS
from ..runtime.pool import ExecutorPool
from ..runtime.wiring import build_executor
from ..security.guard import RoleGuard
from ..security.identities import Role
from ..security.identity_env import identity_from_env
from ..security.tls import secure_channel, server_credentials
from ..settings import CheckpointSettings, Config
from ..state import open_backend
from ..state.sealing import TamperedState
from ..v1 import control_pb2 as cpb
from ..v1 import control_pb2_grpc as cpb_grpc
from ..v1 import data_pb2 as dpb
from ..v1 import data_pb2_grpc as dpb_grpc
from .agent import CheckpointAgent
from .follower import Follower
from .restore import restore_attempt

log = logging.getLogger("segflow.worker")

STOP_GRACE = 5.0      # seconds a stopping worker gives peers' streams to end (see stop_serving)

RESTART, DONE, FAILED = "restart", "done", "failed"


class _NetworkCounters(ChannelMetrics):
    def __init__(self, metrics: ServiceMetrics):
        self.metrics = metrics

    def received(self, hello, records: int, size: int) -> None:
        labels = (str(hello.dst_block), str(hello.dst_input))
        self.metrics.records_received.labels(*labels).inc(records)
        self.metrics.bytes_received.labels(*labels).inc(size)


class Attempt:
    """Everything one attempt of the job owns on this worker."""

    def __init__(self, assignment: cpb.Assignment, worker: str):
        self.assignment = assignment
        self.cancel = threading.Event()
        self.over = threading.Event()          # the attempt's heartbeat may stop
        self.committed = threading.Event()     # the job's end was committed
        self.restart = threading.Event()       # the coordinator asked for the next attempt
        self.told = threading.Event()          # committed, or stopped, restarted or cut off by the coordinator
        self.stop_reason = ""
        self.stopped = False                   # the coordinator ended the job: no restart will come
        self.executors: dict = {}
        self.loads: dict[ReplicaId, ReplicaLoad] = {}
        self.inboxes: dict[ReplicaId, Inbox] = {}
        self.outlets: list[RemoteOutlet] = []
        self.results: dict[int, list] = {}
        self.results_lock = threading.Lock()
        self.agent: CheckpointAgent | None = None
        self.pool: ExecutorPool | None = None
        self.slot = assignment.slot or worker      # the name the plan places its replicas under
        self.execution: ExecutionPlan | None = None     # its plan, once wired
        self.rewiring = threading.Condition()      # rewires in flight (``WorkerService._rewire``)
        self.rewires = 0
        self.rewire_order = threading.Lock()       # one rewire at a time, the newest attempt's last
        self.rewired_to = 0
        self.damaged = ""                          # a stored key a rewire's replay found missing or damaged
        self.positions = ChannelPositions()        # what each inbound channel delivered (net.positions)
        self.lookup: Lookup | None = None          # where inbound channels deliver, once wired

    @property
    def protocol(self) -> CheckpointProtocol:
        return CheckpointProtocol.parse(self.assignment.checkpointing.protocol or "none")

    @property
    def two_phase(self) -> bool:
        return self.protocol.enabled

    def settled(self) -> bool:
        """No connector waits for a rewire or replays (call with ``rewiring`` held)."""
        return self.rewires == 0 and not any(ex.checkpointing is not None and ex.checkpointing.detached()
                                             for ex in self.executors.values())

    def inbox_depth(self, replica: ReplicaId) -> int:
        """Elements waiting for ``replica`` (a source has no inbox)."""
        inbox = self.inboxes.get(replica)
        return len(inbox) if inbox is not None else 0


def _owner(execution: ExecutionPlan, identities: dict[str, str]) -> Owner:
    """Who may open a channel from a replica: the identity of the worker that runs its slot."""
    return lambda block, index: identities.get(execution.placement.get(ReplicaId(block, index), ""))


def damaged_key(attempt: Attempt, error: SegflowError) -> str:
    """The stored key a replay or restore found missing or damaged ("": the error is of
    another kind): the worker reports it, and the coordinator recovers without it."""
    if isinstance(error, TamperedState):
        return error.key
    if isinstance(error, MissingWindowPart):
        return layout.window_key(attempt.assignment.checkpointing.job_name, *error.part)
    return ""


class WorkerService:
    def __init__(self, name: str, coordinator: str, host: str = "127.0.0.1", slots: int = 1,
                 metrics_port: int = 0, metrics_host: str = "", standby: bool = False, await_lease: bool = False,
                 follow: CheckpointSettings | None = None):
        self.name = name
        self.standby = standby      # registers as a standby until an assignment gives it a slot
        self.await_lease = await_lease      # its registration may wait for the cluster to take the job's lease
        self.coordinator = coordinator
        self.host = host
        self.slots = slots
        self.metrics_port = metrics_port
        self.metrics_host = metrics_host or host    # where it binds; it is reached at ``host``
        self.identity = identity_from_env()
        self.metrics = ServiceMetrics()
        self.receivers = Receivers(job_id="")
        self.peers: dict[str, grpc.Channel] = {}
        self.current: Attempt | None = None
        self.metrics.watch_executors(self._snapshot)
        self.follower = Follower(follow) if follow is not None else None   # a hot standby's, until it takes over
        if self.follower is not None:
            self.follower.register(self.metrics.registry)

    # ------------------------------------------------------------------ serving
    def _serve(self) -> str:
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=512, thread_name_prefix="dataplane"),
                                  options=GRPC_OPTIONS, interceptors=[RoleGuard(DATA_PLANE_ROLES)])
        dpb_grpc.add_DataPlaneServicer_to_server(
            DataPlaneServicer(self.receivers, _NetworkCounters(self.metrics)), self.server)
        self.health = health.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        port = self.server.add_secure_port(f"{self.host}:0", server_credentials(self.identity))
        self.server.start()
        self.health.set("", health_pb2.HealthCheckResponse.NOT_SERVING)
        return f"{self.host}:{port}"

    def run(self) -> int:
        self.data_address = self._serve()
        try:
            port = ObservabilityServer(self.metrics.registry).start(self.metrics_host, self.metrics_port)
            self.metrics_address = f"{self.host}:{port}"
            coordinator = self._coordinator_address()
            if coordinator is None:
                return 2
            print(f"segflow worker {self.name}: data plane on {self.data_address}, metrics on "
                  f"http://{self.metrics_address}/metrics", flush=True)
            self.control = cpb_grpc.CoordinatorStub(secure_channel(coordinator, self.identity, Role.COORDINATOR,
                                                                       GRPC_OPTIONS))
            if self.follower is not None:
                self.follower.start()
            while True:
                assignment = self._register()
                if assignment is None:
                    return 2
                if not assignment.job_id:
                    print(f"segflow worker {self.name}: the job ended while it stood by", flush=True)
                    return 0
                outcome = self._attempt(assignment)
                if outcome != RESTART:
                    return 0 if outcome == DONE else 1
                event(log, logging.WARNING, "restarting for the next attempt", worker=self.name)
        finally:
            if self.follower is not None:
                self.follower.stop()
            stop_serving(self.server, self.receivers, STOP_GRACE)

    def _coordinator_address(self) -> str | None:
        """Where the coordinator listens. A worker a local coordinator forked before it
        listened (``-``) reads it from stdin, with its own servers up already: they took
        about 10 ms, which no longer lie between the coordinator listening and the worker
        registering. It says where it serves only then: its stdout is the coordinator's,
        whose first line tells ``segflow run`` the address. None (said why) when the
        coordinator ended first."""
        if self.coordinator != ADDRESS_FROM_STDIN:
            return self.coordinator
        address = sys.stdin.readline().strip()
        if not address:
            print(f"segflow worker {self.name}: the coordinator exited before it told its address", flush=True)
            return None
        return address

    def _register(self) -> cpb.Assignment | None:
        """The next attempt's assignment (one without a job id: the job ended while this
        worker stood by), or None when registering failed. A standby's call stays open until
        a recovery takes it, however long that is: its servers, imports and certificate are
        ready meanwhile; so is a warm standby cluster's worker's, until its cluster takes the
        job's lease."""
        request = cpb.RegisterRequest(protocol_version=PROTOCOL_VERSION, worker=self.name,
                                      data_address=self.data_address, metrics_address=self.metrics_address,
                                      slots=self.slots, pid=os.getpid(), standby=self.standby)
        if self.standby:
            print(f"segflow worker {self.name}: standing by", flush=True)
        patient = self.standby or self.await_lease
        deadline = time.monotonic() + 120
        while True:
            try:
                assignment = self.control.Register(request, timeout=None if patient else 120)
                event(log, logging.INFO, "registered", worker=self.name, attempt=assignment.attempt,
                      slot=assignment.slot)
                if self.standby and assignment.job_id:
                    self.standby = False
                    title = getproctitle().replace(" --standby", "")
                    setproctitle(f"{title} (standby, took over {assignment.slot})")    # ps shows whose work it does
                return assignment
            except grpc.RpcError as exc:
                retry = exc.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.ABORTED)
                if not retry or (time.monotonic() > deadline and not self.await_lease):
                    print(f"segflow worker {self.name}: registration failed: {exc.details()}", flush=True)
                    return None
                time.sleep(0.2)

    # ----------------------------------------------------------------- attempts
    def _attempt(self, assignment: cpb.Assignment) -> str:
        attempt = self.current = Attempt(assignment, self.name)
        ok, error, peer_failure, tampered = True, "", False, ""
        try:
            self._start(attempt).wait()
            self._await_rewires(attempt)
            for outlet in attempt.outlets:
                outlet.close()
            if not attempt.cancel.is_set():
                for outlet in attempt.outlets:
                    outlet.wait_closed(timeout=30)
        except ConnectionError as exc:
            ok, error, peer_failure = False, f"worker {self.name}: {exc}", True
        except (TamperedState, MissingWindowPart) as exc:
            ok, error, tampered = False, str(exc), damaged_key(attempt, exc)
        except SegflowError as exc:
            ok, error = False, str(exc)
        except Exception as exc:  # noqa: BLE001 - reported to the coordinator, then logged
            ok, error = False, f"worker {self.name}: {type(exc).__name__}: {exc}"
            log.exception("worker failed")
        if attempt.damaged:      # a rewire's replay lacked a stored part: the coordinator recovers without it
            ok, error, tampered, peer_failure = False, attempt.stop_reason, attempt.damaged, False
        elif attempt.cancel.is_set() and ok:
            ok, error = False, attempt.stop_reason or "stopped"
        if attempt.pool is not None and attempt.pool.errors and \
                all(isinstance(e, ConnectionError) for e in attempt.pool.errors):
            peer_failure = True
        try:
            if attempt.restart.is_set():
                return RESTART
            if not ok:
                self._finish(attempt, ok=False, error=error, peer_failure=peer_failure, tampered=tampered)
                return RESTART if not attempt.stopped and self._wait_for_restart(attempt) else FAILED
            if attempt.two_phase:
                self._finish(attempt, ok=True, committed=False)
                attempt.told.wait()
                if not attempt.committed.is_set():
                    return RESTART if attempt.restart.is_set() else FAILED
            self._finish(attempt, ok=True, committed=True)
            return DONE
        finally:
            attempt.cancel.set()
            attempt.over.set()
            if attempt.agent is not None:
                attempt.agent.close()

    def _await_rewires(self, attempt: Attempt, seconds: float = 60.0) -> None:
        """Its replicas are done, but a connector whose receivers a regional recovery
        restarted still owes them its window: its channels end only after the replay."""
        deadline = time.monotonic() + seconds
        with attempt.rewiring:
            while not (attempt.settled() or attempt.cancel.is_set()):
                if time.monotonic() > deadline:
                    raise ConnectionError(f"worker {self.name}: the restarted receivers of its connectors were "
                                          f"not rewired within {seconds:.0f} s")
                attempt.rewiring.wait(0.05)

    def _wait_for_restart(self, attempt: Attempt, seconds: float = 5.0) -> bool:
        """After a failure, a recovering coordinator may still ask for a restart."""
        return attempt.restart.wait(seconds)

    def _finish(self, attempt: Attempt, ok: bool, error: str = "", peer_failure: bool = False,
                committed: bool = True, tampered: str = "") -> None:
        results = pickle.dumps(attempt.results, protocol=5) if ok and committed else b""
        if len(results) > RESULTS_LIMIT:
            ok, error, results = False, results_too_large(len(results)), b""
        try:
            self.control.Finish(cpb.WorkerFinished(
                worker=self.name, ok=ok, error=error, peer_failure=peer_failure, status=self._status(attempt),
                results=results, committed=committed, tampered_key=tampered), timeout=30)
        except grpc.RpcError as exc:
            event(log, logging.WARNING, "could not report to the coordinator", error=str(exc.details()))

    # ------------------------------------------------------------------ wiring
    def _start(self, attempt: Attempt) -> ExecutorPool:
        assignment = attempt.assignment
        spec = JobModule(assignment.job.target, assignment.job.function or "build", dict(assignment.job.params))
        workers = [Worker(w.name, w.slots) for w in assignment.workers]
        addresses = {w.name: w.data_address for w in assignment.workers}
        identities = {w.name: w.identity or w.name for w in assignment.workers}
        env, _ = build_job(spec, Config(parallelism=sum(w.slots for w in workers)))
        execution = attempt.execution = plan(env.graph, workers, dict(assignment.pinned_replicas),
                                             [tuple(group.blocks) for group in assignment.placement_groups])
        mine = [r for r in execution.all_replicas() if execution.placement[r] == attempt.slot]
        graph = execution.graph
        cancel = attempt.cancel
        for replica in mine:
            if not graph.blocks[replica.block].is_source:
                attempt.inboxes[replica] = Inbox(INBOX_CAPACITY, cancel, INBOX_RECORDS)
        feedback_inputs = {(e.dst, e.dst_input) for e in graph.edges if e.feedback}

        def lookup(block: int, index: int, input_index: int):
            inbox = attempt.inboxes.get(ReplicaId(block, index))
            if inbox is None:
                return None
            return inbox, (block, input_index) not in feedback_inputs

        def deliver(sink_id: int, items: list) -> None:
            with attempt.results_lock:
                attempt.results.setdefault(sink_id, []).extend(items)

        side = family(attempt.protocol).replica(assignment.checkpointing, execution, mine, assignment.attempt) \
            if attempt.two_phase else None
        for replica in mine:
            final = not graph.outputs_of(replica.block)
            load = attempt.loads[replica] = self.metrics.replica_load(replica.block, graph.blocks[replica.block].name,
                                                                      final)

            def outlet_for(edge, destination: int, replica=replica):
                outlet = self._outlet(attempt, execution, addresses, replica, edge, destination)
                return outlet if side is None else side.outlet(replica, edge, destination, outlet)
            executor = build_executor(execution, replica, attempt.inboxes.get(replica), outlet_for, deliver, cancel,
                                      transactional=attempt.two_phase, restored_from=assignment.restore_checkpoint)
            if final:
                executor.on_sink_batch = load.reached_sink
            attempt.executors[replica] = executor
        if side is not None:
            self._enable_checkpoints(attempt, execution, side)
        attempt.lookup = lookup
        self.receivers.ready(assignment.job_id, lookup, _owner(execution, identities), attempt.positions)
        attempt.pool = ExecutorPool(attempt.executors, cancel,
                                    on_done=attempt.agent.replica_done if attempt.agent else None,
                                    core=worker_core_from_env())
        threading.Thread(target=self._heartbeat, args=(attempt,), name="heartbeat", daemon=True).start()
        self.health.set("", health_pb2.HealthCheckResponse.SERVING)
        attempt.pool.start()
        return attempt.pool

    def _outlet(self, attempt: Attempt, execution, addresses: dict, replica: ReplicaId, edge, destination: int,
                job_id: str = ""):
        """Where ``replica`` sends on ``edge`` to replica ``destination``: an inbox here, or
        a gRPC stream to the worker that owns it. ``job_id``: the receiver's attempt
        (default: this one's; a regional recovery's rewire names the restarted one's)."""
        target = ReplicaId(edge.dst, destination)
        owner = execution.placement[target]
        if owner == attempt.slot:
            return LocalOutlet(attempt.inboxes[target], edge.dst_input, replica.index, blocking=not edge.feedback)
        hello = dpb.ChannelHello(protocol_version=PROTOCOL_VERSION, job_id=job_id or attempt.assignment.job_id,
                                 src_block=replica.block, src_replica=replica.index,
                                 dst_block=edge.dst, dst_replica=destination, dst_input=edge.dst_input)
        outlet = RemoteOutlet(self._peer(addresses[owner]), hello, attempt.cancel,
                              on_blocked=attempt.loads[replica].blocked)
        attempt.outlets.append(outlet)
        return outlet

    def _rewire(self, attempt: Attempt, rewire: cpb.Rewire) -> None:
        """A regional recovery kept this worker running: its replicas join attempt
        ``rewire.attempt`` as they are, and each connector replays its pending window into
        the restarted consumers named, on new channels, then goes on live (on a thread of
        its own: a replay waits for the receivers, the heartbeat's commands must not)."""
        addresses = {w.name: w.data_address for w in rewire.workers}
        try:
            with attempt.rewire_order:
                if rewire.attempt > attempt.rewired_to:
                    attempt.rewired_to = rewire.attempt
                    self._replay_into(attempt, rewire, addresses)
        except SegflowError as exc:
            attempt.stop_reason = str(exc)
            attempt.damaged = damaged_key(attempt, exc)
            event(log, logging.ERROR, "rewire failed", worker=self.name, error=str(exc), damaged=attempt.damaged)
            attempt.cancel.set()
        finally:
            with attempt.rewiring:
                attempt.rewires -= 1
                attempt.rewiring.notify_all()

    def _replay_into(self, attempt: Attempt, rewire: cpb.Rewire, addresses: dict[str, str]) -> None:
        """Rewire's work: the kept consumers' skips, then the connectors' replays, on new
        channels; the old ones end."""
        if attempt.agent is not None:
            attempt.agent.attempt = rewire.attempt
        self._join(attempt, rewire)
        for replay in rewire.replays:
            for rid, executor in attempt.executors.items():
                if rid.block != replay.connector or executor.checkpointing is None:
                    continue
                replaced = executor.checkpointing.rewire(
                    replay.successor, lambda edge, d, rid=rid: self._outlet(
                        attempt, attempt.execution, addresses, rid, edge, d, rewire.job_id), replay.first,
                    replay.last)
                for old in replaced:
                    if isinstance(old, RemoteOutlet) and old in attempt.outlets:
                        attempt.outlets.remove(old)
                        old.close()
        event(log, logging.WARNING, "rewired", worker=self.name, attempt=rewire.attempt,
              replays={f"{r.connector}>{r.successor}": r.first for r in rewire.replays})

    def _join(self, attempt: Attempt, rewire: cpb.Rewire) -> None:
        """This kept worker's inbound channels join attempt ``rewire.job_id``: a restarted
        block that replays exactly sends to its kept consumers here again, and each of their
        channels from it skips what it took after the block's version (``net.positions``);
        the restarted replicas' connections are accepted from where they run now."""
        skipped = {}
        for skip in rewire.skips:
            skipped.update(attempt.positions.resend(skip.producer, skip.consumer, skip.version, rewire.job_id))
        assert attempt.lookup is not None and attempt.execution is not None, "a rewire follows the wiring"
        identities = {w.name: w.identity or w.name for w in rewire.workers}
        self.receivers.ready(rewire.job_id, attempt.lookup, _owner(attempt.execution, identities), attempt.positions)
        if skipped:
            event(log, logging.WARNING, "skipping what restarted senders send again", worker=self.name,
                  attempt=rewire.attempt, skips={"b{}.r{}>b{}.r{}:{}".format(*key): n for key, n in skipped.items()})

    def _enable_checkpoints(self, attempt: Attempt, execution, side: ReplicaSide) -> None:
        """Give every replica its protocol's hooks, then restore what the assignment asks for."""
        checkpointing = attempt.assignment.checkpointing
        started = time.monotonic()
        followed = self.follower.take(checkpointing) if self.follower is not None else None
        self.follower = None                # a hot standby follows until its first assignment, once
        catalog = followed or Catalog(open_backend(checkpointing.state_url, checkpointing.s3_endpoint or None),
                                      checkpointing.job_name)
        fence = lease_fence(catalog.backend, checkpointing.state_url, checkpointing.job_name,
                            checkpointing.lease_owner, checkpointing.lease_generation)
        attempt.agent = CheckpointAgent(self.name, attempt.assignment.attempt, catalog, self.control,
                                        attempt.executors, fence)
        for rid, executor in attempt.executors.items():
            executor.checkpointing = side.checkpointing(rid, executor, attempt.agent)
        restore_attempt(self.name, attempt, catalog, execution)
        if followed is not None:
            followed.forget()
        if attempt.assignment.restore_checkpoint or attempt.assignment.WhichOneof("recovery"):
            event(log, logging.WARNING, "restore step", worker=self.name, seconds=round(time.monotonic() - started, 4),
                  followed=followed.followed if followed else 0, store_reads=followed.reads if followed else None)

    def _peer(self, address: str) -> grpc.Channel:
        channel = self.peers.get(address)
        if channel is None:
            channel = self.peers[address] = secure_channel(address, self.identity, Role.WORKER, GRPC_OPTIONS)
        return channel

    # ---------------------------------------------------------------- heartbeat
    def _status(self, attempt: Attempt) -> cpb.WorkerStatus:
        replicas = []
        for r, ex in list(attempt.executors.items()):
            load = attempt.loads[r]
            replicas.append(cpb.ReplicaCounters(block=r.block, replica=r.index, records_in=ex.records_in,
                                                records_out=ex.router.records_out, inbox=attempt.inbox_depth(r),
                                                blocked_seconds=load.blocked_seconds,
                                                latency_seconds=load.latency_seconds,
                                                barrier_seconds=ex.barrier_seconds))
        return cpb.WorkerStatus(worker=self.name, replicas=replicas)

    def _heartbeat(self, attempt: Attempt) -> None:
        every = attempt.assignment.heartbeat_seconds or 0.5
        outgoing: queue.Queue = queue.Queue()

        def statuses():
            while True:
                item = outgoing.get()
                if item is None:
                    return
                yield item

        def ticker():
            while not attempt.over.is_set():
                outgoing.put(self._status(attempt))
                attempt.over.wait(every)
            outgoing.put(None)

        threading.Thread(target=ticker, name="heartbeat-ticker", daemon=True).start()
        try:
            for command in self.control.Heartbeat(statuses()):
                self._command(attempt, command)
        except grpc.RpcError as exc:
            if not attempt.over.is_set():
                attempt.stop_reason = f"lost the coordinator: {exc.details()}"
                event(log, logging.ERROR, "lost the coordinator", error=str(exc.details()))
                attempt.cancel.set()
        finally:
            attempt.told.set()          # the stream has ended: nothing more will be told

    def _command(self, attempt: Attempt, command: cpb.Command) -> None:
        kind = command.kind
        if kind == cpb.Command.STOP:
            attempt.stop_reason = command.reason or "stopped by the coordinator"
            attempt.stopped = True
            event(log, logging.WARNING, "stopping", reason=attempt.stop_reason)
            attempt.cancel.set()
            attempt.told.set()
        elif kind == cpb.Command.RESTART:
            attempt.restart.set()
            attempt.cancel.set()
            attempt.told.set()
        elif kind == cpb.Command.REWIRE:
            with attempt.rewiring:
                attempt.rewires += 1
            threading.Thread(target=self._rewire, args=(attempt, command.rewire), name="rewire", daemon=True).start()
        elif kind == cpb.Command.CHECKPOINT and attempt.agent is not None:
            attempt.agent.checkpoint(command.checkpoint_id)
        elif kind == cpb.Command.CHECKPOINT_COMPLETE and attempt.agent is not None:
            attempt.agent.complete(command.checkpoint_id, command.process)
            attempt.positions.forget_through(command.checkpoint_id)
            if command.checkpoint_id == FINAL_CHECKPOINT:
                attempt.committed.set()
                attempt.told.set()

    def _snapshot(self):
        attempt = self.current
        if attempt is None:
            return
        for r, ex in list(attempt.executors.items()):
            load = attempt.loads[r]
            yield {
                "block": r.block, "operator": load.operator, "replica": r.index,
                "records_in": ex.records_in, "blocked_seconds": load.blocked_seconds, "inbox": attempt.inbox_depth(r),
                "barrier_seconds": ex.barrier_seconds,
                "window_parts_spilled": ex.checkpointing.window_parts_spilled() if ex.checkpointing else 0,
                "edges": [{"to_block": to_block, "records": s.records_out, "batches": s.batches_out,
                           "bytes": sum(getattr(o, "bytes_sent", 0) for o in s.outlets)}
                          for to_block, s in ex.router.by_destination()],
            }
