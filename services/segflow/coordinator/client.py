"""Talking to a running job's coordinator from outside the job: the CLI's savepoint
command and the Kubernetes operator use these, with a client certificate of the job."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import grpc

from ..errors import SegflowError
from ..security.identities import Identity, Role
from ..security.tls import secure_channel
from ..v1 import control_pb2 as cpb
from ..v1 import control_pb2_grpc as cpb_grpc


@dataclass(frozen=True)
class Savepoint:
    checkpoint_id: int
    location: str       # state URL (password masked) and the checkpoint's prefix


def request_savepoint(address: str, identity: Identity, timeout: float = 180.0) -> Savepoint:
    """Take a savepoint of the job whose coordinator listens at ``address``."""
    with secure_channel(address, identity, Role.COORDINATOR) as channel:
        try:
            reply = cpb_grpc.CoordinatorStub(channel).Savepoint(cpb.SavepointRequest(), timeout=timeout)
        except grpc.RpcError as exc:
            raise SegflowError(f"the coordinator at {address} did not answer: {exc.details()}") from exc
    if reply.error:
        raise SegflowError(f"savepoint failed: {reply.error}")
    return Savepoint(reply.checkpoint_id, reply.location)


def watch(address: str, identity: Identity, connect_timeout: float = 5.0) -> Iterator[cpb.JobUpdate]:
    """The job's updates until it ends or the connection breaks (grpc.RpcError)."""
    with secure_channel(address, identity, Role.COORDINATOR) as channel:
        grpc.channel_ready_future(channel).result(timeout=connect_timeout)
        yield from cpb_grpc.CoordinatorStub(channel).Watch(cpb.WatchRequest())
