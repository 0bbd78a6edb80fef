"""One contract for every state backend (local directory, Redis, S3), run against real servers.

Redis is Debian's redis-server and S3 is moto's server, both started on loopback by the
fixtures in conftest.py; outage tests stop, restart or pause servers of their own.
"""
import os
import threading
import time

import boto3
import pytest
import redis

from segflow.errors import SegflowError
from segflow.state import StateBackend, StateStoreError, open_backend
from segflow.state.local import LocalBackend
from segflow.state.redis_store import RedisBackend, escape_glob
from segflow.state.s3 import S3Backend
from support import servers
from support.servers import new_bucket

def raw_s3(endpoint: str, region: str = "us-east-1"):
    return boto3.client("s3", endpoint_url=endpoint, region_name=region,
                        aws_access_key_id="segflow", aws_secret_access_key="segflow")


def assert_quick_failure(call, seconds: float = 5.0) -> StateStoreError:
    started = time.monotonic()
    with pytest.raises(StateStoreError) as info:
        call()
    elapsed = time.monotonic() - started
    assert elapsed < seconds, f"took {elapsed:.1f} s to fail: {info.value}"
    return info.value


# -- the contract, for every backend ----------------------------------------------------------

def test_round_trip_of_binary_values(backend: StateBackend):
    values = {
        "jobs/j1/chk-00000001/b0.r0": bytes(range(256)) * 3,
        "jobs/j1/chk-00000001/empty": b"",
        "jobs/j1/chk-00000001/nul": b"\x00\r\n\x00\xff",
        "jobs/j1/chk-00000001/big": os.urandom(5 * 1024 * 1024),
    }
    for key, data in values.items():
        backend.put(key, data)
    for key, data in values.items():
        got = backend.get(key)
        assert isinstance(got, bytes), (key, type(got))
        assert got == data, key


def test_get_of_a_missing_key_is_none(backend: StateBackend):
    assert backend.get("jobs/nope/chk-00000001/b0.r0") is None
    backend.put("jobs/j1/chk-00000001/b0.r0", b"1")
    assert backend.get("jobs/j1/chk-00000001/b0.r1") is None
    assert backend.get("jobs/j1/chk-00000002/b0.r0") is None


@pytest.mark.parametrize("missing", ["jobs/j1", "jobs/j1/", "jobs/j1/x/y"])
def test_get_of_a_path_around_a_key_is_none(backend: StateBackend, missing):
    backend.put("jobs/j1/x", b"1")
    assert backend.get(missing) is None


def test_list_by_prefix_is_sorted_and_exact(backend: StateBackend):
    keys = ["jobs/j1/chk-00000002/b1.r0", "jobs/j10/chk-00000001/b0.r0", "jobs/j1/chk-00000001/b0.r1",
            "jobs/j1/chk-00000001/b0.r0", "other/j1/chk-00000001/b0.r0", "jobs/j2/chk-00000001/b0.r0"]
    for key in keys:
        backend.put(key, key.encode())
    assert backend.list("jobs/j1/") == ["jobs/j1/chk-00000001/b0.r0", "jobs/j1/chk-00000001/b0.r1",
                                        "jobs/j1/chk-00000002/b1.r0"]
    assert backend.list("jobs/j1/chk-00000001/") == ["jobs/j1/chk-00000001/b0.r0", "jobs/j1/chk-00000001/b0.r1"]
    assert backend.list("jobs/j1") == sorted(k for k in keys if k.startswith("jobs/j1"))
    assert backend.list("") == sorted(keys)
    assert backend.list("jobs/j3/") == []
    assert backend.list("jobs/j1/chk-00000001/b0.r0") == ["jobs/j1/chk-00000001/b0.r0"]


def test_list_treats_glob_characters_in_the_prefix_literally(backend: StateBackend):
    keys = ["jobs/a*b/1", "jobs/a?b/1", "jobs/a[b]/1", "jobs/a]b/1", "jobs/a\\b/1", "jobs/axb/1", "jobs/aab/1",
            "jobs/a[x]/1"]
    for key in keys:
        backend.put(key, b"v")
    for key in keys:
        assert backend.list(key[:-1]) == [key], key
    assert backend.list("jobs/a*") == ["jobs/a*b/1"]
    assert backend.list("jobs/a?") == ["jobs/a?b/1"]
    assert backend.list("jobs/a[") == ["jobs/a[b]/1", "jobs/a[x]/1"]
    assert backend.list("jobs/a\\") == ["jobs/a\\b/1"]
    assert backend.list("jobs/a") == sorted(keys)
    assert backend.list("jobs/*") == []


def test_delete_removes_keys_and_ignores_missing_ones(backend: StateBackend):
    for key in ("jobs/j1/a", "jobs/j1/b", "jobs/j1/c"):
        backend.put(key, b"x")
    backend.delete(["jobs/j1/a", "jobs/j1/missing", "jobs/j1/c"])
    assert backend.list("jobs/") == ["jobs/j1/b"]
    assert backend.get("jobs/j1/a") is None
    assert backend.get("jobs/j1/b") == b"x"
    backend.delete([])
    backend.delete(iter(["jobs/j1/b"]))
    assert backend.list("") == []


def test_put_overwrites(backend: StateBackend):
    backend.put("jobs/j1/k", b"a long first value" * 100)
    backend.put("jobs/j1/k", b"second")
    assert backend.get("jobs/j1/k") == b"second"
    backend.put("jobs/j1/k", b"")
    assert backend.get("jobs/j1/k") == b""
    assert backend.list("jobs/") == ["jobs/j1/k"]


def test_concurrent_puts_from_8_threads(backend: StateBackend):
    threads, per_thread = 8, 25
    barrier = threading.Barrier(threads)
    errors: list[BaseException] = []
    shared_values = [bytes([t]) * 100_000 for t in range(threads)]

    def work(t: int):
        try:
            barrier.wait(10)
            for i in range(per_thread):
                backend.put(f"jobs/j1/chk-{i:08d}/b{t}.r0", f"{t}:{i}".encode())
                if i % 5 == 0:
                    backend.put("jobs/j1/shared", shared_values[t])
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    workers = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
    assert not any(w.is_alive() for w in workers)
    assert errors == []
    expected = sorted(f"jobs/j1/chk-{i:08d}/b{t}.r0" for t in range(threads) for i in range(per_thread))
    assert backend.list("jobs/j1/chk-") == expected
    for t in range(threads):
        for i in range(per_thread):
            assert backend.get(f"jobs/j1/chk-{i:08d}/b{t}.r0") == f"{t}:{i}".encode()
    assert backend.get("jobs/j1/shared") in shared_values  # one whole value, never a mix


def test_puts_succeed_while_another_thread_deletes_their_neighbours(backend: StateBackend):
    """A worker writes a pending window's next part while the coordinator truncates the
    older parts of the same replica: no write may fail (a failed one fails its checkpoint,
    and a retried round of the job's end left parts behind on a file store)."""
    stop = threading.Event()
    errors: list[BaseException] = []
    written = []

    def write():
        try:
            while not stop.is_set() and len(written) < 3000:
                key = f"jobs/j1/windows/b0.r0/v{len(written):020d}"
                backend.put(key, b"part")
                written.append(key)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    writer = threading.Thread(target=write)
    writer.start()
    deadline = time.monotonic() + 3
    while writer.is_alive() and time.monotonic() < deadline:
        backend.delete(backend.list("jobs/j1/windows/"))
    stop.set()
    writer.join(30)
    assert errors == [] and len(written) > 100, (errors[:1], len(written))
    backend.put(written[-1], b"last")
    assert backend.get(written[-1]) == b"last"


# -- picking a backend from the URL -----------------------------------------------------------

def test_open_backend_picks_the_class_from_the_url(tmp_path, monkeypatch):
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.delenv("AWS_ENDPOINT_URL_S3", raising=False)
    assert type(open_backend(f"file://{tmp_path}/s")) is LocalBackend
    redis_backend = open_backend("redis://127.0.0.1:6390/3")  # connects lazily: no server needed
    assert type(redis_backend) is RedisBackend
    assert (redis_backend.address, redis_backend.db) == ("127.0.0.1:6390", 3)
    s3_backend = open_backend("s3://bucket/some/prefix", s3_endpoint="http://127.0.0.1:9")
    assert type(s3_backend) is S3Backend
    assert (s3_backend.bucket, s3_backend.prefix, s3_backend.endpoint) == ("bucket", "some/prefix/",
                                                                           "http://127.0.0.1:9")
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:10")
    assert open_backend("s3://bucket").endpoint == "http://127.0.0.1:10"
    assert open_backend("s3://bucket").prefix == ""
    assert open_backend("s3://bucket", s3_endpoint="http://127.0.0.1:11").endpoint == "http://127.0.0.1:11"


@pytest.mark.parametrize("url", ["ftp://host/dir", "/var/segflow", "segflow", "memory://"])
def test_open_backend_rejects_unknown_schemes(url):
    with pytest.raises(SegflowError, match="unknown state store URL") as info:
        open_backend(url)
    assert not isinstance(info.value, StateStoreError)
    assert "redis://" in str(info.value) and "s3://" in str(info.value)


@pytest.mark.parametrize("url", ["file:relative/dir", "file://somehost/var/segflow", "file:"])
def test_file_urls_need_an_absolute_path(url):
    with pytest.raises(SegflowError, match="absolute path"):
        open_backend(url)


@pytest.mark.parametrize("url", ["redis://127.0.0.1:6379/zero", "redis:///0", "redis://127.0.0.1:notaport/0"])
def test_bad_redis_urls(url):
    with pytest.raises(SegflowError, match="redis://host:"):
        open_backend(url)


def test_s3_url_needs_a_bucket():
    with pytest.raises(SegflowError, match="s3://bucket/prefix"):
        open_backend("s3:///prefix")


# -- Redis specifics ----------------------------------------------------------------------------

def test_escape_glob():
    assert escape_glob("jobs/a*b?c[d]e\\f") == "jobs/a\\*b\\?c\\[d\\]e\\\\f"
    assert escape_glob("jobs/j1/chk-00000001/") == "jobs/j1/chk-00000001/"


def test_redis_keys_live_under_the_namespace(redis_server):
    with redis.Redis.from_url(redis_server.url) as raw:
        raw.flushdb()
        store = RedisBackend(redis_server.url)
        store.put("jobs/j1/chk-00000012/b3.r1", b"snap")
        assert raw.get("segflow:jobs/j1/chk-00000012/b3.r1") == b"snap"
        raw.set("jobs/j1/chk-00000012/b4.r1", b"not ours")
        raw.set("segflowjobs/j1/x", b"not ours")
        raw.set("other:segflow:jobs/j1/y", b"not ours")
        assert store.list("") == ["jobs/j1/chk-00000012/b3.r1"]
        assert store.list("jobs/") == ["jobs/j1/chk-00000012/b3.r1"]
        store.close()


def assert_lists_and_deletes_in_pages(store, prefix: str, count: int, deleted: int) -> None:
    """Keys written in reverse are listed in order and deleted (a missing one among them)
    across more pages and delete chunks than one: the backend's paging loses none."""
    keys = [f"jobs/j1/chk-{i:08d}/b0.r0" for i in range(count)]
    for key in reversed(keys):
        store.put(key, b"v")
    assert store.list(prefix) == keys
    store.delete(keys[:deleted] + ["jobs/j1/missing"])
    assert store.list(prefix) == keys[deleted:]


def test_redis_list_walks_every_scan_page(redis_server):
    with redis.Redis.from_url(redis_server.url) as raw:
        raw.flushdb()
        raw.mset({f"noise:{i}": b"x" for i in range(300)})
    store = RedisBackend(redis_server.url)
    store.scan_count = 7
    store.delete_chunk = 9
    assert_lists_and_deletes_in_pages(store, "jobs/j1/", 60, 50)
    store.close()


def test_redis_refusal_is_a_state_store_error(redis_server):
    with redis.Redis.from_url(redis_server.url) as raw:
        raw.flushdb()
        raw.rpush("segflow:jobs/j1/list", b"a")
    store = RedisBackend(redis_server.url)
    error = assert_quick_failure(lambda: store.get("jobs/j1/list"))
    assert "refused" in str(error) and "WRONGTYPE" in str(error) and redis_server.url in str(error)
    store.close()


def test_redis_outage_fails_quickly_then_recovers(own_redis):
    store = RedisBackend(own_redis.url)
    store.put("jobs/j1/a", b"before")
    own_redis.stop()
    for call in (lambda: store.put("jobs/j1/b", b"during"), lambda: store.get("jobs/j1/a"),
                 lambda: store.list("jobs/"), lambda: store.delete(["jobs/j1/a"])):
        error = assert_quick_failure(call)
        message = str(error)
        assert own_redis.url in message
        assert f"is redis-server running at 127.0.0.1:{own_redis.port}" in message
        assert isinstance(error.__cause__, redis.exceptions.ConnectionError)
    own_redis.restart()
    store.put("jobs/j1/b", b"after")  # the same object works again
    assert store.get("jobs/j1/b") == b"after"
    assert store.get("jobs/j1/a") is None  # nothing was saved across the restart
    assert store.list("jobs/") == ["jobs/j1/b"]
    store.close()


def test_redis_restart_between_calls_needs_no_failed_call(own_redis):
    store = RedisBackend(own_redis.url)
    store.put("jobs/j1/a", b"1")  # leaves an idle connection in the pool
    own_redis.restart()
    assert store.get("jobs/j1/a") is None  # the stale connection is replaced, not reported
    store.put("jobs/j1/a", b"2")
    assert store.get("jobs/j1/a") == b"2"
    store.close()


def test_redis_that_stops_answering_times_out(own_redis):
    store = RedisBackend(own_redis.url, timeout=1.0)
    store.put("jobs/j1/a", b"1")
    own_redis.pause()
    try:
        error = assert_quick_failure(lambda: store.get("jobs/j1/a"), seconds=4.0)
        assert "timed out" in str(error) and own_redis.url in str(error)
    finally:
        own_redis.resume()
    assert store.get("jobs/j1/a") == b"1"
    store.close()


def test_redis_commands_are_not_retried_silently():
    """A server that accepts but never answers: one connection, one timeout, no retry."""
    import socket

    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept():
        while not stop.is_set():
            try:
                accepted.append(listener.accept()[0])
            except OSError:
                pass

    thread = threading.Thread(target=accept)
    thread.start()
    try:
        store = RedisBackend(f"redis://127.0.0.1:{listener.getsockname()[1]}/0", timeout=0.5)
        error = assert_quick_failure(lambda: store.put("jobs/j1/a", b"1"), seconds=3.0)
        assert "timed out" in str(error)
        time.sleep(0.5)  # a retry would connect again meanwhile
        assert len(accepted) == 1
    finally:
        stop.set()
        thread.join(5)
        for conn in accepted:
            conn.close()
        listener.close()


def test_redis_url_without_server_fails_quickly():
    store = RedisBackend(f"redis://127.0.0.1:{servers.free_port()}/0")
    error = assert_quick_failure(lambda: store.put("jobs/j1/a", b"1"))
    assert "is redis-server running" in str(error)


def test_redis_password_is_not_shown():
    store = RedisBackend(f"redis://user:s3cret@127.0.0.1:{servers.free_port()}/0")
    error = assert_quick_failure(lambda: store.get("k"))
    assert "s3cret" not in str(error) and "user:***@" in str(error)


def test_missing_redis_server_fails_and_says_what_to_run(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(servers, "REDIS_SERVER_FALLBACK", str(tmp_path / "redis-server"))
    with pytest.raises(pytest.fail.Exception, match="scripts/install-test-deps.sh"):
        servers.start_or_fail(servers.start_redis, "redis-server")


# -- S3 specifics -------------------------------------------------------------------------------

def test_s3_prefixes_do_not_leak_into_each_other(s3_server):
    bucket = new_bucket()
    first = S3Backend(f"s3://{bucket}/p1", s3_server.endpoint)
    second = S3Backend(f"s3://{bucket}/p1x/", s3_server.endpoint)
    first.put("jobs/a", b"1")
    second.put("jobs/a", b"2")
    assert first.list("") == ["jobs/a"] and second.list("") == ["jobs/a"]
    assert (first.get("jobs/a"), second.get("jobs/a")) == (b"1", b"2")
    names = sorted(o["Key"] for o in raw_s3(s3_server.endpoint).list_objects_v2(Bucket=bucket)["Contents"])
    assert names == ["p1/jobs/a", "p1x/jobs/a"]


def test_s3_list_and_delete_page_through(s3_server):
    store = S3Backend(f"s3://{new_bucket()}/state", s3_server.endpoint)
    store.page_size = 2
    store.delete_chunk = 3
    assert_lists_and_deletes_in_pages(store, "jobs/", 7, 5)


def test_s3_uses_an_existing_bucket_and_recreates_a_deleted_one(s3_server):
    bucket = new_bucket()
    raw = raw_s3(s3_server.endpoint)
    raw.create_bucket(Bucket=bucket)
    raw.put_object(Bucket=bucket, Key="state/jobs/old", Body=b"old")
    store = S3Backend(f"s3://{bucket}/state", s3_server.endpoint)
    assert store.list("") == ["jobs/old"]
    store.delete(["jobs/old"])
    raw.delete_bucket(Bucket=bucket)
    error = assert_quick_failure(lambda: store.put("jobs/new", b"1"))
    assert "NoSuchBucket" in str(error)
    store.put("jobs/new", b"1")  # recreated on the next use
    assert store.get("jobs/new") == b"1"


def test_s3_bucket_creation_race_is_harmless(s3_server, monkeypatch):
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    bucket = new_bucket()
    store = S3Backend(f"s3://{bucket}/state", s3_server.endpoint)
    assert store.region == "eu-west-1"
    store.put("jobs/a", b"1")  # creates it with a location constraint
    with pytest.raises(Exception, match="BucketAlreadyOwnedByYou"):
        raw_s3(s3_server.endpoint, "eu-west-1").create_bucket(
            Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": "eu-west-1"})
    store._create_bucket()  # what a second process racing for the bucket does: no error
    assert store.get("jobs/a") == b"1"


def test_s3_endpoint_from_the_environment(s3_server, monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_server.endpoint)
    store = open_backend(f"s3://{new_bucket()}/env")
    store.put("jobs/a", b"1")
    assert store.get("jobs/a") == b"1"


def test_s3_outage_fails_quickly(own_s3):
    store = S3Backend(f"s3://{new_bucket()}/state", own_s3.endpoint)
    store.put("jobs/j1/a", b"1")
    never_used = S3Backend(f"s3://{new_bucket()}/state", own_s3.endpoint)
    own_s3.stop()
    for call in (lambda: store.put("jobs/j1/b", b"2"), lambda: store.get("jobs/j1/a"),
                 lambda: store.list("jobs/"), lambda: store.delete(["jobs/j1/a"]),
                 lambda: never_used.get("jobs/j1/a")):
        error = assert_quick_failure(call)
        assert own_s3.endpoint in str(error) and "is the S3 server up" in str(error)
