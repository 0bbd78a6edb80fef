"""The Redis Streams source and sink against a real redis-server: what they read and write,
positions across restores, idempotent commits, and failures of the server."""
import itertools
import random
import time

import pytest
import redis

from segflow import PipelineError, StreamEnvironment, UserFunctionError
from segflow.runtime.elements import Batch
from segflow.runtime.operator import ReplicaContext
from segflow.runtime.operators.redis_streams import RedisStreamSink, RedisStreamSource, entry_key
from segflow.runtime.operators.two_phase import ConnectorError
from segflow.runtime.elements import FINAL_CHECKPOINT
from support.servers import free_port

names = (f"s{i}" for i in itertools.count())


def ctx(index=0, replicas=1, transactional=False, restored_from=0):
    return ReplicaContext(0, index, replicas, "w0", None, None, transactional=transactional,
                          restored_from=restored_from)


@pytest.fixture
def client(redis_server):
    c = redis.Redis.from_url(redis_server.url, decode_responses=True)
    yield c
    c.close()


def fill(client, key, n, start=0):
    pipe = client.pipeline(transaction=False)
    for i in range(start, start + n):
        pipe.xadd(key, {"n": i, "key": key})
    pipe.execute()
    return [(entry_id, fields) for entry_id, fields in client.xrange(key)]


def ordered(entries):
    """Entries of several streams (whose ids may coincide), by stream and then by id."""
    return sorted(entries, key=lambda e: (e[1]["key"], entry_key(e[0])))


def drain(source, batch=7, rng=None, make=None, index=0, replicas=1):
    """Everything the source emits; with ``rng``, replaced by a restored copy now and then."""
    out = []
    while (b := source.poll(batch)) is not None:
        out.extend(b.items)
        if rng is not None and rng.random() < 0.3:
            state = source.snapshot()
            source.close()
            source = make()
            source.restore(state)
            source.open(ctx(index, replicas))
    source.close()
    return out


# ------------------------------------------------------------------------------ source
def test_reads_in_order_up_to_the_last_entry_when_it_started(redis_server, client):
    key = next(names)
    existing = fill(client, key, 50)
    source = RedisStreamSource(redis_server.url, [key], None, None, None)
    source.open(ctx())
    fill(client, key, 10, start=50)        # appended after the start: not read
    assert drain(source) == existing


def test_until_and_count_bound_the_source(redis_server, client):
    key = next(names)
    existing = fill(client, key, 30)
    for until, count, expected in ((existing[9][0], None, existing[:10]), (None, 12, existing[:12]),
                                   (existing[9][0], 20, existing[:10]), (None, 0, [])):
        source = RedisStreamSource(redis_server.url, [key], until, count, None)
        source.open(ctx())
        assert drain(source) == expected


@pytest.mark.parametrize("seed", range(4))
def test_a_restored_source_goes_on_after_its_last_entry(redis_server, client, seed):
    keys = [next(names) for _ in range(3)]
    expected = ordered(entry for key in keys for entry in fill(client, key, random.Random(seed).randint(0, 40)))
    rng = random.Random(seed)
    for replicas in (1, 2, 4):
        got = []
        for index in range(replicas):
            def make():
                return RedisStreamSource(redis_server.url, keys, None, None, None)
            source = make()
            source.open(ctx(index, replicas))
            got.extend(drain(source, rng=rng, make=make, index=index, replicas=replicas))
        assert ordered(got) == expected


def test_streams_spread_over_the_replicas_of_a_job(redis_server, client):
    keys = [next(names) for _ in range(3)]
    written = {key: fill(client, key, 25) for key in keys}
    env = StreamEnvironment(parallelism=2)
    out = env.read_redis_stream(redis_server.url, keys).collect()
    env.execute()
    got = out.get()
    assert ordered(got) == ordered(e for entries in written.values() for e in entries)
    for key in keys:      # one reader per key: its entries keep their order
        assert [e for e in got if e[1]["key"] == key] == written[key]


def test_rate_caps_entries_per_second(redis_server, client):
    key = next(names)
    fill(client, key, 60)
    source = RedisStreamSource(redis_server.url, [key], None, None, 200.0)
    source.open(ctx())
    started = time.monotonic()
    assert len(drain(source, batch=100)) == 60
    assert time.monotonic() - started >= 0.25


def test_a_missing_stream_is_empty_and_another_type_is_an_error(redis_server, client):
    source = RedisStreamSource(redis_server.url, [next(names)], None, None, None)
    source.open(ctx())
    assert drain(source) == []
    key = next(names)
    client.set(key, "not a stream")
    with pytest.raises(ConnectorError, match="holds something other than a stream"):
        RedisStreamSource(redis_server.url, [key], None, None, None).open(ctx())


def test_bad_arguments_are_pipeline_errors():
    env = StreamEnvironment()
    for call, message in [
        (lambda: env.read_redis_stream("http://localhost/0", "s"), "needs a Redis URL like"),
        (lambda: env.read_redis_stream("redis://localhost:99999/0", "s"), "bad port"),
        (lambda: env.read_redis_stream("redis://localhost/x", "s"), "needs a Redis URL like"),
        (lambda: env.read_redis_stream("redis://localhost/0", []), "needs a stream name"),
        (lambda: env.read_redis_stream("redis://localhost/0", "s", until="soon"), "until must be an entry id"),
        (lambda: env.read_redis_stream("redis://localhost/0", "s", count=-1), "count must be"),
        (lambda: env.read_redis_stream("redis://localhost/0", "s", rate=0), "rate must be"),
        (lambda: env.from_iterable([1]).write_redis_stream("redis://:secret@localhost:1/x", "s"), "***"),
        (lambda: env.from_iterable([1]).write_redis_stream("redis://localhost/0", ""), "needs a stream name"),
    ]:
        with pytest.raises(PipelineError, match=message.replace("*", r"\*")) as info:
            call()
        assert "secret" not in str(info.value)


def test_an_unreachable_server_says_where_it_was_looked_for():
    port = free_port()
    source = RedisStreamSource(f"redis://127.0.0.1:{port}/0", ["s"], None, None, None)
    with pytest.raises(ConnectorError, match=f"is redis-server running at 127.0.0.1:{port}"):
        source.open(ctx())


# -------------------------------------------------------------------------------- sink
def sink(url, stream, index=0, replicas=1, transactional=True, restored_from=0, state=None, formatter=None):
    s = RedisStreamSink(url, stream, formatter)
    s.name = f"write_redis_stream({stream})"
    if state is not None:
        s.restore(state)
    s.open(ctx(index, replicas, transactional, restored_from))
    return s


def values(client, stream):
    return [int(fields["data"]) for _, fields in client.xrange(stream)]


def test_without_checkpoints_entries_are_appended_as_records_come(redis_server, client):
    stream = next(names)
    env = StreamEnvironment(parallelism=2)
    env.from_iterable(range(100)).shuffle().write_redis_stream(redis_server.url, stream)
    env.execute()
    assert sorted(values(client, stream)) == list(range(100))


def test_records_become_fields(redis_server, client):
    stream = next(names)
    s = sink(redis_server.url, stream, transactional=False)
    s.process(Batch([{"a": 1, "b": b"\x00bytes", "c": None}, "text", 7]))
    assert [f for _, f in client.xrange(stream)] == [{"a": "1", "b": "\x00bytes", "c": "None"},
                                                     {"data": "text"}, {"data": "7"}]
    s = sink(redis_server.url, stream, transactional=False, formatter=lambda x: {"twice": 2 * x})
    s.process(Batch([21]))
    assert client.xrange(stream)[-1][1] == {"twice": "42"}
    s = sink(redis_server.url, stream, transactional=False)
    with pytest.raises(UserFunctionError, match="at least one field") as info:
        s.process(Batch([0, {}]))
    assert "record #1" in str(info.value)


def test_an_epoch_appears_once_when_its_checkpoint_completes(redis_server, client):
    stream = next(names)
    s = sink(redis_server.url, stream)
    s.process(Batch(list(range(10))))
    s.prepare_snapshot(1)
    state1 = s.snapshot()
    s.process(Batch(list(range(10, 20))))
    assert client.xlen(stream) == 0
    s.on_checkpoint_complete(1)
    assert values(client, stream) == list(range(10))
    s.prepare_snapshot(2)
    s.on_checkpoint_complete(2)
    assert values(client, stream) == list(range(20))
    s.close()
    # a failure after checkpoint 2 was published; the job restores checkpoint 1: epoch 1 is
    # published again (nothing happens) and epoch 2, to be produced again, is withdrawn
    s = sink(redis_server.url, stream, restored_from=1, state=state1)
    assert values(client, stream) == list(range(10))
    s.process(Batch(list(range(10, 15))))
    s.prepare_snapshot(2)
    s.process(Batch(list(range(15, 20))))
    s.on_end()
    s.on_checkpoint_complete(2)
    s.on_checkpoint_complete(FINAL_CHECKPOINT)
    assert values(client, stream) == list(range(20))
    assert sorted(client.hkeys(f"segflow:commits:{stream}")) == ["0:1", "0:2", f"0:{FINAL_CHECKPOINT}"]


def test_a_restore_publishes_what_its_checkpoint_had_pending(redis_server, client):
    stream = next(names)
    s = sink(redis_server.url, stream, index=1, replicas=2)
    s.process(Batch(["a", "b"]))
    s.prepare_snapshot(1)
    state = s.snapshot()
    s.close()     # the worker died before checkpoint 1's completion reached it
    sink(redis_server.url, stream, index=1, replicas=2, restored_from=1, state=state)
    sink(redis_server.url, stream, index=1, replicas=2, restored_from=1, state=state)   # and again
    assert [f["data"] for _, f in client.xrange(stream)] == ["a", "b"]


def test_a_fresh_run_forgets_the_markers_of_earlier_runs(redis_server, client):
    stream = next(names)
    for _ in range(2):
        s = sink(redis_server.url, stream)
        s.process(Batch([1, 2]))
        s.prepare_snapshot(1)
        s.on_checkpoint_complete(1)
    assert values(client, stream) == [1, 2, 1, 2]


def test_commits_wait_while_redis_is_down(own_redis):
    stream = next(names)
    s = sink(own_redis.url, stream)
    s.process(Batch([1, 2]))
    s.prepare_snapshot(1)
    own_redis.stop()
    s.on_checkpoint_complete(1)          # neither raises nor loses epoch 1
    assert list(s.pending) == [1]
    own_redis.restart()
    s.process(Batch([3]))
    s.prepare_snapshot(2)
    s.on_checkpoint_complete(2)
    assert s.pending == {}
    client = redis.Redis.from_url(own_redis.url, decode_responses=True)
    assert values(client, stream) == [1, 2, 3]


def test_the_final_commit_gives_up_after_its_timeout(own_redis):
    s = sink(own_redis.url, next(names))
    s.final_commit_timeout, s.retry_every = 0.3, 0.1
    s.process(Batch([1]))
    s.on_end()
    own_redis.stop()
    with pytest.raises(ConnectorError, match="could not publish the job's final output within 0.3 s"):
        s.on_checkpoint_complete(FINAL_CHECKPOINT)


def test_an_unreachable_server_fails_opening_the_sink():
    port = free_port()
    s = RedisStreamSink(f"redis://127.0.0.1:{port}/0", "s", None)
    with pytest.raises(ConnectorError, match=f"Redis stream sink 's' at redis://127.0.0.1:{port}/0"):
        s.open(ctx())
