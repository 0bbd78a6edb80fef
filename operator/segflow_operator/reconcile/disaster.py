"""Disaster recovery in a reconcile step (pure): a cluster that does not hold the job's
lease runs none of its pods and shows phase ``Standby``; ``status.disasterRecovery`` tells
which cluster is active, the lease's generation and renewal, and the last failover."""
from __future__ import annotations

from segflow.disaster.lease import Lease, LeaseDecision, Move

from .actions import Decision
from .times import rfc3339
from .views import Observed

STANDBY = "Standby"
# The phases that end a failover, and what it restored when the coordinator did not say.
RUNS_AGAIN = {"Running": "nothing (from the start)", "Completed": "not reported before the job completed"}


def stand_by(d: Decision, current: str, pods, message: str, warning: bool) -> None:
    """Delete ``pods`` and show phase Standby; whenever this cluster takes the lease, the
    job resumes from the backup store's latest state (``resumeFrom: auto``)."""
    d.delete([p for p in pods if not p.deleting])
    d.status["resumeFrom"] = "auto"
    d.phase(current, STANDBY, message, warning=warning)


def standby(status: dict, observed: Observed, lease: LeaseDecision) -> Decision:
    """This cluster does not hold the lease: no pods of any revision."""
    d = Decision()
    stand_by(d, status.get("phase", ""), observed.pods, lease.reason, lease.move in (Move.FENCED, Move.LOST))
    return d


def dr_status(cluster: str, role: str, previous: dict, lease: Lease | None, taken: Lease | None, phase: str,
              now: float, restored: str = "") -> dict:
    """``status.disasterRecovery``. ``taken``: the lease this cluster last took over (its
    failover); the recovery time is measured once the job runs again, from the old
    holder's last renewal (the fault came after it) to now, with what it restored. A job
    resumed at its end (its primary had completed it) can finish between two reconciles
    and never show Running: its completion ends the failover as well."""
    result = {"clusterName": cluster, "role": role}
    if lease is not None:
        result.update(activeCluster="" if lease.released else lease.owner, generation=lease.generation,
                      lastRenewal=rfc3339(lease.renewed_at))
    failover = dict(previous.get("lastFailover") or {})
    if taken is not None and failover.get("generation") != taken.generation:
        failover = {"time": rfc3339(taken.taken_at), "from": taken.previous, "to": taken.owner,
                    "generation": taken.generation, "previousRenewal": rfc3339(taken.previous_renewed_at)}
    if taken is not None and failover.get("generation") == taken.generation and "rtoSeconds" not in failover \
            and phase in RUNS_AGAIN:
        failover["rtoSeconds"] = round(now - taken.previous_renewed_at, 1)
        failover["restored"] = restored or RUNS_AGAIN[phase]
    if failover:
        result["lastFailover"] = failover
    return result
