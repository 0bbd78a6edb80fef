"""``segflow run --parallelism N``: a coordinator and N worker processes on loopback.

Every process is a real ``segflow coordinator`` / ``segflow worker`` command (visible in
``ps``); each worker binds its own 127.0.0.x address. Whatever happens (success,
failure, Ctrl-C), every process started here is stopped before returning.
"""
from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

import grpc

from ..errors import JobFailed, SegflowError
from ..jobs.loader import JobSpec
from ..v1 import control_pb2 as cpb
from ..v1 import control_pb2_grpc as cpb_grpc

STARTUP_TIMEOUT = 60.0


@dataclass
class DistributedResult:
    results: dict[int, list] = field(default_factory=dict)
    seconds: float = 0.0
    records_in: dict[int, int] = field(default_factory=dict)


def segflow_command() -> list[str]:
    script = os.path.join(os.path.dirname(sys.executable), "segflow")
    return [script] if os.path.exists(script) else [sys.executable, "-m", "segflow.cli.main"]


def worker_host(index: int) -> str:
    return f"127.0.0.{2 + index % 250}"


class LocalCluster:
    """The processes of one job; ``stop()`` ends them all, by PID."""

    def __init__(self) -> None:
        self.processes: dict[str, subprocess.Popen] = {}

    def spawn(self, name: str, args: list[str]) -> subprocess.Popen:
        process = subprocess.Popen(segflow_command() + args, stdout=subprocess.PIPE, stderr=None,
                                   stdin=subprocess.DEVNULL, text=True, start_new_session=True)
        self.processes[name] = process
        return process

    def stop(self, grace: float = 3.0) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                _signal(process, signal.SIGTERM)
        deadline = time.monotonic() + grace
        for process in self.processes.values():
            try:
                process.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _signal(process, signal.SIGKILL)
                process.wait()
            if process.stdout is not None:
                process.stdout.close()


def _signal(process: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(process.pid, sig)
    except ProcessLookupError:
        pass


def _read_address(process: subprocess.Popen) -> str:
    """The coordinator prints where it listens as its first line."""
    box: list[str] = []
    reader = threading.Thread(target=lambda: box.append(process.stdout.readline()), daemon=True)
    reader.start()
    reader.join(STARTUP_TIMEOUT)
    line = box[0] if box else ""
    if not line.startswith("coordinator listening on "):
        raise JobFailed("the coordinator did not start" + (f" (exit code {process.poll()})"
                                                           if process.poll() is not None else ""))
    threading.Thread(target=process.stdout.read, daemon=True).start()
    return line.split()[3]


def run_processes(spec: JobSpec, workers: int,
                  on_progress: Callable[[dict, dict], None] | None = None) -> DistributedResult:
    if workers < 1:
        raise SegflowError(f"parallelism must be at least 1, got {workers}")
    cluster = LocalCluster()
    params = [arg for key, value in spec.params.items() for arg in ("-p", f"{key}={value}")]
    try:
        coordinator = cluster.spawn("coordinator", ["coordinator", spec.target, *params, "--function", spec.function,
                                                    "--workers", str(workers), "--listen", "127.0.0.1:0"])
        address = _read_address(coordinator)
        for i in range(workers):
            cluster.spawn(f"w{i}", ["worker", "--coordinator", address, "--name", f"w{i}",
                                    "--host", worker_host(i)])
        return _watch(address, cluster, on_progress)
    except KeyboardInterrupt:
        raise
    finally:
        cluster.stop()


def _watch(address: str, cluster: LocalCluster,
           on_progress: Callable[[dict, dict], None] | None) -> DistributedResult:
    channel = grpc.insecure_channel(address)
    stub = cpb_grpc.CoordinatorStub(channel)
    final = None
    try:
        for update in stub.Watch(cpb.WatchRequest()):
            final = update
            if update.phase == cpb.JobUpdate.WAITING_FOR_WORKERS:
                dead = [n for n, p in cluster.processes.items() if p.poll() is not None]
                if dead:
                    raise JobFailed(f"{', '.join(dead)} exited before the job started")
            if on_progress is not None and update.phase == cpb.JobUpdate.RUNNING:
                on_progress({b.block: b.records_in for b in update.blocks},
                            {b.block: b.name for b in update.blocks})
    except grpc.RpcError as exc:
        raise JobFailed(f"lost the coordinator at {address}: {exc.details()}") from exc
    except KeyboardInterrupt:
        try:
            stub.Cancel(cpb.CancelRequest(reason="interrupted (Ctrl-C)"), timeout=2)
        except grpc.RpcError:
            pass
        raise
    finally:
        channel.close()
    if final is None or final.phase != cpb.JobUpdate.SUCCEEDED:
        raise JobFailed(final.error if final is not None and final.error else "the job did not finish")
    results = pickle.loads(final.results) if final.results else {}
    return DistributedResult(results, final.seconds, {b.block: b.records_in for b in final.blocks})
