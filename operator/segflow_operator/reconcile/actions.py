"""What a reconcile step asks the I/O side to do, and the status and events it records.

The status is the operator's memory: ``revision`` counts deployments (a redeploy starts a
new one and the pods of older ones are deleted), ``deployed`` says what the current
revision runs, nonces record which savepoint trigger was served, and
``savepointInProgress`` records a savepoint that was asked for before it is asked.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .status import JobStatus, Phase
from .views import PodView


@dataclass(frozen=True)
class Deploy:
    revision: int
    restore: str               # checkpoint id, "auto" or "" (from the start)


@dataclass(frozen=True)
class CreateWorkers:
    revision: int
    indices: tuple[int, ...]
    coordinator_ip: str


@dataclass(frozen=True)
class DeletePods:
    names: tuple[str, ...]


@dataclass(frozen=True)
class Savepoint:
    """Start a savepoint through the coordinator, without waiting for it; ``then`` says
    what follows once it succeeded: record it (a nonce), suspend, or redeploy from it."""
    coordinator_ip: str
    then: str                  # record | suspend | redeploy
    nonce: int = 0


@dataclass(frozen=True)
class Event:
    reason: str
    message: str
    warning: bool = False


Action = Deploy | CreateWorkers | DeletePods | Savepoint


@dataclass
class Decision:
    """What a step does, from the status it ``observed``: ``status`` starts as a copy of
    it and becomes the status wanted (``changes`` is what to patch)."""
    observed: JobStatus = field(default_factory=JobStatus)
    actions: list[Action] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    status: JobStatus = field(init=False)

    def __post_init__(self) -> None:
        self.status = self.observed.copy()

    def changes(self) -> dict:
        """The status patch: the fields this decision changed."""
        return self.status.patch(self.observed)

    def phase(self, phase: Phase, message: str, warning: bool = False) -> None:
        """Set the phase and its message; a phase entered anew is an event too."""
        self.status.phase = phase
        self.status.message = message
        if phase != self.observed.phase:
            self.events.append(Event(phase.value, message, warning))

    def delete(self, pods: Sequence[PodView]) -> None:
        if pods:
            self.actions.append(DeletePods(tuple(p.name for p in pods)))
