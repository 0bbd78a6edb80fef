"""Redis credentials from the environment (a Kubernetes Secret), never in the URL: the
state store and the Redis Streams connectors reach a password-protected server."""
import pytest

from segflow.state import StateStoreError, open_backend
from support.servers import serving, start_redis


@pytest.fixture
def locked_redis():
    yield from serving(lambda: start_redis(password="pa55-word"), "redis-server with a password")


def test_the_password_comes_from_the_environment_when_the_url_has_none(locked_redis, monkeypatch):
    monkeypatch.delenv("SEGFLOW_REDIS_PASSWORD", raising=False)
    with pytest.raises(StateStoreError):
        open_backend(locked_redis.url).put("k", b"v")
    monkeypatch.setenv("SEGFLOW_REDIS_PASSWORD", "pa55-word")
    store = open_backend(locked_redis.url)
    store.put("jobs/j/k", b"v")
    assert store.get("jobs/j/k") == b"v"
    store.close()


def test_a_wrong_password_fails_clearly_without_showing_it(locked_redis, monkeypatch):
    monkeypatch.setenv("SEGFLOW_REDIS_PASSWORD", "not-it")
    with pytest.raises(StateStoreError) as failure:
        open_backend(locked_redis.url).put("k", b"v")
    assert "not-it" not in str(failure.value)
