"""The server side of a SPDY/3.1 connection (nodeagent/spdysession.py) against a client
made of the frame codec on the other end of a socket pair: streams, flow control both
ways, PING, RST_STREAM, GOAWAY and a broken frame."""
import threading

import pytest

from support.clusters import wait_for
from support.spdypeer import TIMEOUT, session_pair
from nodeagent import spdy  # noqa: I001 (on the path from support.spdypeer)
from nodeagent.spdysession import SessionClosed, StreamsMissing


@pytest.fixture
def pair():
    with session_pair() as ends:
        yield ends


def test_streams_are_replied_to_and_waited_for(pair):
    session, client = pair
    client.open(1, "error")
    client.open(3, "stdout")
    streams = session.wait_for({"error", "stdout"}, TIMEOUT)
    assert {kind: s.stream_id for kind, s in streams.items()} == {"error": 1, "stdout": 3}
    with pytest.raises(StreamsMissing, match=r"opened the streams \['error'\] of \['error', 'stdin'\]"):
        session.wait_for({"error", "stdin"}, 0.2)


def test_what_is_consumed_is_given_back_on_the_stream_and_the_session(pair):
    session, client = pair
    client.open(1, "stdin")
    stdin = session.wait_for({"stdin"}, TIMEOUT)["stdin"]
    client.send(spdy.Data(1, b"a" * 40000))
    client.send(spdy.Data(1, b"b" * 30000, fin=True))
    received = []
    while (chunk := stdin.inbound.get(timeout=TIMEOUT)) is not None:
        received.append(chunk)
        session.consumed(stdin, len(chunk))
    assert b"".join(received) == b"a" * 40000 + b"b" * 30000
    updates = [client.receive() for _ in range(4)]
    assert updates == [spdy.WindowUpdate(1, 40000), spdy.WindowUpdate(0, 40000),
                       spdy.WindowUpdate(1, 30000), spdy.WindowUpdate(0, 30000)]


def test_sending_keeps_within_a_client_window_it_announced(pair):
    session, client = pair
    client.send(spdy.Settings({spdy.SETTINGS_INITIAL_WINDOW_SIZE: 10}))
    client.open(1, "stdout")
    stdout = session.wait_for({"stdout"}, TIMEOUT)["stdout"]
    sender = threading.Thread(target=session.send, args=(stdout, b"x" * 25, True))
    sender.start()
    assert client.receive() == spdy.Data(1, b"x" * 10)
    sender.join(0.3)
    assert sender.is_alive()                                 # held: the window is spent
    client.send(spdy.WindowUpdate(1, 100))
    assert client.receive() == spdy.Data(1, b"x" * 15, fin=True)
    sender.join(TIMEOUT)
    assert not sender.is_alive()


def test_the_session_window_holds_too(pair):
    session, client = pair
    client.open(1, "stdout")
    client.send(spdy.WindowUpdate(1, 1 << 20))           # the stream's window is wide, the session's 64 KB
    client.send(spdy.Ping(1))
    assert client.receive() == spdy.Ping(1)              # frames are handled in order: the update was
    stdout = session.wait_for({"stdout"}, TIMEOUT)["stdout"]
    sender = threading.Thread(target=session.send, args=(stdout, b"y" * 70000))
    sender.start()
    sent = 0
    while sent < 65536:
        sent += len(client.receive().data)
    assert sent == 65536
    sender.join(0.3)
    assert sender.is_alive()
    client.send(spdy.WindowUpdate(0, 10000))
    assert client.receive() == spdy.Data(1, b"y" * (70000 - 65536))
    sender.join(TIMEOUT)


def test_a_client_that_keeps_no_windows_is_not_held(pair):
    """moby/spdystream (kubectl) sends no WINDOW_UPDATE and no SETTINGS."""
    session, client = pair
    client.open(1, "stdout")
    stdout = session.wait_for({"stdout"}, TIMEOUT)["stdout"]
    session.send(stdout, b"z" * 200000, fin=True)
    received = b""
    while not (frame := client.receive()).fin:
        received += frame.data
    assert len(received + frame.data) == 200000


def test_ping_is_echoed_and_a_reset_stream_refuses_data(pair):
    session, client = pair
    client.send(spdy.Ping(5))
    assert client.receive() == spdy.Ping(5)
    client.open(1, "stdout")
    stdout = session.wait_for({"stdout"}, TIMEOUT)["stdout"]
    client.send(spdy.RstStream(1, spdy.RstStatus.CANCEL))
    client.send(spdy.Ping(7))
    assert client.receive() == spdy.Ping(7)              # the reset was handled before the ping
    with pytest.raises(SessionClosed, match="stream stdout is closed"):
        session.send(stdout, b"late")


def test_a_stream_of_the_servers_numbers_and_data_of_no_stream_are_reset(pair):
    _, client = pair
    client.send(spdy.SynStream(2, {"streamtype": "stdout"}))         # even ids are the server's
    assert client.receive() == spdy.RstStream(2, spdy.RstStatus.PROTOCOL_ERROR)
    client.send(spdy.Data(9, b"to nowhere"))
    assert client.receive() == spdy.RstStream(9, spdy.RstStatus.INVALID_STREAM)


def test_goaway_ends_the_session(pair):
    session, client = pair
    client.open(1, "stdin")
    stdin = session.wait_for({"stdin"}, TIMEOUT)["stdin"]
    client.send(spdy.GoAway(1))
    assert stdin.inbound.get(timeout=TIMEOUT) is None
    assert session.closed and session.error == "the client sent GOAWAY"


def test_a_broken_frame_ends_the_session_with_a_protocol_error(pair):
    session, client = pair
    client.sock.sendall(b"\x80\x02\x00\x06\x00\x00\x00\x04\x00\x00\x00\x01")      # SPDY/2's PING
    assert client.receive() == spdy.GoAway(0, spdy.GoAwayStatus.PROTOCOL_ERROR)
    wait_for(lambda: session.closed, TIMEOUT, "the session's end")
    assert "SPDY version 2" in session.error
