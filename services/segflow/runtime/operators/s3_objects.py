"""The S3 client of the S3 sink: the state store's client (endpoint, credentials, short
timeouts, bucket creation, errors that say what to do), naming the sink in its messages and
raising :class:`ConnectorError`, plus multipart uploads.

A module of its own so that boto3 is imported when a sink replica opens, not when the job
is built: every process builds the pipeline at each attempt, and the import takes a few
tenths of a second that a worker would otherwise spend before it reports to the coordinator.
"""
from __future__ import annotations

from ...state.s3 import S3Backend
from .two_phase import ConnectorError


class S3Objects(S3Backend):
    """Objects under ``s3://bucket/prefix`` for a sink (see the module's doc)."""

    error = ConnectorError

    def _where(self) -> str:
        return f"S3 sink {self.url} (endpoint {self.endpoint or 'AWS default for ' + self.region})"

    def start_upload(self, name: str) -> str:
        self._ensure_bucket()
        with self._failing(f"starting a multipart upload of {name!r}"):
            return self._client.create_multipart_upload(Bucket=self.bucket, Key=self.prefix + name)["UploadId"]

    def upload_part(self, name: str, upload_id: str, number: int, data: bytes) -> dict:
        with self._failing(f"uploading part {number} of {name!r} ({len(data)} bytes)"):
            etag = self._client.upload_part(Bucket=self.bucket, Key=self.prefix + name, UploadId=upload_id,
                                            PartNumber=number, Body=data)["ETag"]
        return {"PartNumber": number, "ETag": etag}

    def complete_upload(self, name: str, upload_id: str, parts: list[dict]) -> None:
        with self._failing(f"completing the multipart upload of {name!r}"):
            self._client.complete_multipart_upload(Bucket=self.bucket, Key=self.prefix + name, UploadId=upload_id,
                                                   MultipartUpload={"Parts": parts})
