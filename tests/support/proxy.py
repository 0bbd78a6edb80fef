"""A TCP proxy on loopback that a test can cut and heal: the network between one cluster
and a server, for partition tests. While cut, every open connection is closed and new
ones are closed as soon as they are accepted, so clients fail at once instead of hanging."""
from __future__ import annotations

import socket
import threading


class TcpProxy:
    def __init__(self, host: str, port: int):
        self.target = (host, port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.is_cut = False
        self.closed = False
        self.lock = threading.Lock()
        self.open: set[socket.socket] = set()
        threading.Thread(target=self._accept, name="proxy-accept", daemon=True).start()

    def cut(self) -> None:
        with self.lock:
            self.is_cut = True
            doomed, self.open = self.open, set()
        for s in doomed:
            _close(s)

    def heal(self) -> None:
        with self.lock:
            self.is_cut = False

    def close(self) -> None:
        self.closed = True
        self.cut()
        _close(self.listener)

    def _accept(self) -> None:
        while not self.closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                cut = self.is_cut
            if cut:
                _close(client)
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
                upstream.settimeout(None)
            except OSError:
                _close(client)
                continue
            with self.lock:
                self.open |= {client, upstream}
            for a, b, outbound in ((client, upstream, True), (upstream, client, False)):
                threading.Thread(target=self._pump, args=(a, b, outbound), daemon=True).start()

    def sent(self, data: bytes) -> None:
        """Bytes on their way to the server (a subclass may look at them)."""

    def _pump(self, source: socket.socket, sink: socket.socket, outbound: bool) -> None:
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                if outbound:
                    self.sent(data)
                sink.sendall(data)
        except OSError:
            pass
        finally:
            with self.lock:
                self.open -= {source, sink}
            _close(source)
            _close(sink)


def _close(s: socket.socket) -> None:
    try:
        s.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    s.close()
