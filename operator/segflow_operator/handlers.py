"""kopf wiring: a reconcile daemon per StreamJob, the optional final savepoint on
deletion, and the operator's settings. Run with ``segflow-operator``."""
from __future__ import annotations

import logging

import kopf

from segflow.coordinator.client import request_savepoint
from segflow.errors import SegflowError

from . import GROUP, PLURAL, VERSION, metrics
from .kube import Kube, load_configuration, now
from .loop import JobLoop, client_identity
from .manifests import COORDINATOR_PORT

log = logging.getLogger("segflow.operator")
STEP_SECONDS = 1.0
_kube: list[Kube] = []


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_) -> None:
    settings.posting.level = logging.WARNING        # our own events say what happened
    settings.watching.server_timeout = 60
    settings.persistence.finalizer = "segflow.io/final-savepoint"
    load_configuration()
    _kube.append(Kube())


@kopf.daemon(GROUP, VERSION, PLURAL, cancellation_timeout=10.0)
def reconcile(stopped: kopf.DaemonStopped, namespace: str, name: str, **_) -> None:
    """Runs while the StreamJob exists; each step is idempotent, so a restarted operator
    simply continues from the status."""
    loop = JobLoop(_kube[0], namespace, name)
    try:
        while not stopped:
            try:
                loop.step()
            except Exception:               # one bad step must not end the job's loop: log, count, retry
                metrics.ERRORS.inc()
                log.exception("reconcile of %s/%s failed; retrying", namespace, name)
            stopped.wait(STEP_SECONDS)
    finally:
        loop.close()


@kopf.on.delete(GROUP, VERSION, PLURAL, when=lambda spec, **_: bool(spec.get("finalSavepointOnDelete")))
def final_savepoint(status: dict, body: dict, namespace: str, name: str, **_) -> None:
    """Deleting a running job with ``finalSavepointOnDelete``: keep its state first. The
    savepoint is recorded in the status, so a repeated call does not take another."""
    address = status.get("coordinatorIP")
    if status.get("phase") not in ("Running",) or not address or status.get("finalSavepoint"):
        return
    try:
        identity = client_identity(_kube[0], namespace, name, int(status.get("revision", 0)))
        taken = request_savepoint(f"{address}:{COORDINATOR_PORT}", identity, timeout=120)
    except SegflowError as exc:
        _kube[0].event(dict(body), "SavepointFailed", f"final savepoint failed: {exc}", warning=True)
        return
    _kube[0].patch_status(namespace, name, {"finalSavepoint": {"id": taken.checkpoint_id, "location": taken.location,
                                                               "time": now()}})
    _kube[0].event(dict(body), "Savepoint", f"final savepoint {taken.checkpoint_id} taken before deletion "
                                            f"({taken.location})")
