"""A real moto S3 server on loopback for the batch stage's tests (stopped by PID)."""
import pytest

from support.servers import serving, start_s3


@pytest.fixture(scope="module")
def s3_server():
    yield from serving(start_s3, "moto S3 server")
