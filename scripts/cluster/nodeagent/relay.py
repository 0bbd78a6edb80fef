"""The pods' way to the API server in ``netns`` mode.

The API server listens on the host's 127.0.0.1, which no pod namespace can reach (and no
route from the private pod range into the host is allowed). So the node agent listens on the
API server's cluster IP inside the node namespace, where every pod's default route leads,
and copies each connection's bytes to and from the host's loopback: a TCP relay, TLS passes
through untouched (the API server's certificate names that cluster IP).
"""
from __future__ import annotations

import asyncio
import logging
import socket
import threading

from . import netns

log = logging.getLogger("nodeagent")
CHUNK = 65536


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(CHUNK):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()


class Relay(threading.Thread):
    """Accepts on ``listen`` (address, port) inside ``namespace``; forwards each connection
    to ``target`` (address, port) in the host's namespace. (The tests use it too, to let
    pods reach the Redis and S3 servers they start on the host's loopback.)"""

    def __init__(self, namespace: str, listen: tuple[str, int], target: tuple[str, int]):
        super().__init__(name="api-relay", daemon=True)
        self.namespace, self.listen, self.target = namespace, listen, target
        self.loop = asyncio.new_event_loop()
        with netns.inside(namespace):
            self.sock = socket.create_server(listen, reuse_port=False)
        self.sock.setblocking(False)

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(*self.target)
        except OSError as exc:
            log.warning("relay: API server unreachable", extra={"fields": {"error": str(exc)}})
            writer.close()
            return
        await asyncio.gather(_pipe(reader, upstream_writer), _pipe(upstream_reader, writer))

    def run(self) -> None:
        asyncio.set_event_loop(self.loop)
        server = self.loop.run_until_complete(asyncio.start_server(self._connection, sock=self.sock))
        self.loop.run_forever()
        server.close()
        open_connections = asyncio.all_tasks(self.loop)     # closed inside the loop, before it closes
        for task in open_connections:
            task.cancel()
        self.loop.run_until_complete(asyncio.gather(*open_connections, return_exceptions=True))
        self.loop.close()

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.join(5)
        self.sock.close()
