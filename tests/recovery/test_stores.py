"""Checkpoints in Redis and S3 (real servers on loopback): kills, and a store outage."""
import collections
import os
import subprocess
import time

import pytest

from segflow.state import open_backend
from support.processes import ROOT, SEGFLOW, wait_for
from support.servers import free_port, server_fixture, start_redis, start_s3
from test_kills import JOBS, kill_tree, read_lines, run_with_kills
from test_restore import expected_lines


redis_server = server_fixture("redis_server", start_redis, "redis-server", scope="function")


s3_server = server_fixture("s3_server", start_s3, "moto S3 server")


@pytest.mark.parametrize("protocol", ["aligned", "unaligned", "uncoordinated", "cic"])
def test_kills_with_redis_state(tmp_path, redis_server, protocol):
    output = tmp_path / "out"
    run_with_kills("windowed_counts.py", {"output": output}, redis_server.url, protocol, seed=21)
    assert collections.Counter(read_lines(output)) == expected_lines(24000)
    keys = open_backend(redis_server.url).list("jobs/windowed_counts/")
    assert any(k.endswith("/_COMPLETE") for k in keys)


@pytest.mark.parametrize("protocol", ["aligned", "unaligned", "uncoordinated", "cic"])
def test_kills_with_s3_state(tmp_path, s3_server, monkeypatch, protocol):
    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_server.endpoint)
    output = tmp_path / "out"
    state = f"s3://segflow-test-{protocol}/jobs"
    run_with_kills("windowed_counts.py", {"output": output}, state, protocol, seed=22)
    assert collections.Counter(read_lines(output)) == expected_lines(24000)
    keys = open_backend(state, s3_server.endpoint).list("jobs/windowed_counts/")
    assert any(k.endswith("/_COMPLETE") for k in keys)


def complete_ids(url):
    try:
        keys = open_backend(url).list("jobs/windowed_counts/")
    except Exception:   # the store is down: nothing can be seen
        return set()
    return {int(k.split("/")[2][4:]) for k in keys if k.endswith("/_COMPLETE")}


def test_redis_outage_fails_checkpoints_not_the_job(tmp_path, redis_server):
    output = tmp_path / "out"
    run = subprocess.Popen(
        [SEGFLOW, "run", os.path.join(JOBS, "windowed_counts.py"), "-p", f"output={output}",
         "-p", "events=48000", "-p", "rate=6000", "--parallelism", "2", "--checkpoint-protocol", "aligned",
         "--checkpoint-interval", "0.3", "--state", redis_server.url],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert wait_for(lambda: complete_ids(redis_server.url), timeout=30), "no checkpoint before the outage"
        before = max(complete_ids(redis_server.url))
        redis_server.stop()
        time.sleep(2.0)
        assert run.poll() is None, "the job died with its state store"
        redis_server.restart()
        assert wait_for(lambda: any(i > before for i in complete_ids(redis_server.url)), timeout=30), \
            "no checkpoint completed after the store came back"
        _, stderr = run.communicate(timeout=120)
    finally:
        kill_tree(run)
    assert run.returncode == 0, stderr[-3000:]
    assert "checkpoint failed" in stderr or "snapshot not stored" in stderr
    assert collections.Counter(read_lines(output)) == expected_lines(48000)


def test_a_start_during_a_store_outage_waits_for_the_store(tmp_path):
    """The coordinator cannot list checkpoints while Redis is down: it tries again with
    back-off instead of failing, and the job runs once Redis is up."""
    port = free_port()
    output = tmp_path / "out"
    run = subprocess.Popen(
        [SEGFLOW, "run", os.path.join(JOBS, "windowed_counts.py"), "-p", f"output={output}", "-p", "events=6000",
         "-p", "rate=6000", "--parallelism", "2", "--checkpoint-protocol", "aligned", "--checkpoint-interval", "0.3",
         "--state", f"redis://127.0.0.1:{port}/0", "--restore", "auto"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    server = None
    try:
        time.sleep(3)
        assert run.poll() is None, "the run gave up while the store was down"
        server = start_redis(port)
        _, stderr = run.communicate(timeout=120)
    finally:
        kill_tree(run)
        if server is not None:
            server.cleanup()
    assert run.returncode == 0, stderr[-3000:]
    assert "state store unreachable; trying again" in stderr
    assert collections.Counter(read_lines(output)) == expected_lines(6000)
