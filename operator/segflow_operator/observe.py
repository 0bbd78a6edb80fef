"""Kubernetes objects (as plain dicts) and coordinator updates -> the views the pure
reconcile logic decides on."""
from __future__ import annotations

from segflow.runtime.elements import FINAL_CHECKPOINT
from segflow.v1 import control_pb2 as cpb

from .manifests import INDEX_LABEL, REVISION_LABEL, ROLE_LABEL
from .reconcile import CoordinatorPhase, CoordinatorView, PodPhase, PodView
from .reconcile.views import Stuck


# Waiting reasons that say the container failed (not ContainerCreating or PodInitializing).
STUCK_REASONS = ("CrashLoopBackOff", "CreateContainerConfigError", "CreateContainerError", "ImagePullBackOff",
                 "ErrImagePull", "InvalidImageName", "RunContainerError", "UnknownImage")


def _stuck(container: dict) -> Stuck | None:
    waiting = (container.get("state") or {}).get("waiting") or {}
    if waiting.get("reason") not in STUCK_REASONS:
        return None
    last = (container.get("lastState") or {}).get("terminated") or {}
    return Stuck(reason=waiting["reason"], message=waiting.get("message") or "",
                 restarts=int(container.get("restartCount") or 0), last_exit_code=last.get("exitCode"),
                 last_message=last.get("message") or "")


def pod_view(pod: dict) -> PodView:
    meta, status = pod.get("metadata") or {}, pod.get("status") or {}
    labels = meta.get("labels") or {}
    ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])
    exit_code, message, stuck = None, "", None
    role = labels.get(ROLE_LABEL, "")
    for container in status.get("containerStatuses") or []:
        if container.get("name") != role:      # a sidecar's exit is not the pod's outcome
            continue
        terminated = (container.get("state") or {}).get("terminated")
        if terminated:
            exit_code = terminated.get("exitCode")
            message = terminated.get("message") or terminated.get("reason") or ""
        stuck = _stuck(container) or stuck
    return PodView(name=meta.get("name", ""), role=role,
                   revision=int(labels.get(REVISION_LABEL, "0") or 0), index=int(labels.get(INDEX_LABEL, "0") or 0),
                   phase=PodPhase(status.get("phase") or PodPhase.PENDING), ip=status.get("podIP") or "", ready=ready,
                   deleting=bool(meta.get("deletionTimestamp")), exit_code=exit_code, message=message,
                   stuck=stuck)


def coordinator_view(update) -> CoordinatorView:
    """A ``segflow.v1.JobUpdate`` message -> its view."""
    numbered = update.last_checkpoint if update.last_checkpoint != FINAL_CHECKPOINT else 0
    phase = cpb.JobUpdate.Phase.Name(update.phase)
    return CoordinatorView(phase=CoordinatorPhase.WAITING_FOR_WORKERS if phase == "PHASE_UNSPECIFIED"
                           else CoordinatorPhase(phase),
                           recoveries=update.recoveries, last_checkpoint=numbered, error=update.error,
                           windows=tuple((w.block, w.versions, w.bytes, w.records, w.truncation_lag)
                                         for w in update.windows), restored=update.restored,
                           last_savepoint=update.last_savepoint,
                           last_savepoint_location=update.last_savepoint_location)
