"""State in Redis: one string value per key, under the ``segflow:`` namespace.

URL: ``redis://[user:password@]host:port/db`` (``rediss://`` for TLS works the same way).
A key such as ``jobs/j1/chk-00000012/b3.r1`` is stored as the Redis string
``segflow:jobs/j1/chk-00000012/b3.r1``.

Design choices:

* **put is one ``SET``**, so a reader sees the whole value or the previous one, never a part.
* **list uses ``SCAN … MATCH``, not ``KEYS`` and not a sorted-set index.** ``KEYS`` blocks the
  server for the whole key space. An index (a sorted set updated beside every value) would
  make ``put`` two writes (``SET`` + ``ZADD``) that need ``MULTI`` to stay consistent, and it
  can drift from the values (keys that expire or are deleted by hand). ``SCAN`` walks the
  key space in small steps without blocking other clients and is always consistent with
  what is stored; listing is only used for recovery and retention, where its O(key space)
  cost is fine. The prefix is escaped (``* ? [ ] \\``) so that it matches literally; ``SCAN``
  may return a key twice, so results are de-duplicated, then sorted.
* **No silent retries.** redis-py can retry failed commands (its ``Redis()`` constructor does
  by default); here the retry count is pinned to 0 and socket timeouts are short (2 s), so
  an outage surfaces at once as :class:`StateStoreError` (a checkpoint fails, the job goes
  on). Nothing is left broken:
  redis-py drops a connection that failed and the pool reconnects on the next call, and a
  pooled connection that the server closed meanwhile is detected and replaced before use
  (that is a reconnect, not a retry of the command).
* Thread safety comes from redis-py's connection pool: each call borrows its own connection.
"""
from __future__ import annotations

import contextlib
import os
from typing import Iterable, cast
from urllib.parse import urlparse

import redis
from redis.backoff import NoBackoff
from redis.exceptions import (AuthenticationError, AuthorizationError, ConnectionError as RedisConnectionError,
                              RedisError, ResponseError, TimeoutError as RedisTimeoutError)
from redis.retry import Retry

from ..errors import SegflowError, explained
from ..redaction import redact_url
from .backend import StateBackend, StateStoreError

NAMESPACE = "segflow:"
PASSWORD_ENV = "SEGFLOW_REDIS_PASSWORD"     # from a Kubernetes Secret, so that no URL carries it
USERNAME_ENV = "SEGFLOW_REDIS_USERNAME"
_GLOB_SPECIAL = frozenset("*?[]\\")


def escape_glob(text: str) -> str:
    """``text`` as a Redis glob pattern that matches only itself."""
    return "".join("\\" + c if c in _GLOB_SPECIAL else c for c in text)


def failing_fast_client(url: str, connect_timeout: float, timeout: float, decode_responses: bool,
                        protocol: int | None, error: type[SegflowError], where: str) -> redis.Redis:
    """A client that never retries on its own (redis-py retries by default), so that an
    outage surfaces at once and the caller decides: the state store fails the checkpoint,
    the Redis Streams connectors defer a commit or fail a replica. ``protocol``: the RESP
    version (None: redis-py's default). Credentials missing from the URL come from
    ``SEGFLOW_REDIS_USERNAME`` / ``SEGFLOW_REDIS_PASSWORD``. A URL redis-py cannot take
    raises ``error`` naming the caller (``where``)."""
    with explained(error, where, "the URL", (ValueError, RedisError),
                   lambda exc: f"cannot be used: {exc}; Redis URLs look like redis://[user:password@]host:port/db"):
        return redis.Redis.from_url(
            url,
            username=os.environ.get(USERNAME_ENV) or None,      # the URL's own credentials win
            password=os.environ.get(PASSWORD_ENV) or None,
            socket_connect_timeout=connect_timeout,
            socket_timeout=timeout,
            retry=Retry(NoBackoff(), 0),
            retry_on_error=[],
            protocol=protocol,
            decode_responses=decode_responses,
            health_check_interval=0,
            driver_info=None,  # no CLIENT SETINFO round trip on every connect
        )


class RedisBackend(StateBackend):
    connect_timeout = 2.0
    timeout = 2.0
    scan_count = 1000
    delete_chunk = 1000

    def __init__(self, url: str, *, connect_timeout: float | None = None, timeout: float | None = None):
        parsed = urlparse(url)
        if parsed.scheme not in ("redis", "rediss") or not parsed.hostname:
            raise SegflowError(f"Redis state URLs look like redis://host:port/db (got {url!r})")
        try:
            port = parsed.port or 6379
        except ValueError:
            raise SegflowError(f"bad port in the Redis state URL {url!r}: use redis://host:port/db") from None
        db = parsed.path.strip("/") or "0"
        if not db.isdigit():
            raise SegflowError(f"the Redis state URL {url!r} must end with a database number, like redis://host:6379/0")
        self.url = url
        self.address = f"{parsed.hostname}:{port}"
        self.db = int(db)
        # Never echo a password in messages.
        self._shown = redact_url(url)
        if connect_timeout is not None:
            self.connect_timeout = connect_timeout
        if timeout is not None:
            self.timeout = timeout
        self._where = f"Redis state store {self._shown}"
        self._client = failing_fast_client(url, self.connect_timeout, self.timeout, decode_responses=False,
                                           protocol=2, error=SegflowError, where=self._where)

    # -- errors ---------------------------------------------------------------------------

    def _failing(self, what: str) -> contextlib.AbstractContextManager[None]:
        return explained(StateStoreError, self._where, what, (RedisError, OSError), self._explain)

    def _explain(self, exc: BaseException) -> str:
        if isinstance(exc, (AuthenticationError, AuthorizationError)):
            return (f"failed: the server refused the credentials ({exc}); check the user/password in the URL "
                    "and the server's ACLs")
        if isinstance(exc, RedisTimeoutError):
            return (f"timed out after {self.timeout:g} s ({exc}); is redis-server at {self.address} overloaded "
                    "or paused? The next operation reconnects by itself")
        if isinstance(exc, RedisConnectionError):
            return (f"failed: cannot talk to the server ({exc}); is redis-server running at {self.address} and "
                    "reachable from here? Start it or fix the state URL; the next operation reconnects by itself")
        if isinstance(exc, ResponseError):
            return (f"was refused by the server: {exc}; check that database {self.db} exists, that the server "
                    "is not a read-only replica or out of memory (maxmemory), and that nothing else writes keys "
                    "under 'segflow:'")
        return f"failed: {type(exc).__name__}: {exc}; check redis-server at {self.address}"

    # -- operations -----------------------------------------------------------------------

    @staticmethod
    def _name(key: str) -> bytes:
        return (NAMESPACE + key).encode("utf-8")

    def put(self, key: str, data: bytes) -> None:
        with self._failing(f"writing {key!r} ({len(data)} bytes)"):
            self._client.set(self._name(key), bytes(data))

    def get(self, key: str) -> bytes | None:
        with self._failing(f"reading {key!r}"):
            return cast("bytes | None", self._client.get(self._name(key)))   # decode_responses=False: bytes

    def list(self, prefix: str) -> list[str]:
        pattern = escape_glob(NAMESPACE + prefix) + "*"
        start = len(NAMESPACE)
        found: set[str] = set()
        with self._failing(f"listing keys under {prefix!r}"):
            for name in self._client.scan_iter(match=pattern.encode("utf-8"), count=self.scan_count):
                key = name.decode("utf-8", errors="surrogateescape")[start:]
                if key.startswith(prefix):  # belt and braces over the glob
                    found.add(key)
        return sorted(found)

    def delete(self, keys: Iterable[str]) -> None:
        names = [self._name(k) for k in keys]
        with self._failing(f"deleting {len(names)} keys"):
            for i in range(0, len(names), self.delete_chunk):
                self._client.delete(*names[i:i + self.delete_chunk])

    def close(self) -> None:
        self._client.close()
        self._client.connection_pool.disconnect()

    def __repr__(self) -> str:
        return f"RedisBackend({self._shown!r})"
