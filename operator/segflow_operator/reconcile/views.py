"""What the reconcilers decide on: views of the job's pods, of its coordinator's latest
update and of the savepoint request in flight, built from Kubernetes objects and gRPC
messages by ``observe`` and ``savepoints`` (the I/O side)."""
from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class PodPhase(StrEnum):
    """A pod's ``status.phase`` (Kubernetes' own)."""
    PENDING = "Pending"
    RUNNING = "Running"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    UNKNOWN = "Unknown"


class CoordinatorPhase(StrEnum):
    """The job's phase as its coordinator reports it: the names of control.proto's
    ``JobUpdate.Phase`` (an unspecified one reads as waiting for the workers)."""
    WAITING_FOR_WORKERS = "WAITING_FOR_WORKERS"
    RUNNING = "RUNNING"
    RECOVERING = "RECOVERING"
    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"


@dataclass(frozen=True)
class Stuck:
    """The pod's segflow container waits (``state.waiting``) after failing: crash-looping
    (``CrashLoopBackOff``, with the last run's exit code and termination message, which
    under ``FallbackToLogsOnError`` is the end of its log) or unable to start
    (``CreateContainerConfigError``, ``ImagePullBackOff``, ...: the waiting message says why)."""
    reason: str
    message: str = ""
    restarts: int = 0
    last_exit_code: int | None = None
    last_message: str = ""


@dataclass(frozen=True)
class PodView:
    name: str
    role: str                  # coordinator | worker
    revision: int
    index: int = 0
    phase: PodPhase = PodPhase.PENDING
    ip: str = ""
    ready: bool = False
    deleting: bool = False
    exit_code: int | None = None
    message: str = ""
    stuck: Stuck | None = None       # its container waits to run again, or cannot be made

    @property
    def ended(self) -> bool:
        """The pod is over for good: it succeeded or failed, and will not run again."""
        return self.phase in (PodPhase.FAILED, PodPhase.SUCCEEDED)


@dataclass(frozen=True)
class CoordinatorView:
    """The latest update streamed by the job's coordinator."""
    phase: CoordinatorPhase
    recoveries: int = 0
    last_checkpoint: int = 0
    error: str = ""
    windows: tuple = ()        # segment backup: (block, versions, bytes, records, truncation lag) per connector
    restored: str = ""         # what the running attempt restored ("checkpoint 12", "b0:v12 b2:v11")
    last_savepoint: int = 0    # the run's newest savepoint (asked for or periodic) and where it is
    last_savepoint_location: str = ""


@dataclass(frozen=True)
class SavepointView:
    """The savepoint request this operator process has in flight for the job (the one the
    status's ``savepointInProgress`` names). ``savepoint_id`` once it succeeded, ``error``
    once it failed, neither while the coordinator is still taking it."""
    then: str
    nonce: int
    revision: int
    savepoint_id: int = 0
    error: str = ""
    location: str = ""      # the state store and prefix of the savepoint taken

    @property
    def pending(self) -> bool:
        return not self.savepoint_id and not self.error


@dataclass(frozen=True)
class Observed:
    pods: tuple[PodView, ...] = ()
    coordinator: CoordinatorView | None = None
    now: str = ""              # RFC 3339, for timestamps written to the status
    savepoint: SavepointView | None = None
    lease_current: bool = True   # disaster recovery: this cluster's lease is before its deadline now
