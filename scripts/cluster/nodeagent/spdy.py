"""SPDY/3.1 frames as bytes and back (pure: no sockets; spdysession.py runs a connection).

``kubectl exec`` speaks SPDY/3.1 to the kubelet through the API server (k8s.io's
remotecommand over moby/spdystream). A frame is an 8-byte header and a payload: a control
frame (high bit set) carries the version (3), its type, flags and a 24-bit length; a data
frame carries a 31-bit stream id, flags and a 24-bit length. The header blocks of
SYN_STREAM, SYN_REPLY and HEADERS are zlib-compressed with a preset dictionary, one zlib
stream per direction for the whole connection: :class:`HeaderCompressor` and
:class:`HeaderDecompressor` keep that state.
"""
from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Union

VERSION = 3
HEADER_SIZE = 8
MAX_LENGTH = (1 << 24) - 1
MAX_STREAM_ID = (1 << 31) - 1
FLAG_FIN = 0x01
FLAG_UNIDIRECTIONAL = 0x02
SETTINGS_INITIAL_WINDOW_SIZE = 7


class FrameType(IntEnum):
    SYN_STREAM = 1
    SYN_REPLY = 2
    RST_STREAM = 3
    SETTINGS = 4
    PING = 6
    GOAWAY = 7
    HEADERS = 8
    WINDOW_UPDATE = 9


class RstStatus(IntEnum):
    PROTOCOL_ERROR = 1
    INVALID_STREAM = 2
    REFUSED_STREAM = 3
    UNSUPPORTED_VERSION = 4
    CANCEL = 5
    INTERNAL_ERROR = 6
    FLOW_CONTROL_ERROR = 7


class GoAwayStatus(IntEnum):
    OK = 0
    PROTOCOL_ERROR = 1
    INTERNAL_ERROR = 2


class FrameError(ValueError):
    """Bytes that are not a SPDY/3.1 frame (the peer broke the protocol: end the session)."""


# The header compression dictionary of the SPDY/3 draft (section 2.6.10.1): length-prefixed
# header names and values, then common status lines, dates and media types, 1423 bytes.
_WORDS = ("options head post put delete trace accept accept-charset accept-encoding accept-language accept-ranges "
          "age allow authorization cache-control connection content-base content-encoding content-language "
          "content-length content-location content-md5 content-range content-type date etag expect expires from "
          "host if-match if-modified-since if-none-match if-range if-unmodified-since last-modified location "
          "max-forwards pragma proxy-authenticate proxy-authorization range referer retry-after server te trailer "
          "transfer-encoding upgrade user-agent vary via warning www-authenticate method get status").split() + \
    ["200 OK"] + "version HTTP/1.1 url public set-cookie keep-alive origin".split()
_TAIL = ("100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505"
         "203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 Unauthorized"
         "403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 Service Unavailable"
         "Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT"
         "chunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,"
         "text/javascript,publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.")
DICTIONARY = b"".join(struct.pack(">I", len(w)) + w.encode() for w in _WORDS) + _TAIL.encode()


@dataclass(frozen=True)
class Data:
    stream_id: int
    data: bytes
    fin: bool = False


@dataclass(frozen=True)
class SynStream:
    stream_id: int
    headers: dict[str, str] = field(default_factory=dict)
    associated_id: int = 0
    priority: int = 0
    fin: bool = False
    unidirectional: bool = False


@dataclass(frozen=True)
class SynReply:
    stream_id: int
    headers: dict[str, str] = field(default_factory=dict)
    fin: bool = False


@dataclass(frozen=True)
class RstStream:
    stream_id: int
    status: int


@dataclass(frozen=True)
class Settings:
    values: dict[int, int]


@dataclass(frozen=True)
class Ping:
    ping_id: int


@dataclass(frozen=True)
class GoAway:
    last_good_id: int
    status: int = 0


@dataclass(frozen=True)
class Headers(SynReply):
    """More headers on a stream: a SYN_REPLY's fields in a frame of its own type."""


@dataclass(frozen=True)
class WindowUpdate:
    stream_id: int      # 0: the whole session's window (SPDY/3.1)
    delta: int


Frame = Union[Data, SynStream, SynReply, RstStream, Settings, Ping, GoAway, Headers, WindowUpdate]


def header_block(headers: dict[str, str]) -> bytes:
    """The uncompressed name/value block: a count, then each name and value length-prefixed
    (32 bits each); names are lower case, several values of one name are NUL-separated."""
    parts = [struct.pack(">I", len(headers))]
    for name, value in headers.items():
        for text in (name.lower().encode(), value.encode()):
            parts += [struct.pack(">I", len(text)), text]
    return b"".join(parts)


def parse_header_block(block: bytes) -> dict[str, str]:
    """The headers of an uncompressed name/value block (see :func:`header_block`)."""
    def take(offset: int, size: int) -> bytes:
        if offset + size > len(block):
            raise FrameError(f"header block ends inside a field ({len(block)} bytes, field at {offset}+{size})")
        return block[offset:offset + size]

    count, = struct.unpack(">I", take(0, 4))
    headers, offset = {}, 4
    for _ in range(count):
        name_size, = struct.unpack(">I", take(offset, 4))
        name = take(offset + 4, name_size)
        offset += 4 + name_size
        value_size, = struct.unpack(">I", take(offset, 4))
        value = take(offset + 4, value_size)
        offset += 4 + value_size
        if not name:
            raise FrameError("header block has an empty header name")
        headers[name.decode("latin-1")] = value.decode("latin-1")
    if offset != len(block):
        raise FrameError(f"header block has {len(block) - offset} bytes after its {count} headers")
    return headers


class HeaderCompressor:
    """This side's zlib stream of header blocks (flushed to a byte boundary after each)."""

    def __init__(self) -> None:
        self._zlib = zlib.compressobj(9, zlib.DEFLATED, 15, 9, zlib.Z_DEFAULT_STRATEGY, DICTIONARY)

    def compress(self, headers: dict[str, str]) -> bytes:
        return self._zlib.compress(header_block(headers)) + self._zlib.flush(zlib.Z_SYNC_FLUSH)


class HeaderDecompressor:
    """The peer's zlib stream of header blocks."""

    def __init__(self) -> None:
        self._zlib = zlib.decompressobj(zdict=DICTIONARY)

    def decompress(self, compressed: bytes) -> dict[str, str]:
        try:
            return parse_header_block(self._zlib.decompress(compressed))
        except zlib.error as exc:
            raise FrameError(f"header block is not zlib with the SPDY/3 dictionary: {exc}") from None


def _control(kind: FrameType, flags: int, payload: bytes) -> bytes:
    if len(payload) > MAX_LENGTH:
        raise FrameError(f"a {kind.name} payload of {len(payload)} bytes exceeds the 24-bit length")
    return struct.pack(">HHI", 0x8000 | VERSION, kind, flags << 24 | len(payload)) + payload


def _stream_id(value: int) -> bytes:
    if not 0 <= value <= MAX_STREAM_ID:
        raise FrameError(f"stream id {value} is not a 31-bit number")
    return struct.pack(">I", value)


def encode(frame: Frame, compressor: HeaderCompressor) -> bytes:
    """The frame's bytes; header blocks go through this side's ``compressor``."""
    if isinstance(frame, Data):
        if len(frame.data) > MAX_LENGTH:
            raise FrameError(f"a data frame of {len(frame.data)} bytes exceeds the 24-bit length")
        return _stream_id(frame.stream_id) + struct.pack(">I", (FLAG_FIN if frame.fin else 0) << 24 | len(frame.data)) \
            + frame.data
    if isinstance(frame, SynStream):
        flags = (FLAG_FIN if frame.fin else 0) | (FLAG_UNIDIRECTIONAL if frame.unidirectional else 0)
        return _control(FrameType.SYN_STREAM, flags, _stream_id(frame.stream_id) + _stream_id(frame.associated_id)
                        + struct.pack(">BB", (frame.priority & 7) << 5, 0) + compressor.compress(frame.headers))
    if isinstance(frame, SynReply):        # or Headers
        kind = FrameType.HEADERS if isinstance(frame, Headers) else FrameType.SYN_REPLY
        return _control(kind, FLAG_FIN if frame.fin else 0,
                        _stream_id(frame.stream_id) + compressor.compress(frame.headers))
    if isinstance(frame, RstStream):
        return _control(FrameType.RST_STREAM, 0, _stream_id(frame.stream_id) + struct.pack(">I", frame.status))
    if isinstance(frame, Settings):
        entries = b"".join(struct.pack(">II", key & 0xFFFFFF, value) for key, value in frame.values.items())
        return _control(FrameType.SETTINGS, 0, struct.pack(">I", len(frame.values)) + entries)
    if isinstance(frame, Ping):
        return _control(FrameType.PING, 0, struct.pack(">I", frame.ping_id))
    if isinstance(frame, GoAway):
        return _control(FrameType.GOAWAY, 0, _stream_id(frame.last_good_id) + struct.pack(">I", frame.status))
    if not 0 < frame.delta <= MAX_STREAM_ID:
        raise FrameError(f"a window update of {frame.delta} bytes is not a positive 31-bit number")
    return _control(FrameType.WINDOW_UPDATE, 0, _stream_id(frame.stream_id) + struct.pack(">I", frame.delta))


def payload_length(header: bytes) -> int:
    """How many payload bytes follow a frame's 8-byte ``header``."""
    if len(header) != HEADER_SIZE:
        raise FrameError(f"a frame header is {HEADER_SIZE} bytes, not {len(header)}")
    return int.from_bytes(header[5:8], "big")


def _fixed(kind: FrameType, payload: bytes, size: int) -> tuple[int, ...]:
    if len(payload) != size:
        raise FrameError(f"a {kind.name} payload is {size} bytes, not {len(payload)}")
    return struct.unpack(">" + "I" * (size // 4), payload)


def _at_least(kind: FrameType, payload: bytes, size: int) -> None:
    if len(payload) < size:
        raise FrameError(f"a {kind.name} payload of {len(payload)} bytes is shorter than its {size} fixed bytes")


def decode(frame: bytes, decompressor: HeaderDecompressor) -> Frame | None:
    """The frame in ``frame`` (its header and whole payload); None for a control frame type
    that SPDY/3.1 lets a receiver ignore (unknown, or the obsolete CREDENTIAL)."""
    length = payload_length(frame[:HEADER_SIZE])
    payload = frame[HEADER_SIZE:]
    if len(payload) != length:
        raise FrameError(f"frame says {length} payload bytes, has {len(payload)}")
    first, second, flags = struct.unpack(">HHB", frame[:5])
    if not first & 0x8000:
        return Data((first << 16 | second) & MAX_STREAM_ID, payload, bool(flags & FLAG_FIN))
    if first & 0x7FFF != VERSION:
        raise FrameError(f"control frame of SPDY version {first & 0x7FFF}, not {VERSION}")
    try:
        kind = FrameType(second)
    except ValueError:
        return None
    fin = bool(flags & FLAG_FIN)
    if kind is FrameType.SYN_STREAM:
        _at_least(kind, payload, 10)
        stream_id, associated = struct.unpack(">II", payload[:8])
        return SynStream(stream_id & MAX_STREAM_ID, decompressor.decompress(payload[10:]), associated & MAX_STREAM_ID,
                         payload[8] >> 5, fin, bool(flags & FLAG_UNIDIRECTIONAL))
    if kind in (FrameType.SYN_REPLY, FrameType.HEADERS):
        _at_least(kind, payload, 4)
        stream_id = struct.unpack(">I", payload[:4])[0] & MAX_STREAM_ID
        headers = decompressor.decompress(payload[4:])
        return SynReply(stream_id, headers, fin) if kind is FrameType.SYN_REPLY else Headers(stream_id, headers, fin)
    if kind is FrameType.RST_STREAM:
        stream_id, status = _fixed(kind, payload, 8)
        return RstStream(stream_id & MAX_STREAM_ID, status)
    if kind is FrameType.SETTINGS:
        _at_least(kind, payload, 4)
        count, = struct.unpack(">I", payload[:4])
        entries = _fixed(kind, payload[4:], 8 * count) if count else ()
        return Settings({entries[i] & 0xFFFFFF: entries[i + 1] for i in range(0, len(entries), 2)})
    if kind is FrameType.PING:
        return Ping(_fixed(kind, payload, 4)[0])
    if kind is FrameType.GOAWAY:
        last_good, status = _fixed(kind, payload, 8)
        return GoAway(last_good & MAX_STREAM_ID, status)
    stream_id, delta = _fixed(kind, payload, 8)
    if not delta & MAX_STREAM_ID:
        raise FrameError("a WINDOW_UPDATE of 0 bytes")
    return WindowUpdate(stream_id & MAX_STREAM_ID, delta & MAX_STREAM_ID)
