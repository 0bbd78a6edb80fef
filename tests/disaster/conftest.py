"""A real moto S3 server on loopback for the lease tests (stopped by PID at the end)."""
import pytest

from support.servers import serving, start_s3


@pytest.fixture(scope="session")
def s3_server():
    yield from serving(start_s3, "moto S3 server")
