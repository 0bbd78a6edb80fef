"""The Kubernetes objects a StreamJob owns, rendered from its spec (pure).

One deployment of a job is a coordinator pod, ``parallelism`` worker pods (and
``standbyWorkers`` more, which wait idle to take over a lost one's replicas), a headless
service for each role, a config map with the job's description and a Secret with the
revision's certificates (see :mod:`.job_tls`). Pods carry the
deployment's *revision*: a redeploy (upgrade, rescale, resume) starts a new revision, so
pods of an older one are recognisably stale.
"""
from __future__ import annotations

import json
import secrets
from dataclasses import replace

from segflow.settings import CheckpointSettings
from segflow.state.sealing import STATE_KEY_ENV

from . import job_tls
from .pod_template import apply_template
from .spec import COORDINATOR_PORT, StreamJobSpec, checkpointing_shape
APP = "segflow"
JOB_LABEL = "segflow.io/job"
ROLE_LABEL = "segflow.io/role"
REVISION_LABEL = "segflow.io/revision"
INDEX_LABEL = "segflow.io/index"


def worker_selector(job: str) -> str:
    """The label selector of a job's worker pods, as the scale subresource reports it."""
    return f"{JOB_LABEL}={job},{ROLE_LABEL}=worker"


def coordinator_name(job: str, revision: int) -> str:
    """Pod names carry the revision: a redeploy never waits for old pods to be gone."""
    return f"{job}-{revision}-coordinator"


def worker_name(job: str, revision: int, index: int) -> str:
    return f"{job}-{revision}-worker-{index}"


def config_name(job: str) -> str:
    return f"{job}-job"


def state_job_name(namespace: str, job: str) -> str:
    """Names the job's snapshots in the state store: unique per namespace."""
    return f"{namespace}.{job}"


def owner_reference(body: dict) -> dict:
    meta = body["metadata"]
    return {"apiVersion": body.get("apiVersion", "segflow.io/v1alpha1"), "kind": "StreamJob",
            "name": meta["name"], "uid": meta["uid"], "controller": True, "blockOwnerDeletion": True}


def _metadata(body: dict, name: str, role: str, extra: dict | None = None) -> dict:
    labels = {"app.kubernetes.io/name": APP, "app.kubernetes.io/managed-by": "segflow-operator",
              JOB_LABEL: body["metadata"]["name"], ROLE_LABEL: role, **(extra or {})}
    return {"name": name, "namespace": body["metadata"]["namespace"], "labels": labels,
            "ownerReferences": [owner_reference(body)]}


def config_map(body: dict, spec: StreamJobSpec) -> dict:
    description = {"module": spec.module, "function": spec.function, "parameters": spec.parameters,
                   "parallelism": spec.parallelism, "checkpointing": checkpointing_shape(spec.checkpointing)}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _metadata(body, config_name(body["metadata"]["name"]),
                                                                           "config"),
            "data": {"job.json": json.dumps(description, sort_keys=True, indent=2)}}


def tls_secret(body: dict, spec: StreamJobSpec, revision: int) -> dict:
    job = body["metadata"]["name"]
    return job_tls.tls_secret(_metadata(body, job_tls.secret_name(job, revision), "tls",
                                        {REVISION_LABEL: str(revision)}), job, revision,
                               spec.parallelism + spec.standby_workers)


OPERATOR_POD = {"app.kubernetes.io/name": APP, "app.kubernetes.io/component": "operator"}
SCRAPER_LABEL = "segflow.io/scraper"


def network_policy(body: dict) -> dict:
    """Only the job's own pods, the operator, and pods labelled ``segflow.io/scraper:
    "true"`` (Prometheus) may connect to the job's pods. Defence in depth: every gRPC
    channel also demands a certificate of the revision's CA."""
    job = body["metadata"]["name"]
    peers = [{"podSelector": {"matchLabels": {JOB_LABEL: job}}},
             {"namespaceSelector": {}, "podSelector": {"matchLabels": OPERATOR_POD}},
             {"namespaceSelector": {}, "podSelector": {"matchLabels": {SCRAPER_LABEL: "true"}}}]
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": _metadata(body, f"{job}-isolation", "network-policy"),
            "spec": {"podSelector": {"matchLabels": {JOB_LABEL: job}}, "policyTypes": ["Ingress"],
                     "ingress": [{"from": peers}]}}


def state_key_name(job: str) -> str:
    return f"{job}-state-key"


def state_key_secret(body: dict) -> dict:
    """The key that seals the job's stored state (see ``segflow.state.sealing``), made once
    and kept. It has no owner: a StreamJob deleted and created again restores its state
    with it. For disaster recovery, create this Secret with the same value in every
    cluster before the job (the operator never replaces an existing one)."""
    job = body["metadata"]["name"]
    metadata = _metadata(body, state_key_name(job), "state-key")
    del metadata["ownerReferences"]
    return {"apiVersion": "v1", "kind": "Secret", "type": "Opaque", "metadata": metadata,
            "stringData": {"key": secrets.token_hex(32)}}


def services(body: dict, spec: StreamJobSpec) -> list[dict]:
    """Headless services: stable DNS names for the coordinator (its control port and its
    web view) and the workers on a real cluster (the operator itself addresses pods by IP,
    which works everywhere)."""
    job = body["metadata"]["name"]
    metrics = {"name": "metrics", "port": spec.metrics_port, "targetPort": "metrics"}
    result = []
    for role, name in (("coordinator", f"{job}-coordinator"), ("worker", f"{job}-workers")):
        result.append({"apiVersion": "v1", "kind": "Service", "metadata": _metadata(body, name, role),
                       "spec": {"clusterIP": "None", "publishNotReadyAddresses": True,
                                "selector": {JOB_LABEL: job, ROLE_LABEL: role},
                                "ports": [{"name": "control", "port": COORDINATOR_PORT}, metrics]}})
    return result


def web_url(namespace: str, job: str, spec: StreamJobSpec) -> str:
    """The coordinator's web view, by its Service (``kubectl port-forward svc/JOB-coordinator
    PORT`` reaches it from outside the cluster)."""
    return f"http://{job}-coordinator.{namespace}.svc:{spec.metrics_port}/"


_POD_IP_ENV = {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}


def _pod(body: dict, spec: StreamJobSpec, name: str, role: str, revision: int, args: list[str], holder: str,
         extra_labels: dict | None = None, resources: dict | None = None, metrics_host: str = "") -> dict:
    """``holder``: whose certificate of the revision the pod gets; ``metrics_host``: the
    address its metrics (and the coordinator's web view) bind to, "" for the pod IP."""
    job = body["metadata"]["name"]
    env = [_POD_IP_ENV, *job_tls.identity_env(job, revision, holder),
           {"name": STATE_KEY_ENV, "valueFrom": {"secretKeyRef": {"name": state_key_name(job), "key": "key"}}}]
    ports = [{"name": "metrics", "containerPort": spec.metrics_port, "protocol": "TCP"}]
    if role == "coordinator":
        ports.insert(0, {"name": "control", "containerPort": COORDINATOR_PORT, "protocol": "TCP"})
    container = _restricted({"name": role, "image": spec.image, "imagePullPolicy": spec.pull_policy,
                             "command": ["segflow"],
                             "args": [*args, "--metrics-port", str(spec.metrics_port),
                                      *(["--metrics-host", metrics_host] if metrics_host else [])],
                             "ports": ports, "env": env,
                             "terminationMessagePolicy": "FallbackToLogsOnError", "resources": resources})
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": _metadata(body, name, role, {REVISION_LABEL: str(revision), **(extra_labels or {})}),
            "spec": {"restartPolicy": "OnFailure", "containers": [container],
                     "terminationGracePeriodSeconds": 10, "automountServiceAccountToken": False,
                     "securityContext": POD_SECURITY, "volumes": [{"name": SCRATCH, "emptyDir": {}}]}}


# Pod Security "restricted": segflow's images run as uid 10001 and need no privilege; the
# root file system is read-only, so scratch space (Python, Spark) is an emptyDir at /tmp.
RUN_AS = 10001
SCRATCH = "tmp"
POD_SECURITY = {"runAsNonRoot": True, "runAsUser": RUN_AS, "runAsGroup": RUN_AS, "fsGroup": RUN_AS,
                "seccompProfile": {"type": "RuntimeDefault"}}
CONTAINER_SECURITY = {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True, "runAsNonRoot": True,
                      "capabilities": {"drop": ["ALL"]}, "seccompProfile": {"type": "RuntimeDefault"}}
# Requests and limits where the spec gives none: the coordinator is light, the Spark
# sidecar is not; workers take spec.resources (none: the namespace's defaults).
COORDINATOR_RESOURCES = {"requests": {"cpu": "100m", "memory": "256Mi"}, "limits": {"memory": "1Gi"}}
BATCH_STAGE_RESOURCES = {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"memory": "3Gi"}}


def _restricted(container: dict) -> dict:
    """``container`` with the restricted security context and a writable /tmp."""
    if not container.get("resources"):
        container.pop("resources", None)
    return {**container, "securityContext": CONTAINER_SECURITY,
            "volumeMounts": [{"name": SCRATCH, "mountPath": "/tmp"}]}


def job_settings(body: dict, spec: StreamJobSpec, revision: int, restore: str,
                 lease_generation: int = 0) -> CheckpointSettings:
    """The checkpoint settings of ``revision``'s coordinator; a standby's (no lease
    generation held) awaits the lease, and a hot one's workers follow the store every
    ``followSeconds``."""
    meta = body["metadata"]
    settings = replace(spec.checkpointing, job_name=state_job_name(meta["namespace"], meta["name"]),
                       restore=restore if spec.checkpointing.enabled else "", revision=revision)
    dr = spec.disaster_recovery
    if dr is None:
        return settings
    standing_by = not lease_generation
    return replace(settings, lease_owner=dr.cluster, lease_generation=lease_generation, await_lease=standing_by,
                   follow_interval=dr.follow_seconds if dr.hot and standing_by else 0.0)


def coordinator_pod(body: dict, spec: StreamJobSpec, revision: int, restore: str, lease_generation: int = 0,
                    metrics_host: str = "") -> dict:
    """``restore``: a checkpoint id, ``auto`` (latest if any) or "" (from the start).
    ``lease_generation``: with disaster recovery, the generation of the lease this cluster
    holds; the coordinator publishes nothing once another cluster holds a newer one. None
    held (a warm standby): the coordinator serves and holds its workers until this cluster
    takes the lease, then runs under that generation."""
    meta = body["metadata"]
    args = ["coordinator", spec.module, "--function", spec.function, "--workers", str(spec.parallelism),
            "--listen", f"$(POD_IP):{COORDINATOR_PORT}"]
    if spec.standby_workers:
        args += ["--standby-workers", str(spec.standby_workers)]
    for key, value in sorted(spec.parameters.items()):     # $$( keeps Kubernetes from expanding $(VAR)
        args += ["-p", f"{key}={value}".replace("$(", "$$(")]
    args += ["--settings", job_settings(body, spec, revision, restore, lease_generation).to_json()]
    pod = _pod(body, spec, coordinator_name(meta["name"], revision), "coordinator", revision, args, "coordinator",
               resources=COORDINATOR_RESOURCES, metrics_host=metrics_host)
    pod["spec"]["restartPolicy"] = "Never"    # the operator decides: a lost coordinator means a redeploy
    if spec.batch_stage is not None:
        pod["spec"]["containers"].append(batch_stage_container(spec, fresh=not restore))
    return apply_template(pod, spec.pod_template)


BATCH_STAGE_CONTAINER = "batch-stage"


def batch_stage_container(spec: StreamJobSpec, fresh: bool) -> dict:
    """The sidecar running ``segflow batch-stage`` beside the coordinator. It exits once
    the job's final epoch is processed, so a finished job's pod ends; a pod lost before
    that is redeployed with the coordinator, and the new sidecar continues from the
    progress record in the stage's output. ``fresh``: the job starts from the start (not
    restored), so the stage first removes earlier results and the commit markers an earlier
    run left; it does so at once, while the workers (created once the coordinator pod has
    an address) are still to come, so no marker of this run exists yet."""
    stage = spec.batch_stage
    assert stage is not None, "only a job with a batchStage has its sidecar"
    args = ["batch-stage", "--input", stage.input, "--output", stage.output, "--module", stage.module,
            "--function", stage.function, "--trigger", stage.trigger, "--spark-master", stage.spark_master,
            "--until-finished"]
    if stage.s3_endpoint:
        args += ["--s3-endpoint", stage.s3_endpoint]
    if fresh:
        args.append("--fresh")
    return _restricted({"name": BATCH_STAGE_CONTAINER, "image": stage.image, "imagePullPolicy": spec.pull_policy,
                        "command": ["segflow"], "args": args, "terminationMessagePolicy": "FallbackToLogsOnError",
                        "resources": BATCH_STAGE_RESOURCES})


def worker_pod(body: dict, spec: StreamJobSpec, revision: int, index: int, coordinator_ip: str,
               metrics_host: str = "") -> dict:
    """Worker ``index``; those past the parallelism are the standbys (a standby that took
    over a lost worker's slot keeps its pod, and the lost one's new pod stands by). With a
    hot standby the others follow the backup store until they run (a standby worker,
    which may wait for a slot as long as the job runs, follows nothing)."""
    job = body["metadata"]["name"]
    args = ["worker", "--coordinator", f"{coordinator_ip}:{COORDINATOR_PORT}", "--name", f"w{index}",
            "--host", "$(POD_IP)", *(["--standby"] if index >= spec.parallelism else []),
            *(["--await-lease"] if spec.disaster_recovery is not None and spec.disaster_recovery.warm else []),
            *(["--follow", job_settings(body, spec, revision, "auto").to_json()]
              if spec.disaster_recovery is not None and spec.disaster_recovery.hot and index < spec.parallelism
              else [])]
    return apply_template(_pod(body, spec, worker_name(job, revision, index), "worker", revision, args,
                               f"w{index}", {INDEX_LABEL: str(index)}, spec.resources or None, metrics_host),
                          spec.pod_template)
