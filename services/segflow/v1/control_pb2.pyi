from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class LocalCheckpoint(_message.Message):
    __slots__ = ("worker", "attempt", "process", "index", "ok", "error", "sent", "processed", "forced")
    WORKER_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    PROCESS_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    OK_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    SENT_FIELD_NUMBER: _ClassVar[int]
    PROCESSED_FIELD_NUMBER: _ClassVar[int]
    FORCED_FIELD_NUMBER: _ClassVar[int]
    worker: str
    attempt: int
    process: str
    index: int
    ok: bool
    error: str
    sent: _containers.RepeatedCompositeFieldContainer[ChannelCount]
    processed: _containers.RepeatedCompositeFieldContainer[ChannelCount]
    forced: bool
    def __init__(self, worker: _Optional[str] = ..., attempt: _Optional[int] = ..., process: _Optional[str] = ..., index: _Optional[int] = ..., ok: _Optional[bool] = ..., error: _Optional[str] = ..., sent: _Optional[_Iterable[_Union[ChannelCount, _Mapping]]] = ..., processed: _Optional[_Iterable[_Union[ChannelCount, _Mapping]]] = ..., forced: _Optional[bool] = ...) -> None: ...

class ChannelCount(_message.Message):
    __slots__ = ("sender", "receiver", "count")
    SENDER_FIELD_NUMBER: _ClassVar[int]
    RECEIVER_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    sender: str
    receiver: str
    count: int
    def __init__(self, sender: _Optional[str] = ..., receiver: _Optional[str] = ..., count: _Optional[int] = ...) -> None: ...

class RecoveryLine(_message.Message):
    __slots__ = ("line", "replay")
    class LineEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    LINE_FIELD_NUMBER: _ClassVar[int]
    REPLAY_FIELD_NUMBER: _ClassVar[int]
    line: _containers.ScalarMap[str, int]
    replay: _containers.RepeatedCompositeFieldContainer[ChannelReplay]
    def __init__(self, line: _Optional[_Mapping[str, int]] = ..., replay: _Optional[_Iterable[_Union[ChannelReplay, _Mapping]]] = ...) -> None: ...

class ChannelReplay(_message.Message):
    __slots__ = ("sender", "receiver", "first", "last")
    SENDER_FIELD_NUMBER: _ClassVar[int]
    RECEIVER_FIELD_NUMBER: _ClassVar[int]
    FIRST_FIELD_NUMBER: _ClassVar[int]
    LAST_FIELD_NUMBER: _ClassVar[int]
    sender: str
    receiver: str
    first: int
    last: int
    def __init__(self, sender: _Optional[str] = ..., receiver: _Optional[str] = ..., first: _Optional[int] = ..., last: _Optional[int] = ...) -> None: ...

class SegmentRestore(_message.Message):
    __slots__ = ("versions", "replays", "kept", "through")
    class VersionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: int
        value: int
        def __init__(self, key: _Optional[int] = ..., value: _Optional[int] = ...) -> None: ...
    VERSIONS_FIELD_NUMBER: _ClassVar[int]
    REPLAYS_FIELD_NUMBER: _ClassVar[int]
    KEPT_FIELD_NUMBER: _ClassVar[int]
    THROUGH_FIELD_NUMBER: _ClassVar[int]
    versions: _containers.ScalarMap[int, int]
    replays: _containers.RepeatedCompositeFieldContainer[WindowReplay]
    kept: _containers.RepeatedScalarFieldContainer[int]
    through: int
    def __init__(self, versions: _Optional[_Mapping[int, int]] = ..., replays: _Optional[_Iterable[_Union[WindowReplay, _Mapping]]] = ..., kept: _Optional[_Iterable[int]] = ..., through: _Optional[int] = ...) -> None: ...

class WindowReplay(_message.Message):
    __slots__ = ("connector", "successor", "first", "last")
    CONNECTOR_FIELD_NUMBER: _ClassVar[int]
    SUCCESSOR_FIELD_NUMBER: _ClassVar[int]
    FIRST_FIELD_NUMBER: _ClassVar[int]
    LAST_FIELD_NUMBER: _ClassVar[int]
    connector: int
    successor: int
    first: int
    last: int
    def __init__(self, connector: _Optional[int] = ..., successor: _Optional[int] = ..., first: _Optional[int] = ..., last: _Optional[int] = ...) -> None: ...

class Checkpointing(_message.Message):
    __slots__ = ("protocol", "interval_seconds", "state_url", "s3_endpoint", "retain", "job_name", "connectors", "lease_owner", "lease_generation", "window_memory_bytes")
    PROTOCOL_FIELD_NUMBER: _ClassVar[int]
    INTERVAL_SECONDS_FIELD_NUMBER: _ClassVar[int]
    STATE_URL_FIELD_NUMBER: _ClassVar[int]
    S3_ENDPOINT_FIELD_NUMBER: _ClassVar[int]
    RETAIN_FIELD_NUMBER: _ClassVar[int]
    JOB_NAME_FIELD_NUMBER: _ClassVar[int]
    CONNECTORS_FIELD_NUMBER: _ClassVar[int]
    LEASE_OWNER_FIELD_NUMBER: _ClassVar[int]
    LEASE_GENERATION_FIELD_NUMBER: _ClassVar[int]
    WINDOW_MEMORY_BYTES_FIELD_NUMBER: _ClassVar[int]
    protocol: str
    interval_seconds: float
    state_url: str
    s3_endpoint: str
    retain: int
    job_name: str
    connectors: _containers.RepeatedScalarFieldContainer[int]
    lease_owner: str
    lease_generation: int
    window_memory_bytes: int
    def __init__(self, protocol: _Optional[str] = ..., interval_seconds: _Optional[float] = ..., state_url: _Optional[str] = ..., s3_endpoint: _Optional[str] = ..., retain: _Optional[int] = ..., job_name: _Optional[str] = ..., connectors: _Optional[_Iterable[int]] = ..., lease_owner: _Optional[str] = ..., lease_generation: _Optional[int] = ..., window_memory_bytes: _Optional[int] = ...) -> None: ...

class JobModule(_message.Message):
    __slots__ = ("target", "function", "params")
    class ParamsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    TARGET_FIELD_NUMBER: _ClassVar[int]
    FUNCTION_FIELD_NUMBER: _ClassVar[int]
    PARAMS_FIELD_NUMBER: _ClassVar[int]
    target: str
    function: str
    params: _containers.ScalarMap[str, str]
    def __init__(self, target: _Optional[str] = ..., function: _Optional[str] = ..., params: _Optional[_Mapping[str, str]] = ...) -> None: ...

class RegisterRequest(_message.Message):
    __slots__ = ("protocol_version", "worker", "data_address", "metrics_address", "slots", "pid", "standby")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    WORKER_FIELD_NUMBER: _ClassVar[int]
    DATA_ADDRESS_FIELD_NUMBER: _ClassVar[int]
    METRICS_ADDRESS_FIELD_NUMBER: _ClassVar[int]
    SLOTS_FIELD_NUMBER: _ClassVar[int]
    PID_FIELD_NUMBER: _ClassVar[int]
    STANDBY_FIELD_NUMBER: _ClassVar[int]
    protocol_version: int
    worker: str
    data_address: str
    metrics_address: str
    slots: int
    pid: int
    standby: bool
    def __init__(self, protocol_version: _Optional[int] = ..., worker: _Optional[str] = ..., data_address: _Optional[str] = ..., metrics_address: _Optional[str] = ..., slots: _Optional[int] = ..., pid: _Optional[int] = ..., standby: _Optional[bool] = ...) -> None: ...

class WorkerInfo(_message.Message):
    __slots__ = ("name", "data_address", "slots", "identity")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DATA_ADDRESS_FIELD_NUMBER: _ClassVar[int]
    SLOTS_FIELD_NUMBER: _ClassVar[int]
    IDENTITY_FIELD_NUMBER: _ClassVar[int]
    name: str
    data_address: str
    slots: int
    identity: str
    def __init__(self, name: _Optional[str] = ..., data_address: _Optional[str] = ..., slots: _Optional[int] = ..., identity: _Optional[str] = ...) -> None: ...

class Assignment(_message.Message):
    __slots__ = ("protocol_version", "job_id", "job", "workers", "heartbeat_seconds", "attempt", "checkpointing", "restore_checkpoint", "restore_replicas", "pinned_replicas", "recovery_line", "segment_restore", "slot", "placement_groups")
    class RestoreReplicasEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: int
        value: int
        def __init__(self, key: _Optional[int] = ..., value: _Optional[int] = ...) -> None: ...
    class PinnedReplicasEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: int
        value: int
        def __init__(self, key: _Optional[int] = ..., value: _Optional[int] = ...) -> None: ...
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    JOB_FIELD_NUMBER: _ClassVar[int]
    WORKERS_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_SECONDS_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINTING_FIELD_NUMBER: _ClassVar[int]
    RESTORE_CHECKPOINT_FIELD_NUMBER: _ClassVar[int]
    RESTORE_REPLICAS_FIELD_NUMBER: _ClassVar[int]
    PINNED_REPLICAS_FIELD_NUMBER: _ClassVar[int]
    RECOVERY_LINE_FIELD_NUMBER: _ClassVar[int]
    SEGMENT_RESTORE_FIELD_NUMBER: _ClassVar[int]
    SLOT_FIELD_NUMBER: _ClassVar[int]
    PLACEMENT_GROUPS_FIELD_NUMBER: _ClassVar[int]
    protocol_version: int
    job_id: str
    job: JobModule
    workers: _containers.RepeatedCompositeFieldContainer[WorkerInfo]
    heartbeat_seconds: float
    attempt: int
    checkpointing: Checkpointing
    restore_checkpoint: int
    restore_replicas: _containers.ScalarMap[int, int]
    pinned_replicas: _containers.ScalarMap[int, int]
    recovery_line: RecoveryLine
    segment_restore: SegmentRestore
    slot: str
    placement_groups: _containers.RepeatedCompositeFieldContainer[PlacementGroup]
    def __init__(self, protocol_version: _Optional[int] = ..., job_id: _Optional[str] = ..., job: _Optional[_Union[JobModule, _Mapping]] = ..., workers: _Optional[_Iterable[_Union[WorkerInfo, _Mapping]]] = ..., heartbeat_seconds: _Optional[float] = ..., attempt: _Optional[int] = ..., checkpointing: _Optional[_Union[Checkpointing, _Mapping]] = ..., restore_checkpoint: _Optional[int] = ..., restore_replicas: _Optional[_Mapping[int, int]] = ..., pinned_replicas: _Optional[_Mapping[int, int]] = ..., recovery_line: _Optional[_Union[RecoveryLine, _Mapping]] = ..., segment_restore: _Optional[_Union[SegmentRestore, _Mapping]] = ..., slot: _Optional[str] = ..., placement_groups: _Optional[_Iterable[_Union[PlacementGroup, _Mapping]]] = ...) -> None: ...

class PlacementGroup(_message.Message):
    __slots__ = ("blocks",)
    BLOCKS_FIELD_NUMBER: _ClassVar[int]
    blocks: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, blocks: _Optional[_Iterable[int]] = ...) -> None: ...

class ReplicaCounters(_message.Message):
    __slots__ = ("block", "replica", "records_in", "records_out", "inbox", "blocked_seconds", "latency_seconds", "barrier_seconds")
    BLOCK_FIELD_NUMBER: _ClassVar[int]
    REPLICA_FIELD_NUMBER: _ClassVar[int]
    RECORDS_IN_FIELD_NUMBER: _ClassVar[int]
    RECORDS_OUT_FIELD_NUMBER: _ClassVar[int]
    INBOX_FIELD_NUMBER: _ClassVar[int]
    BLOCKED_SECONDS_FIELD_NUMBER: _ClassVar[int]
    LATENCY_SECONDS_FIELD_NUMBER: _ClassVar[int]
    BARRIER_SECONDS_FIELD_NUMBER: _ClassVar[int]
    block: int
    replica: int
    records_in: int
    records_out: int
    inbox: int
    blocked_seconds: float
    latency_seconds: float
    barrier_seconds: float
    def __init__(self, block: _Optional[int] = ..., replica: _Optional[int] = ..., records_in: _Optional[int] = ..., records_out: _Optional[int] = ..., inbox: _Optional[int] = ..., blocked_seconds: _Optional[float] = ..., latency_seconds: _Optional[float] = ..., barrier_seconds: _Optional[float] = ...) -> None: ...

class WorkerStatus(_message.Message):
    __slots__ = ("worker", "replicas", "last_checkpoint")
    WORKER_FIELD_NUMBER: _ClassVar[int]
    REPLICAS_FIELD_NUMBER: _ClassVar[int]
    LAST_CHECKPOINT_FIELD_NUMBER: _ClassVar[int]
    worker: str
    replicas: _containers.RepeatedCompositeFieldContainer[ReplicaCounters]
    last_checkpoint: int
    def __init__(self, worker: _Optional[str] = ..., replicas: _Optional[_Iterable[_Union[ReplicaCounters, _Mapping]]] = ..., last_checkpoint: _Optional[int] = ...) -> None: ...

class Command(_message.Message):
    __slots__ = ("kind", "checkpoint_id", "reason", "process", "rewire")
    class Kind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        KIND_UNSPECIFIED: _ClassVar[Command.Kind]
        STOP: _ClassVar[Command.Kind]
        CHECKPOINT: _ClassVar[Command.Kind]
        CHECKPOINT_COMPLETE: _ClassVar[Command.Kind]
        RESTART: _ClassVar[Command.Kind]
        REWIRE: _ClassVar[Command.Kind]
    KIND_UNSPECIFIED: Command.Kind
    STOP: Command.Kind
    CHECKPOINT: Command.Kind
    CHECKPOINT_COMPLETE: Command.Kind
    RESTART: Command.Kind
    REWIRE: Command.Kind
    KIND_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    PROCESS_FIELD_NUMBER: _ClassVar[int]
    REWIRE_FIELD_NUMBER: _ClassVar[int]
    kind: Command.Kind
    checkpoint_id: int
    reason: str
    process: str
    rewire: Rewire
    def __init__(self, kind: _Optional[_Union[Command.Kind, str]] = ..., checkpoint_id: _Optional[int] = ..., reason: _Optional[str] = ..., process: _Optional[str] = ..., rewire: _Optional[_Union[Rewire, _Mapping]] = ...) -> None: ...

class Rewire(_message.Message):
    __slots__ = ("job_id", "attempt", "workers", "replays", "skips")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    WORKERS_FIELD_NUMBER: _ClassVar[int]
    REPLAYS_FIELD_NUMBER: _ClassVar[int]
    SKIPS_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    attempt: int
    workers: _containers.RepeatedCompositeFieldContainer[WorkerInfo]
    replays: _containers.RepeatedCompositeFieldContainer[WindowReplay]
    skips: _containers.RepeatedCompositeFieldContainer[ChannelSkip]
    def __init__(self, job_id: _Optional[str] = ..., attempt: _Optional[int] = ..., workers: _Optional[_Iterable[_Union[WorkerInfo, _Mapping]]] = ..., replays: _Optional[_Iterable[_Union[WindowReplay, _Mapping]]] = ..., skips: _Optional[_Iterable[_Union[ChannelSkip, _Mapping]]] = ...) -> None: ...

class ChannelSkip(_message.Message):
    __slots__ = ("producer", "consumer", "version")
    PRODUCER_FIELD_NUMBER: _ClassVar[int]
    CONSUMER_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    producer: int
    consumer: int
    version: int
    def __init__(self, producer: _Optional[int] = ..., consumer: _Optional[int] = ..., version: _Optional[int] = ...) -> None: ...

class WorkerFinished(_message.Message):
    __slots__ = ("worker", "ok", "error", "results", "peer_failure", "status", "committed", "tampered_key")
    WORKER_FIELD_NUMBER: _ClassVar[int]
    OK_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    PEER_FAILURE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    COMMITTED_FIELD_NUMBER: _ClassVar[int]
    TAMPERED_KEY_FIELD_NUMBER: _ClassVar[int]
    worker: str
    ok: bool
    error: str
    results: bytes
    peer_failure: bool
    status: WorkerStatus
    committed: bool
    tampered_key: str
    def __init__(self, worker: _Optional[str] = ..., ok: _Optional[bool] = ..., error: _Optional[str] = ..., results: _Optional[bytes] = ..., peer_failure: _Optional[bool] = ..., status: _Optional[_Union[WorkerStatus, _Mapping]] = ..., committed: _Optional[bool] = ..., tampered_key: _Optional[str] = ...) -> None: ...

class Ack(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class WatchRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class BlockProgress(_message.Message):
    __slots__ = ("block", "name", "records_in")
    BLOCK_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    RECORDS_IN_FIELD_NUMBER: _ClassVar[int]
    block: int
    name: str
    records_in: int
    def __init__(self, block: _Optional[int] = ..., name: _Optional[str] = ..., records_in: _Optional[int] = ...) -> None: ...

class JobUpdate(_message.Message):
    __slots__ = ("phase", "blocks", "error", "results", "seconds", "recoveries", "last_checkpoint", "last_checkpoint_seconds", "last_checkpoint_bytes", "last_alignment_seconds", "event", "windows", "restored", "last_savepoint", "last_savepoint_location")
    class Phase(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        PHASE_UNSPECIFIED: _ClassVar[JobUpdate.Phase]
        WAITING_FOR_WORKERS: _ClassVar[JobUpdate.Phase]
        RUNNING: _ClassVar[JobUpdate.Phase]
        SUCCEEDED: _ClassVar[JobUpdate.Phase]
        FAILED: _ClassVar[JobUpdate.Phase]
        RECOVERING: _ClassVar[JobUpdate.Phase]
    PHASE_UNSPECIFIED: JobUpdate.Phase
    WAITING_FOR_WORKERS: JobUpdate.Phase
    RUNNING: JobUpdate.Phase
    SUCCEEDED: JobUpdate.Phase
    FAILED: JobUpdate.Phase
    RECOVERING: JobUpdate.Phase
    PHASE_FIELD_NUMBER: _ClassVar[int]
    BLOCKS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    SECONDS_FIELD_NUMBER: _ClassVar[int]
    RECOVERIES_FIELD_NUMBER: _ClassVar[int]
    LAST_CHECKPOINT_FIELD_NUMBER: _ClassVar[int]
    LAST_CHECKPOINT_SECONDS_FIELD_NUMBER: _ClassVar[int]
    LAST_CHECKPOINT_BYTES_FIELD_NUMBER: _ClassVar[int]
    LAST_ALIGNMENT_SECONDS_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    WINDOWS_FIELD_NUMBER: _ClassVar[int]
    RESTORED_FIELD_NUMBER: _ClassVar[int]
    LAST_SAVEPOINT_FIELD_NUMBER: _ClassVar[int]
    LAST_SAVEPOINT_LOCATION_FIELD_NUMBER: _ClassVar[int]
    phase: JobUpdate.Phase
    blocks: _containers.RepeatedCompositeFieldContainer[BlockProgress]
    error: str
    results: bytes
    seconds: float
    recoveries: int
    last_checkpoint: int
    last_checkpoint_seconds: float
    last_checkpoint_bytes: int
    last_alignment_seconds: float
    event: str
    windows: _containers.RepeatedCompositeFieldContainer[PendingWindow]
    restored: str
    last_savepoint: int
    last_savepoint_location: str
    def __init__(self, phase: _Optional[_Union[JobUpdate.Phase, str]] = ..., blocks: _Optional[_Iterable[_Union[BlockProgress, _Mapping]]] = ..., error: _Optional[str] = ..., results: _Optional[bytes] = ..., seconds: _Optional[float] = ..., recoveries: _Optional[int] = ..., last_checkpoint: _Optional[int] = ..., last_checkpoint_seconds: _Optional[float] = ..., last_checkpoint_bytes: _Optional[int] = ..., last_alignment_seconds: _Optional[float] = ..., event: _Optional[str] = ..., windows: _Optional[_Iterable[_Union[PendingWindow, _Mapping]]] = ..., restored: _Optional[str] = ..., last_savepoint: _Optional[int] = ..., last_savepoint_location: _Optional[str] = ...) -> None: ...

class PendingWindow(_message.Message):
    __slots__ = ("block", "versions", "bytes", "records", "truncation_lag")
    BLOCK_FIELD_NUMBER: _ClassVar[int]
    VERSIONS_FIELD_NUMBER: _ClassVar[int]
    BYTES_FIELD_NUMBER: _ClassVar[int]
    RECORDS_FIELD_NUMBER: _ClassVar[int]
    TRUNCATION_LAG_FIELD_NUMBER: _ClassVar[int]
    block: int
    versions: int
    bytes: int
    records: int
    truncation_lag: int
    def __init__(self, block: _Optional[int] = ..., versions: _Optional[int] = ..., bytes: _Optional[int] = ..., records: _Optional[int] = ..., truncation_lag: _Optional[int] = ...) -> None: ...

class CancelRequest(_message.Message):
    __slots__ = ("reason",)
    REASON_FIELD_NUMBER: _ClassVar[int]
    reason: str
    def __init__(self, reason: _Optional[str] = ...) -> None: ...

class ReplicaAck(_message.Message):
    __slots__ = ("block", "replica", "ok", "error", "bytes", "alignment_seconds", "finished", "window_bytes", "window_records", "barrier_unix_time")
    BLOCK_FIELD_NUMBER: _ClassVar[int]
    REPLICA_FIELD_NUMBER: _ClassVar[int]
    OK_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    BYTES_FIELD_NUMBER: _ClassVar[int]
    ALIGNMENT_SECONDS_FIELD_NUMBER: _ClassVar[int]
    FINISHED_FIELD_NUMBER: _ClassVar[int]
    WINDOW_BYTES_FIELD_NUMBER: _ClassVar[int]
    WINDOW_RECORDS_FIELD_NUMBER: _ClassVar[int]
    BARRIER_UNIX_TIME_FIELD_NUMBER: _ClassVar[int]
    block: int
    replica: int
    ok: bool
    error: str
    bytes: int
    alignment_seconds: float
    finished: bool
    window_bytes: int
    window_records: int
    barrier_unix_time: float
    def __init__(self, block: _Optional[int] = ..., replica: _Optional[int] = ..., ok: _Optional[bool] = ..., error: _Optional[str] = ..., bytes: _Optional[int] = ..., alignment_seconds: _Optional[float] = ..., finished: _Optional[bool] = ..., window_bytes: _Optional[int] = ..., window_records: _Optional[int] = ..., barrier_unix_time: _Optional[float] = ...) -> None: ...

class CheckpointAcks(_message.Message):
    __slots__ = ("worker", "attempt", "checkpoint_id", "acks")
    WORKER_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    ACKS_FIELD_NUMBER: _ClassVar[int]
    worker: str
    attempt: int
    checkpoint_id: int
    acks: _containers.RepeatedCompositeFieldContainer[ReplicaAck]
    def __init__(self, worker: _Optional[str] = ..., attempt: _Optional[int] = ..., checkpoint_id: _Optional[int] = ..., acks: _Optional[_Iterable[_Union[ReplicaAck, _Mapping]]] = ...) -> None: ...

class SavepointRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class SavepointReply(_message.Message):
    __slots__ = ("checkpoint_id", "error", "location")
    CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    LOCATION_FIELD_NUMBER: _ClassVar[int]
    checkpoint_id: int
    error: str
    location: str
    def __init__(self, checkpoint_id: _Optional[int] = ..., error: _Optional[str] = ..., location: _Optional[str] = ...) -> None: ...
