"""An attacker on the job's network, against a real coordinator and real workers.

The job (two workers, started by hand with their certificates) runs while callers
without a certificate, with another job's certificate, with the job's client
certificate, and with worker w0's certificate speaking for someone else try every
control RPC and the data plane. Every payload they send that could be unpickled is a
canary that creates a file: the file must never appear, and the job's output must be
exact.
"""
from __future__ import annotations

import http.client
import pickle
import re
import urllib.error
import urllib.request
from pathlib import Path

import grpc
import psutil
import pytest

from segflow.net import PROTOCOL_VERSION
from segflow.security.identities import Role
from segflow.v1 import control_pb2 as cpb
from segflow.v1 import control_pb2_grpc as cpb_grpc
from segflow.v1 import data_pb2 as dpb
from segflow.v1 import data_pb2_grpc as dpb_grpc
from support.processes import wait_for
from support.tls import JobCertificates

COUNT = 40_000
JOB = f"""
def build(env, out=""):
    (env.generate(lambda i: i, count={COUNT}, rate=8000.0)
        .map(lambda x: (x % 5, 1)).group_by(lambda kv: kv[0]).fold(0, lambda a, kv: a + kv[1])
        .write_text(out))
"""


class Canary:
    """Unpickling this creates ``path``: proof that attacker bytes were decoded."""

    def __init__(self, path: Path):
        self.path = path

    def __reduce__(self):
        return (Path.touch, (self.path,))


@pytest.fixture
def job(tmp_path, spawn):
    """A running two-worker job: (coordinator address, worker data addresses, certificates, output)."""
    certs = JobCertificates("attacked-job")
    path = tmp_path / "job.py"
    path.write_text(JOB)
    out = tmp_path / "out"
    coordinator = spawn("coordinator", str(path), "-p", f"out={out}", "--workers", "2", "--listen", "127.0.0.1:0",
                        env=certs.env(Role.COORDINATOR, "coordinator"))
    found = re.search(r"listening on (\S+) .* job (\S+)", coordinator.stdout.readline())
    address, attempt = found.group(1), f"{found.group(2)}-a0"
    workers = []
    for index in range(2):
        workers.append(spawn("worker", "--coordinator", address, "--name", f"w{index}",
                             "--host", f"127.0.0.{30 + index}",
              env=certs.env(Role.WORKER, f"w{index}")))
    with certs.channel(address, Role.COORDINATOR) as channel:
        updates = cpb_grpc.CoordinatorStub(channel).Watch(cpb.WatchRequest())
        first = next(u for u in updates if u.phase == cpb.JobUpdate.RUNNING)
    assert first.phase == cpb.JobUpdate.RUNNING
    yield address, attempt, certs, out, workers[1].pid


def _data_port(worker_pid: int, host: str) -> int:
    """The worker's data-plane port: the one of its two listening ports that is not HTTP."""
    listening = [c.laddr.port for c in psutil.Process(worker_pid).net_connections(kind="tcp")
                 if c.status == psutil.CONN_LISTEN and c.laddr.ip in (host, f"::ffff:{host}")]
    grpc_ports = []
    for port in listening:
        try:
            urllib.request.urlopen(f"http://{host}:{port}/metrics", timeout=2)
        except (urllib.error.URLError, ConnectionError, http.client.HTTPException):
            grpc_ports.append(port)
    assert len(grpc_ports) == 1, f"expected one data-plane port among {listening}"
    return grpc_ports[0]


def _control_calls(stub: cpb_grpc.CoordinatorStub, canary: bytes, worker: str = "w1"):
    """Every control RPC, as an attacker would make it (streams consumed)."""
    status = cpb.WorkerStatus(worker=worker)
    return {
        "Register": lambda: stub.Register(cpb.RegisterRequest(protocol_version=PROTOCOL_VERSION, worker=worker,
                                                              data_address="127.0.0.99:1"), timeout=5),
        "Heartbeat": lambda: list(stub.Heartbeat(iter([status, status]), timeout=5)),
        "Finish": lambda: stub.Finish(cpb.WorkerFinished(worker=worker, ok=True, results=canary), timeout=5),
        "Acknowledge": lambda: stub.Acknowledge(cpb.CheckpointAcks(worker=worker, checkpoint_id=1, acks=[
            cpb.ReplicaAck(block=0, replica=0, ok=True)]), timeout=5),
        "Report": lambda: stub.Report(cpb.LocalCheckpoint(worker=worker, process="b0.r0", index=1, ok=True),
                                      timeout=5),
        "Cancel": lambda: stub.Cancel(cpb.CancelRequest(reason="attack"), timeout=5),
        "Savepoint": lambda: stub.Savepoint(cpb.SavepointRequest(), timeout=5),
        "Watch": lambda: next(iter(stub.Watch(cpb.WatchRequest(), timeout=5))),
    }


def _refused(call, codes: set) -> grpc.StatusCode:
    with pytest.raises(grpc.RpcError) as info:
        call()
    assert info.value.code() in codes, info.value.details()
    return info.value.code()


def _attack_data_plane(channel: grpc.Channel, attempt: str, canary: bytes, src: tuple[int, int] = (0, 0)) -> None:
    frames = [dpb.Frame(seq=0, hello=dpb.ChannelHello(protocol_version=PROTOCOL_VERSION, job_id=attempt,
                                                      src_block=src[0],
                                                      src_replica=src[1], dst_block=1, dst_replica=0)),
              dpb.Frame(seq=1, batch=dpb.RecordBatch(encoding=dpb.PICKLE5, records=canary, count=1))]
    dpb_grpc.DataPlaneStub(channel).Channel(iter(frames), timeout=5)


def test_no_caller_without_the_right_certificate_gets_through(job, tmp_path):
    address, attempt, certs, out, w1_pid = job
    flag = tmp_path / "canary-ran"
    canary = pickle.dumps({0: [Canary(flag)]})
    stranger = JobCertificates("another-job")
    unreachable = {grpc.StatusCode.UNAVAILABLE}
    denied = {grpc.StatusCode.PERMISSION_DENIED}

    with grpc.insecure_channel(address) as plaintext:
        for name, call in _control_calls(cpb_grpc.CoordinatorStub(plaintext), canary).items():
            _refused(call, unreachable)
    with stranger.channel(address, Role.COORDINATOR, Role.WORKER, "w1") as foreign:
        for name, call in _control_calls(cpb_grpc.CoordinatorStub(foreign), canary).items():
            _refused(call, unreachable)
    with stranger.channel(address, Role.COORDINATOR, Role.CLIENT, "client") as foreign_client:
        _refused(_control_calls(cpb_grpc.CoordinatorStub(foreign_client), canary)["Cancel"], unreachable)
    with certs.channel(address, Role.COORDINATOR, Role.CLIENT, "client") as client:
        calls = _control_calls(cpb_grpc.CoordinatorStub(client), canary)
        for name in ("Register", "Heartbeat", "Finish", "Acknowledge", "Report"):
            _refused(calls[name], denied)
    with certs.channel(address, Role.COORDINATOR, Role.WORKER, "w0") as w0:
        calls = _control_calls(cpb_grpc.CoordinatorStub(w0), canary, worker="w1")
        for name, call in calls.items():                 # w0 speaking for w1, or calling client methods
            _refused(call, denied)
        _refused(lambda: cpb_grpc.CoordinatorStub(w0).Acknowledge(cpb.CheckpointAcks(
            worker="w0", acks=[cpb.ReplicaAck(block=b, replica=r, ok=True) for b in range(6) for r in range(2)]),
            timeout=5), denied)                          # replicas w0 does not run
        _refused(lambda: cpb_grpc.CoordinatorStub(w0).Report(cpb.LocalCheckpoint(
            worker="w0", process="b99.r0", index=1, ok=True), timeout=5), denied)

    target = f"127.0.0.31:{_data_port(w1_pid, '127.0.0.31')}"
    with grpc.insecure_channel(target) as plaintext:
        _refused(lambda: _attack_data_plane(plaintext, attempt, canary), unreachable)
    with stranger.channel(target, Role.WORKER, Role.WORKER, "w0") as foreign:
        _refused(lambda: _attack_data_plane(foreign, attempt, canary), unreachable)
    with certs.channel(target, Role.WORKER, Role.CLIENT, "client") as client:
        _refused(lambda: _attack_data_plane(client, attempt, canary), denied)
    with certs.channel(target, Role.WORKER, Role.WORKER, "w0") as w0:     # a replica w0 does not run
        _refused(lambda: _attack_data_plane(w0, attempt, canary, src=(99, 0)), denied)
    assert not flag.exists(), "an attacker's pickle was decoded"

    def finished():
        return out.exists() and (out / "_SUCCESS").exists()
    assert wait_for(finished, timeout=60), "the job did not finish after the attacks"
    counts = dict(tuple(map(int, line.strip("()").split(", "))) for part in sorted(out.glob("part-*"))
                  for line in part.read_text().split("\n") if line)
    assert counts == {k: COUNT // 5 for k in range(5)}
    assert not flag.exists()
