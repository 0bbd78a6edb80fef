"""A deployed job's revision as it runs: the coordinator's updates become the status, and
missing or broken worker pods are replaced."""
from __future__ import annotations

from segflow.checkpoint.segment_plan import WindowSize

from .actions import CreateWorkers, Decision, DeletePods, Event
from .savepoints import record
from .situation import Situation
from .status import Checkpoint, Phase
from .views import CoordinatorPhase, Stuck

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


def stuck_pods(s: Situation, d: Decision) -> None:
    """A pod of the revision whose container crash-loops or cannot start: the status says
    which and why (the phase stays; the pod is retried as Kubernetes retries it), and an
    event says it once. The first such pod in name order speaks for the others."""
    stuck = sorted(((p.name, p.stuck) for p in s.mine if p.stuck is not None and not p.deleting),
                   key=lambda pair: pair[0])
    if not stuck:
        return
    message = stuck_message(*stuck[0]) + (f" (and {len(stuck) - 1} more pods)" if len(stuck) > 1 else "")
    d.status.message = message
    d.status.last_error = message
    if s.status.last_error != message:
        d.events.append(Event("PodFailing", message, warning=True))


STUCK_LOG_LINES = 10


def stuck_message(pod: str, stuck: Stuck) -> str:
    """``pod X: CrashLoopBackOff, restarted N times, last exit code C; its log ends: ...``,
    or for a container that cannot start, ``pod X: REASON: why``."""
    parts = [f"pod {pod}: {stuck.reason}"]
    if stuck.restarts:
        parts.append(f"restarted {stuck.restarts} time{'s' if stuck.restarts != 1 else ''}")
    if stuck.last_exit_code is not None:
        parts.append(f"last exit code {stuck.last_exit_code}")
    text = ", ".join(parts)
    if stuck.last_message.strip():
        lines = stuck.last_message.strip().splitlines()[-STUCK_LOG_LINES:]
        return text + "; its log ends:\n" + "\n".join(lines)
    return text + (f": {stuck.message}" if stuck.message and stuck.reason != "CrashLoopBackOff" else "")
