"""A StreamJob's status, typed: what the operator remembers between steps and shows.

The fields mirror the CRD's status schema (charts/segflow/crds; tests/operator checks
both name the same fields). A field that is None is absent from the status: a patch sets
it to null, which removes it. ``JobStatus.parse`` reads the status the API returns,
``JobStatus.patch`` writes what changed since the status a step observed. kopf's own
``status.kopf`` is kopf's: it is neither read nor written here.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum

from segflow.checkpoint.segment_plan import WindowSize

from .status_json import KEY, load, merge_patch


class Phase(StrEnum):
    """``status.phase``."""
    DEPLOYING = "Deploying"
    RUNNING = "Running"
    RECOVERING = "Recovering"
    SUSPENDED = "Suspended"
    COMPLETED = "Completed"
    FAILED = "Failed"
    STANDBY = "Standby"          # disaster recovery: another cluster holds the job's lease

    @property
    def runs(self) -> bool:
        """A revision is deployed and meant to run (its pods are watched over)."""
        return self in (Phase.DEPLOYING, Phase.RUNNING, Phase.RECOVERING)

    @property
    def ready(self) -> bool:
        """The Ready condition holds: the job runs, or ran to its end."""
        return self in (Phase.RUNNING, Phase.COMPLETED)

    @property
    def final(self) -> bool:
        """The job stays in it until its spec changes."""
        return self in (Phase.COMPLETED, Phase.FAILED)


@dataclass(frozen=True)
class Condition:
    type: str = ""
    status: str = ""             # "True" | "False" | "Unknown"
    reason: str = ""
    message: str = ""
    last_transition_time: str = ""


@dataclass(frozen=True)
class Checkpoint:
    """``status.lastCheckpoint``: the last complete checkpoint."""
    id: int = 0
    time: str = ""


@dataclass(frozen=True)
class SavepointRecord:
    """A savepoint taken (``status.savepoint`` and each of ``status.savepoints``);
    ``nonce`` 0 for a periodic one."""
    id: int = 0
    time: str = ""
    nonce: int = 0
    location: str = ""


@dataclass(frozen=True)
class FinalSavepoint:
    """``status.finalSavepoint``: taken as the job was deleted."""
    id: int = 0
    time: str = ""
    location: str = ""


@dataclass(frozen=True)
class SavepointInProgress:
    """A savepoint asked for and not yet answered; ``then``: record | suspend | redeploy."""
    then: str = ""
    nonce: int = 0
    revision: int = 0
    since: str = ""


@dataclass(frozen=True)
class PendingDeploy:
    """A revision being deployed whose objects may not all exist yet."""
    revision: int = 0
    restore: str = ""


@dataclass(frozen=True)
class Deployed:
    """What the current revision was deployed from. A revision deployed by an earlier
    operator may lack ``parallelism`` and ``stateUrl`` (None: not recorded)."""
    hash: str = ""
    parallelism: int | None = None
    protocol: str = ""
    state_url: str | None = None
    restored_from: str = ""
    spec: str = ""               # JSON of the spec the revision's pods are built from


@dataclass(frozen=True)
class Failover:
    """The last takeover by this cluster; its recovery time and what it restored once
    the job runs again."""
    time: str = ""
    from_: str = ""
    to: str = ""
    generation: int = 0
    previous_renewal: str = ""
    rto_seconds: float | None = None
    restored: str | None = None


@dataclass(frozen=True)
class StandbyStatus:
    """While this cluster stands by: how (cold: no pods; warm: pods up and registered,
    idle; hot: warm, its workers following the backup store), how many of its worker pods
    are ready to take over, and when hot, what they follow (from their metrics)."""
    mode: str = ""
    ready_workers: str | None = None
    followed_version: int | None = None
    follow_lag_versions: int | None = None
    follow_lag_seconds: float | None = None


@dataclass(frozen=True)
class DisasterRecoveryStatus:
    """``status.disasterRecovery``: this cluster's part and the job lease as last read."""
    cluster_name: str = ""
    role: str = ""
    active_cluster: str | None = None
    generation: int | None = None
    last_renewal: str | None = None
    held_as: str | None = None
    last_failover: Failover | None = None
    standby: StandbyStatus | None = None


@dataclass
class JobStatus:
    """The whole ``status`` but kopf's part. Mutable so that a step's decision edits its
    own copy; the nested values are frozen, so copies may share them."""
    phase: Phase | None = None
    message: str | None = None
    last_error: str | None = None
    upgrade_refused: str | None = None
    observed_generation: int | None = None
    conditions: tuple[Condition, ...] | None = None
    revision: int | None = None
    ready_replicas: int | None = None
    ready: str | None = None
    selector: str | None = None
    coordinator_ip: str | None = field(default=None, metadata={KEY: "coordinatorIP"})
    web_url: str | None = None
    recoveries: int | None = None
    recoveries_base: int | None = None
    restored: str | None = None
    resume_from: str | None = None
    last_savepoint_nonce: int | None = None
    last_checkpoint: Checkpoint | None = None
    savepoint: SavepointRecord | None = None
    savepoints: tuple[SavepointRecord, ...] | None = None
    final_savepoint: FinalSavepoint | None = None
    savepoint_in_progress: SavepointInProgress | None = None
    pending_deploy: PendingDeploy | None = None
    deployed: Deployed | None = None
    pending_windows: dict[str, WindowSize] | None = None     # segment backup: per connector block
    batch_stage: dict | None = None             # as segflow.batch.progress.summary writes it
    disaster_recovery: DisasterRecoveryStatus | None = None

    @classmethod
    def parse(cls, raw: Mapping | None) -> JobStatus:
        """The status as the API returns it (None or {} for a job not reconciled yet)."""
        return load(cls, raw or {})

    def patch(self, observed: JobStatus) -> dict:
        """The status patch from ``observed`` to this one: each changed field's value, or
        None for one that is gone (inside nested objects too)."""
        return merge_patch(self, observed)

    def copy(self) -> JobStatus:
        return replace(self)
