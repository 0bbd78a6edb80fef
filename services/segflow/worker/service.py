"""``segflow worker``: one process (or pod) that runs its share of a job's replicas.

Life of a worker: serve the data plane and metrics, register with the coordinator, get
the job and the worker list, plan the job exactly as every other worker does, wire its
replicas (in-memory channels to local receivers, gRPC streams to remote ones), run them,
report the outcome, exit. A heartbeat stream to the coordinator carries counters and
brings back commands; if it breaks, the worker stops its replicas and exits.
"""
from __future__ import annotations

import logging
import pickle
import queue
import threading
import time
from concurrent import futures

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from ..api.environment import Config
from ..errors import SegflowError
from ..jobs.loader import JobSpec, build_job
from ..net import PROTOCOL_VERSION
from ..net.dataplane import GRPC_OPTIONS, ChannelMetrics, DataPlaneServicer, Receivers, RemoteOutlet
from ..observability.logs import event
from ..observability.metrics import ServiceMetrics
from ..plan.placement import ReplicaId, Worker, plan
from ..runtime.channels import Cancelled, Inbox, LocalOutlet
from ..runtime.local import INBOX_CAPACITY
from ..runtime.pool import ExecutorPool
from ..runtime.wiring import build_executor
from ..v1 import control_pb2 as cpb
from ..v1 import control_pb2_grpc as cpb_grpc
from ..v1 import data_pb2 as dpb
from ..v1 import data_pb2_grpc as dpb_grpc

log = logging.getLogger("segflow.worker")


class _NetworkCounters(ChannelMetrics):
    def __init__(self, metrics: ServiceMetrics):
        self.metrics = metrics

    def received(self, hello, records: int, size: int) -> None:
        labels = (str(hello.dst_block), str(hello.dst_input))
        self.metrics.records_received.labels(*labels).inc(records)
        self.metrics.bytes_received.labels(*labels).inc(size)


class WorkerService:
    def __init__(self, name: str, coordinator: str, host: str = "127.0.0.1", slots: int = 1):
        self.name = name
        self.coordinator = coordinator
        self.host = host
        self.slots = slots
        self.cancel = threading.Event()
        self.metrics = ServiceMetrics()
        self.receivers = Receivers(job_id="")
        self.executors: dict = {}
        self.inboxes: dict[ReplicaId, Inbox] = {}
        self.outlets: list[RemoteOutlet] = []
        self.peers: dict[str, grpc.Channel] = {}
        self.results: dict[int, list] = {}
        self.results_lock = threading.Lock()
        self.stop_reason = ""

    # ------------------------------------------------------------------ serving
    def _serve(self) -> str:
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=512, thread_name_prefix="dataplane"),
                                  options=GRPC_OPTIONS)
        dpb_grpc.add_DataPlaneServicer_to_server(
            DataPlaneServicer(self.receivers, _NetworkCounters(self.metrics)), self.server)
        self.health = health.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        port = self.server.add_insecure_port(f"{self.host}:0")
        self.server.start()
        self.health.set("", health_pb2.HealthCheckResponse.NOT_SERVING)
        return f"{self.host}:{port}"

    def run(self) -> int:
        data_address = self._serve()
        metrics_address = self.metrics.serve(self.host)
        control = grpc.insecure_channel(self.coordinator)
        self.control = cpb_grpc.CoordinatorStub(control)
        try:
            assignment = self.control.Register(cpb.RegisterRequest(
                protocol_version=PROTOCOL_VERSION, worker=self.name, data_address=data_address,
                metrics_address=metrics_address, slots=self.slots, pid=_pid()), timeout=120)
        except grpc.RpcError as exc:
            event(log, logging.ERROR, "registration refused", worker=self.name, error=exc.details())
            print(f"segflow worker {self.name}: registration failed: {exc.details()}", flush=True)
            return 2
        event(log, logging.INFO, "registered", worker=self.name, data=data_address, metrics=metrics_address)
        ok, error, peer_failure = True, "", False
        try:
            self._start(assignment)
            self.pool.wait()
            for outlet in self.outlets:
                outlet.wait_closed(timeout=30)
        except Cancelled:
            ok, error = False, self.stop_reason or "stopped"
        except ConnectionError as exc:
            ok, error, peer_failure = False, f"worker {self.name}: {exc}", True
        except SegflowError as exc:
            ok, error = False, str(exc)
        except Exception as exc:  # noqa: BLE001 - reported to the coordinator, then logged
            ok, error = False, f"worker {self.name}: {type(exc).__name__}: {exc}"
            log.exception("worker failed")
        finally:
            self.cancel.set()
        if not ok and self.pool_errors_are_network():
            peer_failure = True
        try:
            self.control.Finish(cpb.WorkerFinished(
                worker=self.name, ok=ok, error=error, peer_failure=peer_failure, status=self._status(),
                results=pickle.dumps(self.results, protocol=5) if ok else b""), timeout=30)
        except grpc.RpcError as exc:
            event(log, logging.WARNING, "could not report to the coordinator", error=str(exc.details()))
        self.server.stop(grace=1)
        return 0 if ok else 1

    def pool_errors_are_network(self) -> bool:
        pool = getattr(self, "pool", None)
        return bool(pool and pool.errors and all(isinstance(e, ConnectionError) for e in pool.errors))

    # ------------------------------------------------------------------ wiring
    def _start(self, assignment: cpb.Assignment) -> None:
        spec = JobSpec(assignment.job.target, assignment.job.function or "build", dict(assignment.job.params))
        workers = [Worker(w.name, w.slots) for w in assignment.workers]
        addresses = {w.name: w.data_address for w in assignment.workers}
        env, _ = build_job(spec, Config(parallelism=sum(w.slots for w in workers)))
        execution = plan(env.graph, workers)
        mine = [r for r in execution.all_replicas() if execution.placement[r] == self.name]
        graph = execution.graph
        for replica in mine:
            if not graph.blocks[replica.block].is_source:
                self.inboxes[replica] = Inbox(INBOX_CAPACITY, self.cancel)
        feedback_inputs = {(e.dst, e.dst_input) for e in graph.edges if e.feedback}

        def lookup(block: int, index: int, input_index: int):
            inbox = self.inboxes.get(ReplicaId(block, index))
            if inbox is None:
                return None
            return inbox, (block, input_index) not in feedback_inputs

        def deliver(sink_id: int, items: list) -> None:
            with self.results_lock:
                self.results.setdefault(sink_id, []).extend(items)

        for replica in mine:
            def outlet_for(edge, destination: int, replica=replica):
                target = ReplicaId(edge.dst, destination)
                owner = execution.placement[target]
                if owner == self.name:
                    return LocalOutlet(self.inboxes[target], edge.dst_input, replica.index,
                                       blocking=not edge.feedback)
                hello = dpb.ChannelHello(protocol_version=PROTOCOL_VERSION, job_id=assignment.job_id,
                                         src_block=replica.block, src_replica=replica.index,
                                         dst_block=edge.dst, dst_replica=destination, dst_input=edge.dst_input)
                outlet = RemoteOutlet(self._peer(addresses[owner]), hello, self.cancel,
                                      on_blocked=self.metrics.backpressure.inc)
                self.outlets.append(outlet)
                return outlet
            executor = build_executor(execution, replica, self.inboxes.get(replica), outlet_for, deliver,
                                      self.cancel)
            if not graph.outputs_of(replica.block):
                executor.on_sink_batch = self.metrics.latency.observe
            self.executors[replica] = executor
        self.receivers.ready(assignment.job_id, lookup)
        self.metrics.watch_executors(self._snapshot)
        self.pool = ExecutorPool(self.executors, self.cancel)
        threading.Thread(target=self._heartbeat, args=(assignment.heartbeat_seconds or 0.5,),
                         name="heartbeat", daemon=True).start()
        self.health.set("", health_pb2.HealthCheckResponse.SERVING)
        self.pool.start()

    def _peer(self, address: str) -> grpc.Channel:
        channel = self.peers.get(address)
        if channel is None:
            channel = self.peers[address] = grpc.insecure_channel(address, options=GRPC_OPTIONS)
        return channel

    # ---------------------------------------------------------------- heartbeat
    def _status(self) -> cpb.WorkerStatus:
        return cpb.WorkerStatus(worker=self.name, replicas=[
            cpb.ReplicaCounters(block=r.block, replica=r.index, records_in=ex.records_in,
                                records_out=ex.router.records_out)
            for r, ex in self.executors.items()])

    def _heartbeat(self, every: float) -> None:
        outgoing: queue.Queue = queue.Queue()

        def statuses():
            while True:
                item = outgoing.get()
                if item is None:
                    return
                yield item

        def ticker():
            while not self.cancel.is_set():
                outgoing.put(self._status())
                time.sleep(every)
            outgoing.put(self._status())
            outgoing.put(None)

        threading.Thread(target=ticker, name="heartbeat-ticker", daemon=True).start()
        try:
            for command in self.control.Heartbeat(statuses()):
                if command.kind == cpb.Command.STOP:
                    self.stop_reason = command.reason or "stopped by the coordinator"
                    event(log, logging.WARNING, "stopping", reason=self.stop_reason)
                    self.cancel.set()
        except grpc.RpcError as exc:
            if not self.cancel.is_set():
                self.stop_reason = f"lost the coordinator: {exc.details()}"
                event(log, logging.ERROR, "lost the coordinator", error=str(exc.details()))
                self.cancel.set()

    def _snapshot(self):
        for r, ex in list(self.executors.items()):
            inbox = self.inboxes.get(r)
            yield {
                "block": r.block, "replica": r.index, "records_in": ex.records_in,
                "inbox": len(inbox) if inbox is not None else 0,
                "edges": [{"to_block": to_block, "records": s.records_out, "batches": s.batches_out,
                           "bytes": sum(getattr(o, "bytes_sent", 0) for o in s.outlets)}
                          for to_block, s in ex.router.by_destination()],
            }


def _pid() -> int:
    import os
    return os.getpid()
