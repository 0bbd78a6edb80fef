"""Follows a job's coordinator: one thread per job streams its updates and keeps the
latest, so the reconcile loop reads it without waiting on the network."""
from __future__ import annotations

import threading

import grpc

from segflow.coordinator.client import watch
from segflow.security.identities import Identity

from .observe import coordinator_view
from .reconcile import CoordinatorView


class CoordinatorWatcher:
    def __init__(self) -> None:
        self.address = ""
        self.latest: CoordinatorView | None = None
        self._lock = threading.Lock()
        self._generation = 0
        self._closed = False

    def follow(self, address: str, identity: Identity | None = None) -> CoordinatorView | None:
        """The latest update from the coordinator at ``address`` (starting to follow it if
        it is a new one, as the client ``identity``); None until it has said something."""
        with self._lock:
            if address != self.address:
                self.address, self.latest = address, None
                self._generation += 1
                if address and identity is not None:
                    threading.Thread(target=self._stream, args=(address, identity, self._generation),
                                     name=f"watch {address}", daemon=True).start()
            return self.latest

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._generation += 1

    def _current(self, generation: int) -> bool:
        with self._lock:
            return generation == self._generation and not self._closed

    def _stream(self, address: str, identity: Identity, generation: int) -> None:
        """Reconnects while this address is the one followed: a coordinator that is still
        starting refuses connections for a moment."""
        stop = threading.Event()
        while self._current(generation):
            try:
                for update in watch(address, identity):
                    if not self._current(generation):
                        return
                    with self._lock:
                        self.latest = coordinator_view(update)
            except (grpc.RpcError, grpc.FutureTimeoutError):
                pass
            stop.wait(0.5)
