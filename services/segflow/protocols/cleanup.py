"""Removing what no restore will read from the state store, off the coordinator's RPC
threads: old complete checkpoints beyond ``retain`` and savepoints its rule lets go, local checkpoints and log segments
behind the stable line, truncated parts of pending windows, and at the job's end the parts of checkpoints that never
completed. A failure to remove is logged, never fatal: the job's output does not depend
on it.

The uncoordinated protocols' stable line is written here too, before the deletions that
follow it (they may remove the checkpoints of an older line), newest first: a whole-job
restore starts from it. A failure to write it is logged: a restore then starts from an
older line, and the sinks withdraw what they published after it."""
from __future__ import annotations

import logging
import threading
import time
from concurrent import futures

from ..checkpoint.catalog import Catalog
from ..checkpoint.retention import SavepointRetention
from ..observability.logs import event
from ..runtime.elements import checkpoint_label
from ..state import StateStoreError

log = logging.getLogger("segflow.coordinator")


class StoreCleanup:
    def __init__(self, catalog: Catalog):
        self.catalog = catalog
        self.worker = futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="store")
        self._line_lock = threading.Lock()
        self._line: bytes | None = None     # the newest stable line not yet handed to the writer

    def stable_line(self, encoded: bytes) -> None:
        """Store this stable line (checkpoint.local_records.encode_line), or a newer one."""
        with self._line_lock:
            queued, self._line = self._line is not None, encoded
        if not queued:
            self.worker.submit(self._write_line)

    def _write_line(self) -> None:
        with self._line_lock:
            encoded, self._line = self._line, None
        assert encoded is not None, "stable_line queues this writer only with a line to write"
        try:
            self.catalog.write_stable_line(encoded)
        except StateStoreError as exc:
            event(log, logging.WARNING, "could not store the stable line", error=str(exc))

    def old_checkpoints(self, retain: int, savepoints: SavepointRetention) -> None:
        self.worker.submit(self._old_checkpoints, retain, savepoints)

    def local_checkpoints(self, checkpoints: set, segments: set) -> None:
        self.worker.submit(self._local_checkpoints, checkpoints, segments)

    def window_parts(self, parts: list[tuple[int, int, int]]) -> None:
        """Segment backup: ``(block, replica, version)`` parts every restore is past."""
        self.worker.submit(self._window_parts, parts)

    def unfinished_checkpoints(self) -> None:
        """Now, not in the background: the job has ended and its workers are stopped."""
        try:
            removed = self.catalog.remove_unfinished()
        except StateStoreError as exc:
            event(log, logging.WARNING, "could not remove unfinished checkpoints", error=str(exc))
            return
        if removed:
            event(log, logging.INFO, "unfinished checkpoints removed",
                  checkpoints=[checkpoint_label(c) for c in removed])

    def _old_checkpoints(self, retain: int, savepoints: SavepointRetention) -> None:
        try:
            removed = self.catalog.collect_garbage(retain, savepoints, time.time())
        except StateStoreError as exc:
            event(log, logging.WARNING, "could not remove old checkpoints", error=str(exc))
            return
        if removed:
            event(log, logging.INFO, "old checkpoints removed", checkpoints=removed)

    def _local_checkpoints(self, checkpoints: set, segments: set) -> None:
        try:
            self.catalog.delete_local(checkpoints, segments)
        except StateStoreError as exc:
            event(log, logging.WARNING, "could not remove old local checkpoints", error=str(exc))

    def _window_parts(self, parts: list[tuple[int, int, int]]) -> None:
        try:
            self.catalog.delete_windows(parts)
        except StateStoreError as exc:
            event(log, logging.WARNING, "could not truncate pending windows", error=str(exc))
