"""The coordinator's view of a job, as a state machine with no I/O.

Time is passed in, so the decisions (who is lost, when the job ends, which error is the
cause) are tested without servers or sleeps.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Phase(enum.Enum):
    WAITING_FOR_WORKERS = 1
    RUNNING = 2
    SUCCEEDED = 3
    FAILED = 4


@dataclass
class WorkerRecord:
    name: str
    data_address: str
    metrics_address: str
    slots: int
    pid: int
    last_seen: float
    finished: bool = False
    counters: dict = field(default_factory=dict)     # (block, replica) -> records in


class RegistrationError(Exception):
    """A worker cannot join (duplicate name, too many workers, job already over)."""


# A worker failing because one of its peers went away is a consequence, not a cause:
# give the lost peer this long to be noticed before blaming the consequence.
PEER_FAILURE_GRACE = 1.5


class JobState:
    def __init__(self, expected_workers: int, heartbeat_timeout: float):
        self.expected = expected_workers
        self.heartbeat_timeout = heartbeat_timeout
        self.workers: dict[str, WorkerRecord] = {}
        self.phase = Phase.WAITING_FOR_WORKERS
        self.error = ""
        self.results: dict[int, list] = {}
        self.pending_peer_failure: tuple[float, str] | None = None
        self.started_at: float | None = None
        self.ended_at: float | None = None

    @property
    def over(self) -> bool:
        return self.phase in (Phase.SUCCEEDED, Phase.FAILED)

    def register(self, name: str, data_address: str, metrics_address: str, slots: int, pid: int,
                 now: float) -> bool:
        """Add a worker; True when this was the last one expected (the job starts)."""
        if self.over:
            raise RegistrationError(f"the job is already over ({self.phase.name.lower()})")
        if name in self.workers:
            raise RegistrationError(f"a worker named {name!r} is registered already")
        if len(self.workers) >= self.expected:
            raise RegistrationError(f"the job expects {self.expected} workers and has them all")
        self.workers[name] = WorkerRecord(name, data_address, metrics_address, slots, pid, now)
        if len(self.workers) == self.expected:
            self.phase = Phase.RUNNING
            self.started_at = now
            return True
        return False

    def heartbeat(self, name: str, counters: dict, now: float) -> None:
        worker = self.workers.get(name)
        if worker is not None:
            worker.last_seen = now
            worker.counters = counters

    def describe(self, name: str) -> str:
        w = self.workers[name]
        return f"worker {name} (pid {w.pid}, {w.data_address})"

    def lost(self, name: str, why: str, now: float) -> None:
        """The worker's process is gone or silent: the job fails, naming it."""
        worker = self.workers.get(name)
        if worker is None or worker.finished or self.over:
            return
        self.fail(f"lost {self.describe(name)}: {why}", now)

    def finished(self, name: str, ok: bool, error: str, peer_failure: bool, results: dict,
                 now: float) -> None:
        worker = self.workers.get(name)
        if worker is None or self.over:
            return
        worker.finished = True
        if not ok:
            if peer_failure:
                if self.pending_peer_failure is None:
                    self.pending_peer_failure = (now, error)
                return
            self.fail(error, now)
            return
        for sink, items in results.items():
            self.results.setdefault(sink, []).extend(items)
        if all(w.finished for w in self.workers.values()) and self.pending_peer_failure is None \
                and len(self.workers) == self.expected:
            self.phase = Phase.SUCCEEDED
            self.ended_at = now

    def check(self, now: float) -> None:
        """Periodic: silent workers are lost; a peer failure with no lost peer stands."""
        if self.over or self.phase is not Phase.RUNNING:
            return
        for name, worker in self.workers.items():
            if not worker.finished and now - worker.last_seen > self.heartbeat_timeout:
                self.lost(name, f"no heartbeat for {now - worker.last_seen:.1f} s", now)
                return
        if self.pending_peer_failure is not None and now - self.pending_peer_failure[0] >= PEER_FAILURE_GRACE:
            self.fail(self.pending_peer_failure[1], now)

    def fail(self, error: str, now: float) -> None:
        if self.over:
            return
        self.phase = Phase.FAILED
        self.error = error
        self.ended_at = now

    def progress(self) -> dict[int, int]:
        totals: dict[int, int] = {}
        for worker in self.workers.values():
            for (block, _replica), n in worker.counters.items():
                totals[block] = totals.get(block, 0) + n
        return totals
