"""Disaster recovery in a reconcile step (pure): a cluster that does not hold the job's
lease runs none of its pods and shows phase ``Standby``; ``status.disasterRecovery`` tells
which cluster is active, the lease's generation and renewal, and the last failover."""
from __future__ import annotations

from dataclasses import replace

from segflow.disaster.lease import Lease, LeaseDecision, Move

from .actions import Decision
from .status import DisasterRecoveryStatus, Failover, JobStatus, Phase
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
