"""What the operator does next for one StreamJob, decided from its spec, its status and
what is observed of its pods and its coordinator. Pure: the handlers do the I/O.

The status is the operator's memory: ``revision`` counts deployments (a redeploy starts a
new one and the pods of older ones are deleted), ``deployed`` says what the current
revision runs, and nonces record which savepoint trigger was served.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .spec import JobSpec

RUNNING_PHASES = ("Deploying", "Running", "Recovering")


@dataclass(frozen=True)
class PodView:
    name: str
    role: str                  # coordinator | worker
    revision: int
    index: int = 0
    phase: str = "Pending"     # Pending | Running | Succeeded | Failed
    ip: str = ""
    ready: bool = False
    deleting: bool = False
    exit_code: int | None = None
    message: str = ""


@dataclass(frozen=True)
class CoordinatorView:
    """The latest update streamed by the job's coordinator."""
    phase: str                 # WAITING_FOR_WORKERS | RUNNING | RECOVERING | SUCCEEDED | FAILED
    recoveries: int = 0
    last_checkpoint: int = 0
    error: str = ""


@dataclass(frozen=True)
class Observed:
    pods: tuple[PodView, ...] = ()
    coordinator: CoordinatorView | None = None
    now: str = ""              # RFC 3339, for timestamps written to the status


@dataclass(frozen=True)
class Deploy:
    revision: int
    restore: str               # checkpoint id, "auto" or "" (from the start)


@dataclass(frozen=True)
class CreateWorkers:
    revision: int
    indices: tuple[int, ...]
    coordinator_ip: str


@dataclass(frozen=True)
class DeletePods:
    names: tuple[str, ...]


@dataclass(frozen=True)
class Savepoint:
    """Take a savepoint through the coordinator; ``then`` says what follows on success:
    record it (a nonce), suspend, or redeploy from it."""
    coordinator_ip: str
    then: str                  # record | suspend | redeploy
    nonce: int = 0


@dataclass(frozen=True)
class Event:
    reason: str
    message: str
    warning: bool = False


@dataclass
class Decision:
    actions: list = field(default_factory=list)
    status: dict = field(default_factory=dict)       # merged into .status
    events: list = field(default_factory=list)

    def phase(self, current: str, phase: str, message: str, warning: bool = False) -> None:
        self.status["phase"] = phase
        self.status["message"] = message
        if phase != current:
            self.events.append(Event(phase, message, warning))


def decide(spec: JobSpec, status: dict, observed: Observed) -> Decision:
    d = Decision()
    current = status.get("phase", "")
    revision = int(status.get("revision", 0))
    mine = [p for p in observed.pods if p.revision == revision and not p.deleting]
    stale = tuple(p.name for p in observed.pods if p.revision != revision and not p.deleting)
    if stale:
        d.actions.append(DeletePods(stale))
    coordinator = next((p for p in mine if p.role == "coordinator"), None)
    update = observed.coordinator if coordinator is not None else None
    running = update is not None and update.phase == "RUNNING" and coordinator.ip != ""
    changed = (status.get("deployed") or {}).get("hash") != spec.deployment_hash()

    if current in ("Completed", "Failed") and not changed:
        if current == "Failed":     # workers restart on failure: stop them; the coordinator pod keeps the message
            _delete_all(d, [p for p in mine if p.role == "worker" and p.phase in ("Pending", "Running")])
        return d
    if spec.state == "suspended":
        _suspend(d, spec, current, mine, coordinator, running)
        return d
    if revision == 0 or current == "Suspended":
        restore = str(status.get("resumeFrom", "")) if current == "Suspended" else spec.restore_from
        _deploy(d, spec, revision + 1, restore, current, _resumed(current, restore))
        return d
    if changed:
        _upgrade(d, spec, revision, current, mine, coordinator, running)
        return d
    if spec.savepoint_nonce != int(status.get("lastSavepointNonce", 0)):
        _trigger_savepoint(d, spec, coordinator, running)
    _steady(d, spec, status, revision, current, mine, coordinator, update, observed)
    return d


def _resumed(current: str, restore: str) -> str:
    if current == "Suspended":
        return f"resuming from savepoint {restore}" if restore else "resuming from the start"
    return f"deploying, restoring checkpoint {restore}" if restore else "deploying"


def _deploy(d: Decision, spec: JobSpec, revision: int, restore: str, current: str, message: str,
            phase: str = "Deploying") -> None:
    d.actions.append(Deploy(revision, restore))
    d.status.update({"revision": revision, "readyReplicas": 0, "coordinatorIP": "", "lastError": "",
                     "deployed": {"hash": spec.deployment_hash(), "parallelism": spec.parallelism,
                                  "restoredFrom": restore}})
    d.phase(current, phase, message, warning=phase == "Recovering")


def _delete_all(d: Decision, pods: list[PodView]) -> None:
    if pods:
        d.actions.append(DeletePods(tuple(p.name for p in pods)))


def _suspend(d: Decision, spec: JobSpec, current: str, mine: list[PodView], coordinator: PodView | None,
             running: bool) -> None:
    if current == "Suspended" or not mine:
        _delete_all(d, mine)
        if current != "Suspended":
            d.status["resumeFrom"] = "auto" if spec.stateful else ""
        d.phase(current, "Suspended", "suspended")
        return
    if spec.stateful and spec.upgrade_mode != "stateless" and running:
        d.actions.append(Savepoint(coordinator.ip, "suspend"))
        return
    _delete_all(d, mine)
    d.status["resumeFrom"] = "auto" if spec.stateful and spec.upgrade_mode != "stateless" else ""
    d.phase(current, "Suspended", "suspended without a savepoint (the job was not running)")


def _upgrade(d: Decision, spec: JobSpec, revision: int, current: str, mine: list[PodView],
             coordinator: PodView | None, running: bool) -> None:
    """The deployed spec differs from the wanted one: redeploy as upgradeMode says.
    ``savepoint`` needs a running job; otherwise it falls back to the last checkpoint."""
    if spec.stateful and spec.upgrade_mode == "savepoint" and running:
        d.actions.append(Savepoint(coordinator.ip, "redeploy"))
        return
    _delete_all(d, mine)
    restore = "auto" if spec.stateful and spec.upgrade_mode != "stateless" else ""
    _deploy(d, spec, revision + 1, restore, current,
            "redeploying the changed spec" + (" from its last checkpoint" if restore else " from the start"))


def _trigger_savepoint(d: Decision, spec: JobSpec, coordinator: PodView | None, running: bool) -> None:
    if not spec.stateful:
        d.status["lastSavepointNonce"] = spec.savepoint_nonce
        d.events.append(Event("SavepointRefused", "savepointTriggerNonce changed but the job runs without "
                              "checkpointing (protocol none): nothing to save", warning=True))
    elif running:
        d.actions.append(Savepoint(coordinator.ip, "record", spec.savepoint_nonce))


_COORDINATOR_PHASES = {"WAITING_FOR_WORKERS": "Deploying", "RUNNING": "Running", "RECOVERING": "Recovering"}


def _steady(d: Decision, spec: JobSpec, status: dict, revision: int, current: str, mine: list[PodView],
            coordinator: PodView | None, update: CoordinatorView | None, observed: Observed) -> None:
    base = int(status.get("recoveriesBase", 0))
    if update is not None:
        d.status["recoveries"] = base + update.recoveries
        known = (status.get("lastCheckpoint") or {}).get("id")
        if update.last_checkpoint and update.last_checkpoint != known:
            d.status["lastCheckpoint"] = {"id": update.last_checkpoint, "time": observed.now}
    if update is not None and update.phase == "SUCCEEDED":
        d.phase(current, "Completed", "the job finished")
        return
    if update is not None and update.phase == "FAILED":
        d.status["lastError"] = update.error
        d.phase(current, "Failed", update.error or "the job failed", warning=True)
        return
    if coordinator is None or coordinator.phase in ("Failed", "Succeeded"):
        _coordinator_gone(d, spec, status, revision, current, mine, coordinator, base)
        return
    workers = {p.index: p for p in mine if p.role == "worker"}
    d.status["readyReplicas"] = sum(1 for p in workers.values() if p.ready)
    d.status["coordinatorIP"] = coordinator.ip
    broken = tuple(p.name for p in workers.values() if p.phase in ("Failed", "Succeeded") or p.index >= spec.parallelism)
    if broken and (update is None or update.phase != "SUCCEEDED"):
        d.actions.append(DeletePods(broken))
    missing = tuple(i for i in range(spec.parallelism) if i not in workers)
    if missing and coordinator.ip:
        d.actions.append(CreateWorkers(revision, missing, coordinator.ip))
    if update is not None:
        phase = _COORDINATOR_PHASES.get(update.phase, current or "Deploying")
        message = {"Deploying": "waiting for the workers", "Running": "running",
                   "Recovering": "recovering from the last complete checkpoint"}[phase]
        d.phase(current, phase, message, warning=phase == "Recovering")


def _coordinator_gone(d: Decision, spec: JobSpec, status: dict, revision: int, current: str,
                      mine: list[PodView], coordinator: PodView | None, base: int) -> None:
    """The coordinator pod is missing or ended without telling us the job's outcome."""
    if coordinator is not None and coordinator.phase == "Succeeded":
        d.phase(current, "Completed", "the job finished")
        return
    if coordinator is not None and coordinator.exit_code is not None and coordinator.exit_code < 128:
        message = coordinator.message.strip() or f"the coordinator exited with code {coordinator.exit_code}"
        d.status["lastError"] = message
        d.phase(current, "Failed", message, warning=True)
        return
    if current not in RUNNING_PHASES:
        return
    _delete_all(d, mine)
    restore = "auto" if spec.stateful else ""
    d.status["recoveriesBase"] = int(status.get("recoveries", base)) + 1
    how = "from the last complete checkpoint" if restore else "from the start (no checkpointing)"
    _deploy(d, spec, revision + 1, restore, current, f"the coordinator was lost; redeploying {how}", "Recovering")


def after_savepoint(then: str, savepoint_id: int, spec: JobSpec, status: dict, mine: list[PodView],
                    now: str, nonce: int = 0) -> Decision:
    """What follows a savepoint the coordinator took (``then`` of the Savepoint action)."""
    d = Decision()
    d.status["savepoint"] = {"id": savepoint_id, "time": now, "nonce": nonce}
    d.events.append(Event("Savepoint", f"savepoint {savepoint_id} taken"))
    current = status.get("phase", "")
    if then == "record":
        d.status["lastSavepointNonce"] = nonce
    elif then == "suspend":
        _delete_all(d, mine)
        d.status["resumeFrom"] = str(savepoint_id)
        d.phase(current, "Suspended", f"suspended at savepoint {savepoint_id}")
    else:
        _delete_all(d, mine)
        _deploy(d, spec, int(status.get("revision", 0)) + 1, str(savepoint_id), current,
                f"redeploying the changed spec from savepoint {savepoint_id}")
    return d

