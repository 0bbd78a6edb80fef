"""A StreamJob's spec as a typed value, with the checks the CRD schema cannot express."""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from urllib.parse import urlparse

from segflow.checkpoint.layout import parse_location
from segflow.errors import SegflowError
from segflow.settings import WINDOW_MEMORY_MB, CheckpointSettings


class InvalidSpec(ValueError):
    """The spec passed the schema but cannot run; the message says what to change."""


@dataclass(frozen=True)
class BatchStage:
    """``spec.batchStage``: the batch function run in the coordinator pod's sidecar."""
    module: str
    function: str
    input: str
    output: str
    image: str
    trigger: str = "onCheckpoint"
    spark_master: str = "local[1]"
    s3_endpoint: str = ""


@dataclass(frozen=True)
class DisasterRecovery:
    """``spec.disasterRecovery``: the job runs in whichever of two clusters holds its lease
    in the shared backup store (``segflow.disaster.lease``)."""
    backup_url: str
    cluster: str
    role: str = "primary"
    failover_after: float = 10.0
    s3_endpoint: str = ""
    standby: str = "warm"         # cold: no pods while standing by; warm: pods up, registered and idle; hot: warm
    follow_seconds: float = 1.0   # and its workers follow the primary's store, every follow_seconds

    @property
    def warm(self) -> bool:
        """The standby keeps its pods started (warm or hot)."""
        return self.standby in ("warm", "hot")

    @property
    def hot(self) -> bool:
        """The standby's workers follow the primary's store."""
        return self.standby == "hot"


STANDBY_MODES = ("cold", "warm", "hot")
FOLLOW_SECONDS = (0.1, 60.0)      # the shortest and longest spec.disasterRecovery.followSeconds


COORDINATOR_PORT = 7070      # the coordinator's gRPC control port
# Every job pod serves /metrics here (the coordinator also its web view), declared as the
# containerPort named "metrics" that PodMonitors select.
DEFAULT_METRICS_PORT = 9400


@dataclass(frozen=True)
class StreamJobSpec:
    image: str
    module: str
    function: str = "build"
    parameters: dict = field(default_factory=dict)
    parallelism: int = 1
    standby_workers: int = 0
    resources: dict = field(default_factory=dict)
    checkpointing: CheckpointSettings = CheckpointSettings()
    state: str = "running"
    upgrade_mode: str = "savepoint"
    savepoint_nonce: int = 0
    restart_nonce: int = 0
    restore_from: str = ""
    pull_policy: str = "IfNotPresent"
    batch_stage: BatchStage | None = None
    pod_template: dict = field(default_factory=dict)
    disaster_recovery: DisasterRecovery | None = None
    metrics_port: int = DEFAULT_METRICS_PORT
    raw: dict = field(default_factory=dict, compare=False, repr=False)     # as written, for status.deployed

    def deployment_hash(self) -> str:
        """What a running deployment is made of: a change here means a redeploy."""
        shape = {"image": self.image, "module": self.module, "function": self.function,
                 "parameters": self.parameters, "parallelism": self.parallelism,
                 "resources": self.resources, "checkpointing": checkpointing_shape(self.checkpointing),
                 "restartNonce": self.restart_nonce}
        if self.standby_workers:              # only when set, as below
            shape["standbyWorkers"] = self.standby_workers
        if self.batch_stage is not None:      # only when set: jobs without one keep their hash
            shape["batchStage"] = self.batch_stage.__dict__
        if self.pod_template:
            shape["podTemplate"] = self.pod_template
        if self.disaster_recovery is not None:      # its pods run fenced by the lease; roles change nothing
            shape["backupUrl"] = self.disaster_recovery.backup_url
        if self.metrics_port != DEFAULT_METRICS_PORT:
            shape["metricsPort"] = self.metrics_port
        return hashlib.sha256(json.dumps(shape, sort_keys=True).encode()).hexdigest()[:16]

    @property
    def stateful(self) -> bool:
        """Savepoints and restores need checkpoints and a store for them."""
        return self.checkpointing.enabled

    @property
    def takes_savepoints(self) -> bool:
        """A savepoint is a complete checkpoint of every replica at once: the uncoordinated
        protocols have none (they restore their stored stable line instead)."""
        return self.stateful and self.checkpointing.protocol.takes_savepoints


def checkpointing_shape(c: CheckpointSettings) -> dict:
    """``spec.checkpointing`` as it shapes a deployment (the job's name and restore point
    are chosen per deployment, not by the spec)."""
    savepoints = {"interval": c.savepoint_interval, "retain": c.savepoint_retain, "max_age": c.savepoint_max_age}
    return {"protocol": c.protocol.value, "interval": c.interval, "state_url": c.state_url,
            "s3_endpoint": c.s3_endpoint, "retain": c.retain,
            **({"connectors": c.connectors} if c.connectors else {}),
            **({"placement": c.placement} if c.placement != "spread" else {}),
            **({"window_memory_mb": c.window_memory_mb} if c.window_memory_mb != WINDOW_MEMORY_MB else {}),
            **({"savepoints": savepoints} if any(savepoints.values()) else {})}


STATE_SCHEMES = ("file", "redis", "rediss", "s3")
MODULE = re.compile(r"^[A-Za-z0-9_./-]+$")
FUNCTION = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _checkpointing(raw: dict, disaster_recovery: "DisasterRecovery | None" = None) -> CheckpointSettings:
    if disaster_recovery is not None:
        raw = {**raw, "stateUrl": disaster_recovery.backup_url, "s3Endpoint": disaster_recovery.s3_endpoint}
    for where in ("stateUrl", "s3Endpoint"):
        _no_password(f"spec.checkpointing.{where}", str(raw.get(where, "") or ""))
    protocol = raw.get("protocol", "aligned")
    interval = float(raw.get("intervalSeconds", 5))
    if interval <= 0:
        raise InvalidSpec(f"checkpointing.intervalSeconds must be positive, not {interval}")
    if protocol != "none" and not raw.get("stateUrl"):
        raise InvalidSpec(f"checkpointing.protocol {protocol!r} needs checkpointing.stateUrl "
                          "(file:///dir, redis://host:port/db or s3://bucket/prefix), or protocol: none")
    state_url = str(raw.get("stateUrl", "") or "")
    if state_url and _url("spec.checkpointing.stateUrl", state_url).scheme not in STATE_SCHEMES:
        raise InvalidSpec(f"spec.checkpointing.stateUrl {state_url!r}: use file:///dir, redis://host:port/db, "
                          "rediss://host:port/db or s3://bucket/prefix")
    periodic = raw.get("savepoints") or {}
    try:
        return CheckpointSettings(protocol=protocol, interval=interval, state_url=raw.get("stateUrl", ""),
                                  s3_endpoint=raw.get("s3Endpoint", ""), retain=int(raw.get("retain", 3)),
                                  connectors=raw.get("connectors", ""),
                                  placement=raw.get("placement", "spread"),
                                  window_memory_mb=float(raw.get("windowMemoryMiB", WINDOW_MEMORY_MB)),
                                  savepoint_interval=float(periodic.get("intervalSeconds", 0)),
                                  savepoint_retain=int(periodic.get("retain", 0)),
                                  savepoint_max_age=float(periodic.get("maxAgeSeconds", 0)))
    except (SegflowError, TypeError, ValueError) as exc:
        raise InvalidSpec(f"spec.checkpointing: {exc}") from None


MAX_PARALLELISM = 256
MAX_STANDBY_WORKERS = 16
# Kubernetes resource quantities (resource.Quantity's grammar) and resource names.
QUANTITY = re.compile(r"^[+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+|[numkMGTPE]|[KMGTPE]i)?$")
RESOURCE_NAME = re.compile(r"^(cpu|memory|ephemeral-storage|hugepages-[0-9]+[KMG]i|"
                           r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$")


def _integer(value, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)) or not str(value).lstrip("-").isdigit():
        raise InvalidSpec(f"{where} must be an integer, not {value!r}")
    return int(value)


def _resources(raw: dict) -> dict:
    """``spec.resources``: only requests and limits, of known resources, as quantities the
    API server accepts (a pod refused at creation would leave the job stuck)."""
    unknown = sorted(set(raw) - {"requests", "limits"})
    if unknown:
        raise InvalidSpec(f"spec.resources has unknown fields {unknown}: it takes requests and limits")
    for kind, amounts in raw.items():
        for name, amount in (amounts or {}).items():
            if not RESOURCE_NAME.match(str(name)):
                raise InvalidSpec(f"spec.resources.{kind} names {name!r}, which is not a resource (cpu, memory, "
                                  "ephemeral-storage, hugepages-<size>, or domain/name)")
            if not QUANTITY.match(str(amount)):
                raise InvalidSpec(f"spec.resources.{kind}.{name} is {amount!r}, not a quantity (e.g. 500m, 2, 1Gi)")
    return raw


def parse(spec: dict) -> StreamJobSpec:
    """The spec of a StreamJob (defaults applied by the API server, or here for an
    older object), checked for what the schema cannot say."""
    job = spec.get("job") or {}
    if not spec.get("image"):
        raise InvalidSpec("spec.image is required: the image of the segflow engine, e.g. segflow/engine:0.1.0")
    if not job.get("module"):
        raise InvalidSpec("spec.job.module is required: an importable job module such as examples.wordcount")
    if not MODULE.match(str(job["module"])) or not FUNCTION.match(str(job.get("function", "build"))):
        raise InvalidSpec("spec.job.module must be a module name or path (letters, digits, _ . / -) and "
                          "spec.job.function a Python name")
    parameters = job.get("parameters") or {}
    if not all(isinstance(v, str) for v in parameters.values()):
        raise InvalidSpec("spec.job.parameters values must be strings (quote numbers in YAML)")
    parallelism = _integer(spec.get("parallelism", 1), "spec.parallelism")
    if not 1 <= parallelism <= MAX_PARALLELISM:
        raise InvalidSpec(f"spec.parallelism must be between 1 and {MAX_PARALLELISM}, not {parallelism}")
    standby_workers = _integer(spec.get("standbyWorkers", 0), "spec.standbyWorkers")
    if not 0 <= standby_workers <= MAX_STANDBY_WORKERS:
        raise InvalidSpec(f"spec.standbyWorkers must be between 0 and {MAX_STANDBY_WORKERS}, not {standby_workers}")
    restore_from, raw_checkpointing = _restore_point(str(spec.get("restoreFrom", "") or ""),
                                                     spec.get("checkpointing") or {})
    disaster_recovery = _disaster_recovery(spec.get("disasterRecovery"), raw_checkpointing)
    checkpointing = _checkpointing(raw_checkpointing, disaster_recovery)
    pod_template = _pod_template(spec.get("podTemplate") or {})
    metrics_port = _integer(spec.get("metricsPort", DEFAULT_METRICS_PORT), "spec.metricsPort")
    if not 1024 <= metrics_port <= 65535 or metrics_port == COORDINATOR_PORT:
        raise InvalidSpec(f"spec.metricsPort must be between 1024 and 65535 and not {COORDINATOR_PORT} (the "
                          f"coordinator's control port), not {metrics_port}")
    batch_stage = _batch_stage(spec.get("batchStage"), spec["image"], parameters, checkpointing)
    parsed = StreamJobSpec(
        image=spec["image"], module=job["module"], function=job.get("function", "build"),
        parameters=dict(parameters), parallelism=parallelism, standby_workers=standby_workers,
        resources=_resources(spec.get("resources") or {}),
        checkpointing=checkpointing, state=spec.get("state", "running"),
        upgrade_mode=spec.get("upgradeMode", "savepoint"),
        savepoint_nonce=_integer(spec.get("savepointTriggerNonce", 0), "spec.savepointTriggerNonce"),
        restart_nonce=_integer(spec.get("restartNonce", 0), "spec.restartNonce"),
        restore_from=restore_from or ("auto" if disaster_recovery else ""),
        pull_policy=spec.get("imagePullPolicy", "IfNotPresent"), batch_stage=batch_stage,
        pod_template=pod_template, disaster_recovery=disaster_recovery, metrics_port=metrics_port,
        raw=json.loads(json.dumps(spec)))
    if parsed.restore_from and not parsed.stateful:
        raise InvalidSpec("spec.restoreFrom needs checkpointing (a protocol other than none and a stateUrl)")
    return parsed


def spark_image(job_image: str) -> str:
    """The batch stage's default image: Spark needs Java, which the stock engine image
    lacks, so ``segflow/engine:TAG`` becomes ``segflow/spark:TAG`` (images/spark.Dockerfile);
    any other image is taken to carry what the job needs, Java included."""
    name, at, digest = job_image.partition("@")
    repository, colon, tag = name.rpartition(":") if ":" in name.rsplit("/", 1)[-1] else (name, "", "")
    if repository.rsplit("/", 1)[-1] != "engine" or at:
        return job_image
    return repository[:-len("engine")] + "spark" + colon + tag


def _batch_stage(raw: dict | None, job_image: str, parameters: dict,
                 checkpointing: CheckpointSettings) -> BatchStage | None:
    """``spec.batchStage``, its input defaulting to the job's ``output`` parameter (where
    the examples' sinks write), its image to :func:`spark_image` and its S3 endpoint to
    the checkpoints'."""
    if not raw:
        return None
    for key in ("module", "function", "output"):
        if not raw.get(key):
            raise InvalidSpec(f"spec.batchStage.{key} is required (module and function of "
                              "def NAME(spark, records), and a directory or s3:// URL for the Parquet output)")
    source = raw.get("input") or parameters.get("output", "")
    if not source:
        raise InvalidSpec("spec.batchStage.input is required when the job has no output parameter: "
                          "the directory or s3:// URL its sink writes")
    if not checkpointing.enabled:
        raise InvalidSpec("spec.batchStage processes what completed checkpoints commit: set "
                          "checkpointing.protocol (and stateUrl), not none")
    trigger = str(raw.get("trigger", "onCheckpoint"))
    if trigger != "onCheckpoint":
        try:
            seconds = float(trigger)
        except ValueError:
            seconds = 0.0
        if seconds <= 0:
            raise InvalidSpec(f"spec.batchStage.trigger must be onCheckpoint or a positive number of seconds, "
                              f"not {trigger!r}")
    if source.rstrip("/") == raw["output"].rstrip("/"):
        raise InvalidSpec("spec.batchStage.output must differ from its input (the sink's output)")
    return BatchStage(module=raw["module"], function=raw["function"], input=source, output=raw["output"],
                      image=raw.get("image") or spark_image(job_image), trigger=trigger,
                      spark_master=raw.get("sparkMaster", "local[1]"),
                      s3_endpoint=raw.get("s3Endpoint") or checkpointing.s3_endpoint)


CLUSTER_NAME = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
MIN_FAILOVER_SECONDS = 2.0


def _restore_point(restore_from: str, checkpointing: dict) -> tuple[str, dict]:
    """``restoreFrom`` as a checkpoint of the job's own store, or ``s3://bucket/prefix/latest``
    (any store, e.g. a backup store reached from a third cluster): then that store is the
    job's state store, and ``checkpointing.stateUrl`` may be left out; or the location of
    any job's savepoint (``STORE/jobs/JOB/chk-N/``), which the job's coordinator copies
    into the job's own store (both jobs need the same state key Secret)."""
    if "://" not in restore_from:
        return restore_from, checkpointing
    if parse_location(restore_from) is not None:        # another job's savepoint, copied in on first start
        _no_password("spec.restoreFrom", restore_from)
        return restore_from, checkpointing
    store, _, point = restore_from.rstrip("/").rpartition("/")
    given = str(checkpointing.get("stateUrl", "") or "")
    if given and given.rstrip("/") != store.rstrip("/"):
        raise InvalidSpec(f"spec.restoreFrom names the store {store} but checkpointing.stateUrl is {given}: leave "
                          "stateUrl out (the job then keeps its state where it restores from) or make them equal")
    return point, {**checkpointing, "stateUrl": store}


def _url(where: str, url: str):
    try:
        parsed = urlparse(url)
        parsed.port                       # parsed lazily: a bad port raises only here
    except ValueError as exc:
        raise InvalidSpec(f"{where} {url!r} is not a valid URL ({exc})") from None
    return parsed


def _no_password(where: str, url: str) -> None:
    """Credentials belong in Secrets: a password in a URL would be copied into pod
    arguments, config maps and the status."""
    if "://" in url and _url(where, url).password:
        raise InvalidSpec(f"{where} carries a password: take it out of the URL and give it to the pods from a "
                          "Secret (podTemplate.env with valueFrom.secretKeyRef: SEGFLOW_REDIS_PASSWORD for Redis, "
                          "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY for S3)")


def _disaster_recovery(raw: dict | None, checkpointing: dict) -> DisasterRecovery | None:
    if not raw:
        return None
    url = str(raw.get("backupUrl", ""))
    parsed = _url("spec.disasterRecovery.backupUrl", url)
    if parsed.scheme != "s3" or not parsed.netloc:
        raise InvalidSpec(f"spec.disasterRecovery.backupUrl must be s3://bucket/prefix (the segment-backup store "
                          f"both clusters reach), not {url!r}")
    if checkpointing.get("stateUrl") and checkpointing["stateUrl"].rstrip("/") != url.rstrip("/"):
        raise InvalidSpec("spec.checkpointing.stateUrl must be left out (or equal spec.disasterRecovery.backupUrl): "
                          "a disaster-recovery job keeps its state in the backup store")
    if checkpointing.get("protocol", "aligned") == "none":
        raise InvalidSpec("spec.disasterRecovery needs checkpoints: set checkpointing.protocol to segment "
                          "(or aligned, unaligned), not none")
    cluster = str(raw.get("clusterName", ""))
    if not CLUSTER_NAME.fullmatch(cluster):
        raise InvalidSpec(f"spec.disasterRecovery.clusterName must name this cluster as a DNS label (each "
                          f"cluster its own, e.g. east and west), not {cluster!r}")
    role = str(raw.get("role", "primary"))
    if role not in ("primary", "standby"):
        raise InvalidSpec(f"spec.disasterRecovery.role must be primary or standby, not {role!r}")
    failover_after = float(raw.get("failoverAfterSeconds", 10))
    if failover_after < MIN_FAILOVER_SECONDS:
        raise InvalidSpec(f"spec.disasterRecovery.failoverAfterSeconds must be at least {MIN_FAILOVER_SECONDS:g}, "
                          f"not {failover_after:g}")
    standby = str(raw.get("standby", "warm"))
    if standby not in STANDBY_MODES:
        raise InvalidSpec(f"spec.disasterRecovery.standby must be cold, warm or hot, not {standby!r}")
    follow_seconds = float(raw.get("followSeconds", 1.0))
    if not FOLLOW_SECONDS[0] <= follow_seconds <= FOLLOW_SECONDS[1]:
        raise InvalidSpec(f"spec.disasterRecovery.followSeconds (how often a hot standby's workers list the backup "
                          f"store) must be between {FOLLOW_SECONDS[0]:g} and {FOLLOW_SECONDS[1]:g}, "
                          f"not {follow_seconds:g}")
    return DisasterRecovery(url, cluster, role, failover_after,
                            str(raw.get("s3Endpoint") or checkpointing.get("s3Endpoint") or ""), standby,
                            follow_seconds)


def check_endpoints(spec: StreamJobSpec, allowed: frozenset[str]) -> None:
    """The operator itself reads the S3 endpoints a spec names (leases, the batch stage's
    progress): only those the operator's installation allows (``allowedS3Endpoints`` in
    the chart), so a StreamJob cannot make it send requests anywhere on its network."""
    named = {"checkpointing.s3Endpoint": spec.checkpointing.s3_endpoint,
             "batchStage.s3Endpoint": spec.batch_stage.s3_endpoint if spec.batch_stage else "",
             "disasterRecovery.s3Endpoint": spec.disaster_recovery.s3_endpoint if spec.disaster_recovery else ""}
    refused = {where: endpoint for where, endpoint in named.items() if endpoint and endpoint not in allowed}
    if refused:
        where, endpoint = next(iter(refused.items()))
        raise InvalidSpec(f"{where} {endpoint!r} is not an allowed S3 endpoint of this operator (allowed: "
                          f"{', '.join(sorted(allowed)) or 'none: only the default AWS endpoints'}); ask the "
                          "cluster admin to add it to the chart's allowedS3Endpoints")


TEMPLATE_FIELDS = ("env", "envFrom", "volumes", "volumeMounts", "serviceAccountName", "automountServiceAccountToken",
                   "nodeSelector", "tolerations", "affinity", "annotations", "labels")
RESERVED_ENV = frozenset({"POD_IP"})
RESERVED_LABEL = re.compile(r"^(segflow\.io/|app\.kubernetes\.io/(name|managed-by)$)")
RESTRICTED_VOLUMES = frozenset({"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim",
                                "projected", "secret"})
CREDENTIAL_NAME = re.compile(r"SECRET|PASSWORD|PASSWD|TOKEN|ACCESS_KEY|CREDENTIAL|PRIVATE_KEY", re.IGNORECASE)


def _pod_template(raw: dict) -> dict:
    """``spec.podTemplate``, checked: only the fields merged into pods, no label the
    operator selects by, and no credential given as a plain value."""
    unknown = sorted(set(raw) - set(TEMPLATE_FIELDS))
    if unknown:
        raise InvalidSpec(f"spec.podTemplate has unknown fields {unknown}: it takes {', '.join(TEMPLATE_FIELDS)}")
    for item in raw.get("env") or []:
        name = str(item.get("name", ""))
        if name in RESERVED_ENV:
            raise InvalidSpec(f"spec.podTemplate.env {name} is set by the operator; choose another name")
        if "value" in item and CREDENTIAL_NAME.search(name):
            raise InvalidSpec(f"spec.podTemplate.env {name} looks like a credential given as a plain value: put it "
                              f"in a Secret and use valueFrom.secretKeyRef (or envFrom.secretRef)")
    for volume in raw.get("volumes") or []:
        kinds = sorted(set(volume) - {"name"})
        if not set(kinds) <= RESTRICTED_VOLUMES:
            raise InvalidSpec(f"spec.podTemplate.volumes {volume.get('name', '?')!r} is of kind {kinds}: job pods "
                              f"meet Pod Security 'restricted', which allows {', '.join(sorted(RESTRICTED_VOLUMES))}")
    reserved = sorted(k for k in raw.get("labels") or {} if RESERVED_LABEL.match(k))
    if reserved:
        raise InvalidSpec(f"spec.podTemplate.labels {reserved} are the operator's own (it finds its pods by them)")
    return {k: raw[k] for k in TEMPLATE_FIELDS if k in raw}
