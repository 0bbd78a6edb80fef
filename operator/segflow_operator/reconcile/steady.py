"""A deployed job's revision as it runs: the coordinator's updates become the status, and
missing or broken worker pods are replaced."""
from __future__ import annotations

from .actions import CreateWorkers, DeletePods, Decision
from .savepoints import record
from .situation import Situation

_COORDINATOR_PHASES = {"WAITING_FOR_WORKERS": "Deploying", "RUNNING": "Running", "RECOVERING": "Recovering"}
_MESSAGES = {"Deploying": "waiting for the workers", "Running": "running",
             "Recovering": "recovering from the last complete checkpoint"}


def job_outcome(s: Situation, d: Decision) -> bool:
    """Counters from the coordinator's update; True when it reports the job's end."""
    update = s.update
    if update is None:
        return False
    d.status["recoveries"] = int(s.status.get("recoveriesBase", 0)) + update.recoveries
    known = (s.status.get("lastCheckpoint") or {}).get("id")
    if update.last_checkpoint and update.last_checkpoint != known:
        d.status["lastCheckpoint"] = {"id": update.last_checkpoint, "time": s.observed.now}
    windows = {str(b): {"versions": v, "bytes": n, "records": r, "truncationLag": lag}
               for b, v, n, r, lag in update.windows}
    if windows and windows != s.status.get("pendingWindows"):
        d.status["pendingWindows"] = windows
    if update.restored and update.restored != s.status.get("restored"):
        d.status["restored"] = update.restored
    known_savepoint = (s.status.get("savepoint") or {}).get("id")
    if update.last_savepoint and update.last_savepoint != known_savepoint and "savepoint" not in d.status:
        # a periodic one (asked-for ones are recorded on their answer)
        record(s, d, update.last_savepoint, 0, update.last_savepoint_location)
    if update.phase == "SUCCEEDED":
        d.phase(s.current, "Completed", "the job finished")
        return True
    if update.phase == "FAILED":
        d.status["lastError"] = update.error
        d.phase(s.current, "Failed", update.error or "the job failed", warning=True)
        return True
    return False


def workers(s: Situation, d: Decision) -> None:
    """Replace worker pods that ended or are beyond the parallelism; create missing ones
    once the coordinator has an address."""
    present = {p.index: p for p in s.mine if p.role == "worker"}
    ready = sum(1 for p in present.values() if p.ready)
    d.status["readyReplicas"] = ready
    d.status["ready"] = f"{ready}/{s.parallelism}"
    d.status["coordinatorIP"] = s.coordinator.ip
    broken = tuple(p.name for p in present.values()
                   if p.ended or p.index >= s.parallelism)
    if broken:
        d.actions.append(DeletePods(broken))
    missing = tuple(i for i in range(s.parallelism) if i not in present)
    if missing and s.coordinator.ip:
        d.actions.append(CreateWorkers(s.revision, missing, s.coordinator.ip))


def phase(s: Situation, d: Decision) -> None:
    """The phase the coordinator reports."""
    if s.update is not None:
        now = _COORDINATOR_PHASES.get(s.update.phase, s.current or "Deploying")
        d.phase(s.current, now, _MESSAGES[now], warning=now == "Recovering")
