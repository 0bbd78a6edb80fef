from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Encoding(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ENCODING_UNSPECIFIED: _ClassVar[Encoding]
    PICKLE5: _ClassVar[Encoding]
ENCODING_UNSPECIFIED: Encoding
PICKLE5: Encoding

class ChannelHello(_message.Message):
    __slots__ = ("protocol_version", "job_id", "src_block", "src_replica", "dst_block", "dst_replica", "dst_input")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    SRC_BLOCK_FIELD_NUMBER: _ClassVar[int]
    SRC_REPLICA_FIELD_NUMBER: _ClassVar[int]
    DST_BLOCK_FIELD_NUMBER: _ClassVar[int]
    DST_REPLICA_FIELD_NUMBER: _ClassVar[int]
    DST_INPUT_FIELD_NUMBER: _ClassVar[int]
    protocol_version: int
    job_id: str
    src_block: int
    src_replica: int
    dst_block: int
    dst_replica: int
    dst_input: int
    def __init__(self, protocol_version: _Optional[int] = ..., job_id: _Optional[str] = ..., src_block: _Optional[int] = ..., src_replica: _Optional[int] = ..., dst_block: _Optional[int] = ..., dst_replica: _Optional[int] = ..., dst_input: _Optional[int] = ...) -> None: ...

class RecordBatch(_message.Message):
    __slots__ = ("encoding", "records", "timestamps", "count", "born")
    ENCODING_FIELD_NUMBER: _ClassVar[int]
    RECORDS_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMPS_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    BORN_FIELD_NUMBER: _ClassVar[int]
    encoding: Encoding
    records: bytes
    timestamps: bytes
    count: int
    born: float
    def __init__(self, encoding: _Optional[_Union[Encoding, str]] = ..., records: _Optional[bytes] = ..., timestamps: _Optional[bytes] = ..., count: _Optional[int] = ..., born: _Optional[float] = ...) -> None: ...

class Watermark(_message.Message):
    __slots__ = ("ts",)
    TS_FIELD_NUMBER: _ClassVar[int]
    ts: bytes
    def __init__(self, ts: _Optional[bytes] = ...) -> None: ...

class FlushBatch(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class EndOfStream(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Terminate(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Barrier(_message.Message):
    __slots__ = ("checkpoint_id", "meta")
    CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    META_FIELD_NUMBER: _ClassVar[int]
    checkpoint_id: int
    meta: bytes
    def __init__(self, checkpoint_id: _Optional[int] = ..., meta: _Optional[bytes] = ...) -> None: ...

class IterationUpdate(_message.Message):
    __slots__ = ("scope", "iteration", "state", "proceed")
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    ITERATION_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    PROCEED_FIELD_NUMBER: _ClassVar[int]
    scope: int
    iteration: int
    state: bytes
    proceed: bool
    def __init__(self, scope: _Optional[int] = ..., iteration: _Optional[int] = ..., state: _Optional[bytes] = ..., proceed: _Optional[bool] = ...) -> None: ...

class Frame(_message.Message):
    __slots__ = ("seq", "hello", "batch", "watermark", "flush", "end_of_stream", "terminate", "barrier", "iteration", "idle", "protocol_meta")
    SEQ_FIELD_NUMBER: _ClassVar[int]
    HELLO_FIELD_NUMBER: _ClassVar[int]
    BATCH_FIELD_NUMBER: _ClassVar[int]
    WATERMARK_FIELD_NUMBER: _ClassVar[int]
    FLUSH_FIELD_NUMBER: _ClassVar[int]
    END_OF_STREAM_FIELD_NUMBER: _ClassVar[int]
    TERMINATE_FIELD_NUMBER: _ClassVar[int]
    BARRIER_FIELD_NUMBER: _ClassVar[int]
    ITERATION_FIELD_NUMBER: _ClassVar[int]
    IDLE_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_META_FIELD_NUMBER: _ClassVar[int]
    seq: int
    hello: ChannelHello
    batch: RecordBatch
    watermark: Watermark
    flush: FlushBatch
    end_of_stream: EndOfStream
    terminate: Terminate
    barrier: Barrier
    iteration: IterationUpdate
    idle: Idle
    protocol_meta: bytes
    def __init__(self, seq: _Optional[int] = ..., hello: _Optional[_Union[ChannelHello, _Mapping]] = ..., batch: _Optional[_Union[RecordBatch, _Mapping]] = ..., watermark: _Optional[_Union[Watermark, _Mapping]] = ..., flush: _Optional[_Union[FlushBatch, _Mapping]] = ..., end_of_stream: _Optional[_Union[EndOfStream, _Mapping]] = ..., terminate: _Optional[_Union[Terminate, _Mapping]] = ..., barrier: _Optional[_Union[Barrier, _Mapping]] = ..., iteration: _Optional[_Union[IterationUpdate, _Mapping]] = ..., idle: _Optional[_Union[Idle, _Mapping]] = ..., protocol_meta: _Optional[bytes] = ...) -> None: ...

class Idle(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ChannelClosed(_message.Message):
    __slots__ = ("frames",)
    FRAMES_FIELD_NUMBER: _ClassVar[int]
    frames: int
    def __init__(self, frames: _Optional[int] = ...) -> None: ...
