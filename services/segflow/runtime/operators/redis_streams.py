"""Redis Streams: a bounded, replayable source and an exactly-once sink.

**Source.** Records are ``(entry_id, fields)``: the entry's id (``"1700000000000-0"``) and
its fields as a dict of strings (UTF-8). Each stream key is read by one replica, oldest
entry first, with ``XRANGE`` in batches; several keys spread over the replicas (replica r of
n reads keys r, r+n, ...). A stream has no byte ranges to split, and entries of one key
must stay in order, so one key, one reader. The source is bounded: at the first start it
fixes, per key, the last entry to read (the stream's last entry then, or the last one up to
``until``, or the ``count``-th) and stops there, so a replay reads the same entries even
while producers go on appending. Its position is the id of the last entry it emitted per
key; a restored source reads on strictly after it (``XRANGE (id``). ``rate`` caps the
entries per second of each reading replica (a backfill that must not flood the job).

**Sink.** One entry per record, appended with ``XADD`` and server-made ids. Without
checkpoints, entries are appended as they come. With checkpoints, the records of an epoch
(see :class:`EpochSink`) are kept with the checkpoint's snapshot, and when the checkpoint
completes they are appended by one Lua script that also records the marker
``<replica>:<epoch>`` (with the ids of the epoch's first and last entries) in the hash
``segflow:commits:<stream>``; the script does nothing if the marker exists. Redis runs a
script atomically, as a ``MULTI``/``EXEC`` transaction, so an epoch's entries and its marker
appear together or not at all, and a commit replayed after a crash (a restore publishes
again what its checkpoint had pending) never duplicates them. A script rather than
``MULTI``: the marker must hold the ids the server gives the entries, which a transaction
only returns after ``EXEC``; and entries from several replicas interleave in one stream, so
the client cannot choose increasing ids itself. An epoch's entries are contiguous in the
stream (nothing runs between a script's commands), which lets a restore from an older
checkpoint delete what epochs after it appended (``XRANGE first last`` + ``XDEL``). A fresh
run (not a restore) forgets its replica's markers of earlier runs; it does not delete
entries: a stream is appended to. One job at a time should write a given stream with
checkpoints, as one job at a time writes a file sink's directory.

Errors of the server surface as :class:`ConnectorError` with what to do; in the sink, an
unreachable server delays commits instead of failing the job (see :class:`EpochSink`).
"""
from __future__ import annotations

import contextlib
import re
from typing import Any, Callable
from urllib.parse import urlparse

from ...errors import PipelineError, explained
from ...extras import require
from ...redaction import redact_url
from ..elements import Batch
from ..executor import SourceOperator
from ..operator import ENGINE_ONLY, engine_only
from .sources import Pace
from .two_phase import ConnectorError, EpochSink, left_by_earlier_run, opened

ENTRY_ID = re.compile(r"^\d+(-\d+)?$")

# KEYS: stream, commit markers; ARGV: marker field, then per entry its number of fields and
# its field/value pairs.
_COMMIT = """
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then return 0 end
local i, first, last = 2, nil, nil
while i <= #ARGV do
  local n = tonumber(ARGV[i])
  last = redis.call('XADD', KEYS[1], '*', unpack(ARGV, i + 1, i + 2 * n))
  first = first or last
  i = i + 1 + 2 * n
end
redis.call('HSET', KEYS[2], ARGV[1], first .. ' ' .. last)
return 1
"""


def check_redis_url(url: str, what: str) -> None:
    """Raise :class:`PipelineError` unless ``url`` looks like ``redis://host:port/db``."""
    parsed = urlparse(url)
    try:
        parsed.port
    except ValueError:
        raise PipelineError(f"{what}: bad port in the Redis URL {redact_url(url)!r}") from None
    if parsed.scheme not in ("redis", "rediss") or not parsed.hostname or not (parsed.path.strip("/") or "0").isdigit():
        raise PipelineError(f"{what} needs a Redis URL like redis://[user:password@]host:6379/0, "
                            f"got {redact_url(url)!r}")


def entry_key(entry_id: str) -> tuple[int, int]:
    """An entry id as a sortable pair (ids compare by milliseconds, then sequence)."""
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


class RedisStreams:
    """A redis-py client for one stream source or sink, whose failures say what to do.

    No silent retries (as for the Redis state store): a failure surfaces at once, and the
    caller decides (the sink retries its commit at the next checkpoint; the source fails
    its replica, which the job's recovery restarts from its position).

    redis-py is imported here, when a replica opens, not when the job is built: every
    process builds the pipeline at each attempt, and the import takes a few tenths of a
    second that a worker would otherwise spend before it reports to the coordinator."""

    connect_timeout = 2.0
    timeout = 10.0

    def __init__(self, url: str, role: str):
        require("redis", "Redis stream connectors")
        from ...state.redis_store import failing_fast_client

        parsed = urlparse(url)
        self.where = f"{role} at {redact_url(url)}"
        self.address = f"{parsed.hostname}:{parsed.port or 6379}"
        # Any: with decode_responses the replies are str, which redis-py's types cannot say
        self.client: Any = failing_fast_client(url, self.connect_timeout, self.timeout, decode_responses=True,
                                               protocol=None, error=ConnectorError, where=self.where)

    def failing(self, what: str) -> contextlib.AbstractContextManager[None]:
        from redis.exceptions import RedisError

        return explained(ConnectorError, self.where, what, RedisError, self._explain)

    def _explain(self, exc: BaseException) -> str:
        from redis.exceptions import (AuthenticationError, AuthorizationError,
                                      ConnectionError as RedisConnectionError, TimeoutError as RedisTimeoutError)

        if isinstance(exc, (AuthenticationError, AuthorizationError)):
            return (f"failed: the server refused the credentials ({exc}); check the user and password in the URL "
                    "and the server's ACLs")
        if isinstance(exc, (RedisConnectionError, RedisTimeoutError)):
            return (f"failed: cannot talk to the server ({exc}); is redis-server running at {self.address} and "
                    "reachable from here?")
        if str(exc).startswith("WRONGTYPE"):
            return "failed: the key holds something other than a stream; choose another stream name"
        return f"failed: {type(exc).__name__}: {exc}"

    def close(self) -> None:
        self.client.close()


class RedisStreamSource(SourceOperator):
    """Entries of Redis streams as ``(entry_id, fields)`` records (see the module's doc)."""

    spark_step = ENGINE_ONLY

    state_fields = ("positions", "ends", "produced")

    def spark_refusal(self) -> tuple[str, str] | None:
        return engine_only(self)

    def __init__(self, url: str, streams: list[str], until: str | None, count: int | None,
                 rate: float | None):
        self.url = url
        self.streams = streams
        self.until = until
        self.count = count
        self.rate = rate
        self.positions: dict[str, str] = {}      # key -> id of the last entry emitted ("0-0": none)
        self.ends: dict[str, str | None] = {}    # key -> id of the last entry to read (None: nothing)
        self.produced = 0
        self.restored = False
        self.redis: RedisStreams | None = None

    @property
    def _redis(self) -> RedisStreams:
        return opened(self.redis, "the Redis stream source")

    def restore(self, state: dict) -> None:
        super().restore(state)
        self.restored = True

    def open(self, ctx) -> None:
        super().open(ctx)
        self.redis = RedisStreams(self.url, "Redis stream source")
        if not self.restored:
            mine = self.streams[ctx.index::ctx.replicas]
            self.positions = {key: "0-0" for key in mine}   # no entry has id 0-0
            self.ends = {key: self._last_to_read(key) for key in mine}
        self.pace = Pace(self.rate, self.produced)

    def _last_to_read(self, key: str) -> str | None:
        if self.count == 0:
            return None
        end = self.until or "+"
        with self._redis.failing(f"finding the last entry to read of {key!r}"):
            if self.count is None:
                last = self._redis.client.xrevrange(key, end, "-", count=1)
            else:
                last = self._redis.client.xrange(key, "-", end, count=self.count)[-1:]
        return last[0][0] if last else None

    def poll(self, max_items: int) -> Batch | None:
        for key, end in self.ends.items():
            position = self.positions[key]
            if end is None or entry_key(position) >= entry_key(end):
                continue
            want = self.pace.allowance(self.produced, max_items)
            if not want:
                return Batch([])
            with self._redis.failing(f"reading {key!r} after {position}"):
                entries = self._redis.client.xrange(key, f"({position}", end, count=want)
            if not entries:        # the rest was deleted meanwhile
                self.positions[key] = end
                continue
            self.positions[key] = entries[-1][0]
            self.produced += len(entries)
            return Batch([(entry_id, fields) for entry_id, fields in entries])
        return None

    def close(self) -> None:
        if self.redis is not None:
            self.redis.close()


def stream_fields(value: Any) -> dict:
    """A record as the fields of one stream entry: a dict as it is (values other than bytes
    become strings), anything else as the single field ``data``."""
    if not isinstance(value, dict):
        return {"data": value if isinstance(value, bytes) else str(value)}
    if not value:
        raise ValueError("a stream entry needs at least one field, got an empty dict")
    return {str(k): v if isinstance(v, bytes) else str(v) for k, v in value.items()}


class RedisStreamSink(EpochSink):
    """Appends one entry per record to a Redis stream, exactly once with checkpoints (see
    the module's doc for the design)."""

    def __init__(self, url: str, stream: str, formatter: Callable | None):
        super().__init__()
        self.url = url
        self.stream = stream
        self.formatter = formatter
        self.markers = f"segflow:commits:{stream}"
        self.entries: list[dict] = []       # the open epoch
        self.redis: RedisStreams | None = None

    @property
    def _redis(self) -> RedisStreams:
        return opened(self.redis, f"the Redis stream sink {self.stream!r}")

    def _open_storage(self) -> None:
        self.redis = RedisStreams(self.url, f"Redis stream sink {self.stream!r}")
        self.commit = self._redis.client.register_script(_COMMIT)
        self.entries = []

    def _clear_earlier_runs(self) -> None:
        with self._redis.failing(f"forgetting the commit markers of earlier runs in {self.markers!r}"):
            fields = [f for f in self._redis.client.hkeys(self.markers)
                      if left_by_earlier_run(self.ctx, int(f.partition(":")[0]))]
            if fields:
                self._redis.client.hdel(self.markers, *fields)

    def _withdraw_after(self, checkpoint_id: int) -> None:
        client = self._redis.client
        with self._redis.failing(f"removing the entries published after checkpoint {checkpoint_id}"):
            for field, ids in client.hgetall(self.markers).items():
                replica, _, epoch = field.partition(":")
                if int(replica) != self.ctx.index or not self._produced_again(int(epoch), checkpoint_id):
                    continue
                first, last = ids.split()
                doomed = [entry_id for entry_id, _ in client.xrange(self.stream, first, last)]
                if doomed:
                    client.xdel(self.stream, *doomed)
                client.hdel(self.markers, field)

    def render(self, items: list) -> list[dict]:
        f = self.formatter
        return [stream_fields(x) for x in items] if f is None else [stream_fields(f(x)) for x in items]

    def _write(self, rendered: list[dict]) -> None:
        if self.ctx.transactional:
            self.entries.extend(rendered)
            return
        with self._redis.failing(f"appending {len(rendered)} entries"):
            pipe = self._redis.client.pipeline(transaction=False)
            for fields in rendered:
                pipe.xadd(self.stream, fields)
            pipe.execute()

    def _stage(self, epoch: int) -> list[dict] | None:
        entries, self.entries = self.entries, []
        return entries or None

    def _publish(self, epoch: int, staged: list[dict]) -> None:
        args: list = [f"{self.ctx.index}:{epoch}"]
        for fields in staged:
            args.append(len(fields))
            for pair in fields.items():
                args.extend(pair)
        with self._redis.failing(f"appending the {len(staged)} entries of epoch {epoch}"):
            self.commit(keys=[self.stream, self.markers], args=args)

    def _finish(self) -> None:
        return None      # without checkpoints every entry was appended already

    def close(self) -> None:
        if self.redis is not None:
            self.redis.close()
