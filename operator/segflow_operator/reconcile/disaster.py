"""Disaster recovery in a reconcile step (pure): a cluster that does not hold the job's
lease runs none of its pods and shows phase ``Standby``; ``status.disasterRecovery`` tells
which cluster is active, the lease's generation and renewal, and the last failover."""
from __future__ import annotations

from dataclasses import replace

from segflow.disaster.lease import Lease, LeaseDecision, Move
from segflow.observability.follow_metrics import FollowSample

from ..spec import StreamJobSpec
from .actions import Decision, Deploy
from .deployment import deploy
from .situation import Situation
from .status import DisasterRecoveryStatus, Failover, JobStatus, Phase, StandbyStatus
from .steady import workers
from .times import rfc3339
from .views import Observed

# The phases that end a failover, and what it restored when the coordinator did not say.
RUNS_AGAIN = {Phase.RUNNING: "nothing (from the start)", Phase.COMPLETED: "not reported before the job completed"}


def stand_by(d: Decision, pods, message: str, warning: bool) -> None:
    """Delete ``pods`` and show phase Standby; whenever this cluster takes the lease, the
    job resumes from the backup store's latest state (``resumeFrom: auto``)."""
    d.delete([p for p in pods if not p.deleting])
    d.status.resume_from = "auto"
    d.phase(Phase.STANDBY, message, warning=warning)


def standby(status: JobStatus, observed: Observed, lease: LeaseDecision) -> Decision:
    """This cluster does not hold the lease: no pods of any revision."""
    d = Decision(status)
    stand_by(d, observed.pods, lease.reason, lease.move in (Move.FENCED, Move.LOST))
    return d


def warm_standby(spec: StreamJobSpec, status: JobStatus, observed: Observed, lease: LeaseDecision) -> Decision:
    """This cluster does not hold the lease and stands by warm: its own revision of the
    job's pods is kept started (a coordinator that holds its workers' registrations until
    this cluster takes the lease, then restores the backup store's latest state), so a
    takeover creates no pod. Whatever ran while this cluster held the lease goes first:
    a cluster that just lost the lease, or steps for the first time, stands by cold for a
    step, and its next revision is the warm one."""
    d = Decision(status)
    warning = lease.move in (Move.FENCED, Move.LOST)
    if status.phase != Phase.STANDBY:
        stand_by(d, observed.pods, lease.reason, warning)
        return d
    s = Situation(spec, status, observed)
    d.delete([p for p in observed.pods if p.revision != s.revision and not p.deleting])
    if status.pending_deploy is not None:
        d.actions.append(Deploy(status.pending_deploy.revision, status.pending_deploy.restore))
    elif s.coordinator is None or s.coordinator.ended or s.changed:
        d.delete(s.mine)
        deploy(d, spec, s.revision + 1, "auto", "")
        d.status.resume_from = "auto"
    else:
        workers(s, d)
    mode = spec.disaster_recovery.standby if spec.disaster_recovery is not None else "warm"
    d.phase(Phase.STANDBY, f"{lease.reason}; {mode} standby, {d.status.ready or '0'} workers ready", warning=warning)
    return d


def standby_status(spec: StreamJobSpec, wanted: JobStatus, follow: FollowSample | None = None) -> StandbyStatus | None:
    """``status.disasterRecovery.standby`` while this cluster stands by (None otherwise);
    ``follow``: what a hot standby's workers follow (None: none answered yet)."""
    dr = spec.disaster_recovery
    if dr is None or wanted.phase != Phase.STANDBY:
        return None
    status = StandbyStatus(mode=dr.standby, ready_workers=wanted.ready if dr.warm else None)
    if dr.hot and follow is not None:
        status = replace(status, followed_version=follow.version, follow_lag_versions=follow.lag_versions,
                         follow_lag_seconds=round(follow.lag_seconds, 1))
    return status


def dr_status(cluster: str, role: str, previous: DisasterRecoveryStatus | None, lease: Lease | None,
              taken: Lease | None, phase: Phase | None, now: float, restored: str = "") -> DisasterRecoveryStatus:
    """``status.disasterRecovery``. ``taken``: the lease this cluster last took over (its
    failover); the recovery time is measured once the job runs again, from the old
    holder's last renewal (the fault came after it) to now, with what it restored. A job
    resumed at its end (its primary had completed it) can finish between two reconciles
    and never show Running: its completion ends the failover as well."""
    result = DisasterRecoveryStatus(cluster_name=cluster, role=role)
    if lease is not None:
        result = replace(result, active_cluster="" if lease.released else lease.owner, generation=lease.generation,
                         last_renewal=rfc3339(lease.renewed_at))
    failover = previous.last_failover if previous is not None else None
    if taken is not None:
        if failover is None or failover.generation != taken.generation:
            failover = Failover(time=rfc3339(taken.taken_at), from_=taken.previous, to=taken.owner,
                                generation=taken.generation, previous_renewal=rfc3339(taken.previous_renewed_at))
        if failover.rto_seconds is None and phase in RUNS_AGAIN:
            failover = replace(failover, rto_seconds=round(now - taken.previous_renewed_at, 1),
                               restored=restored or RUNS_AGAIN[phase])
    return replace(result, last_failover=failover)
