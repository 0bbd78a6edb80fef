"""The S3 sink against a real S3 endpoint (moto): part objects as the file sink's parts,
visible only for completed checkpoints, restores without duplicates, multipart output
without checkpoints, and an unreachable endpoint."""
import functools
import itertools
import json

import pytest

from segflow import PipelineError, StreamEnvironment
from segflow.runtime.elements import Batch
from segflow.runtime.operator import ReplicaContext
from segflow.runtime.operators.s3_sink import S3Sink
from segflow.runtime.operators.two_phase import ConnectorError
from segflow.runtime.elements import FINAL_CHECKPOINT
from segflow.state import open_backend
from support.servers import free_port

buckets = (f"segflow-sink-{i}" for i in itertools.count())


@functools.lru_cache(maxsize=None)
def reader(url, endpoint):
    return open_backend(url, endpoint)


def objects(url, endpoint):
    """The published parts (the commit markers beside them: ``markers``)."""
    store = reader(url, endpoint)
    return {key: store.get(key).decode() for key in store.list("part-")}


def markers(url, endpoint):
    store = reader(url, endpoint)
    return {key: json.loads(store.get(key)) for key in store.list("_committed/")}


def sink(url, endpoint, index=0, replicas=1, transactional=True, restored_from=0, state=None, fmt="text"):
    s = S3Sink(url, fmt, None, endpoint=endpoint)
    s.name = f"write_s3({url})"
    if state is not None:
        s.restore(state)
    s.open(ReplicaContext(0, index, replicas, "w0", None, None, transactional=transactional,
                          restored_from=restored_from))
    return s


def test_without_checkpoints_each_replica_writes_one_part(s3_server):
    url = f"s3://{next(buckets)}/out"
    for parallelism in (3, 2):       # a fresh run replaces every part of the run before
        env = StreamEnvironment(parallelism=parallelism)
        env.from_iterable(range(50)).shuffle().write_s3(url, "jsonl", lambda x: {"x": x}, endpoint=s3_server.endpoint)
        env.execute()
    written = objects(url, s3_server.endpoint)
    assert sorted(written) == ["part-00000.jsonl", "part-00001.jsonl"]
    rows = [json.loads(line) for text in written.values() for line in text.splitlines()]
    assert sorted(r["x"] for r in rows) == list(range(50))


def test_the_file_sinks_write_part_objects_under_an_s3_url(s3_server, monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_server.endpoint)
    text, rows = f"s3://{next(buckets)}/text", f"s3://{next(buckets)}/rows"
    env = StreamEnvironment(parallelism=1)
    as_text, as_rows = env.from_iterable(range(3)).split(2)
    as_text.write_text(text, lambda x: f"n={x}")
    as_rows.write_jsonl(rows, lambda x: {"x": x})
    env.execute()
    assert objects(text, s3_server.endpoint) == {"part-00000.txt": "n=0\nn=1\nn=2\n"}
    assert objects(rows, s3_server.endpoint) == {"part-00000.jsonl": '{"x": 0}\n{"x": 1}\n{"x": 2}\n'}


def test_without_checkpoints_a_large_part_is_uploaded_in_parts(s3_server, monkeypatch):
    monkeypatch.setattr(S3Sink, "part_size", 5 << 20)
    url = f"s3://{next(buckets)}/big"
    s = sink(url, s3_server.endpoint, transactional=False)
    line = "x" * 1023
    for _ in range(12):
        s.process(Batch([line] * 1024))       # 1 MiB a batch
    s.on_end()
    store = open_backend(url, s3_server.endpoint)
    assert store.get("part-00000.txt") == (line + "\n").encode() * 12 * 1024
    etag = store._client.head_object(Bucket=store.bucket, Key="big/part-00000.txt")["ETag"]
    assert etag.strip('"').endswith("-3"), f"not a multipart upload of 3 parts: {etag}"


def test_epochs_appear_when_their_checkpoints_complete(s3_server):
    url = f"s3://{next(buckets)}/tx"
    s = sink(url, s3_server.endpoint, index=1, replicas=2)
    s.process(Batch(["a", "b"]))
    s.prepare_snapshot(1)
    state1 = s.snapshot()
    s.process(Batch(["c"]))
    s.prepare_snapshot(2)
    assert objects(url, s3_server.endpoint) == {} and markers(url, s3_server.endpoint) == {}
    s.on_checkpoint_complete(1)
    assert objects(url, s3_server.endpoint) == {"part-00001-e1.txt": "a\nb\n"}
    assert markers(url, s3_server.endpoint) == {"_committed/part-00001": {"epoch": 1, "replicas": 2}}
    s.on_checkpoint_complete(2)
    s.process(Batch(["d"]))
    s.on_end()
    s.on_checkpoint_complete(FINAL_CHECKPOINT)
    assert objects(url, s3_server.endpoint) == {"part-00001-e1.txt": "a\nb\n", "part-00001-e2.txt": "c\n",
                                                "part-00001-end.txt": "d\n"}
    assert markers(url, s3_server.endpoint)["_committed/part-00001"]["epoch"] == FINAL_CHECKPOINT
    # restoring checkpoint 1 publishes its epoch again (same object) and removes the later
    # ones, which the restored job produces again
    s = sink(url, s3_server.endpoint, index=1, replicas=2, restored_from=1, state=state1)
    assert objects(url, s3_server.endpoint) == {"part-00001-e1.txt": "a\nb\n"}
    s.process(Batch(["c", "d"]))
    s.on_end()
    s.on_checkpoint_complete(FINAL_CHECKPOINT)
    assert objects(url, s3_server.endpoint) == {"part-00001-e1.txt": "a\nb\n", "part-00001-end.txt": "c\nd\n"}


def test_a_restore_publishes_what_its_checkpoint_had_pending(s3_server):
    url = f"s3://{next(buckets)}/pending"
    s = sink(url, s3_server.endpoint, fmt="csv")
    s.process(Batch([[1, "x"], [2, "y"]]))
    s.prepare_snapshot(4)
    state = s.snapshot()
    sink(url, s3_server.endpoint, restored_from=4, state=state, fmt="csv")
    assert objects(url, s3_server.endpoint) == {"part-00000-e4.csv": "1,x\r\n2,y\r\n"}


def test_commits_wait_while_the_endpoint_is_unreachable(s3_server):
    url = f"s3://{next(buckets)}/later"
    s = sink(url, s3_server.endpoint)
    s.process(Batch(["a"]))
    s.prepare_snapshot(1)
    reachable = s.store
    s.store = type(reachable)(url, f"http://127.0.0.1:{free_port()}")
    s.on_checkpoint_complete(1)           # neither raises nor loses epoch 1
    assert list(s.pending) == [1]
    s.store = reachable
    assert markers(url, s3_server.endpoint) == {}       # epoch 1 is not committed while unpublished
    s.process(Batch(["b"]))
    s.prepare_snapshot(2)
    s.on_checkpoint_complete(2)
    assert objects(url, s3_server.endpoint) == {"part-00000-e1.txt": "a\n", "part-00000-e2.txt": "b\n"}
    assert markers(url, s3_server.endpoint) == {"_committed/part-00000": {"epoch": 2, "replicas": 1}}


def test_an_unreachable_endpoint_fails_opening_the_sink_with_its_address():
    endpoint = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(ConnectorError, match=f"S3 sink s3://nowhere/x \\(endpoint {endpoint}\\).*cannot reach"):
        sink("s3://nowhere/x", endpoint)


def test_bad_arguments_are_pipeline_errors():
    stream = StreamEnvironment().from_iterable([1])
    with pytest.raises(PipelineError, match="write_s3 needs a URL like s3://bucket/prefix"):
        stream.write_s3("/tmp/out")
    with pytest.raises(PipelineError, match="fmt must be 'text', 'jsonl' or 'csv'"):
        stream.write_s3("s3://bucket/out", "parquet")
