"""The lease object in the backup store (I/O): read with its version, written only if
unchanged, so two clusters racing for the lease can never both win."""
from __future__ import annotations

from typing import Protocol, runtime_checkable
from urllib.parse import urlparse

from ..errors import SegflowError
from ..extras import require
from .lease import Lease

LEASES = "leases"


@runtime_checkable
class VersionedStore(Protocol):
    """What a lease needs of its store: objects read with a version and written only if
    unchanged (S3's ETags; :class:`segflow.state.s3.S3Backend`)."""

    def get_tagged(self, key: str) -> tuple[bytes, str] | None: ...

    def put_if(self, key: str, data: bytes, etag: str | None) -> str: ...

    def close(self) -> None: ...


def lease_key(job_name: str) -> str:
    """Beside the job's snapshots (``jobs/<job>/``), never inside them: listing a job's
    checkpoints must not meet the lease."""
    return f"{LEASES}/{job_name}.json"


class LeaseStore:
    """One job's lease. ``read`` returns ``(lease, version)``; ``write`` succeeds only if
    the object is still at ``version`` (``None``: only if there is none), and raises
    ``segflow.state.backend.WriteConflict`` otherwise."""

    def __init__(self, backup_url: str, job_name: str, s3_endpoint: str | None = None,
                 backend: VersionedStore | None = None):
        if urlparse(backup_url).scheme != "s3":
            raise SegflowError(f"the disaster-recovery backup store must be S3 (s3://bucket/prefix), shared by "
                               f"both clusters, not {backup_url!r}")
        if backend is None:
            require("boto3", "disaster recovery's lease")
            from ..state.s3 import S3Backend
            backend = S3Backend(backup_url, s3_endpoint)
        self.backend = backend
        self.key = lease_key(job_name)

    def read(self) -> tuple[Lease | None, str | None]:
        found = self.backend.get_tagged(self.key)
        if found is None:
            return None, None
        data, version = found
        return Lease.decode(data), version

    def write(self, lease: Lease, version: str | None) -> str:
        return self.backend.put_if(self.key, lease.encode(), version)

    def close(self) -> None:
        self.backend.close()

