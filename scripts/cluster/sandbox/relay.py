"""A TCP relay from an address inside a network namespace to one in the host's: the local
API server listens on the host's loopback, which a pod's namespace cannot reach, so the
node agent serves it on the node bridge's gateway address. The listening socket is opened
by a thread moved into the namespace (setns is per thread); connections to the target are
made from the host's namespace."""
from __future__ import annotations

import contextlib
import socket
import threading

from .netns import entered

BUFFER = 65536


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    """Copy until ``source`` ends, then end ``sink``'s sending side."""
    with contextlib.suppress(OSError):
        while data := source.recv(BUFFER):
            sink.sendall(data)
    with contextlib.suppress(OSError):
        sink.shutdown(socket.SHUT_WR)


def _serve(client: socket.socket, target: tuple[str, int]) -> None:
    with client:
        try:
            upstream = socket.create_connection(target, timeout=10)
        except OSError:
            return
        with upstream:
            upstream.settimeout(None)
            back = threading.Thread(target=_pipe, args=(upstream, client), daemon=True)
            back.start()
            _pipe(client, upstream)
            back.join()


class Relay:
    """``with Relay(netns, (host, port), (target_host, target_port)):`` relays connections
    made to ``host:port`` inside ``netns`` to the target in the host's namespace."""

    def __init__(self, netns: str, listen: tuple[str, int], target: tuple[str, int]) -> None:
        self.netns, self.listen, self.target = netns, listen, target
        self.server: socket.socket | None = None
        self.thread: threading.Thread | None = None

    def __enter__(self) -> Relay:
        with entered(self.netns):
            self.server = socket.create_server(self.listen)
        self.thread = threading.Thread(target=self._accept, name=f"relay-{self.netns}", daemon=True)
        self.thread.start()
        return self

    def _accept(self) -> None:
        assert self.server is not None
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:                 # closed by __exit__
                return
            threading.Thread(target=_serve, args=(client, self.target), daemon=True).start()

    def __exit__(self, *exc: object) -> None:
        if self.server is not None:
            with contextlib.suppress(OSError):
                self.server.shutdown(socket.SHUT_RDWR)      # wakes the blocked accept (close alone does not)
            self.server.close()
        if self.thread is not None:
            self.thread.join(timeout=5)
