"""State in an S3 bucket (AWS or any S3-compatible server: MinIO, Ceph, moto...).

URL: ``s3://bucket/prefix``; key ``jobs/j1/chk-00000012/b3.r1`` is stored as the object
``prefix/jobs/j1/chk-00000012/b3.r1``. One ``PutObject`` per key, which S3 makes atomic.

* Endpoint: the ``s3_endpoint`` argument, else ``AWS_ENDPOINT_URL_S3`` / ``AWS_ENDPOINT_URL``,
  else AWS itself. Path-style addressing (``http://endpoint/bucket/key``), which every
  S3-compatible server understands and which needs no wildcard DNS.
* Region: ``AWS_REGION`` / ``AWS_DEFAULT_REGION``, else ``us-east-1``.
* Credentials: boto3's usual chain (environment, profile, shared files, web identity /
  container credentials as on Kubernetes; the EC2 instance metadata service only when
  ``AWS_EC2_METADATA_DISABLED=false`` says so, so that nothing probes the network for it
  unasked). With none of them configured the store refuses to start
  (:class:`S3CredentialsMissing`) instead of sending requests that can only be refused,
  or, worse, that an S3-compatible server accepts from anyone.
* Timeouts and retries are short (connect 2 s, read 10 s, 2 retries), so an unreachable
  store fails a checkpoint quickly instead of hanging it.
* The bucket is created on first use if it is missing. If that fails (store down), the next
  operation tries again: a backend never stays broken.

Every boto3/botocore failure surfaces as :class:`StateStoreError` (``error``).
"""
from __future__ import annotations

import contextlib
import os
import threading
from typing import Iterable
from urllib.parse import urlparse

import boto3
from botocore.config import Config
from botocore.exceptions import (BotoCoreError, ClientError, ConnectTimeoutError, EndpointConnectionError,
                                 NoCredentialsError, PartialCredentialsError, ReadTimeoutError)

from ..errors import SegflowError, explained
from .backend import StateBackend, StateStoreError, WriteConflict

_CREDENTIAL_SOURCES = ("AWS_ACCESS_KEY_ID", "AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE",
                       "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
                       "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE")
_NOT_FOUND = ("404", "NoSuchKey", "NotFound")
_CONFLICT = ("PreconditionFailed", "412", "ConditionalRequestConflict", "409")
_CREDENTIAL_CODES = ("AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "403", "ExpiredToken",
                     "InvalidToken")


class S3CredentialsMissing(SegflowError):
    """No source of S3 credentials is configured where the job runs."""


def _credentials_configured() -> bool:
    if any(os.environ.get(name) for name in _CREDENTIAL_SOURCES):
        return True
    if os.environ.get("AWS_EC2_METADATA_DISABLED", "").lower() == "false":
        return True
    home = os.path.expanduser("~/.aws")
    return any(os.path.exists(os.path.join(home, f)) for f in ("credentials", "config"))


class S3Backend(StateBackend):
    error: type[SegflowError] = StateStoreError      # what its failures raise
    page_size = 1000      # list_objects_v2 MaxKeys
    delete_chunk = 1000   # delete_objects accepts at most 1000 keys a call

    def __init__(self, url: str, s3_endpoint: str | None = None):
        parsed = urlparse(url)
        if parsed.scheme != "s3" or not parsed.netloc:
            raise SegflowError(f"S3 state URLs look like s3://bucket/prefix (got {url!r})")
        self.url = url
        self.bucket = parsed.netloc
        prefix = parsed.path.strip("/")
        self.prefix = prefix + "/" if prefix else ""
        self.endpoint = (s3_endpoint or os.environ.get("AWS_ENDPOINT_URL_S3")
                         or os.environ.get("AWS_ENDPOINT_URL") or None)
        self.region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
        if not _credentials_configured():
            raise S3CredentialsMissing(
                f"no S3 credentials for {url} (endpoint {self.endpoint or 'AWS'}): set AWS_ACCESS_KEY_ID and "
                "AWS_SECRET_ACCESS_KEY, or AWS_PROFILE / a shared credentials file / a web identity token; "
                "on Kubernetes give them to the job's pods from a Secret (spec.podTemplate.envFrom) and to "
                "the operator through the chart's envFrom; on EC2 with an instance profile set "
                "AWS_EC2_METADATA_DISABLED=false")
        config = Config(
            retries={"max_attempts": 2},
            connect_timeout=2,
            read_timeout=10,
            s3={"addressing_style": "path"},
            max_pool_connections=16,
        )
        try:
            session = boto3.session.Session(region_name=self.region)
            self._client = session.client("s3", endpoint_url=self.endpoint, config=config)
        except (BotoCoreError, ValueError) as exc:
            raise SegflowError(f"cannot set up the S3 state store {url!r} (endpoint "
                               f"{self.endpoint or 'AWS'}): {exc}") from exc
        self._bucket_lock = threading.Lock()
        self._bucket_ready = False

    # -- errors ---------------------------------------------------------------------------

    def _where(self) -> str:
        return f"S3 state store {self.url} (endpoint {self.endpoint or 'AWS default for ' + self.region})"

    def _failing(self, what: str) -> contextlib.AbstractContextManager[None]:
        return explained(self.error, self._where(), what, (BotoCoreError, ClientError, OSError), self._explain)

    def _explain(self, exc: BaseException) -> str:
        """What went wrong and what to do; a bucket found missing is created again on next use."""
        if isinstance(exc, (EndpointConnectionError, ConnectTimeoutError)):
            return (f"failed: cannot reach the endpoint ({exc}); is the S3 server up and reachable from here? "
                    "Set it with s3_endpoint or AWS_ENDPOINT_URL")
        if isinstance(exc, ReadTimeoutError):
            return f"timed out ({exc}); the S3 server is overloaded or unreachable"
        if isinstance(exc, (NoCredentialsError, PartialCredentialsError)):
            return f"failed: {exc}; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or an AWS profile)"
        if isinstance(exc, ClientError):
            code = exc.response.get("Error", {}).get("Code", "")
            if code == "NoSuchBucket":
                self._bucket_ready = False  # deleted behind our back: recreate on next use
                return (f"failed: {exc}; the bucket {self.bucket!r} does not exist (any more); it is recreated on "
                        "next use")
            if code in _CREDENTIAL_CODES:
                return (f"failed: {exc}; access denied: check AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY and the "
                        f"bucket policy for {self.bucket!r}")
            return f"failed: {exc}; the S3 server refused the request"
        return f"failed: {type(exc).__name__}: {exc}; check the S3 server and the state URL"

    def _ensure_bucket(self) -> None:
        if self._bucket_ready:
            return
        with self._bucket_lock:
            if self._bucket_ready:
                return
            with self._failing(f"checking the bucket {self.bucket!r}"):
                try:
                    self._client.head_bucket(Bucket=self.bucket)
                except ClientError as exc:
                    if exc.response.get("Error", {}).get("Code") not in _NOT_FOUND + ("NoSuchBucket",):
                        raise
                    self._create_bucket()
            self._bucket_ready = True

    def _create_bucket(self) -> None:
        kwargs = {}
        if self.region != "us-east-1":
            kwargs["CreateBucketConfiguration"] = {"LocationConstraint": self.region}
        try:
            self._client.create_bucket(Bucket=self.bucket, **kwargs)
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code")
            if code == "BucketAlreadyOwnedByYou":
                return
            if code == "BucketAlreadyExists":
                raise self.error(
                    f"{self._where()}: the bucket {self.bucket!r} belongs to another account; "
                    "choose another bucket name in the state URL") from exc
            raise

    # -- operations -----------------------------------------------------------------------

    def put(self, key: str, data: bytes) -> None:
        self._ensure_bucket()
        with self._failing(f"writing {key!r} ({len(data)} bytes)"):
            self._client.put_object(Bucket=self.bucket, Key=self.prefix + key, Body=bytes(data))

    def get(self, key: str) -> bytes | None:
        found = self.get_tagged(key)
        return None if found is None else found[0]

    def get_tagged(self, key: str) -> tuple[bytes, str] | None:
        """The bytes under ``key`` and their ETag (for :meth:`put_if`), or ``None``."""
        self._ensure_bucket()
        with self._failing(f"reading {key!r}"):
            try:
                response = self._client.get_object(Bucket=self.bucket, Key=self.prefix + key)
            except ClientError as exc:
                if exc.response.get("Error", {}).get("Code") in _NOT_FOUND:
                    return None
                raise
            with contextlib.closing(response["Body"]) as body:
                return body.read(), response["ETag"]

    def put_if(self, key: str, data: bytes, etag: str | None) -> str:
        """Write ``data`` only if ``key`` is still as read: absent (``etag`` None, sent as
        ``If-None-Match: *``) or unchanged (``If-Match: etag``). Returns the new ETag;
        raises :class:`WriteConflict` if another writer came first. S3 decides, so two
        writers racing on one key can never both win."""
        self._ensure_bucket()
        condition = {"IfNoneMatch": "*"} if etag is None else {"IfMatch": etag}
        with self._failing(f"writing {key!r} conditionally"):
            try:
                response = self._client.put_object(Bucket=self.bucket, Key=self.prefix + key, Body=bytes(data),
                                                   **condition)
            except ClientError as exc:
                if exc.response.get("Error", {}).get("Code") in _CONFLICT:
                    raise WriteConflict(f"{self._where()}: {key!r} changed since it was read "
                                        f"({'it exists now' if etag is None else 'its ETag is not ' + etag})") from None
                raise
            return response["ETag"]

    def list(self, prefix: str) -> list[str]:
        return sorted(self.list_tagged(prefix))

    def list_tagged(self, prefix: str) -> dict[str, str]:
        """Every key under ``prefix`` with its ETag, from the same LIST requests as
        :meth:`list`: a hot standby's follower tells a new or rewritten object from one it
        holds without a GET."""
        self._ensure_bucket()
        start = len(self.prefix)
        tagged: dict[str, str] = {}
        with self._failing(f"listing keys under {prefix!r}"):
            pages = self._client.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=self.prefix + prefix, PaginationConfig={"PageSize": self.page_size})
            for page in pages:
                tagged.update((item["Key"][start:], item["ETag"]) for item in page.get("Contents", ()))
        return tagged

    def delete(self, keys: Iterable[str]) -> None:
        names = [self.prefix + k for k in keys]
        if not names:
            return
        self._ensure_bucket()
        with self._failing(f"deleting {len(names)} keys"):
            for i in range(0, len(names), self.delete_chunk):
                chunk = names[i:i + self.delete_chunk]
                response = self._client.delete_objects(
                    Bucket=self.bucket, Delete={"Objects": [{"Key": n} for n in chunk], "Quiet": True})
                errors = [e for e in response.get("Errors", ()) if e.get("Code") != "NoSuchKey"]
                if errors:
                    first = errors[0]
                    raise self.error(
                        f"{self._where()}: deleting {len(errors)} of {len(chunk)} keys failed, first "
                        f"{first.get('Key')!r}: {first.get('Code')} {first.get('Message')}")

    def close(self) -> None:
        self._client.close()

    def __repr__(self) -> str:
        return f"S3Backend({self.url!r}, endpoint={self.endpoint!r})"
