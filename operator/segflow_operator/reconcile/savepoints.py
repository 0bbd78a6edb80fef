"""Savepoints, trigger-then-observe: a reconcile step asks for a savepoint and records
that it did (``savepointInProgress``); later steps observe the request's outcome and apply
what was to follow (record a nonce, suspend, redeploy). No step waits for the coordinator,
so pods are repaired and the status kept true while a savepoint is being taken, and an
operator restarted meanwhile asks again instead of forgetting it."""
from __future__ import annotations

from .actions import Decision, Event, Savepoint
from .deployment import deploy
from .situation import Situation
from .status import Phase, SavepointInProgress, SavepointRecord
from .times import seconds_between
from .views import SavepointView

SAVEPOINT_HISTORY = 10      # savepoints listed in status.savepoints (the store keeps them all)
UNOBSERVED_PATIENCE = 60.0  # s a restarted operator waits to hear from the coordinator of a savepoint in progress


def request(d: Decision, s: Situation, action: Savepoint) -> None:
    """Ask for a savepoint, and remember that it was asked for."""
    d.actions.append(action)
    d.status.savepoint_in_progress = SavepointInProgress(action.then, action.nonce, s.revision, s.observed.now)


def observe(s: Situation, d: Decision) -> bool:
    """Follows the savepoint in progress; True when its outcome decided this step."""
    wanted = s.savepoint_in_progress
    if wanted is None:
        return False
    view = s.observed.savepoint
    if wanted.revision != s.revision:
        d.status.savepoint_in_progress = None         # its revision was replaced meanwhile
        return False
    if view is None:                                   # asked by an operator process that is gone
        if s.running:
            d.actions.append(Savepoint(s.coordinator_ip, wanted.then, wanted.nonce))
            return False
        if s.unobserved and waited(wanted, s.observed.now) < UNOBSERVED_PATIENCE:
            return False                               # ask again once the coordinator is heard from
        # Given up; nothing else this step. The reconcilers after this one read the status
        # as it was, with the request in it: a suspend would wait for it, and the pods a
        # previous operator deleted on the savepoint's outcome (before it could write the
        # status) would pass for a lost coordinator.
        d.status.savepoint_in_progress = None
        d.events.append(Event("SavepointFailed", "the job stopped running before the savepoint was confirmed",
                              warning=True))
        return True
    if view.pending:
        return False
    d.status.savepoint_in_progress = None
    if view.error:
        d.events.append(Event("SavepointFailed", view.error, warning=True))
        return False
    _after(s, d, view)
    return True


def waited(wanted: SavepointInProgress, now: str) -> float:
    """Seconds since the savepoint in progress was asked for; unreadable times count as
    waited long enough, so a garbled status never holds a job still."""
    try:
        return seconds_between(wanted.since, now)
    except ValueError:
        return float("inf")


def history(previous: tuple[SavepointRecord, ...] | None, taken: SavepointRecord,
            keep: int = SAVEPOINT_HISTORY) -> tuple[SavepointRecord, ...]:
    """``status.savepoints``: the newest ``keep`` savepoints, newest first."""
    return (taken, *[p for p in previous or () if p.id != taken.id])[:keep]


def record(s: Situation, d: Decision, savepoint_id: int, nonce: int, location: str) -> None:
    """A savepoint taken: the last one in ``status.savepoint``, and first in the history."""
    taken = SavepointRecord(savepoint_id, s.observed.now, nonce, location)
    d.status.savepoint = taken
    d.status.savepoints = history(s.status.savepoints, taken)


def _after(s: Situation, d: Decision, view: SavepointView) -> None:
    then, savepoint_id, nonce = view.then, view.savepoint_id, view.nonce
    record(s, d, savepoint_id, nonce, view.location)
    d.events.append(Event("Savepoint", f"savepoint {savepoint_id} taken" +
                          (f" at {view.location}" if view.location else "")))
    if then == "record":
        d.status.last_savepoint_nonce = nonce
        return
    d.delete(s.mine)
    if then == "suspend":
        d.status.resume_from = str(savepoint_id)
        d.phase(Phase.SUSPENDED, f"suspended at savepoint {savepoint_id}")
    else:
        deploy(d, s.spec, s.revision + 1, str(savepoint_id),
               f"redeploying the changed spec from savepoint {savepoint_id}")


def by_nonce(s: Situation, d: Decision) -> None:
    """``savepointTriggerNonce`` changed: take one savepoint for it."""
    spec = s.spec
    if spec.savepoint_nonce == (s.status.last_savepoint_nonce or 0) or s.savepoint_in_progress:
        return
    if not spec.takes_savepoints:
        d.status.last_savepoint_nonce = spec.savepoint_nonce
        why = (f"the {spec.checkpointing.protocol.value} protocol takes no savepoints (it restores its stored "
               "stable line)" if spec.stateful
               else "the job runs without checkpointing (protocol none): nothing to save")
        d.events.append(Event("SavepointRefused", f"savepointTriggerNonce changed but {why}", warning=True))
    elif s.running:
        request(d, s, Savepoint(s.coordinator_ip, "record", spec.savepoint_nonce))
