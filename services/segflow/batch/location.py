"""Where the stage reads and writes: a local directory or ``s3://bucket/prefix``, as a
segflow state store (atomic puts: rename for files, one PutObject for S3)."""
from __future__ import annotations

import os

from ..errors import SegflowError
from ..state.backend import StateBackend, open_backend


def open_location(where: str, s3_endpoint: str | None = None) -> StateBackend:
    """``where``: a directory path or an ``s3://`` URL; the endpoint defaults to
    ``$AWS_ENDPOINT_URL`` as elsewhere in segflow."""
    if where.startswith("s3://"):
        return open_backend(where, s3_endpoint or os.environ.get("AWS_ENDPOINT_URL"))
    if "://" in where:
        raise SegflowError(f"the batch stage reads and writes a directory or s3://bucket/prefix, not {where!r}")
    path = os.path.abspath(where)
    if os.path.exists(path) and not os.path.isdir(path):
        raise SegflowError(f"{where} is a file: the batch stage needs the sink's output directory")
    return open_backend(f"file://{path}")
