"""Tamper-evident state: every blob a job stores carries an HMAC-SHA256 of its key and
its bytes, under a key of its own derived from the deployment's state key.

Whoever can write the store (a shared Redis, a bucket) could otherwise make a restore
unpickle anything, or silently change what a job restores. The MAC covers the store key
too, so a blob moved under another name (an old snapshot replayed as a newer one, one
job's state under another job) fails as surely as a flipped bit or a truncation.

The state key comes from ``SEGFLOW_STATE_KEY`` (the operator fills it from a Secret);
without it, a local key file is made once (``~/.config/segflow/state.key``, mode 0600)
so local runs can restore each other's checkpoints. Every cluster that restores a job's
state (disaster recovery) needs the same key.
"""
from __future__ import annotations

import hashlib
import hmac
import os
import secrets

from .backend import StateStoreError

STATE_KEY_ENV = "SEGFLOW_STATE_KEY"
MAGIC = b"SGF1"
TAG = 32
MIN_KEY_BYTES = 16


class TamperedState(StateStoreError):
    """A stored blob failed its integrity check: changed, truncated, moved, or written
    under another state key."""

    def __init__(self, key: str, why: str):
        self.key = key
        super().__init__(f"{key} failed its integrity check ({why}): the state store was changed by "
                         "something other than this job, or the job runs with another SEGFLOW_STATE_KEY")


def _key_file() -> str:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "segflow", "state.key")


def _local_key() -> bytes:
    path = _key_file()
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:            # another process made it first: use theirs
            pass
        else:
            with os.fdopen(fd, "w") as f:
                f.write(secrets.token_hex(32))
    with open(path) as f:
        return f.read().strip().encode()


def state_key() -> bytes:
    """The deployment's state key (see the module docstring)."""
    configured = os.environ.get(STATE_KEY_ENV, "")
    key = configured.encode() if configured else _local_key()
    if len(key) < MIN_KEY_BYTES:
        raise StateStoreError(f"{STATE_KEY_ENV} is {len(key)} bytes long; use at least {MIN_KEY_BYTES} random "
                              "bytes (e.g. `openssl rand -hex 32`)")
    return key


class Sealer:
    """Seals and opens the blobs of one job."""

    def __init__(self, job: str, key: bytes | None = None):
        self.key = hmac.new(key if key is not None else state_key(), b"segflow state of " + job.encode(),
                            hashlib.sha256).digest()

    def _tag(self, name: str, data) -> bytes:
        mac = hmac.new(self.key, name.encode() + b"\0", hashlib.sha256)
        mac.update(data)
        return mac.digest()

    def seal(self, name: str, data: bytes) -> bytes:
        return b"".join((MAGIC, self._tag(name, data), data))

    def open(self, name: str, blob: bytes) -> bytes:
        """The bytes sealed under ``name``; :class:`TamperedState` if they are not intact."""
        if len(blob) < len(MAGIC) + TAG or not blob.startswith(MAGIC):
            raise TamperedState(name, "no integrity header: truncated, or not written by segflow")
        body = memoryview(blob)[len(MAGIC) + TAG:]
        if not hmac.compare_digest(self._tag(name, body), blob[len(MAGIC):len(MAGIC) + TAG]):
            raise TamperedState(name, "its HMAC does not match")
        return body.tobytes()
