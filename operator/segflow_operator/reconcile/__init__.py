"""What the operator does next for one StreamJob, decided from its spec, its status and
what is observed of its pods, its coordinator and its savepoint in flight. Pure: the
loop does the I/O.

A step runs small reconcilers in order, each for one concern (in the manner of Flink's
Kubernetes operator's observers and reconcilers); the first that decides the job's next
lifecycle move ends the step.
"""
from __future__ import annotations

from ..spec import StreamJobSpec
from . import lifecycle, savepoints, steady
from .actions import CreateWorkers, Decision, DeletePods, Deploy, Event, Savepoint
from .situation import Situation
from .status import JobStatus, Phase
from .views import CoordinatorPhase, CoordinatorView, Observed, PodPhase, PodView, SavepointView

__all__ = ["CoordinatorPhase", "CoordinatorView", "CreateWorkers", "Decision", "DeletePods", "Deploy", "Event",
           "JobStatus", "Observed", "Phase", "PodPhase", "PodView", "Savepoint", "SavepointView", "decide"]

_LIFECYCLE = (lifecycle.finished, lifecycle.suspend, lifecycle.start, lifecycle.upgrade)


def decide(spec: StreamJobSpec, status: JobStatus, observed: Observed) -> Decision:
    """The step's decision; its ``status`` is the status wanted after it."""
    s = Situation(spec, status, observed)
    d = Decision(status)
    stale = [p for p in observed.pods if p.revision != s.revision and not p.deleting]
    d.delete(stale)
    pending = status.pending_deploy
    if pending is not None:        # a deployment recorded but perhaps not (fully) made: make it
        d.actions.append(Deploy(pending.revision, pending.restore))
        return d
    if savepoints.observe(s, d):
        return d
    lifecycle.note_refusal(s, d)
    if any(reconciler(s, d) for reconciler in _LIFECYCLE):
        return d
    savepoints.by_nonce(s, d)
    if lifecycle.fenced(s, d) or steady.job_outcome(s, d) or lifecycle.coordinator_gone(s, d):
        return d
    steady.workers(s, d)
    steady.phase(s, d)
    steady.stuck_pods(s, d)
    return d

