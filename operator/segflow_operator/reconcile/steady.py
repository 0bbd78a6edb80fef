"""A deployed job's revision as it runs: the coordinator's updates become the status, and
missing or broken worker pods are replaced."""
from __future__ import annotations

from segflow.checkpoint.segment_plan import WindowSize

from .actions import CreateWorkers, DeletePods, Decision
from .savepoints import record
from .situation import Situation
from .status import Checkpoint, Phase
from .views import CoordinatorPhase

_COORDINATOR_PHASES = {CoordinatorPhase.WAITING_FOR_WORKERS: Phase.DEPLOYING, CoordinatorPhase.RUNNING: Phase.RUNNING,
                       CoordinatorPhase.RECOVERING: Phase.RECOVERING}
_MESSAGES = {Phase.DEPLOYING: "waiting for the workers", Phase.RUNNING: "running",
             Phase.RECOVERING: "recovering from the last complete checkpoint"}


def job_outcome(s: Situation, d: Decision) -> bool:
    """Counters from the coordinator's update; True when it reports the job's end."""
    update = s.update
    if update is None:
        return False
    d.status.recoveries = (s.status.recoveries_base or 0) + update.recoveries
    known = s.status.last_checkpoint
    if update.last_checkpoint and (known is None or update.last_checkpoint != known.id):
        d.status.last_checkpoint = Checkpoint(update.last_checkpoint, s.observed.now)
    if update.windows:
        d.status.pending_windows = {str(b): WindowSize(v, n, r, lag) for b, v, n, r, lag in update.windows}
    if update.restored:
        d.status.restored = update.restored
    known_savepoint = s.status.savepoint
    if update.last_savepoint and (known_savepoint is None or update.last_savepoint != known_savepoint.id) \
            and d.status.savepoint == known_savepoint:
        # a periodic one (asked-for ones are recorded on their answer)
        record(s, d, update.last_savepoint, 0, update.last_savepoint_location)
    if update.phase == CoordinatorPhase.SUCCEEDED:
        d.phase(Phase.COMPLETED, "the job finished")
        return True
    if update.phase == CoordinatorPhase.FAILED:
        d.status.last_error = update.error
        d.phase(Phase.FAILED, update.error or "the job failed", warning=True)
        return True
    return False


def workers(s: Situation, d: Decision) -> None:
    """Replace worker pods that ended or are beyond the parallelism and the standbys; create
    missing ones once the coordinator has an address. Ready counts standbys' pods too:
    which pod does a slot's work changes with every takeover."""
    present = {p.index: p for p in s.mine if p.role == "worker"}
    pods = s.parallelism + s.standby_workers
    ready = sum(1 for p in present.values() if p.ready and p.index < pods)
    d.status.ready_replicas = ready
    d.status.ready = f"{ready}/{pods}"
    d.status.coordinator_ip = s.coordinator_ip
    broken = tuple(p.name for p in present.values()
                   if p.ended or p.index >= pods)
    if broken:
        d.actions.append(DeletePods(broken))
    missing = tuple(i for i in range(pods) if i not in present)
    if missing and s.coordinator_ip:
        d.actions.append(CreateWorkers(s.revision, missing, s.coordinator_ip))


def phase(s: Situation, d: Decision) -> None:
    """The phase the coordinator reports."""
    if s.update is not None:
        now = _COORDINATOR_PHASES.get(s.update.phase, s.current or Phase.DEPLOYING)
        d.phase(now, _MESSAGES[now], warning=now == Phase.RECOVERING)
