"""One StreamJob's reconcile loop: observe, decide (pure), act, record in the status."""
from __future__ import annotations

import json
import logging
import os
import threading
import time
from dataclasses import replace

from kubernetes.client.rest import ApiException

from segflow.batch import progress
from segflow.batch.location import open_location
from segflow.coordinator.client import request_savepoint
from segflow.disaster.lease import LeaseDecision
from segflow.errors import SegflowError
from segflow.observability.follow_metrics import FollowSample
from segflow.security.identities import Identity

from . import failpoints, job_tls, manifests, metrics
from .kube import Kube, now
from .lease_keeper import LeaseKeeper
from .lease_thread import LeaseThread
from .namespace_watch import NamespaceWatch
from .follow_probe import probe
from .observe import pod_view
from .reconcile import CreateWorkers, Decision, DeletePods, Deploy, Event, Observed, Savepoint, decide
from .reconcile.deployment import revision_spec
from .reconcile.disaster import dr_status, standby, standby_status, warm_standby
from .reconcile.follow import summarize
from .reconcile.status import Condition, DisasterRecoveryStatus, JobStatus, PendingDeploy, Phase
from .savepoint_requests import SavepointRequests
from .spec import InvalidSpec, StreamJobSpec, check_endpoints, parse
from .watcher import CoordinatorWatcher

log = logging.getLogger("segflow.operator")
# Where job pods bind /metrics and the web view: the chart sets 0.0.0.0 so that kubectl
# port-forward (which dials the pod's loopback) reaches them; "" binds the pod IP only.
JOB_METRICS_HOST = os.environ.get("SEGFLOW_JOB_METRICS_HOST", "")
ALLOWED_S3_ENDPOINTS = frozenset(e.strip() for e in os.environ.get("SEGFLOW_ALLOWED_S3_ENDPOINTS", "").split(",")
                                 if e.strip())


class JobLoop:
    def __init__(self, kube: Kube, namespace: str, name: str):
        self.kube = kube
        self.namespace = namespace
        self.name = name
        self.watcher = CoordinatorWatcher()
        self.savepoints = SavepointRequests(
            lambda address, revision, timeout: request_savepoint(address, self.identity(revision), timeout))
        self.identities: dict[int, Identity] = {}
        self.backoff = Backoff()
        self.progress_store: tuple | None = None     # ((output, endpoint), store) of the batch stage
        self.lease: LeaseThread | None = None
        self.namespace_watch: NamespaceWatch | None = None
        self.terminating = ""                # why the job's namespace can no longer run it ("" while it can)
        self.woken = threading.Event()       # the lease's thread changed whether this cluster runs the job

    @property
    def keeper(self) -> LeaseKeeper | None:
        return self.lease.keeper if self.lease is not None else None

    def close(self) -> None:
        self.watcher.close()
        if self.namespace_watch is not None:
            self.namespace_watch.stop()
        if self.lease is not None:
            self.lease.close()

    def pause(self, seconds: float) -> None:
        """Between steps: ``seconds``, or less once the lease's thread has news."""
        self.woken.wait(seconds)
        self.woken.clear()

    def step(self) -> None:
        if self.backoff.waiting or self.terminating:       # a deleting namespace takes the job's objects
            return
        body = self.kube.get_job(self.namespace, self.name)
        if body is None or body["metadata"].get("deletionTimestamp"):
            return
        status = JobStatus.parse(body.get("status"))
        try:
            spec = parse(body.get("spec") or {})
            check_endpoints(spec, ALLOWED_S3_ENDPOINTS)
        except InvalidSpec as exc:
            decision = Decision(status)
            decision.status.last_error = str(exc)
            decision.phase(Phase.FAILED, f"invalid spec: {exc}", warning=True)
            self._record(body, status, decision)
            return
        pods = tuple(pod_view(p) for p in self.kube.pods(self.namespace, self.name))
        if spec.disaster_recovery is not None:
            leased = self._lease(body, spec, status, pods)
            if leased is None:
                return
            spec = leased
        revision = status.revision or 0
        coordinator = next((p for p in pods if p.role == "coordinator" and p.revision == revision
                            and not p.deleting), None)
        address = f"{coordinator.ip}:{manifests.COORDINATOR_PORT}" if coordinator and coordinator.ip else ""
        update = self.watcher.follow(address, self.identity(revision) if address else None)
        observed = Observed(pods, update, now(), self.savepoints.view(status.savepoint_in_progress),
                            lease_current=self._lease_current())
        decision = decide(spec, status, observed)
        decision.status.selector = manifests.worker_selector(self.name)
        decision.status.web_url = manifests.web_url(self.namespace, self.name, spec)
        if self.keeper is not None and spec.disaster_recovery is not None:
            decision.status.disaster_recovery = self._dr_status(spec, decision.status)
        if spec.batch_stage is not None:
            self._batch_status(spec, decision)
        metrics.RECONCILES.inc()
        self._apply(body, spec, status, decision)

    def _lease(self, body: dict, spec: StreamJobSpec, status: JobStatus, pods: tuple) -> StreamJobSpec | None:
        """Disaster recovery: keep the lease, and stand by (None) unless this cluster holds
        it. A holder whose role became standby suspends the job through a savepoint, then
        releases the lease for the primary to take (a planned switch-over loses nothing)."""
        dr = spec.disaster_recovery
        assert dr is not None, "only a job with disasterRecovery holds a lease"
        keeper = self.keeper
        if keeper is None or (keeper.dr.backup_url, keeper.dr.s3_endpoint, keeper.dr.cluster) \
                != (dr.backup_url, dr.s3_endpoint, dr.cluster):
            if self.lease is not None:
                self.lease.close()
            keeper = LeaseKeeper(dr, manifests.state_job_name(self.namespace, self.name))
            self.lease = LeaseThread(keeper, self.woken.set, self._took_over)
        if self.namespace_watch is None:
            self.namespace_watch = NamespaceWatch(self.kube.core, self.namespace, self._namespace_terminating)
        assert self.lease is not None
        keeper.dr = dr                               # a new role or failover time applies at once
        previous = status.disaster_recovery or DisasterRecoveryStatus()
        adopt = (previous.generation or 0) if previous.active_cluster == dr.cluster else 0
        lease = self.lease.decision(release=keeper.switching_over and status.phase == Phase.SUSPENDED,
                                    adopt_generation=adopt, adopt_role=previous.held_as or "")
        metrics.LEASE_GENERATION.labels(self.namespace, self.name).set(self.generation)
        if lease.active:
            metrics.STANDBY_READY_WORKERS.labels(self.namespace, self.name).set(0)
            metrics.FOLLOW_LAG_SECONDS.labels(self.namespace, self.name).set(0)
            return replace(spec, state="suspended") if keeper.switching_over else spec
        observed = Observed(pods, None, now())
        decision = warm_standby(spec, status, observed, lease) if dr.warm else standby(status, observed, lease)
        follow = summarize(probe(list(pods), spec.metrics_port)) if dr.hot else None
        metrics.FOLLOW_LAG_SECONDS.labels(self.namespace, self.name).set(follow.lag_seconds if follow else 0)
        decision.status.disaster_recovery = self._dr_status(spec, decision.status, follow)
        ready = sum(1 for p in pods if p.role == "worker" and p.ready and not p.deleting) if dr.warm else 0
        metrics.STANDBY_READY_WORKERS.labels(self.namespace, self.name).set(ready)
        self.watcher.follow("")
        self._apply(body, spec, status, decision)
        return None

    def _namespace_terminating(self, reason: str) -> None:
        """Called by the namespace's watch once the namespace is going: the job's coordinator
        cannot come back here, so the lease goes stale now and the standby takes over."""
        self.terminating = reason
        if self.lease is not None:
            self.lease.abandon(reason)
        self.woken.set()

    def _took_over(self, decision: LeaseDecision) -> None:
        """Called by the lease's thread once per takeover."""
        metrics.TAKEOVERS.labels(self.namespace, self.name).inc()
        log.warning("%s/%s: %s; now holding generation %d", self.namespace, self.name, decision.reason,
                    decision.write.generation if decision.write else 0)

    def identity(self, revision: int) -> Identity:
        """The operator's client certificate for ``revision``'s coordinator (from its Secret)."""
        if revision not in self.identities:
            self.identities = {revision: client_identity(self.kube, self.namespace, self.name, revision)}
        return self.identities[revision]

    def _lease_current(self) -> bool:
        """Whether this cluster's lease is before its deadline now (True without disaster
        recovery): only then may a fenced job be redeployed."""
        keeper = self.keeper
        if keeper is None:
            return True
        held = keeper.held
        return held is not None and time.time() < held.deadline

    @property
    def generation(self) -> int:
        """Of the job's lease this cluster holds (0: none, or no disaster recovery)."""
        held = self.keeper.held if self.keeper is not None else None
        return held.generation if held is not None else 0

    def _dr_status(self, spec: StreamJobSpec, wanted: JobStatus,
                   follow: FollowSample | None = None) -> DisasterRecoveryStatus:
        """``status.disasterRecovery`` for the status ``wanted`` after this step (``follow``:
        what a hot standby's workers follow)."""
        keeper, dr = self.keeper, spec.disaster_recovery
        assert keeper is not None and dr is not None, "only a job with disasterRecovery has a lease status"
        result = replace(dr_status(dr.cluster, dr.role, wanted.disaster_recovery, keeper.lease, keeper.taken,
                                   wanted.phase, time.time(), wanted.restored or ""),
                         standby=standby_status(spec, wanted, follow))
        return replace(result, held_as=keeper.held_as) if keeper.held is not None else result

    def _batch_status(self, spec: StreamJobSpec, decision: Decision) -> None:
        """``status.batchStage`` from the stage's progress record. The operator reads the
        record where the sidecar writes it (its output: S3 on a real cluster, so the
        operator needs read access to that bucket), rather than asking the sidecar: the
        record outlives the pod, so the status shows the final run of a finished job too."""
        stage = spec.batch_stage
        assert stage is not None, "only a job with a batchStage has its status"
        where = (stage.output, stage.s3_endpoint)
        try:
            if self.progress_store is None or self.progress_store[0] != where:
                self.progress_store = (where, open_location(stage.output, stage.s3_endpoint or None))
            decision.status.batch_stage = progress.summary(progress.load(self.progress_store[1]))
        except (SegflowError, ValueError) as exc:      # unreadable now: keep the last status, say why
            log.warning("%s/%s: cannot read the batch stage's progress: %s", self.namespace, self.name, exc)

    def _apply(self, body: dict, spec: StreamJobSpec, status: JobStatus, decision: Decision) -> None:
        """Acts on the decision, recording intent first: a new revision is written to the
        status (with ``pendingDeploy``) before any of its objects is created, and a
        savepoint is asked for only after the status records that it was; so an operator
        restarted at any point creates what is missing (creation is idempotent) instead of
        taking its own pods for stale ones or forgetting a request. An object the API
        refuses (quota, admission, validation) is reported in the status and an event,
        and tried again with back-off."""
        deploys = [a for a in decision.actions if isinstance(a, Deploy)]
        if deploys:
            decision.status.pending_deploy = PendingDeploy(deploys[0].revision, deploys[0].restore)
            status = self._record(body, status, decision)
        requested = []
        try:
            for action in decision.actions:
                if isinstance(action, DeletePods):
                    for name in action.names:
                        self.kube.delete_pod(self.namespace, name)
                elif isinstance(action, Deploy):
                    self._deploy(body, spec, action)
                elif isinstance(action, CreateWorkers):
                    deployed = revision_spec(decision.status, spec)
                    for index in action.indices:
                        self._create(manifests.worker_pod(body, deployed, action.revision, index,
                                                          action.coordinator_ip, JOB_METRICS_HOST))
                elif isinstance(action, Savepoint):
                    requested.append(action)
        except CreateRefused as refused:
            self._refused(body, status, str(refused))
            return
        self.backoff.succeeded()
        if deploys:
            decision.status.pending_deploy = None
        self._record(body, status, decision)
        revision = decision.status.revision or 0
        for action in requested:
            self.savepoints.start(f"{action.coordinator_ip}:{manifests.COORDINATOR_PORT}", action.then,
                                  action.nonce, revision)

    def _deploy(self, body: dict, spec: StreamJobSpec, action: Deploy) -> None:
        self.watcher.follow("")
        self.kube.delete_secret(self.namespace, job_tls.secret_name(self.name, action.revision - 1))
        for manifest in [manifests.state_key_secret(body), manifests.tls_secret(body, spec, action.revision),
                         manifests.config_map(body, spec), *manifests.services(body, spec),
                         manifests.network_policy(body),
                         manifests.coordinator_pod(body, spec, action.revision, action.restore, self.generation,
                                                   JOB_METRICS_HOST)]:
            self._create(manifest)

    def _create(self, manifest: dict) -> None:
        try:
            if self.kube.create(manifest):
                failpoints.reached("after-create")
        except ApiException as exc:
            if exc.status is None or exc.status >= 500 or exc.status == 429:
                raise                                  # the API is unwell: the next step tries again
            reason = _api_reason(exc)
            raise CreateRefused(f"the API server refused to create {manifest['kind']} "
                                f"{manifest['metadata']['name']}: {reason}") from None

    def _refused(self, body: dict, status: JobStatus, message: str) -> None:
        delay = self.backoff.failed()
        refusal = Decision(status)
        refusal.status.last_error = message
        if status.last_error != message:
            refusal.events.append(Event("CreateRefused", f"{message}; retrying in {delay:.0f} s", warning=True))
        self._record(body, status, refusal)
        log.warning("%s/%s: %s; retrying in %.0f s", self.namespace, self.name, message, delay)

    def _record(self, body: dict, status: JobStatus, decision: Decision) -> JobStatus:
        """Write what changed since ``status`` to the status (and emit the decision's
        events); the status as it now is."""
        wanted = decision.status
        wanted.observed_generation = body["metadata"].get("generation")
        phase = wanted.phase
        if phase:
            wanted.conditions = (_ready_condition(phase, wanted.message or "", status),)
        changed = wanted.patch(status)
        if changed:
            try:
                self.kube.patch_status(self.namespace, self.name, changed)
            except ApiException as exc:
                if exc.status != 404:
                    raise
                return status
            failpoints.reached("after-status")
        for event in decision.events:
            self._event(body, event)
        decision.events.clear()
        if phase:
            metrics.PHASE.labels(self.namespace, self.name).state(phase)
        return wanted.copy()

    def _event(self, body: dict, event: Event) -> None:
        log.info("%s/%s %s: %s", self.namespace, self.name, event.reason, event.message)
        self.kube.event(body, event.reason, event.message, event.warning)


class CreateRefused(SegflowError):
    """The API server refused an object the operator creates (not a transient failure)."""


def _api_reason(exc: ApiException) -> str:
    """The API server's message of a refusal (its Status body), or the HTTP reason."""
    try:
        return json.loads(exc.body or "{}").get("message") or exc.reason
    except ValueError:
        return str(exc.reason)


class Backoff:
    """Seconds to wait before trying a refused creation again: doubling up to a minute."""

    def __init__(self, first: float = 2.0, longest: float = 60.0):
        self.first, self.longest = first, longest
        self.delay = 0.0
        self.until = 0.0

    def failed(self) -> float:
        self.delay = min(self.longest, self.delay * 2 or self.first)
        self.until = time.monotonic() + self.delay
        return self.delay

    def succeeded(self) -> None:
        self.delay, self.until = 0.0, 0.0

    @property
    def waiting(self) -> bool:
        return time.monotonic() < self.until


def client_identity(kube: Kube, namespace: str, job: str, revision: int) -> Identity:
    name = job_tls.secret_name(job, revision)
    secret = kube.secret(namespace, name)
    if secret is None:
        raise SegflowError(f"the certificates of revision {revision} (Secret {namespace}/{name}) are gone: the "
                           "operator cannot talk to its coordinator; delete the revision's pods to redeploy")
    return job_tls.client_identity(secret)


def _ready_condition(phase: Phase, message: str, status: JobStatus) -> Condition:
    ready = "True" if phase.ready else "False"
    previous = next((c for c in status.conditions or () if c.type == "Ready"), Condition())
    since = previous.last_transition_time if previous.status == ready else now()
    return Condition(type="Ready", status=ready, reason=phase.value, message=message, last_transition_time=since)
