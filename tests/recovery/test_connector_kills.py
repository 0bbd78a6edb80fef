"""Exactly once end to end through external systems under SIGKILL: a job reads a Redis
stream and writes both a Redis stream and S3 part objects while the test kills random
workers; both outputs must equal the no-failure oracle, record for record."""
import collections
import json
import subprocess

import pytest
import redis

from segflow.state import open_backend
from support.processes import ROOT
from test_kills import PROTOCOLS, run_args, run_with_kills
from test_stores import redis_server, s3_server  # noqa: F401 - the real servers, as fixtures

ENTRIES = 20000   # 10 s at the job's rate: room for three kills after the first commit


@pytest.fixture
def source_stream(redis_server):  # noqa: F811 - the fixture imported above
    """The input: entries with the field ``n``."""
    client = redis.Redis.from_url(redis_server.url, decode_responses=True)
    pipe = client.pipeline(transaction=False)
    for n in range(ENTRIES):
        pipe.xadd("numbers", {"n": n})
    pipe.execute()
    yield {entry_id: int(fields["n"]) for entry_id, fields in client.xrange("numbers")}
    client.close()


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_redis_stream_to_redis_stream_and_s3(tmp_path, redis_server, s3_server, source_stream,  # noqa: F811
                                              protocol):
    output, url = f"squares-{protocol}", f"s3://segflow-kills-{protocol}/squares"
    client = redis.Redis.from_url(redis_server.url, decode_responses=True)
    # kills from when a checkpoint has been committed, so that recoveries restore one
    run_with_kills("stream_copy.py", {"redis": redis_server.url, "input": "numbers", "output": output,
                                      "s3": url, "s3_endpoint": s3_server.endpoint},
                   f"file://{tmp_path}/state", protocol, seed=31,
                   running=lambda: client.exists(f"segflow:commits:{output}"))
    expected = collections.Counter((entry_id, n, n * n) for entry_id, n in source_stream.items())

    entries = client.xrange(output)
    assert collections.Counter((f["src"], int(f["n"]), int(f["square"])) for _, f in entries) == expected

    objects = open_backend(url, s3_server.endpoint)
    parts = objects.list("part-")
    rows = [json.loads(line) for key in parts for line in objects.get(key).decode().splitlines()]
    assert collections.Counter((r["src"], r["n"], r["square"]) for r in rows) == expected
    assert any("-e" in key for key in parts), f"no epoch was committed before the end: {parts}"


def copied(client, output, objects):
    """What the job wrote: the output stream's entries and the S3 parts' rows, as multisets."""
    entries = client.xrange(output)
    rows = [json.loads(line) for key in objects.list("part-") for line in objects.get(key).decode().splitlines()]
    return (collections.Counter((f["src"], int(f["n"]), int(f["square"])) for _, f in entries),
            collections.Counter((r["src"], r["n"], r["square"]) for r in rows))


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_finished_job_restored_keeps_its_stream_and_objects(tmp_path, redis_server, s3_server,  # noqa: F811
                                                              source_stream, protocol):
    """``--restore latest`` after the job ended resumes from its end: the uncoordinated
    protocols restore each replica's last local checkpoint, the others the job's final
    checkpoint; either way the sinks' final epochs, published already, stay as they are.
    Before, the Redis stream's final entries were deleted and appended again under new
    ids (a consumer that had read them read them twice): the uncoordinated protocols'
    until their fix, the others' because they restored their last numbered checkpoint
    and processed the input after it again."""
    output, url = f"squares-{protocol}", f"s3://segflow-finished-{protocol}/squares"
    client = redis.Redis.from_url(redis_server.url, decode_responses=True)
    objects = open_backend(url, s3_server.endpoint)
    expected = collections.Counter((entry_id, n, n * n) for entry_id, n in source_stream.items())
    args = run_args("stream_copy.py", {"redis": redis_server.url, "input": "numbers", "output": output, "s3": url,
                                       "s3_endpoint": s3_server.endpoint, "rate": 40000},
                    f"file://{tmp_path}/state", protocol, 2, 0.3, ())
    written = []
    for extra in ((), ("--restore", "latest")):
        run = subprocess.run([*args, *extra], cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr[-3000:]
        assert copied(client, output, objects) == (expected, expected)
        written.append(client.xrange(output))
    assert written[1] == written[0], "the restore rewrote entries of the output stream"
    resumed = "restored recovery line" if protocol in ("uncoordinated", "cic") else "restoring its end"
    assert resumed in run.stderr, run.stderr[-3000:]
