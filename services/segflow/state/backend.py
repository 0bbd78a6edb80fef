"""The state-store interface every backend implements, and picking one from a URL.

A backend is a flat key-value store of bytes with prefix listing; keys are paths such as
``jobs/<job>/chk-00000012/b3.r1``. Snapshot completeness, retention and the per-replica
layout are decided above this layer (segflow.checkpoint); backends only store bytes
reliably. Every failure of the store surfaces as :class:`StateStoreError`, so a
checkpoint can fail without failing the job.

URLs: ``file:///abs/dir``, ``redis://host:port/db``, ``s3://bucket/prefix`` (endpoint from
``s3_endpoint`` or ``AWS_ENDPOINT_URL``).
"""
from __future__ import annotations

import abc
from typing import Iterable
from urllib.parse import urlparse

from ..errors import SegflowError
from ..extras import require
from ..redaction import redact_url


class StateStoreError(SegflowError):
    """The state store could not be reached or refused an operation."""


class WriteConflict(StateStoreError):
    """A conditional write lost: the object changed (or appeared) since it was read."""


class StateBackend(abc.ABC):
    """Bytes by key. Implementations must be safe to use from several threads."""

    url: str

    @abc.abstractmethod
    def put(self, key: str, data: bytes) -> None:
        """Store ``data`` under ``key`` atomically: readers see all of it or nothing."""

    @abc.abstractmethod
    def get(self, key: str) -> bytes | None:
        """The bytes under ``key``, or ``None`` if there are none."""

    @abc.abstractmethod
    def list(self, prefix: str) -> list[str]:
        """Every key that starts with ``prefix``, sorted."""

    @abc.abstractmethod
    def delete(self, keys: Iterable[str]) -> None:
        """Remove the keys (missing ones are ignored)."""

    def close(self) -> None:
        return None


def open_backend(url: str, s3_endpoint: str | None = None) -> StateBackend:
    parsed = urlparse(url)
    if parsed.scheme == "file":
        from .local import LocalBackend  # cycle: a subclass of StateBackend, imported only for its URL
        return LocalBackend(url)
    if parsed.scheme in ("redis", "rediss"):
        require("redis", "a Redis state store")
        from .redis_store import RedisBackend  # cycle: a subclass of StateBackend, imported only for its URL
        return RedisBackend(url)
    if parsed.scheme == "s3":
        require("boto3", "an S3 state store")
        from .s3 import S3Backend  # cycle: a subclass of StateBackend, imported only for its URL
        return S3Backend(url, s3_endpoint)
    raise SegflowError(f"unknown state store URL {redact_url(url)!r}: use file:///dir, redis://host:port/db, "
                       "rediss://host:port/db (TLS) or s3://bucket/prefix")
