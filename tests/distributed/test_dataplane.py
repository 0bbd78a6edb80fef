"""The data plane against a real gRPC server on loopback: order, versions, garbage."""
import pickle
import socket
import threading
import time
from concurrent import futures

import grpc
import pytest

from segflow.net import PROTOCOL_VERSION
from segflow.net.codec import decode, encode
from segflow.net.dataplane import DATA_PLANE_ROLES, DataPlaneServicer, Receivers, RemoteOutlet, stop_serving
from segflow.net.positions import ChannelPositions
from segflow.security.guard import RoleGuard
from segflow.security.identities import Role
from segflow.security.tls import server_credentials
from segflow.runtime.channels import Cancelled, Inbox
from segflow.runtime.elements import (END, TERMINATE, Barrier, Batch, IterationUpdate, Watermark)
from segflow.v1 import data_pb2 as pb
from segflow.v1 import data_pb2_grpc as pb_grpc
from support.tls import JobCertificates


CERTS = JobCertificates("dataplane-test")


def serve_w1(receivers):
    """Worker w1's data plane: the server and its port."""
    srv = grpc.server(futures.ThreadPoolExecutor(max_workers=8), interceptors=[RoleGuard(DATA_PLANE_ROLES)])
    pb_grpc.add_DataPlaneServicer_to_server(DataPlaneServicer(receivers, wait_ready=1.0), srv)
    port = srv.add_secure_port("127.0.0.1:0", server_credentials(CERTS.authority.issue(Role.WORKER, "w1")))
    srv.start()
    return srv, port


def receivers_of_w1(inbox):
    """Worker w1 runs replica b3.r0; the sender b2.r1 runs on worker w0."""
    receivers = Receivers("")
    receivers.ready("job-1", lambda block, replica, inp: (inbox, True) if (block, replica) == (3, 0) else None,
                    lambda block, replica: {(2, 1): "w0", (3, 0): "w1"}.get((block, replica)), ChannelPositions())
    return receivers


@pytest.fixture
def server():
    cancel = threading.Event()
    inbox = Inbox(1000, cancel)
    srv, port = serve_w1(receivers_of_w1(inbox))
    channel = CERTS.channel(f"127.0.0.1:{port}", Role.WORKER, Role.WORKER, "w0")
    yield port, channel, inbox, cancel
    cancel.set()
    channel.close()
    srv.stop(0)


def hello(**overrides):
    fields = dict(protocol_version=PROTOCOL_VERSION, job_id="job-1", src_block=2, src_replica=1,
                  dst_block=3, dst_replica=0, dst_input=0)
    fields.update(overrides)
    return pb.ChannelHello(**fields)


def drain(inbox, n, timeout=5.0):
    out, deadline = [], time.monotonic() + timeout
    while len(out) < n and time.monotonic() < deadline:
        message = inbox.get(0.1)
        if message is not None:
            out.append(message)
    return out


def test_codec_round_trips_every_element():
    for element in [Batch([1, ("a", 2.5)], [10, 11], born=12.5), Watermark(7), END, TERMINATE,
                    Barrier(4, {"v": 1}), IterationUpdate(1, 3, {"s": [1]}, False)]:
        back = decode(encode(element, 1))
        if isinstance(element, Batch):
            assert (back.items, back.timestamps, back.born) == (element.items, element.timestamps, element.born)
        else:
            assert back == element


def test_elements_arrive_in_order_with_the_sender(server):
    _, channel, inbox, cancel = server
    outlet = RemoteOutlet(channel, hello(), cancel)
    for i in range(50):
        outlet.send(Batch([i] * 3))
    outlet.send(END)
    outlet.send(TERMINATE)
    outlet.wait_closed(5)
    got = drain(inbox, 52)
    assert [m[2].items[0] for m in got[:50]] == list(range(50))
    assert got[50][2] == END and got[51][2] == TERMINATE
    assert all(m[0] == 0 and m[1] == 1 for m in got)


def raw_call(channel, frames):
    stub = pb_grpc.DataPlaneStub(channel)
    return stub.Channel(iter(frames), timeout=5)


def test_incompatible_protocol_version_is_refused_clearly(server):
    _, channel, inbox, _ = server
    with pytest.raises(grpc.RpcError) as info:
        raw_call(channel, [pb.Frame(seq=0, hello=hello(protocol_version=PROTOCOL_VERSION + 1))])
    assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "incompatible data-plane protocol version" in info.value.details()


def test_wrong_job_and_unknown_replica_are_refused(server):
    _, channel, _, _ = server
    with pytest.raises(grpc.RpcError) as info:
        raw_call(channel, [pb.Frame(seq=0, hello=hello(job_id="other"))])
    assert "this worker runs 'job-1'" in info.value.details()
    with pytest.raises(grpc.RpcError) as info:
        raw_call(channel, [pb.Frame(seq=0, hello=hello(dst_block=9))])
    assert info.value.code() == grpc.StatusCode.NOT_FOUND


@pytest.mark.parametrize("bad", [
    [pb.Frame(seq=1, batch=pb.RecordBatch(encoding=pb.PICKLE5, records=b"\x80garbage", count=1))],
    [pb.Frame(seq=1, batch=pb.RecordBatch(encoding=pb.PICKLE5, records=pickle.dumps([1, 2]), count=5))],
    [pb.Frame(seq=7, end_of_stream=pb.EndOfStream())],
    [pb.Frame(seq=1)],
])
def test_garbage_disconnects_the_peer_and_the_server_goes_on(server, bad):
    _, channel, inbox, cancel = server
    with pytest.raises(grpc.RpcError) as info:
        raw_call(channel, [pb.Frame(seq=0, hello=hello())] + bad)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    outlet = RemoteOutlet(channel, hello(), cancel)
    outlet.send(Batch(["still works"]))
    outlet.send(TERMINATE)
    outlet.wait_closed(5)
    assert [m[2] for m in drain(inbox, 2)][0].items == ["still works"]


def test_non_grpc_bytes_on_the_port_do_not_hurt_the_server(server):
    port, channel, inbox, cancel = server
    with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
        s.sendall(b"GET / HTTP/1.1\r\n\r\n" + bytes(range(256)) * 4)
        s.settimeout(2)
        try:
            s.recv(1024)
        except (socket.timeout, ConnectionResetError):
            pass
    outlet = RemoteOutlet(channel, hello(), cancel)
    outlet.send(Batch([1]))
    outlet.send(TERMINATE)
    outlet.wait_closed(5)
    assert drain(inbox, 1)[0][2].items == [1]


class StalledReceiver(pb_grpc.DataPlaneServicer):
    """Takes the hello and then reads nothing more, like a worker that hung or died while
    its sockets stayed open."""

    def __init__(self):
        self.release = threading.Event()

    def Channel(self, request_iterator, context):
        next(request_iterator)
        self.release.wait(20)
        return pb.ChannelClosed()


def test_closing_an_outlet_of_a_cancelled_attempt_does_not_wait_for_a_stalled_receiver():
    receiver = StalledReceiver()
    srv = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    pb_grpc.add_DataPlaneServicer_to_server(receiver, srv)
    port = srv.add_insecure_port("127.0.0.1:0")
    srv.start()
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    cancel = threading.Event()
    try:
        outlet = RemoteOutlet(channel, hello(), cancel)
        payload = Batch([b"x" * 1_000_000])
        with pytest.raises(Cancelled):
            sender = threading.Timer(1.0, cancel.set)
            sender.start()
            while True:                 # fills the transport and the send queue, then blocks
                outlet.send(payload)
        closer = threading.Thread(target=outlet.close, daemon=True)
        closer.start()
        closer.join(2.0)
        assert not closer.is_alive(), "close() blocked on a receiver that reads nothing"
        assert outlet.call.cancelled() or outlet.call.done()
    finally:
        receiver.release.set()
        channel.close()
        srv.stop(0)


def _wired(job_id):
    receivers = Receivers("")
    receivers.ready(job_id, lambda block, replica, inp: None, lambda block, replica: None, ChannelPositions())
    return receivers


def test_a_channel_of_an_earlier_attempt_gives_up_at_once():
    """Waiting would hold the sender's own restart (the worker running attempt 3 will never
    wire attempt 2); a channel of a later attempt, or of another job, waits for it."""
    receivers = _wired("8f3a-a3")
    started = time.monotonic()
    assert receivers.wait_for("8f3a-a2", timeout=5) is None
    assert time.monotonic() - started < 1
    started = time.monotonic()
    assert receivers.wait_for("8f3a-a4", timeout=0.3) is None
    assert receivers.wait_for("77b1-a1", timeout=0.3) is None
    assert time.monotonic() - started >= 0.6


def test_a_stopping_worker_releases_the_channels_waiting_for_an_attempt():
    receivers = _wired("8f3a-a1")
    waiting = futures.ThreadPoolExecutor(1).submit(receivers.wait_for, "8f3a-a2", 30)
    time.sleep(0.2)
    started = time.monotonic()
    receivers.close()
    assert waiting.result(timeout=5) is None
    assert time.monotonic() - started < 1


def test_a_stopping_worker_lets_a_peer_end_the_stream_it_has_already_terminated():
    """The receiver has read the peer's Terminate (its replicas may all have ended) but not
    yet the end of the stream: stopping waits for it, so the process does not exit and
    reset a channel the peer would then report as failed (kmeans at parallelism 4 did)."""
    cancel = threading.Event()
    inbox = Inbox(1000, cancel)
    receivers = receivers_of_w1(inbox)
    srv, port = serve_w1(receivers)
    channel = CERTS.channel(f"127.0.0.1:{port}", Role.WORKER, Role.WORKER, "w0")
    end_stream = threading.Event()

    def frames():
        yield pb.Frame(seq=0, hello=hello())
        yield encode(Batch([1]), 1)
        yield encode(TERMINATE, 2)
        end_stream.wait(10)

    try:
        call = pb_grpc.DataPlaneStub(channel).Channel.future(frames(), timeout=20)
        assert [m[2] for m in drain(inbox, 2)][1] == TERMINATE
        stopping = threading.Thread(target=stop_serving, args=(srv, receivers, 10.0), daemon=True)
        stopping.start()
        stopping.join(0.5)
        assert stopping.is_alive(), "the worker stopped while a peer's stream was still open"
        end_stream.set()
        assert call.result(timeout=5).frames == 3
        stopping.join(5)
        assert not stopping.is_alive()
    finally:
        end_stream.set()
        cancel.set()
        channel.close()
        srv.stop(0)
