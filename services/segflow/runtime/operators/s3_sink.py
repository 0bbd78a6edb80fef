"""A sink of part objects in S3 (AWS or any S3-compatible server), exactly once with
checkpoints.

Design: the objects are named like the file sink's parts (``s3://bucket/prefix/part-NNNNN-eK.<ext>``,
:class:`PartSink`), and an epoch is staged *in the checkpoint itself*: closing epoch K hands
its bytes to the snapshot of checkpoint K, and publishing is one ``PutObject`` of those
bytes under the epoch's name, which S3 makes visible whole or not at all and which can be
repeated without harm. Why not the alternatives:

* a multipart upload must name its object when it starts, before the epoch's number (the
  next barrier's id, or the end of the job) is known;
* hidden ``_pending/`` objects cost a ``PutObject`` on the processing thread at every
  barrier, and a copy and a delete per commit; an unreachable store there would fail the
  job, where the snapshot is written in the background and a failed write only fails the
  checkpoint.

The price: a replica holds the records of one open epoch in memory, and snapshots carry the
output of the checkpoints not yet committed (one checkpoint interval of output, more while
S3 is unreachable). Without checkpoints, the single part ``part-NNNNN.<ext>`` is uploaded
in parts of ``part_size`` bytes as it grows (a multipart upload completed at the end of the
stream), so memory stays bounded.

Endpoint, region and credentials are resolved as for the S3 state store
(:mod:`segflow.state.s3`, whose client :class:`S3Objects` reuses); the bucket is created if
missing.
"""
from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Callable
from urllib.parse import urlparse

from ...errors import PipelineError
from ...extras import require
from ...observability.logs import event
from .two_phase import COMMITTED, SUCCESS, ConnectorError, PartSink, log, opened

if TYPE_CHECKING:
    from .s3_objects import S3Objects


def check_s3_url(url: str) -> None:
    """Raise :class:`PipelineError` unless ``url`` looks like ``s3://bucket/prefix``."""
    parsed = urlparse(url)
    if parsed.scheme != "s3" or not parsed.netloc:
        raise PipelineError(f"write_s3 needs a URL like s3://bucket/prefix, got {url!r}")


class S3Sink(PartSink):
    """This replica's records as part objects under ``s3://bucket/prefix`` (see the module's
    doc for why epochs are staged in the snapshots)."""

    part_size = 8 << 20      # bytes of a multipart part (S3 wants at least 5 MiB but for the last)
    upload_retry = 5.0       # seconds before trying again after a part upload failed

    def __init__(self, url: str, fmt: str, formatter: Callable | None, delimiter: str = ",",
                 endpoint: str | None = None):
        super().__init__(fmt, formatter, delimiter)
        self.url = url
        self.endpoint = endpoint
        self.store: S3Objects | None = None
        self.buffer = bytearray()
        self.upload: tuple[str, list[dict]] | None = None   # without checkpoints: upload id, parts
        self.retry_at = 0.0

    def _open_storage(self) -> None:
        require("boto3", "the S3 sink")
        from .s3_objects import S3Objects   # boto3 loads when a replica opens (see S3Objects)
        self.store = S3Objects(self.url, self.endpoint)
        self.buffer = bytearray()
        self.upload = None

    @property
    def _store(self) -> "S3Objects":
        return opened(self.store, "the S3 sink")

    def _names(self) -> list[str]:
        return self._store.list("part-")

    def _remove(self, names: list[str]) -> None:
        self._store.delete(names)

    def _marker_names(self) -> list[str]:
        return self._store.list(COMMITTED)

    def _put_marker(self, name: str, data: bytes) -> None:
        self._store.put(name, data)

    def _get_marker(self, name: str) -> bytes | None:
        return self._store.get(name)

    def _remove_success(self) -> None:
        self._store.delete([SUCCESS])

    def _write(self, rendered: str) -> None:
        self.buffer += rendered.encode("utf-8")
        if not self.ctx.transactional and len(self.buffer) >= self.part_size and time.monotonic() >= self.retry_at:
            try:
                self._upload_buffer()
            except ConnectorError as exc:
                event(log, logging.WARNING, "S3 part upload failed, buffering meanwhile", sink=self.name,
                      replica=self.ctx.name, retry_in=self.upload_retry, error=str(exc))
                self.retry_at = time.monotonic() + self.upload_retry

    def _upload_buffer(self) -> None:
        name = self._part_name(None)
        if self.upload is None:
            self.upload = (self._store.start_upload(name), [])
        upload_id, parts = self.upload
        parts.append(self._store.upload_part(name, upload_id, len(parts) + 1, bytes(self.buffer)))
        self.buffer = bytearray()

    def _stage(self, epoch: int) -> bytes | None:
        data, self.buffer = bytes(self.buffer), bytearray()
        return data or None

    def _publish(self, epoch: int, staged: bytes) -> None:
        self._store.put(self._part_name(epoch), staged)

    def _finish(self) -> None:
        if self.upload is None:
            self._store.put(self._part_name(None), bytes(self.buffer))
            return
        if self.buffer:
            self._upload_buffer()
        upload_id, parts = self.upload
        self._store.complete_upload(self._part_name(None), upload_id, parts)

    def close(self) -> None:
        if self.store is not None:
            self._store.close()
