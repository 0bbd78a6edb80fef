from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class JobSpec(_message.Message):
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
    __slots__ = ("protocol_version", "worker", "data_address", "metrics_address", "slots", "pid")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    WORKER_FIELD_NUMBER: _ClassVar[int]
    DATA_ADDRESS_FIELD_NUMBER: _ClassVar[int]
    METRICS_ADDRESS_FIELD_NUMBER: _ClassVar[int]
    SLOTS_FIELD_NUMBER: _ClassVar[int]
    PID_FIELD_NUMBER: _ClassVar[int]
    protocol_version: int
    worker: str
    data_address: str
    metrics_address: str
    slots: int
    pid: int
    def __init__(self, protocol_version: _Optional[int] = ..., worker: _Optional[str] = ..., data_address: _Optional[str] = ..., metrics_address: _Optional[str] = ..., slots: _Optional[int] = ..., pid: _Optional[int] = ...) -> None: ...

class WorkerInfo(_message.Message):
    __slots__ = ("name", "data_address", "slots")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DATA_ADDRESS_FIELD_NUMBER: _ClassVar[int]
    SLOTS_FIELD_NUMBER: _ClassVar[int]
    name: str
    data_address: str
    slots: int
    def __init__(self, name: _Optional[str] = ..., data_address: _Optional[str] = ..., slots: _Optional[int] = ...) -> None: ...

class Assignment(_message.Message):
    __slots__ = ("protocol_version", "job_id", "job", "workers", "heartbeat_seconds")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    JOB_FIELD_NUMBER: _ClassVar[int]
    WORKERS_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_SECONDS_FIELD_NUMBER: _ClassVar[int]
    protocol_version: int
    job_id: str
    job: JobSpec
    workers: _containers.RepeatedCompositeFieldContainer[WorkerInfo]
    heartbeat_seconds: float
    def __init__(self, protocol_version: _Optional[int] = ..., job_id: _Optional[str] = ..., job: _Optional[_Union[JobSpec, _Mapping]] = ..., workers: _Optional[_Iterable[_Union[WorkerInfo, _Mapping]]] = ..., heartbeat_seconds: _Optional[float] = ...) -> None: ...

class ReplicaCounters(_message.Message):
    __slots__ = ("block", "replica", "records_in", "records_out")
    BLOCK_FIELD_NUMBER: _ClassVar[int]
    REPLICA_FIELD_NUMBER: _ClassVar[int]
    RECORDS_IN_FIELD_NUMBER: _ClassVar[int]
    RECORDS_OUT_FIELD_NUMBER: _ClassVar[int]
    block: int
    replica: int
    records_in: int
    records_out: int
    def __init__(self, block: _Optional[int] = ..., replica: _Optional[int] = ..., records_in: _Optional[int] = ..., records_out: _Optional[int] = ...) -> None: ...

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
    __slots__ = ("kind", "checkpoint_id", "reason")
    class Kind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        KIND_UNSPECIFIED: _ClassVar[Command.Kind]
        STOP: _ClassVar[Command.Kind]
        CHECKPOINT: _ClassVar[Command.Kind]
        CHECKPOINT_COMPLETE: _ClassVar[Command.Kind]
    KIND_UNSPECIFIED: Command.Kind
    STOP: Command.Kind
    CHECKPOINT: Command.Kind
    CHECKPOINT_COMPLETE: Command.Kind
    KIND_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    kind: Command.Kind
    checkpoint_id: int
    reason: str
    def __init__(self, kind: _Optional[_Union[Command.Kind, str]] = ..., checkpoint_id: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class WorkerFinished(_message.Message):
    __slots__ = ("worker", "ok", "error", "results", "peer_failure", "status")
    WORKER_FIELD_NUMBER: _ClassVar[int]
    OK_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    PEER_FAILURE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    worker: str
    ok: bool
    error: str
    results: bytes
    peer_failure: bool
    status: WorkerStatus
    def __init__(self, worker: _Optional[str] = ..., ok: _Optional[bool] = ..., error: _Optional[str] = ..., results: _Optional[bytes] = ..., peer_failure: _Optional[bool] = ..., status: _Optional[_Union[WorkerStatus, _Mapping]] = ...) -> None: ...

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
    __slots__ = ("phase", "blocks", "error", "results", "seconds")
    class Phase(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        PHASE_UNSPECIFIED: _ClassVar[JobUpdate.Phase]
        WAITING_FOR_WORKERS: _ClassVar[JobUpdate.Phase]
        RUNNING: _ClassVar[JobUpdate.Phase]
        SUCCEEDED: _ClassVar[JobUpdate.Phase]
        FAILED: _ClassVar[JobUpdate.Phase]
    PHASE_UNSPECIFIED: JobUpdate.Phase
    WAITING_FOR_WORKERS: JobUpdate.Phase
    RUNNING: JobUpdate.Phase
    SUCCEEDED: JobUpdate.Phase
    FAILED: JobUpdate.Phase
    PHASE_FIELD_NUMBER: _ClassVar[int]
    BLOCKS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    SECONDS_FIELD_NUMBER: _ClassVar[int]
    phase: JobUpdate.Phase
    blocks: _containers.RepeatedCompositeFieldContainer[BlockProgress]
    error: str
    results: bytes
    seconds: float
    def __init__(self, phase: _Optional[_Union[JobUpdate.Phase, str]] = ..., blocks: _Optional[_Iterable[_Union[BlockProgress, _Mapping]]] = ..., error: _Optional[str] = ..., results: _Optional[bytes] = ..., seconds: _Optional[float] = ...) -> None: ...

class CancelRequest(_message.Message):
    __slots__ = ("reason",)
    REASON_FIELD_NUMBER: _ClassVar[int]
    reason: str
    def __init__(self, reason: _Optional[str] = ...) -> None: ...
