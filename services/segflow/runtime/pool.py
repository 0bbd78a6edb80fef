"""Running a set of replica executors on threads until they finish or one fails.

The first failure cancels the rest (blocked senders and receivers wake up and give up),
so a job never hangs on a dead replica.
"""
from __future__ import annotations

import threading
import time
from typing import Callable

from ..errors import JobFailed, SegflowError
from ..plan.placement import ReplicaId
from .affinity import bind_replica_thread
from .channels import Cancelled
from .executor import ReplicaExecutor


class ExecutorPool:
    def __init__(self, executors: dict, cancel: threading.Event,
                 on_done: Callable[[ReplicaId], None] | None = None, core: int | None = None):
        self.executors = executors
        self.core = core
        self.cancel = cancel
        self.on_done = on_done
        self.errors: list[BaseException] = []
        self.threads = [threading.Thread(target=self._body, args=(rid, ex), name=f"segflow-{rid}", daemon=True)
                        for rid, ex in executors.items()]

    def _body(self, rid, executor: ReplicaExecutor) -> None:
        try:
            bind_replica_thread(self.core)
            executor.run()
            if self.on_done is not None:
                self.on_done(rid)
        except Cancelled:
            pass
        except BaseException as exc:  # noqa: BLE001 - reported by wait()
            self.errors.append(exc)
            self.cancel.set()
        finally:
            executor.cpu_seconds = time.thread_time()     # this thread ran only this replica

    def start(self) -> None:
        for t in self.threads:
            t.start()

    def wait(self, tick: Callable[[], None] | None = None, every: float = 1.0) -> None:
        """Block until every replica is done; then raise the first failure, if any."""
        last = time.monotonic()
        try:
            for t in self.threads:
                while t.is_alive():
                    t.join(0.1)
                    if tick is not None and time.monotonic() - last >= every:
                        last = time.monotonic()
                        tick()
        except KeyboardInterrupt:
            self.cancel.set()
            for t in self.threads:
                t.join(5)
            raise
        self.raise_first()

    def raise_first(self) -> None:
        if not self.errors:
            return
        error = self.errors[0]
        if isinstance(error, SegflowError):
            raise error
        raise JobFailed(f"{type(error).__name__}: {error}") from error

    def records_in(self) -> dict[int, int]:
        totals: dict[int, int] = {}
        for rid, ex in self.executors.items():
            totals[rid.block] = totals.get(rid.block, 0) + ex.records_in
        return totals
