"""The server side of one SPDY/3.1 connection (frames: spdy.py): the streams the client
opens, their data in and out, and flow control.

One thread (:meth:`Session.serve`) reads frames: it answers each SYN_STREAM with a
SYN_REPLY, PINGs with their echo, queues a stream's data for its consumer, and applies
WINDOW_UPDATE, SETTINGS, RST_STREAM and GOAWAY. Others send with :meth:`Session.send`.

Flow control, both ways. What this side consumes, it gives back with WINDOW_UPDATEs on the
stream and on the session (:meth:`Session.consumed`). What it sends stays within the
client's windows (64 KB each at first) once the client has shown that it keeps them, by a
WINDOW_UPDATE or an initial window in SETTINGS: kubectl's SPDY library (moby/spdystream)
sends neither and ignores windows (as does the kubelet, on the same library); holding
its output at 64 KB would stall every ``kubectl exec`` whose output is larger.
"""
from __future__ import annotations

import queue
import socket
import threading
import time
from dataclasses import dataclass, field
from io import BufferedIOBase

from . import spdy

INITIAL_WINDOW = 65536
MAX_DATA_FRAME = 32768


class SessionClosed(ConnectionError):
    """The connection ended (the client went away, sent GOAWAY, or broke the protocol)."""


class StreamsMissing(TimeoutError):
    """The client did not open the streams the request asked for in time."""


@dataclass
class Stream:
    """A stream the client opened: its ``streamtype`` header says what it carries."""
    stream_id: int
    kind: str
    send_window: int
    inbound: queue.Queue[bytes | None] = field(default_factory=queue.Queue)    # None: the client's end
    reset: bool = False


class Session:
    """Streams and windows of one connection read from ``reader`` (the upgraded request's
    buffered input, which may already hold the first frames) and written to ``connection``."""

    def __init__(self, reader: BufferedIOBase, connection: socket.socket):
        self._reader, self._connection = reader, connection
        self._compressor, self._decompressor = spdy.HeaderCompressor(), spdy.HeaderDecompressor()
        self._write_lock = threading.Lock()
        self._changed = threading.Condition()
        self._streams: dict[int, Stream] = {}
        self._initial_window = INITIAL_WINDOW
        self._session_window = INITIAL_WINDOW
        self._client_keeps_windows = False
        self._last_stream_id = 0
        self.closed = False
        self.error = ""

    def write(self, frame: spdy.Frame) -> None:
        with self._write_lock:
            try:
                self._connection.sendall(spdy.encode(frame, self._compressor))
            except OSError as exc:
                raise SessionClosed(f"cannot write to the client: {exc}") from exc

    def _read_exactly(self, size: int) -> bytes:
        data = self._reader.read(size)
        if len(data) != size:
            raise SessionClosed("the client closed the connection")
        return data

    def serve(self) -> None:
        """Read and handle frames until the connection ends."""
        try:
            while not self.closed:
                header = self._read_exactly(spdy.HEADER_SIZE)
                frame = spdy.decode(header + self._read_exactly(spdy.payload_length(header)), self._decompressor)
                if frame is not None:
                    self._handle(frame)
        except spdy.FrameError as exc:
            self.error = str(exc)
            self._write_quietly(spdy.GoAway(self._last_stream_id, spdy.GoAwayStatus.PROTOCOL_ERROR))
        except (SessionClosed, OSError) as exc:
            self.error = self.error or str(exc)
        finally:
            self._end()

    def _write_quietly(self, frame: spdy.Frame) -> None:
        try:
            self.write(frame)
        except SessionClosed:
            pass

    def _end(self) -> None:
        with self._changed:
            self.closed = True
            for stream in self._streams.values():
                stream.inbound.put(None)
            self._changed.notify_all()

    def _handle(self, frame: spdy.Frame) -> None:
        if isinstance(frame, spdy.SynStream):
            self._open(frame)
        elif isinstance(frame, spdy.Data):
            self._receive(frame)
        elif isinstance(frame, spdy.Ping):
            if frame.ping_id % 2:           # the client's (odd): echo it; ours (even) are never sent
                self.write(frame)
        elif isinstance(frame, spdy.WindowUpdate):
            self._grow_window(frame.stream_id, frame.delta)
        elif isinstance(frame, spdy.Settings):
            self._settings(frame.values)
        elif isinstance(frame, spdy.RstStream):
            self._reset(frame.stream_id)
        elif isinstance(frame, spdy.GoAway):
            raise SessionClosed("the client sent GOAWAY")

    def _open(self, frame: spdy.SynStream) -> None:
        if frame.stream_id % 2 == 0 or frame.stream_id <= self._last_stream_id:
            self.write(spdy.RstStream(frame.stream_id, spdy.RstStatus.PROTOCOL_ERROR))
            return
        self._last_stream_id = frame.stream_id
        stream = Stream(frame.stream_id, frame.headers.get("streamtype", ""), self._initial_window)
        if frame.fin:
            stream.inbound.put(None)
        self.write(spdy.SynReply(frame.stream_id))
        with self._changed:
            self._streams[frame.stream_id] = stream
            self._changed.notify_all()

    def _receive(self, frame: spdy.Data) -> None:
        stream = self._streams.get(frame.stream_id)
        if stream is None:
            self.write(spdy.RstStream(frame.stream_id, spdy.RstStatus.INVALID_STREAM))
            return
        if frame.data:
            stream.inbound.put(frame.data)
        if frame.fin:
            stream.inbound.put(None)

    def _grow_window(self, stream_id: int, delta: int) -> None:
        with self._changed:
            self._client_keeps_windows = True
            if stream_id == 0:
                self._session_window += delta
            elif stream_id in self._streams:
                self._streams[stream_id].send_window += delta
            self._changed.notify_all()

    def _settings(self, values: dict[int, int]) -> None:
        if spdy.SETTINGS_INITIAL_WINDOW_SIZE not in values:
            return
        with self._changed:
            change = values[spdy.SETTINGS_INITIAL_WINDOW_SIZE] - self._initial_window
            self._initial_window += change
            self._client_keeps_windows = True
            for stream in self._streams.values():
                stream.send_window += change
            self._changed.notify_all()

    def _reset(self, stream_id: int) -> None:
        with self._changed:
            stream = self._streams.get(stream_id)
            if stream is not None:
                stream.reset = True
                stream.inbound.put(None)
            self._changed.notify_all()

    def wait_for(self, kinds: set[str], timeout: float) -> dict[str, Stream]:
        """The client's streams of these ``streamtype``s, once all are open."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                opened = {s.kind: s for s in self._streams.values() if s.kind in kinds}
                if set(opened) == kinds:
                    return opened
                left = deadline - time.monotonic()
                if self.closed or left <= 0:
                    raise StreamsMissing(f"the client opened the streams {sorted(opened)} of {sorted(kinds)} "
                                         f"within {timeout:g}s" + (f" ({self.error})" if self.error else ""))
                self._changed.wait(left)

    def _allowance(self, stream: Stream, wanted: int) -> int:
        """How many bytes may be sent now (waits for a window to open)."""
        with self._changed:
            while True:
                if self.closed or stream.reset:
                    raise SessionClosed(f"stream {stream.kind} is closed" + (f": {self.error}" if self.error else ""))
                if not self._client_keeps_windows:
                    return wanted
                allowed = min(wanted, stream.send_window, self._session_window)
                if allowed > 0:
                    stream.send_window -= allowed
                    self._session_window -= allowed
                    return allowed
                self._changed.wait()

    def send(self, stream: Stream, data: bytes, fin: bool = False) -> None:
        """Send ``data`` on ``stream`` in frames within the client's windows; ``fin`` ends the
        stream from this side."""
        offset = 0
        while offset < len(data):
            size = self._allowance(stream, min(MAX_DATA_FRAME, len(data) - offset))
            last = offset + size == len(data)
            self.write(spdy.Data(stream.stream_id, data[offset:offset + size], fin and last))
            offset += size
        if fin and not data:
            self.write(spdy.Data(stream.stream_id, b"", True))

    def consumed(self, stream: Stream, size: int) -> None:
        """Give the client back ``size`` bytes of window on ``stream`` and on the session."""
        if size > 0 and not self.closed:
            self._write_quietly(spdy.WindowUpdate(stream.stream_id, size))
            self._write_quietly(spdy.WindowUpdate(0, size))

    def go_away(self) -> None:
        """Tell the client no further stream will be accepted (the end of the exchange)."""
        self._write_quietly(spdy.GoAway(self._last_stream_id))
