"""The real Redis and S3 (moto) servers of the connector cases, started once per session
and stopped by PID (see support.servers); only cases that need them start them."""
import pytest

from support.servers import serving, start_redis, start_s3


@pytest.fixture(scope="session")
def redis_server():
    yield from serving(start_redis, "redis-server")


@pytest.fixture(scope="session")
def s3_server():
    yield from serving(start_s3, "moto S3 server")
