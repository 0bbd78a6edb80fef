"""Savepoint requests in flight: each runs on its own thread, so a reconcile step only
starts one and later steps read its outcome (the coordinator may take a while: the
request waits up to two minutes)."""
from __future__ import annotations

import threading
from typing import Callable

from segflow.coordinator.client import Savepoint
from segflow.errors import SegflowError

from . import metrics
from .reconcile import SavepointView
from .reconcile.status import SavepointInProgress

REQUEST_TIMEOUT = 120.0


class SavepointRequests:
    """The one savepoint request of a job loop (a job never has two in flight)."""

    def __init__(self, ask: Callable[[str, int, float], Savepoint]):
        """``ask(address, revision, timeout)`` takes a savepoint of that revision's coordinator."""
        self._ask = ask
        self._lock = threading.Lock()
        self._view: SavepointView | None = None

    def start(self, address: str, then: str, nonce: int, revision: int) -> None:
        """Ask the coordinator at ``address``, unless this very request is in flight."""
        with self._lock:
            current = self._view
            if current is not None and current.pending and (current.then, current.nonce) == (then, nonce):
                return
            self._view = SavepointView(then, nonce, revision)
        threading.Thread(target=self._run, args=(address, self._view), name=f"savepoint {address}",
                         daemon=True).start()

    def view(self, wanted: SavepointInProgress | None) -> SavepointView | None:
        """The request the status says is in progress, if this process made it."""
        with self._lock:
            view = self._view
        if wanted is None or view is None:
            return None
        if (view.then, view.nonce, view.revision) != (wanted.then, wanted.nonce, wanted.revision):
            return None
        return view

    def _run(self, address: str, asked: SavepointView) -> None:
        try:
            taken = self._ask(address, asked.revision, REQUEST_TIMEOUT)
            outcome = SavepointView(asked.then, asked.nonce, asked.revision, savepoint_id=taken.checkpoint_id,
                                    location=taken.location)
            metrics.SAVEPOINTS.inc()
        except SegflowError as exc:
            metrics.SAVEPOINT_FAILURES.inc()
            outcome = SavepointView(asked.then, asked.nonce, asked.revision, error=str(exc))
        with self._lock:
            if self._view is asked:
                self._view = outcome
