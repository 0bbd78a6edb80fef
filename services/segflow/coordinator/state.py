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
    RECOVERING = 5


@dataclass(frozen=True)
class ReplicaReport:
    """What a heartbeat says of a replica beyond its records in (for the web view)."""

    records_out: int = 0
    inbox: int = 0
    blocked_seconds: float = 0.0
    latency_seconds: float = 0.0
    barrier_seconds: float = 0.0


@dataclass
class WorkerRecord:
    name: str
    data_address: str
    metrics_address: str
    slots: int
    pid: int
    last_seen: float
    finished: bool = False
    committed: bool = False
    counters: dict = field(default_factory=dict)     # (block, replica) -> records in
    load: dict = field(default_factory=dict)         # (block, replica) -> ReplicaReport


class RegistrationError(Exception):
    """A worker cannot join (duplicate name, too many workers, job already over)."""


# A worker failing because one of its peers went away is a consequence, not a cause:
# give the lost peer this long to be noticed before blaming the consequence.
PEER_FAILURE_GRACE = 1.5


MAX_RECOVERIES = 20


class JobState:
    """``recoverable``: a lost worker starts a new attempt from the last complete
    checkpoint instead of failing the job. ``two_phase``: after every worker has
    finished, the job's end is committed (sinks publish) before it counts as done."""

    def __init__(self, expected_workers: int, heartbeat_timeout: float, recoverable: bool = False,
                 two_phase: bool = False):
        self.expected = expected_workers
        self.heartbeat_timeout = heartbeat_timeout
        self.recoverable = recoverable
        self.two_phase = two_phase
        self.attempt = 0
        self.recoveries = 0
        self.events: list[str] = []
        self.names: list[str] = []
        self.workers: dict[str, WorkerRecord] = {}
        self.phase = Phase.WAITING_FOR_WORKERS
        self.error = ""
        self.results: dict[int, list] = {}
        self.pending_peer_failure: tuple[float, str] | None = None
        self.commit_sent = False
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
        if self.attempt > 0 and name not in self.names:
            raise RegistrationError(f"unknown worker {name!r}: this job runs {', '.join(self.names)}")
        if name in self.workers:
            raise RegistrationError(f"a worker named {name!r} is registered already")
        if len(self.workers) >= self.expected:
            raise RegistrationError(f"the job expects {self.expected} workers and has them all")
        self.workers[name] = WorkerRecord(name, data_address, metrics_address, slots, pid, now)
        if len(self.workers) == self.expected:
            self.phase = Phase.RUNNING
            self.names = sorted(self.workers)
            for worker in self.workers.values():
                worker.last_seen = now      # waiting for the others is not silence
            if self.started_at is None:
                self.started_at = now
            return True
        return False

    def unregister(self, name: str) -> None:
        """A worker died while waiting for the others: it registers again when restarted."""
        if self.phase in (Phase.WAITING_FOR_WORKERS, Phase.RECOVERING):
            self.workers.pop(name, None)

    def heartbeat(self, name: str, counters: dict, now: float, load: dict | None = None) -> None:
        worker = self.workers.get(name)
        if worker is not None:
            worker.last_seen = now
            worker.counters = counters
            worker.load = load or {}

    def replica_loads(self) -> dict:
        """(block, replica) -> ReplicaReport, over every worker of this attempt."""
        return {replica: load for worker in self.workers.values() for replica, load in worker.load.items()}

    def describe(self, name: str) -> str:
        w = self.workers[name]
        return f"worker {name} (pid {w.pid}, {w.data_address})"

    def lost(self, name: str, why: str, now: float) -> bool:
        """The worker's process is gone or silent: the job recovers (True) or fails,
        naming it."""
        worker = self.workers.get(name)
        if worker is None or self.over or self.phase is not Phase.RUNNING:
            return False
        if worker.committed or (worker.finished and not self.two_phase):
            return False
        message = f"lost {self.describe(name)}: {why}"
        if self.recoverable and self.recoveries < MAX_RECOVERIES:
            self.recoveries += 1
            self.attempt += 1
            self.phase = Phase.RECOVERING
            self.workers = {}
            self.pending_peer_failure = None
            self.commit_sent = False
            self.events.append(f"{message}; recovering (attempt {self.attempt})")
            return True
        if self.recoverable:
            message += f" (gave up after {MAX_RECOVERIES} recoveries)"
        self.fail(message, now)
        return False

    def finished(self, name: str, ok: bool, error: str, peer_failure: bool, results: dict,
                 now: float, committed: bool = True) -> str:
        """Returns "commit" when every worker has finished and the job's end must now be
        committed (two-phase), else ""."""
        worker = self.workers.get(name)
        if worker is None or self.over or self.phase is not Phase.RUNNING:
            return ""
        worker.finished = True
        if not ok:
            if peer_failure and self.recoverable:
                return ""
            if peer_failure:
                if self.pending_peer_failure is None:
                    self.pending_peer_failure = (now, error)
                return ""
            self.fail(error, now)
            return ""
        complete = len(self.workers) == self.expected and self.pending_peer_failure is None
        if self.two_phase and not committed:
            if complete and all(w.finished for w in self.workers.values()) and not self.commit_sent:
                self.commit_sent = True
                return "commit"
            return ""
        worker.committed = True
        for sink, items in results.items():
            self.results.setdefault(sink, []).extend(items)
        if complete and all(w.committed for w in self.workers.values()):
            self.phase = Phase.SUCCEEDED
            self.ended_at = now
        return ""

    def check(self, now: float) -> tuple[str, str] | None:
        """Periodic: returns a silent worker (name, why) for the caller to declare lost;
        a peer failure with no lost peer fails the job."""
        if self.over or self.phase is not Phase.RUNNING:
            return None
        for name, worker in self.workers.items():
            silent = now - worker.last_seen > self.heartbeat_timeout
            if silent and not worker.committed and (not worker.finished or self.two_phase):
                return name, f"no heartbeat for {now - worker.last_seen:.1f} s"
        if self.pending_peer_failure is not None and now - self.pending_peer_failure[0] >= PEER_FAILURE_GRACE:
            self.fail(self.pending_peer_failure[1], now)
        return None

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
