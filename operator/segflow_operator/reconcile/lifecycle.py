"""Deploy, suspend, resume and upgrade: the reconcilers that start a new revision of the
job or end the current one."""
from __future__ import annotations

from segflow.disaster.lease import says_fenced
from segflow.errors import EXIT_FENCED, EXIT_STORE_UNREACHABLE

from .actions import Decision, Event, Savepoint
from .deployment import deploy
from .savepoints import request
from .situation import Situation
from .status import Phase
from .views import CoordinatorPhase, PodPhase


def finished(s: Situation, d: Decision) -> bool:
    """A completed or failed job stays so until its spec changes; a failed one's workers
    (restarted on failure) are stopped, its coordinator pod keeps the message."""
    if s.current is None or not s.current.final or s.changed:
        return False
    if s.current == Phase.FAILED:
        d.delete([p for p in s.mine if p.role == "worker" and p.phase in (PodPhase.PENDING, PodPhase.RUNNING)])
    return True


def suspend(s: Situation, d: Decision) -> bool:
    spec = s.spec
    if spec.state != "suspended":
        return False
    if s.current == Phase.SUSPENDED or not s.mine:
        d.delete(s.mine)
        if s.current != Phase.SUSPENDED:
            d.status.resume_from = "auto" if spec.stateful else ""
        d.phase(Phase.SUSPENDED, "suspended")
        return True
    if s.savepoint_in_progress:
        return False                       # whichever savepoint runs, suspend after it
    if s.takes_savepoints and spec.upgrade_mode != "stateless" and s.running:
        request(d, s, Savepoint(s.coordinator_ip, "suspend"))
        return True
    d.delete(s.mine)
    d.status.resume_from = "auto" if spec.stateful and spec.upgrade_mode != "stateless" else ""
    d.phase(Phase.SUSPENDED, f"suspended without a savepoint ({_no_savepoint(s)})")
    return True


def _no_savepoint(s: Situation) -> str:
    spec = s.spec
    if not spec.stateful:
        return "the job runs without checkpointing"
    if spec.upgrade_mode == "stateless":
        return "upgradeMode is stateless"
    if not s.takes_savepoints:
        return f"the {s.deployed_protocol.value} protocol takes none: it resumes from its stored stable line"
    return "the job was not running"


def start(s: Situation, d: Decision) -> bool:
    """The first deployment, or a resume after a suspension."""
    resuming = s.current in (Phase.SUSPENDED, Phase.STANDBY)
    if s.revision != 0 and not resuming:
        return False
    if s.current == Phase.STANDBY and s.coordinator is not None and not s.coordinator.ended:
        return False                       # a warm standby's pods run the job from here
    restore = (s.status.resume_from or "") if resuming else s.spec.restore_from
    if s.current == Phase.SUSPENDED and restore and s.upgrade_refusal:
        return True                        # stays suspended: resuming would lose the state
    if resuming:
        message = f"resuming from savepoint {restore}" if restore else "resuming from the start"
    else:
        message = f"deploying, restoring checkpoint {restore}" if restore else "deploying"
    deploy(d, s.spec, s.revision + 1, restore, message)
    return True


def note_refusal(s: Situation, d: Decision) -> None:
    """A changed spec whose redeploy would lose the job's state (carry_over) is not
    deployed: say why once, and clear it once the spec no longer asks for it."""
    why = s.upgrade_refusal
    if why != (s.status.upgrade_refused or ""):
        d.status.upgrade_refused = why
        if why:
            d.events.append(Event("UpgradeRefused", why, warning=True))


def upgrade(s: Situation, d: Decision) -> bool:
    """The deployed spec differs from the wanted one: redeploy as upgradeMode says.
    ``savepoint`` needs a running job; otherwise it falls back to the last checkpoint."""
    spec = s.spec
    if s.upgrade_refusal or not s.changed or s.savepoint_in_progress:
        return False
    if s.takes_savepoints and spec.upgrade_mode == "savepoint" and s.running:
        request(d, s, Savepoint(s.coordinator_ip, "redeploy"))
        return True
    d.delete(s.mine)
    restore = "auto" if spec.stateful and spec.upgrade_mode != "stateless" else ""
    deploy(d, spec, s.revision + 1, restore,
           "redeploying the changed spec" + (" from its last checkpoint" if restore else " from the start"))
    return True


def fenced(s: Situation, d: Decision) -> bool:
    """The coordinator fenced itself (its update, its ended pod's exit code or message say
    so): it stopped because it could not prove the lease current (a renewal came late, the
    store did not answer), not because the job failed. ``decide`` runs only for the cluster holding the
    lease (a cluster that lost it stands by in ``disaster.standby``), so the job recovers
    here from the last complete checkpoint; the new revision is fenced like the last."""
    if s.spec.disaster_recovery is None or s.coordinator is None:
        return False
    update = s.update
    reported = update is not None and update.phase == CoordinatorPhase.FAILED and says_fenced(update.error)
    ended = s.coordinator.ended and (s.coordinator.exit_code == EXIT_FENCED or says_fenced(s.coordinator.message))
    if not reported and not ended:
        return False
    if not s.observed.lease_current:
        d.phase(s.current or Phase.RECOVERING, "the coordinator fenced itself; waiting until this cluster renews "
                "the job's lease (or loses it, and stands by)", warning=True)
        return True
    recover(s, d, "fenced itself while this cluster still holds the job's lease")
    return True


def coordinator_gone(s: Situation, d: Decision) -> bool:
    """The coordinator pod is missing or ended without telling us the job's outcome."""
    coordinator = s.coordinator
    if coordinator is not None and not coordinator.ended:
        return False
    if coordinator is not None and coordinator.phase == PodPhase.SUCCEEDED:
        d.phase(Phase.COMPLETED, "the job finished")
        return True
    unreachable = coordinator is not None and coordinator.exit_code == EXIT_STORE_UNREACHABLE
    if coordinator is not None and coordinator.exit_code is not None and coordinator.exit_code < 128 \
            and not unreachable:
        why = coordinator.message.strip() or "no message (its terminationMessagePolicy is not FallbackToLogsOnError?)"
        message = f"pod {coordinator.name} exited with code {coordinator.exit_code}: {why}"
        d.status.last_error = message
        d.phase(Phase.FAILED, message, warning=True)
        return True
    if s.current is None or not s.current.runs:
        return True
    recover(s, d, "could not reach the state store" if unreachable else "was lost")
    return True


def recover(s: Situation, d: Decision, why: str) -> None:
    """Redeploy the job from its last complete checkpoint (from the start without
    checkpointing), counting one recovery: the coordinator ``why``."""
    d.delete(s.mine)
    restore = "auto" if s.spec.stateful else ""
    counted = s.status.recoveries if s.status.recoveries is not None else s.status.recoveries_base or 0
    d.status.recoveries_base = counted + 1
    how = "from the last complete checkpoint" if restore else "from the start (no checkpointing)"
    deploy(d, s.spec, s.revision + 1, restore, f"the coordinator {why}; redeploying {how}", Phase.RECOVERING)
