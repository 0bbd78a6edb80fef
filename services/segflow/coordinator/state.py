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
    attempts: set = field(default_factory=set)       # the attempts it runs in (several: kept by a regional recovery)
    beating: bool = False     # its heartbeat stream has spoken (before: it builds the job and restores)


def records_since(before: dict, now: dict) -> dict[int, int]:
    """Block -> records a worker's replicas received between two reports of their
    counters (``(block, replica) -> records in``). A count lower than before is a replica
    that started again from 0 (restored in the same process): all of it is new."""
    grown: dict[int, int] = {}
    for (block, replica), count in now.items():
        previous = before.get((block, replica), 0)
        grown[block] = grown.get(block, 0) + (count - previous if count >= previous else count)
    return grown


class RegistrationError(Exception):
    """A worker cannot join (duplicate name, too many workers, job already over)."""


# A worker failing because one of its peers went away is a consequence, not a cause:
# give the lost peer this long to be noticed before blaming the consequence.
PEER_FAILURE_GRACE = 1.5


MAX_RECOVERIES = 20


class JobState:
    """``recoverable``: a lost worker starts a new attempt from the last complete
    checkpoint instead of failing the job. ``two_phase``: after every worker has
    finished, the job's end is committed (sinks publish) before it counts as done.

    ``standby_workers``: how many idle workers the job keeps registered beside the
    expected ones. Each active worker holds a *slot*, the name the plan places replicas
    under: its own name, until a standby takes over the slot of a lost worker (the new
    attempt then needs no new process). A worker that registers while its slot is held by
    another, or that says it is a standby, waits in the pool."""

    def __init__(self, expected_workers: int, heartbeat_timeout: float, recoverable: bool = False,
                 two_phase: bool = False, standby_workers: int = 0, startup_timeout: float = 0.0):
        """``startup_timeout``: the silence allowed before a worker's first heartbeat in its
        attempt (it imports and builds the job, restores its replicas from the store; a
        loaded machine took over 3 s, and the needless recovery that followed restarted
        every block); ``heartbeat_timeout`` after it. A process that exits is noticed at
        once all the same (its heartbeat stream breaks, or the launcher sees it)."""
        self.expected = expected_workers
        self.standby_workers = standby_workers
        self.standby: dict[str, WorkerRecord] = {}     # registered and idle, oldest first
        self.slot_of: dict[str, str] = {}              # an active worker -> its slot
        self.promoted: str | None = None               # the standby the last recovery took
        self.kept: frozenset[str] = frozenset()        # workers a regional recovery keeps, until it starts
        self.heartbeat_timeout = heartbeat_timeout
        self.startup_timeout = max(startup_timeout, heartbeat_timeout)
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
                 now: float, standby: bool = False) -> bool:
        """Add a worker; True when this was the last one expected (the job starts). A
        standby (see the class's doc) joins the pool instead: :meth:`is_standby` says so."""
        if self.over:
            raise RegistrationError(f"the job is already over ({self.phase.name.lower()})")
        if name in self.workers or name in self.standby:
            raise RegistrationError(f"a worker named {name!r} is registered already")
        record = WorkerRecord(name, data_address, metrics_address, slots, pid, now)
        slot = None if standby else self._slot_for(name)      # a standby holds no slot, whatever its name
        if slot is None:
            if standby and len(self.standby) >= self.standby_workers:
                raise RegistrationError(f"the job keeps {self.standby_workers} standby worker(s) and has them all")
            self.standby[name] = record
            return False
        if len(self.workers) >= self.expected:
            raise RegistrationError(f"the job expects {self.expected} workers and has them all")
        self.slot_of[name] = slot
        record.attempts.add(self.attempt)
        self.workers[name] = record
        return self.start_if_all_registered(now)

    def _slot_for(self, name: str) -> str | None:
        """The slot a (non-standby) worker registering now takes; None: it waits as a
        standby (a lost worker started again after a standby took over its slot)."""
        if name in self.slot_of:
            return self.slot_of[name]
        if not self.names or (self.attempt == 0 and name not in self.names):
            return name                  # the job has not started yet, or it has all it expects (refused next)
        if name not in self.names:
            raise RegistrationError(f"unknown worker {name!r}: this job runs {', '.join(self.names)}")
        return None if self._holder(name) is not None else name

    def _holder(self, slot: str) -> str | None:
        return next((name for name, held in self.slot_of.items() if held == slot), None)

    def start_if_all_registered(self, now: float) -> bool:
        """True when the attempt starts now: every slot has its worker."""
        if len(self.workers) == self.expected and self.phase is not Phase.RUNNING:
            self.phase = Phase.RUNNING
            self.kept = frozenset()
            self.names = sorted(self.slot_of[name] for name in self.workers)
            for worker in self.workers.values():
                worker.last_seen = now      # waiting for the others is not silence
            if self.started_at is None:
                self.started_at = now
            return True
        return False

    def is_standby(self, name: str) -> bool:
        return name in self.standby

    def slot(self, name: str) -> str:
        """The name the plan places ``name``'s replicas under."""
        return self.slot_of.get(name, name)

    def unregister(self, name: str) -> None:
        """A worker died while waiting for the others, or in the standby pool: it registers
        again when restarted."""
        self.standby.pop(name, None)
        if self.phase in (Phase.WAITING_FOR_WORKERS, Phase.RECOVERING):
            self.workers.pop(name, None)

    def _promote(self, lost: str, now: float) -> str | None:
        """The oldest standby takes over ``lost``'s slot and joins the attempt starting now."""
        if not self.standby:
            return None
        name, record = next(iter(self.standby.items()))
        del self.standby[name]
        self.slot_of[name] = self.slot_of.pop(lost, lost)
        record.last_seen = now
        record.beating = False           # it restores the lost worker's replicas before its first heartbeat
        record.attempts = {self.attempt}
        self.workers[name] = record
        return name

    def heartbeat(self, name: str, counters: dict, now: float, load: dict | None = None) -> dict[int, int]:
        """Note a worker of this attempt alive with its replicas' counters. Returns, per
        block, the records its replicas received since its last report (what
        ``segflow_block_records_in`` adds up over every attempt)."""
        worker = self.workers.get(name)
        if worker is None:
            return {}
        grown = records_since(worker.counters, counters)
        worker.last_seen = now
        worker.beating = True
        worker.counters = counters
        worker.load = load or {}
        return grown

    def replica_loads(self) -> dict:
        """(block, replica) -> ReplicaReport, over every worker of this attempt."""
        return {replica: load for worker in self.workers.values() for replica, load in worker.load.items()}

    def describe(self, name: str) -> str:
        w = self.workers[name]
        return f"worker {name} (pid {w.pid}, {w.data_address})"

    def is_kept(self, name: str) -> bool:
        """A worker a regional recovery keeps running while the region registers again."""
        return name in self.kept

    def in_attempt(self, name: str, attempt: int) -> bool:
        """Whether ``name`` runs in this attempt and ``attempt`` is one of its: what it says
        as part of ``attempt`` counts (acknowledgements, a broken heartbeat stream)."""
        worker = self.workers.get(name)
        return worker is not None and attempt in worker.attempts

    def lost(self, name: str, why: str, now: float, keep: frozenset[str] = frozenset()) -> bool:
        """The worker's process is gone or silent: the job recovers (True) or fails,
        naming it. ``keep``: workers a regional recovery leaves running; they stay
        registered and join the next attempt as they are."""
        worker = self.workers.get(name)
        if worker is None or self.over or (self.phase is not Phase.RUNNING and name not in self.kept):
            return False      # (a kept worker lost while the region registers again: everything restarts)
        if worker.committed or (worker.finished and not self.two_phase):
            return False
        message = f"lost {self.describe(name)}: {why}"
        if self.recoverable and self.recoveries < MAX_RECOVERIES:
            self.recoveries += 1
            self.attempt += 1
            self.phase = Phase.RECOVERING
            self.kept = keep - {name}
            self.workers = {n: w for n, w in self.workers.items() if n in self.kept}
            for worker in self.workers.values():
                worker.attempts.add(self.attempt)
            self.pending_peer_failure = None
            self.commit_sent = False
            self.promoted = self._promote(name, now)
            took = f"; standby {self.promoted} takes over {self.slot(self.promoted)}" if self.promoted else ""
            self.events.append(f"{message}; recovering (attempt {self.attempt}){took}")
            return True
        if self.recoverable:
            message += f" (gave up after {MAX_RECOVERIES} recoveries)"
        self.fail(message, now)
        return False

    def finished(self, name: str, ok: bool, error: str, peer_failure: bool, results: dict,
                 now: float, committed: bool = True) -> str:
        """Returns "commit" when every worker has finished and the job's end must now be
        committed (two-phase), else "". A worker a regional recovery kept may finish while
        the others register again: it counts when they have."""
        worker = self.workers.get(name)
        if worker is None or self.over or self.phase not in (Phase.RUNNING, Phase.RECOVERING):
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
            silent = now - worker.last_seen > (self.heartbeat_timeout if worker.beating else self.startup_timeout)
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
