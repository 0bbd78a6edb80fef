"""gRPC channels between block replicas in different processes.

Inbound: the worker's DataPlane server accepts one stream per channel, checks its hello
(protocol version, job, a receiver that lives here), and puts decoded elements into the
receiver's inbox. Putting blocks when the inbox is full, which stops reading the stream,
which fills HTTP/2 flow-control windows, which blocks the sender: back-pressure across
processes with bounded memory. A peer that sends garbage is disconnected; the worker
goes on.

Outbound: a :class:`RemoteOutlet` feeds a client stream through a small bounded queue.
"""
from __future__ import annotations

import logging
import queue
import threading
import time
from typing import Callable, Iterator

import grpc

from ..checkpoint.uncoordinated import Piggybacked
from ..plan.placement import replica_name
from ..runtime.channels import Cancelled, Inbox, Outlet
from ..runtime.elements import Terminate
from ..security.guard import ANY_ROLE, refuse
from ..security.identities import Role
from ..security.tls import RpcContext, peer_of
from ..v1 import data_pb2 as pb
from ..v1 import data_pb2_grpc as pb_grpc
from . import PROTOCOL_VERSION
from .codec import FrameError, decode, encode
from .positions import ChannelPositions

log = logging.getLogger("segflow.net")

SEND_QUEUE = 8
_CLOSE = object()

# Only workers of this job (certificates of its CA) may open channels.
DATA_PLANE_ROLES = {"/segflow.v1.DataPlane/Channel": frozenset({Role.WORKER}),
                    "/grpc.health.v1.Health/Check": ANY_ROLE}

Lookup = Callable[[int, int, int], tuple[Inbox, bool] | None]    # (block, replica, input) -> (inbox, blocking)
Owner = Callable[[int, int], str | None]                         # (block, replica) -> the worker running it


class Receivers:
    """Where inbound channels deliver: the inboxes of this worker's replicas.

    ``lookup(block, replica, input)`` returns ``(inbox, blocking)`` or ``None`` when the
    replica does not run here; ``owner(block, replica)`` names the worker that runs a
    replica, so a channel is accepted only from the worker that runs its sender. Each attempt
    of a job (a new one after every recovery) has its own job id; a channel may connect
    before this worker has wired the attempt it belongs to, so it waits for :meth:`ready`
    with that id. ``positions`` count what each inbound channel delivered (a regional
    recovery's kept consumers skip what a restarted sender sends again): an attempt's own,
    which a kept worker carries into the next.
    """

    def __init__(self, job_id: str, lookup: Lookup | None = None, owner: Owner | None = None):
        self.job_id = job_id
        self.lookup = lookup
        self.owner = owner
        self.positions = ChannelPositions()
        self.changed = threading.Condition()
        self.closed = False

    def close(self) -> None:
        """This worker is stopping: channels waiting for an attempt it will not wire give up
        now (a waiting handler thread would hold the process's exit for ``wait_ready``)."""
        with self.changed:
            self.closed = True
            self.changed.notify_all()

    def ready(self, job_id: str, lookup: Lookup, owner: Owner, positions: ChannelPositions) -> None:
        with self.changed:
            self.job_id = job_id
            self.lookup = lookup
            self.owner = owner
            self.positions = positions
            self.changed.notify_all()

    def wait_for(self, job_id: str, timeout: float) -> tuple[Lookup, Owner, ChannelPositions] | None:
        """The lookup and owner of attempt ``job_id``, once wired here (None after ``timeout``,
        once this worker stops, or at once when it runs a later attempt: the sender's attempt
        is over, and holding its channel open would hold up the sender's own restart)."""
        with self.changed:
            self.changed.wait_for(lambda: self.job_id == job_id or self.closed or _later_attempt(self.job_id, job_id),
                                  timeout)
            lookup, owner = self.lookup, self.owner
            if self.job_id != job_id or lookup is None or owner is None:
                return None
            return lookup, owner, self.positions


def _later_attempt(running: str, wanted: str) -> bool:
    """Whether job id ``running`` is a later attempt of the same job than ``wanted`` (job ids
    are ``<job>-a<attempt>``)."""
    job, _, attempt = running.rpartition("-a")
    other_job, _, other_attempt = wanted.rpartition("-a")
    return bool(job) and job == other_job and attempt.isdigit() and other_attempt.isdigit() \
        and int(attempt) > int(other_attempt)


def stop_serving(server: grpc.Server, receivers: Receivers, grace: float) -> None:
    """Stop a worker's data plane, and return only once it has stopped.

    A worker whose replicas have all ended has read every peer's Terminate, but a peer may
    not have sent the end of its stream yet; gRPC's ``stop`` returns at once, and a process
    that then exits resets that stream, which the peer reads as a failed channel (and fails
    the job). So wait for the streams still open to end, up to ``grace`` seconds.
    """
    receivers.close()
    server.stop(grace=grace).wait()


class ChannelMetrics:
    """Counts per channel; the worker plugs Prometheus counters in."""

    def received(self, hello: pb.ChannelHello, records: int, size: int) -> None:
        return None


class DataPlaneServicer(pb_grpc.DataPlaneServicer):
    def __init__(self, receivers: Receivers, metrics: ChannelMetrics | None = None,
                 wait_ready: float = 30.0):
        self.receivers = receivers
        self.metrics = metrics or ChannelMetrics()
        self.wait_ready = wait_ready

    def Channel(self, request_iterator: Iterator[pb.Frame], context: RpcContext) -> pb.ChannelClosed:
        try:
            first = next(request_iterator)
        except StopIteration:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "empty channel: the first frame must be a hello")
        if first.WhichOneof("body") != "hello":
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the first frame of a channel must be a hello")
        hello = first.hello
        if hello.protocol_version != PROTOCOL_VERSION:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION,
                          f"incompatible data-plane protocol version {hello.protocol_version}: this "
                          f"worker speaks version {PROTOCOL_VERSION}; run the same segflow on every worker")
        wired = self.receivers.wait_for(hello.job_id, self.wait_ready)
        if wired is None:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION,
                          f"channel for job {hello.job_id!r}, but this worker runs {self.receivers.job_id!r}")
        lookup, owner, positions = wired
        peer = peer_of(context)
        sender_owner = owner(hello.src_block, hello.src_replica)
        if peer is None or sender_owner != peer.name:
            refuse(context, f"a channel from {replica_name(hello.src_block, hello.src_replica)}, which runs on "
                            f"{sender_owner or 'no worker'}, opened by {peer.name if peer else 'an unknown caller'}")
        target = lookup(hello.dst_block, hello.dst_replica, hello.dst_input)
        if target is None:
            context.abort(grpc.StatusCode.NOT_FOUND,
                          f"replica {replica_name(hello.dst_block, hello.dst_replica)} input {hello.dst_input} "
                          "does not run on this worker")
        inbox, blocking = target
        sender = hello.src_replica
        position = positions.open((hello.src_block, sender, hello.dst_block, hello.dst_replica, hello.dst_input),
                                  hello.job_id)
        expected = 1
        try:
            for frame in request_iterator:
                if frame.seq != expected:
                    raise FrameError(f"frame {frame.seq} arrived where {expected} was due")
                expected += 1
                element = positions.admit(position, hello.job_id, decode(frame))
                if element is None:
                    continue
                inbox.put((hello.dst_input, sender, element), blocking)
                if frame.HasField("batch"):
                    self.metrics.received(hello, frame.batch.count, frame.ByteSize())
        except FrameError as exc:
            log.warning("disconnecting a broken channel b%d.r%d -> b%d.r%d: %s", hello.src_block,
                        hello.src_replica, hello.dst_block, hello.dst_replica, exc)
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"broken channel: {exc}")
        except Cancelled:
            context.abort(grpc.StatusCode.CANCELLED, "the job is stopping")
        return pb.ChannelClosed(frames=expected)


class RemoteOutlet(Outlet):
    """Sends one channel's elements over a gRPC client stream, in order."""

    def __init__(self, channel: grpc.Channel, hello: pb.ChannelHello, cancel: threading.Event,
                 on_blocked: Callable[[float], None] | None = None):
        self.queue: queue.Queue = queue.Queue(SEND_QUEUE)
        self.cancel = cancel
        self.seq = 0
        self.on_blocked = on_blocked
        self.bytes_sent = 0
        self.closed = False
        self.name = (f"{replica_name(hello.src_block, hello.src_replica)} -> "
                     f"{replica_name(hello.dst_block, hello.dst_replica)}")
        stub = pb_grpc.DataPlaneStub(channel)
        self.call = stub.Channel.future(self._frames(hello))

    def _frames(self, hello: pb.ChannelHello) -> Iterator[pb.Frame]:
        yield pb.Frame(seq=0, hello=hello)
        while True:
            frame = self.queue.get()
            if frame is _CLOSE:
                return
            yield frame

    def send(self, element) -> None:
        self.seq += 1
        frame = encode(element, self.seq)
        self.bytes_sent += frame.ByteSize()
        started = None
        while True:
            if self.call.done():
                self._raise_closed()
            try:
                self.queue.put(frame, timeout=0.05)
                break
            except queue.Full:
                if self.cancel.is_set():
                    raise Cancelled()
                if started is None:
                    started = time.monotonic()
        if started is not None and self.on_blocked is not None:
            self.on_blocked(time.monotonic() - started)
        if type(element) is Terminate or (type(element) is Piggybacked and type(element.element) is Terminate):
            self.close()

    def close(self) -> None:
        """End the stream. Without a Terminate first this only happens to a channel whose
        end the receiver already knows (its sender ended before a restored snapshot).

        A receiver that died (or an attempt being cancelled) stops reading, so the queue may
        stay full: then the call is cancelled instead of waiting for room that never comes."""
        if self.closed:
            return
        self.closed = True
        while True:
            if self.call.done():
                return
            if self.cancel.is_set():
                self.call.cancel()
                return
            try:
                self.queue.put(_CLOSE, timeout=0.05)
                return
            except queue.Full:
                continue

    def _raise_closed(self) -> None:
        error = self.call.exception()
        if error is None:
            raise ConnectionError(f"channel {self.name} closed by the receiver before the stream ended")
        if isinstance(error, grpc.RpcError) and error.code() == grpc.StatusCode.CANCELLED:
            raise Cancelled()
        raise ConnectionError(f"channel {self.name} failed: {error}")

    def wait_closed(self, timeout: float) -> None:
        """Wait until the receiver has read the whole stream (ConnectionError if it died)."""
        try:
            self.call.result(timeout=timeout)
        except grpc.FutureTimeoutError:
            self.call.cancel()
            raise ConnectionError(f"the receiver of channel {self.name} did not finish reading it "
                                  f"within {timeout:.0f} s")
        except grpc.RpcError:
            self._raise_closed()
