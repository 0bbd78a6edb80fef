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
from .views import CoordinatorView, Observed, PodView, SavepointView

__all__ = ["CoordinatorView", "CreateWorkers", "Decision", "DeletePods", "Deploy", "Event", "Observed", "PodView",
           "Savepoint", "SavepointView", "decide"]

_LIFECYCLE = (lifecycle.finished, lifecycle.suspend, lifecycle.start, lifecycle.upgrade)


def decide(spec: StreamJobSpec, status: dict, observed: Observed) -> Decision:
    s = Situation(spec, status, observed)
    d = Decision()
    stale = [p for p in observed.pods if p.revision != s.revision and not p.deleting]
    d.delete(stale)
    pending = status.get("pendingDeploy")
    if pending:                    # a deployment recorded but perhaps not (fully) made: make it
        d.actions.append(Deploy(int(pending["revision"]), str(pending.get("restore", ""))))
        return d
    if savepoints.observe(s, d):
        return d
    lifecycle.note_refusal(s, d)
    if any(reconciler(s, d) for reconciler in _LIFECYCLE):
        return d
    savepoints.by_nonce(s, d)
    if steady.job_outcome(s, d) or lifecycle.coordinator_gone(s, d):
        return d
    steady.workers(s, d)
    steady.phase(s, d)
    return d

