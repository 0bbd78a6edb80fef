"""kopf wiring: a reconcile daemon per StreamJob, the optional final savepoint on
deletion, and the operator's settings. Run with ``segflow-operator``.

The Kubernetes client is ``memo.kube``: made by the startup handler, and handed by kopf to
every handler in its ``memo`` (a test calls a handler with a memo holding its own)."""
from __future__ import annotations

import logging
from dataclasses import replace

import kopf

from segflow.coordinator.client import request_savepoint
from segflow.errors import SegflowError

from . import GROUP, PLURAL, VERSION, metrics
from .kube import Kube, load_configuration, now
from .loop import JobLoop, client_identity
from .manifests import COORDINATOR_PORT
from .reconcile.status import FinalSavepoint, JobStatus, Phase

log = logging.getLogger("segflow.operator")
STEP_SECONDS = 1.0


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, memo: kopf.Memo, **_) -> None:
    settings.posting.level = logging.WARNING        # our own events say what happened
    settings.watching.server_timeout = 60
    settings.persistence.finalizer = "segflow.io/final-savepoint"
    load_configuration()
    memo.kube = Kube()


@kopf.daemon(GROUP, VERSION, PLURAL, cancellation_timeout=10.0)
def reconcile(stopped: kopf.DaemonStopped, namespace: str | None, name: str, memo: kopf.Memo, **_) -> None:
    """Runs while the StreamJob exists; each step is idempotent, so a restarted operator
    simply continues from the status."""
    assert namespace is not None, "a StreamJob is namespaced"
    loop = JobLoop(memo.kube, namespace, name)
    try:
        while not stopped:
            try:
                loop.step()
            except Exception:               # one bad step must not end the job's loop: log, count, retry
                metrics.ERRORS.inc()
                log.exception("reconcile of %s/%s failed; retrying", namespace, name)
            loop.pause(STEP_SECONDS)
    finally:
        loop.close()


@kopf.on.delete(GROUP, VERSION, PLURAL, when=lambda spec, **_: bool(spec.get("finalSavepointOnDelete")))
def final_savepoint(status: kopf.Status, body: kopf.Body, namespace: str | None, name: str, memo: kopf.Memo,
                    **_) -> None:
    """Deleting a running job with ``finalSavepointOnDelete``: keep its state first. The
    savepoint is recorded in the status, so a repeated call does not take another."""
    assert namespace is not None, "a StreamJob is namespaced"
    kube: Kube = memo.kube
    observed = JobStatus.parse(status)
    address = observed.coordinator_ip
    if observed.phase != Phase.RUNNING or not address or observed.final_savepoint is not None:
        return
    try:
        identity = client_identity(kube, namespace, name, observed.revision or 0)
        taken = request_savepoint(f"{address}:{COORDINATOR_PORT}", identity, timeout=120)
    except SegflowError as exc:
        kube.event(dict(body), "SavepointFailed", f"final savepoint failed: {exc}", warning=True)
        return
    kept = replace(observed, final_savepoint=FinalSavepoint(taken.checkpoint_id, now(), taken.location))
    kube.patch_status(namespace, name, kept.patch(observed))
    kube.event(dict(body), "Savepoint", f"final savepoint {taken.checkpoint_id} taken before deletion "
                                            f"({taken.location})")
