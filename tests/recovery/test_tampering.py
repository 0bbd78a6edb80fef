"""Stored state that was changed behind the job's back is found before it is decoded, and
the restore falls back to what is intact, with exact output.

A job is killed whole after some checkpoints; then bytes in the store are damaged (a bit
flipped in one blob, another cut in half) and the job is restored with ``--restore
latest``. In file, Redis and S3 stores (real servers on loopback)."""
import collections
import subprocess

import pytest

from segflow.checkpoint.catalog import Catalog
from segflow.checkpoint.layout import snapshot_key
from segflow.state import open_backend
from support.processes import ROOT, SEGFLOW, kill_tree, wait_for
from support.servers import serving, start_redis, start_s3, new_bucket
from test_kills import read_lines
from test_restore import expected_lines, start
from test_segment_backup import assert_oracle as assert_segment_oracle
from test_segment_backup import in_flight
from test_segment_backup import newest_version as segment_newest
from test_segment_backup import snapshots as segment_snapshots
from test_segment_backup import start as start_segment
from test_segment_backup import windows as segment_windows

JOB = "windowed_counts"


@pytest.fixture(scope="module")
def redis_server():
    yield from serving(start_redis, "redis-server")


@pytest.fixture(scope="module")
def s3_server():
    yield from serving(start_s3, "moto S3 server")


def flip(blob: bytes) -> bytes:
    middle = len(blob) // 2
    return blob[:middle] + bytes([blob[middle] ^ 0x10]) + blob[middle + 1:]


def truncate(blob: bytes) -> bytes:
    return blob[: len(blob) // 2]


def damage(backend, key: str, how) -> None:
    blob = backend.get(key)
    assert blob is not None, f"{key} is not in the store"
    backend.put(key, how(blob))


@pytest.mark.parametrize("store", ["file", "redis", "s3"])
def test_damaged_snapshots_are_found_and_the_restore_falls_back(tmp_path, store, request, monkeypatch):
    if store == "file":
        url, endpoint = f"file://{tmp_path / 'state'}", None
    elif store == "redis":
        url, endpoint = request.getfixturevalue("redis_server").url, None
    else:
        endpoint = request.getfixturevalue("s3_server").endpoint
        monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
        url = f"s3://{new_bucket()}/state"
    backend = open_backend(url, endpoint)
    catalog = Catalog(backend, JOB)
    output = tmp_path / "out"
    run = start(output, url, "--retain", "6", events="30000", rate="5000")
    try:
        assert wait_for(lambda: len(catalog.complete_ids()) >= 3, timeout=40), "too few checkpoints"
    finally:
        kill_tree(run)
    complete = catalog.complete_ids()
    newest, second = complete[-1], complete[-2]
    flipped = next(k for k in backend.list(f"jobs/{JOB}/chk-{newest:08d}/") if not k.endswith("_COMPLETE"))
    damage(backend, flipped, flip)
    cut = snapshot_key(JOB, second, *map(int, flipped.rsplit("/", 1)[1][1:].split(".r")))
    damage(backend, cut, truncate)

    rerun = start(output, url, "--restore", "latest", events="30000", rate="5000")
    _, stderr = rerun.communicate(timeout=150)
    assert rerun.returncode == 0, stderr[-3000:]
    assert f"{flipped} failed its integrity check" in stderr
    assert f"{cut} failed its integrity check" in stderr
    assert collections.Counter(read_lines(output)) == expected_lines(30000)


def test_a_store_written_under_another_state_key_is_refused(tmp_path, monkeypatch):
    """Every blob fails when the key differs: nothing is decoded, and with nothing intact
    to restore the run says so instead of starting from scratch."""
    state = tmp_path / "state"
    output = tmp_path / "out"
    run = start(output, f"file://{state}")
    try:
        catalog = Catalog(open_backend(f"file://{state}"), JOB)
        assert wait_for(lambda: len(catalog.complete_ids()) >= 1, timeout=40)
    finally:
        kill_tree(run)
    monkeypatch.setenv("SEGFLOW_STATE_KEY", "another-key-of-32-characters-0000")
    rerun = subprocess.run([SEGFLOW, "run", f"{ROOT}/tests/recovery/jobs/{JOB}.py", "-p", f"output={output}",
                            "--checkpoint-protocol", "aligned", "--state", f"file://{state}", "--restore", "latest"],
                           cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert rerun.returncode == 1
    assert "failed their integrity check" in rerun.stderr and "Traceback" not in rerun.stderr


def _newest_by_block(state: str) -> dict[int, int]:
    newest: dict[int, int] = {}
    for key in segment_snapshots(state, ""):
        version, replica = key.split("/chk-")[1].split("/")
        block = int(replica[1:].split(".")[0])
        newest[block] = max(newest.get(block, 0), int(version))
    return newest


def test_damaged_pending_windows_are_found_and_the_restore_lowers_its_versions(tmp_path):
    """Segment backup, linear topology: the slow sink (block 3) restores behind the window
    block (2), so the restore replays block 2's pending window; every window part in the
    store is damaged first. Each damaged part a replay reads is found and excluded, and
    the job restores lower versions until nothing damaged is needed."""
    state, output = f"file://{tmp_path}/state", tmp_path / "out"
    backend = open_backend(state)
    restore: tuple = ()
    for attempt in range(6):
        run = start_segment("linear", output, state, "", "auto", *restore)
        try:
            before = segment_newest(state, "")
            assert wait_for(lambda: segment_newest(state, "") > before + 2 or run.poll() is not None, timeout=60)
            wait_for(lambda: in_flight(state, ""), timeout=5, every=0.02)
            assert run.poll() is None, "the job ended before the disaster: make it longer"
        finally:
            kill_tree(run)
        restore = ("--restore", "latest")
        newest = _newest_by_block(state)
        if newest.get(2, 0) > newest.get(3, 0) and segment_windows(state, ""):
            break
    else:
        pytest.fail("the sink never fell behind the window block: no replay to damage")
    damaged = segment_windows(state, "")
    for key in damaged:
        damage(backend, key, flip)
    rerun = start_segment("linear", output, state, "", "auto", *restore)
    _, stderr = rerun.communicate(timeout=240)
    assert rerun.returncode == 0, stderr[-3000:]
    found = [key for key in damaged if f"{key} failed its integrity check" in stderr]
    assert found, f"no damaged window part was read: {stderr[-2000:]}"
    assert_segment_oracle("linear", output)
