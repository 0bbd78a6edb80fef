"""How a job runs, in one place low in the tree: the API's ``Config``, and the
``CheckpointSettings`` that the CLI, launcher, coordinator and operator pass on.

Settings cross process boundaries as one JSON object (``to_json``/``from_json``), never
as flags parsed again at each hop, so a field added here reaches every process.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields, replace

from .checkpoint.protocols import CheckpointProtocol
from .errors import SegflowError

RUNTIMES = ("auto", "threads", "processes")
PLACEMENTS = ("spread", "segment")


# Segment backup: MiB of not yet complete window parts a connector replica keeps in memory
# for a regional recovery's replay; beyond it the oldest go (the store holds them too).
WINDOW_MEMORY_MB = 64.0

@dataclass(frozen=True)
class CheckpointSettings:
    """Checkpointing of one job. ``job_name`` is the job's identity in the state store:
    its snapshots live under ``jobs/<job_name>/``."""

    protocol: CheckpointProtocol = CheckpointProtocol.NONE
    interval: float = 5.0          # seconds between checkpoints
    state_url: str = ""            # file:///dir, redis://host:port/db, s3://bucket/prefix
    s3_endpoint: str = ""
    retain: int = 3                # complete checkpoints kept (savepoints are kept too)
    job_name: str = ""
    restore: str = ""              # "", "latest", "auto" or a checkpoint id
    connectors: str = ""           # segment protocol: auto (the default), none or block ids/names
    lease_owner: str = ""          # disaster recovery: the cluster holding the job's lease ...
    lease_generation: int = 0      # ... and its generation; 0: no lease fences this job
    await_lease: bool = False      # a warm standby's coordinator: holds its workers until lease_owner holds the lease
    follow_interval: float = 0.0   # a hot standby: seconds between its workers' follows of the store (0: warm)
    revision: int = 0              # the operator's deployment revision (see first_checkpoint_id)
    savepoint_interval: float = 0.0   # a complete checkpoint becomes a savepoint this often, in s (0: on request only)
    savepoint_retain: int = 0         # savepoints kept, newest first (0: every one)
    savepoint_max_age: float = 0.0    # savepoints older than this many seconds are deleted (0: never)
    placement: str = "spread"         # spread: every block over every worker; segment: each segment's own
    window_memory_mb: float = WINDOW_MEMORY_MB   # segment protocol: window parts a connector replica keeps in memory

    def __post_init__(self) -> None:
        object.__setattr__(self, "protocol", CheckpointProtocol.parse(self.protocol))
        if not self.window_memory_mb > 0:
            raise SegflowError(f"--window-memory is MiB of window parts a connector replica keeps in memory "
                               f"(> 0), not {self.window_memory_mb}")
        if self.placement not in PLACEMENTS:
            raise SegflowError(f"--placement is one of {', '.join(PLACEMENTS)}, not {self.placement!r}")
        if self.placement == "segment" and not self.protocol.segment_backup:
            raise SegflowError(f"--placement segment gives each segment of segment backup its own workers: it "
                               f"needs --checkpoint-protocol segment, not {self.protocol.value}")
        if self.lease_generation and not (self.state_url.startswith("s3://") and self.lease_owner):
            raise SegflowError("a lease generation fences commits to an S3 backup store: it needs an s3:// state "
                               "URL and the lease owner (set by the operator for disasterRecovery)")
        leased_store = self.state_url.startswith("s3://") and bool(self.lease_owner)
        if self.await_lease and (self.lease_generation or not leased_store):
            raise SegflowError("a warm standby awaits the lease of its cluster (lease_owner) in an S3 backup store, "
                               "and takes its generation from it: it needs an s3:// state URL, the lease owner and "
                               "no lease generation (set by the operator for disasterRecovery.standby: warm)")
        if self.follow_interval and not self.await_lease:
            raise SegflowError("follow_interval makes a warm standby hot: its workers follow the primary's store "
                               "while it awaits the lease; set it only with await_lease "
                               "(disasterRecovery.standby: hot)")
        if self.follow_interval < 0:
            raise SegflowError(f"follow_interval is seconds between follows of the store, not {self.follow_interval}")
        if self.connectors and not self.protocol.segment_backup:
            raise SegflowError(f"--connectors chooses segment backup's connectors: it needs "
                               f"--checkpoint-protocol segment, not {self.protocol.value}")
        if self.retain < 1:
            raise SegflowError(f"retain must keep at least 1 checkpoint, got {self.retain}")
        if self.savepoint_interval < 0 or self.savepoint_retain < 0 or self.savepoint_max_age < 0:
            raise SegflowError("--savepoint-interval, --savepoint-retain and --savepoint-max-age must be >= 0 "
                               "(0: off)")
        if self.savepoint_interval and not self.enabled:
            raise SegflowError("--savepoint-interval makes some checkpoints savepoints: it needs a checkpoint "
                               "protocol and --state")
        if self.savepoint_interval and not self.protocol.takes_savepoints:
            raise SegflowError(f"--savepoint-interval: {self.protocol.no_savepoints()}; use aligned, unaligned or "
                               "segment for savepoints")
        if self.restore and not self.state_url:
            raise SegflowError("--restore needs the --state URL the checkpoints were written to")
        if not self.enabled:
            return
        if not self.state_url:
            raise SegflowError(f"checkpoint protocol {self.protocol.value!r} needs a state store: --state "
                               "file:///dir, redis://host:port/db or s3://bucket/prefix")
        if self.interval <= 0:
            raise SegflowError(f"the checkpoint interval must be > 0 s, got {self.interval}")

    @property
    def enabled(self) -> bool:
        return self.protocol.enabled

    def named(self, default_name: str) -> "CheckpointSettings":
        """These settings with ``job_name`` set (to ``default_name`` if none was given)."""
        return self if self.job_name else replace(self, job_name=default_name)

    def to_json(self) -> str:
        return json.dumps({**asdict(self), "protocol": self.protocol.value}, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "CheckpointSettings":
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SegflowError(f"checkpoint settings are not JSON ({exc}): pass what "
                               "CheckpointSettings.to_json() wrote") from None
        known = {f.name for f in fields(cls)}
        if not isinstance(raw, dict) or set(raw) - known:
            unknown = sorted(set(raw) - known) if isinstance(raw, dict) else raw
            raise SegflowError(f"checkpoint settings have unknown fields {unknown}: expected some of "
                               f"{sorted(known)}")
        return cls(**raw)


@dataclass
class Config:
    """How a job runs. ``parallelism`` is the number of replicas of every parallel block;
    ``runtime`` "auto" runs in this process unless checkpoints need worker processes."""

    parallelism: int = 1
    runtime: str = "auto"         # auto | threads (one process) | processes (coordinator + workers)
    planning_only: bool = False   # building to show the plan: don't touch inputs
    checkpoint_protocol: str = "none"     # aligned | unaligned | uncoordinated | cic | segment | none
    checkpoint_interval: float = 5.0      # seconds between checkpoints
    state_url: str = ""                   # file:///dir, redis://host:port/db, s3://bucket/prefix
    s3_endpoint: str = ""
    retain: int = 3                       # complete checkpoints kept (savepoints are kept too)
    restore: str = ""                     # checkpoint id or "latest" to start from
    job_name: str = ""                    # names the job's snapshots (default: module name)
    connectors: str = ""                  # segment protocol: auto | none | block ids or operator names
    savepoint_interval: float = 0.0       # periodic savepoints (see CheckpointSettings)
    savepoint_retain: int = 0
    savepoint_max_age: float = 0.0
    standby_workers: int = 0              # idle workers kept ready to take over a lost one's replicas
    placement: str = "spread"             # segment protocol: "segment" gives each segment workers of its own
    window_memory_mb: float | None = None  # segment protocol: see CheckpointSettings (None: its default)

    def __post_init__(self) -> None:
        if not isinstance(self.parallelism, int) or isinstance(self.parallelism, bool) or self.parallelism < 1:
            raise SegflowError(f"parallelism must be an integer >= 1, got {self.parallelism!r}")
        if self.runtime not in RUNTIMES:
            raise SegflowError(f"runtime must be one of {', '.join(RUNTIMES)}, got {self.runtime!r}")
        if not isinstance(self.standby_workers, int) or isinstance(self.standby_workers, bool) \
                or self.standby_workers < 0:
            raise SegflowError(f"standby workers must be an integer >= 0, got {self.standby_workers!r}")
        if self.standby_workers and self.runtime == "threads":
            raise SegflowError("standby workers take over worker processes: use runtime='processes' (or 'auto'), "
                               "or drop --threads")
        checkpointing = self.checkpointing
        if checkpointing.enabled and self.runtime == "threads":
            raise SegflowError("checkpoints need worker processes: use runtime='processes' (or 'auto'), "
                               "or drop --threads")

    @property
    def checkpointing(self) -> CheckpointSettings:
        return CheckpointSettings(CheckpointProtocol.parse(self.checkpoint_protocol), self.checkpoint_interval,
                                  self.state_url, self.s3_endpoint, self.retain, self.job_name, self.restore,
                                  self.connectors, savepoint_interval=self.savepoint_interval,
                                  savepoint_retain=self.savepoint_retain, savepoint_max_age=self.savepoint_max_age,
                                  placement=self.placement,
                                  window_memory_mb=WINDOW_MEMORY_MB if self.window_memory_mb is None
                                  else self.window_memory_mb)

    @property
    def runs_in_processes(self) -> bool:
        return self.runtime == "processes" or (self.runtime == "auto" and
                                               (self.checkpointing.enabled or self.standby_workers > 0))
