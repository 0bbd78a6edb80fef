"""``segflow coordinator``: the gRPC face of :class:`JobState`, one per job."""
from __future__ import annotations

import logging
import pickle
import queue
import sys
import threading
import time
import uuid
from concurrent import futures

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from ..api.environment import Config
from ..jobs.loader import JobSpec, build_job
from ..net import PROTOCOL_VERSION
from ..observability.logs import event
from ..observability.metrics import ServiceMetrics
from ..v1 import control_pb2 as cpb
from ..v1 import control_pb2_grpc as cpb_grpc
from .state import JobState, Phase, RegistrationError

log = logging.getLogger("segflow.coordinator")

HEARTBEAT_SECONDS = 0.5
HEARTBEAT_TIMEOUT = 3.0

_PHASES = {Phase.WAITING_FOR_WORKERS: cpb.JobUpdate.WAITING_FOR_WORKERS, Phase.RUNNING: cpb.JobUpdate.RUNNING,
           Phase.SUCCEEDED: cpb.JobUpdate.SUCCEEDED, Phase.FAILED: cpb.JobUpdate.FAILED}


class CoordinatorServicer(cpb_grpc.CoordinatorServicer):
    def __init__(self, spec: JobSpec, workers: int, block_names: dict[int, str]):
        self.spec = spec
        self.job_id = uuid.uuid4().hex[:12]
        self.state = JobState(workers, HEARTBEAT_TIMEOUT)
        self.block_names = block_names
        self.lock = threading.Condition()
        self.commands: dict[str, queue.Queue] = {}
        self.done = threading.Event()
        self.reported = threading.Event()   # a watcher has received the outcome

    # -- helpers (call with the lock held)
    def _changed(self) -> None:
        if self.state.over and not self.done.is_set():
            if self.state.phase is Phase.FAILED:
                event(log, logging.ERROR, "job failed", error=self.state.error)
                for q in self.commands.values():
                    q.put(cpb.Command(kind=cpb.Command.STOP, reason=self.state.error))
            else:
                event(log, logging.INFO, "job succeeded")
            self.done.set()
        self.lock.notify_all()

    def assignment(self) -> cpb.Assignment:
        workers = sorted(self.state.workers.values(), key=lambda w: w.name)
        return cpb.Assignment(
            protocol_version=PROTOCOL_VERSION, job_id=self.job_id,
            job=cpb.JobSpec(target=self.spec.target, function=self.spec.function, params=self.spec.params),
            workers=[cpb.WorkerInfo(name=w.name, data_address=w.data_address, slots=w.slots) for w in workers],
            heartbeat_seconds=HEARTBEAT_SECONDS)

    # -- RPCs
    def Register(self, request, context):
        if request.protocol_version != PROTOCOL_VERSION:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION,
                          f"incompatible protocol version {request.protocol_version}: the coordinator "
                          f"speaks version {PROTOCOL_VERSION}; run the same segflow on every worker")
        with self.lock:
            try:
                self.state.register(request.worker, request.data_address, request.metrics_address,
                                    request.slots or 1, request.pid, time.monotonic())
            except RegistrationError as exc:
                context.abort(grpc.StatusCode.FAILED_PRECONDITION, str(exc))
            self.commands[request.worker] = queue.Queue()
            event(log, logging.INFO, "worker registered", worker=request.worker, data=request.data_address)
            self._changed()
            while self.state.phase is Phase.WAITING_FOR_WORKERS:
                self.lock.wait(0.5)
                if not context.is_active():
                    return cpb.Assignment()
            if self.state.over:
                context.abort(grpc.StatusCode.ABORTED, f"the job is over: {self.state.error}")
            return self.assignment()

    def Heartbeat(self, request_iterator, context):
        name_box: list[str] = []
        stop = threading.Event()

        def read():
            try:
                for status in request_iterator:
                    if not name_box:
                        name_box.append(status.worker)
                    counters = {(r.block, r.replica): r.records_in for r in status.replicas}
                    with self.lock:
                        self.state.heartbeat(status.worker, counters, time.monotonic())
                        self._changed()
            except grpc.RpcError:
                pass
            finally:
                stop.set()
                if name_box:
                    with self.lock:
                        self.state.lost(name_box[0], "its heartbeat stream broke (process gone?)", time.monotonic())
                        self._changed()

        threading.Thread(target=read, name="heartbeat-reader", daemon=True).start()
        while not stop.is_set() and context.is_active():
            q = self.commands.get(name_box[0]) if name_box else None
            if q is None:
                time.sleep(0.05)
                continue
            try:
                yield q.get(timeout=0.2)
            except queue.Empty:
                continue

    def Finish(self, request, context):
        results = pickle.loads(request.results) if request.results else {}
        counters = {(r.block, r.replica): r.records_in for r in request.status.replicas}
        with self.lock:
            self.state.heartbeat(request.worker, counters, time.monotonic())
            self.state.finished(request.worker, request.ok, request.error, request.peer_failure, results,
                                time.monotonic())
            self._changed()
        return cpb.Ack()

    def Cancel(self, request, context):
        with self.lock:
            self.state.fail(f"cancelled: {request.reason or 'by the caller'}", time.monotonic())
            self._changed()
        return cpb.Ack()

    def _update(self) -> cpb.JobUpdate:
        state = self.state
        update = cpb.JobUpdate(phase=_PHASES[state.phase], error=state.error, blocks=[
            cpb.BlockProgress(block=b, name=self.block_names.get(b, ""), records_in=n)
            for b, n in sorted(state.progress().items())])
        if state.started_at is not None:
            update.seconds = (state.ended_at or time.monotonic()) - state.started_at
        if state.phase is Phase.SUCCEEDED:
            update.results = pickle.dumps(state.results, protocol=5)
        return update

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
        while not self.done.is_set():
            time.sleep(0.25)
            with self.lock:
                self.state.check(time.monotonic())
                self._changed()


def serve(spec: JobSpec, workers: int, listen: str, announce=sys.stdout, linger: float = 10.0) -> int:
    """Run the coordinator until the job ends (plus ``linger`` s for watchers); exit code."""
    env, _ = build_job(spec, Config(parallelism=workers))
    names = {b.id: (b.operators[0].name if b.operators else "pass") for b in env.graph.blocks}
    servicer = CoordinatorServicer(spec, workers, names)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=64, thread_name_prefix="control"))
    cpb_grpc.add_CoordinatorServicer_to_server(servicer, server)
    health_servicer = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    host = listen.rpartition(":")[0]
    port = server.add_insecure_port(listen)
    server.start()
    health_servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    metrics = ServiceMetrics()
    metrics_address = metrics.serve(host)
    print(f"coordinator listening on {host}:{port} metrics {metrics_address} job {servicer.job_id}",
          file=announce, flush=True)
    threading.Thread(target=servicer.monitor, name="monitor", daemon=True).start()
    servicer.done.wait()
    servicer.reported.wait(linger)
    server.stop(grace=2).wait()
    return 0 if servicer.state.phase is Phase.SUCCEEDED else 1
