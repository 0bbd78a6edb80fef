"""Real Redis and S3 (moto) servers on loopback for the state-store tests.

A missing server program FAILS the tests that need it, saying what to run; it never skips.
Every server is stopped by its PID at the end, whatever the outcome.
"""
import pytest
import redis

from segflow.state import open_backend
from support.servers import new_bucket, server_fixture, serving, start_or_fail, start_redis, start_s3


redis_server = server_fixture("redis_server", start_redis, "redis-server", scope="session")


s3_server = server_fixture("s3_server", start_s3, "moto S3 server", scope="session")


@pytest.fixture
def own_redis():
    """A redis-server of this test alone, for tests that stop, restart or pause it."""
    server = start_or_fail(start_redis, "redis-server")
    try:
        yield server
    finally:
        try:
            server.resume()  # a paused server would not act on SIGTERM
        except (OSError, TypeError):
            pass
        server.cleanup()


@pytest.fixture
def own_s3():
    """A moto S3 server of this test alone, for tests that stop it."""
    yield from serving(start_s3, "moto S3 server")


@pytest.fixture(params=["file", "redis", "s3"])
def backend(request, tmp_path):
    """An empty state store of each kind: a directory, the shared Redis (flushed), a new
    bucket on the shared moto server."""
    kind = request.param
    if kind == "file":
        store = open_backend(f"file://{tmp_path}/state")
    elif kind == "redis":
        server = request.getfixturevalue("redis_server")
        with redis.Redis.from_url(server.url) as raw:
            raw.flushdb()
        store = open_backend(server.url)
    else:
        server = request.getfixturevalue("s3_server")
        store = open_backend(f"s3://{new_bucket()}/state", s3_endpoint=server.endpoint)
    yield store
    store.close()
