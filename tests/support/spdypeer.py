"""A SPDY/3.1 client made of the node agent's frame codec (scripts/cluster/nodeagent/spdy.py),
on one end of a socket pair whose other end is a node agent Session: kubectl's side of
``kubectl exec``, frame by frame, without a cluster."""
from __future__ import annotations

import os
import socket
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from support.processes import ROOT

sys.path.insert(0, os.path.join(ROOT, "scripts", "cluster"))
from nodeagent import spdy  # noqa: E402
from nodeagent.spdysession import Session  # noqa: E402

TIMEOUT = 5.0


class Client:
    """kubectl's end of the connection."""

    def __init__(self, sock: socket.socket):
        self.sock, self.reader = sock, sock.makefile("rb")
        self.compressor, self.decompressor = spdy.HeaderCompressor(), spdy.HeaderDecompressor()

    def send(self, frame: spdy.Frame) -> None:
        self.sock.sendall(spdy.encode(frame, self.compressor))

    def receive(self) -> spdy.Frame | None:
        """The next frame; None when the server closed the connection."""
        header = self.reader.read(spdy.HEADER_SIZE)
        if not header:
            return None
        return spdy.decode(header + self.reader.read(spdy.payload_length(header)), self.decompressor)

    def open(self, stream_id: int, kind: str) -> None:
        self.send(spdy.SynStream(stream_id, {"streamtype": kind}))
        assert self.receive() == spdy.SynReply(stream_id)


@contextmanager
def session_pair() -> Iterator[tuple[Session, Client]]:
    """A serving Session and its Client; the client's end is shut at the exit, which ends
    the session's reading thread."""
    server_end, client_end = socket.socketpair()
    client_end.settimeout(TIMEOUT)
    session = Session(server_end.makefile("rb"), server_end)
    serving = threading.Thread(target=session.serve, daemon=True)
    serving.start()
    try:
        yield session, Client(client_end)
    finally:
        client_end.shutdown(socket.SHUT_RDWR)
        serving.join(TIMEOUT)
        client_end.close()
        server_end.close()
    assert not serving.is_alive(), "the session's reader did not end with the connection"
