"""Stored state that was changed behind the job's back is found before it is decoded, and
the restore falls back to what is intact, with exact output.

A job is killed whole after some checkpoints; then bytes in the store are damaged (a bit
flipped in one blob, another cut in half) and the job is restored with ``--restore
latest``. In file, Redis and S3 stores (real servers on loopback). For the uncoordinated
protocols, channel-log segments are damaged while the job runs and a worker is killed:
the recovery reads them."""
import collections
import os
import shutil
import signal
import subprocess

import pytest

from segflow.checkpoint.catalog import Catalog
from segflow.checkpoint import layout
from segflow.runtime.elements import FINAL_CHECKPOINT
from segflow.state import open_backend
from support.processes import ROOT, SEGFLOW, kill_tree, wait_for
from support.servers import server_fixture, start_redis, start_s3, new_bucket
from test_kills import JOBS, read_lines, workers_of
from test_restore import JOB_NAME, expected_lines, start
from test_segment_backup import JOB as SEGMENT_JOB
from test_segment_backup import assert_oracle as assert_segment_oracle
from test_segment_backup import newest_version as segment_newest
from test_segment_backup import snapshots as segment_snapshots
from test_segment_backup import start as start_segment
from test_segment_backup import windows as segment_windows

# The job's module, and the name of the runs this file starts itself (test_restore.start names
# its runs JOB_NAME, after the test process, so that two pytest workers never share a run).
JOB = "windowed_counts"


redis_server = server_fixture("redis_server", start_redis, "redis-server")


s3_server = server_fixture("s3_server", start_s3, "moto S3 server")


def flip(blob: bytes) -> bytes:
    middle = len(blob) // 2
    return blob[:middle] + bytes([blob[middle] ^ 0x10]) + blob[middle + 1:]


def truncate(blob: bytes) -> bytes:
    return blob[: len(blob) // 2]


def damage(backend, key: str, how) -> None:
    blob = backend.get(key)
    assert blob is not None, f"{key} is not in the store"
    backend.put(key, how(blob))


def state_store(store: str, tmp_path, request, monkeypatch) -> tuple[str, str | None]:
    """``(state URL, S3 endpoint)`` of a fresh state store of the kind ``store``."""
    if store == "file":
        return f"file://{tmp_path / 'state'}", None
    if store == "redis":
        return request.getfixturevalue("redis_server").url, None
    endpoint = request.getfixturevalue("s3_server").endpoint
    monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint)
    return f"s3://{new_bucket()}/state", endpoint


@pytest.mark.parametrize("store", ["file", "redis", "s3"])
def test_damaged_snapshots_are_found_and_the_restore_falls_back(tmp_path, store, request, monkeypatch):
    url, endpoint = state_store(store, tmp_path, request, monkeypatch)
    backend = open_backend(url, endpoint)
    catalog = Catalog(backend, JOB_NAME)
    output = tmp_path / "out"
    run = start(output, url, "--retain", "6", events="30000", rate="5000")
    try:
        assert wait_for(lambda: len(catalog.complete_ids()) >= 3, timeout=40), "too few checkpoints"
    finally:
        kill_tree(run)
    complete = catalog.complete_ids()
    newest, second = complete[-1], complete[-2]
    flipped = next(k for k in backend.list(layout.checkpoint_prefix(JOB_NAME, newest)) if layout.snapshot_of(k))
    damage(backend, flipped, flip)
    cut = layout.snapshot_key(JOB_NAME, second, *layout.snapshot_of(flipped))
    damage(backend, cut, truncate)

    rerun = start(output, url, "--restore", "latest", events="30000", rate="5000")
    _, stderr = rerun.communicate(timeout=150)
    assert rerun.returncode == 0, stderr[-3000:]
    assert f"{flipped} failed its integrity check" in stderr
    assert f"{cut} failed its integrity check" in stderr
    assert collections.Counter(read_lines(output)) == expected_lines(30000)


@pytest.mark.parametrize("protocol", ["aligned", "segment"])
def test_a_damaged_end_of_a_finished_job_falls_back_to_its_newest_intact_state(tmp_path, protocol):
    """A finished job resumes from its final checkpoint; a part of it that fails its check
    sends the restore back to the newest intact checkpoint (and the input after it), as
    any damaged checkpoint does. Before, segment backup restored the damaged end again on
    every attempt until it gave up."""
    url, output = f"file://{tmp_path / 'state'}", tmp_path / "out"
    backend = open_backend(url)
    ended = start(output, url, events="4000", rate="4000", protocol=protocol)
    _, stderr = ended.communicate(timeout=120)
    assert ended.returncode == 0, stderr[-3000:]
    end = sorted(k for k in backend.list(layout.checkpoint_prefix(JOB_NAME, FINAL_CHECKPOINT)) if layout.snapshot_of(k))
    damage(backend, end[0], flip)
    rerun = start(output, url, "--restore", "latest", events="4000", rate="4000", protocol=protocol)
    _, stderr = rerun.communicate(timeout=150)
    assert rerun.returncode == 0, stderr[-3000:]
    assert f"{end[0]} failed its integrity check" in stderr and "restoring its end" in stderr
    assert collections.Counter(read_lines(output)) == expected_lines(4000)


def test_a_store_written_under_another_state_key_is_refused(tmp_path, monkeypatch):
    """Every blob fails when the key differs: nothing is decoded, and with nothing intact
    to restore the run says so instead of starting from scratch."""
    state = tmp_path / "state"
    output = tmp_path / "out"
    run = start(output, f"file://{state}")
    try:
        catalog = Catalog(open_backend(f"file://{state}"), JOB_NAME)
        assert wait_for(lambda: len(catalog.complete_ids()) >= 1, timeout=40)
    finally:
        kill_tree(run)
    monkeypatch.setenv("SEGFLOW_STATE_KEY", "another-key-of-32-characters-0000")
    rerun = subprocess.run([SEGFLOW, "run", f"{ROOT}/tests/recovery/jobs/{JOB}.py", "-p", f"output={output}",
                            "--job-name", JOB_NAME, "--checkpoint-protocol", "aligned", "--state", f"file://{state}",
                            "--restore", "latest"],
                           cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert rerun.returncode == 1
    assert "failed their integrity check" in rerun.stderr and "Traceback" not in rerun.stderr


def _newest_by_block(state: str, endpoint: str) -> dict[int, int]:
    newest: dict[int, int] = {}
    for key in segment_snapshots(state, endpoint):
        block, _ = layout.snapshot_of(key)
        newest[block] = max(newest.get(block, 0), layout.checkpoint_of(key))
    return newest


def _sink_behind(state: str, endpoint: str) -> bool:
    """The sink (block 3) holds an older newest version than the window block (2), and
    windows are in the store: a restore now replays block 2's pending window."""
    newest = _newest_by_block(state, endpoint)
    return newest.get(2, 0) > newest.get(3, 0) and bool(segment_windows(state, endpoint))


# In S3 only, the store a cross-cluster restore reads windows from: sealing and its check
# are the same code for every store, and the snapshot and log-segment tests above and
# below damage file and Redis stores too.
@pytest.mark.parametrize("store", ["s3"])
def test_damaged_pending_windows_are_found_and_the_restore_lowers_its_versions(tmp_path, store, request,
                                                                                monkeypatch):
    """Segment backup, linear topology: the slow sink (block 3) restores behind the window
    block (2), so the restore replays block 2's pending window; every window part in the
    store is damaged first (bits flipped in half of them, the others cut short). Each
    damaged part a replay reads is found and excluded, and the job restores lower versions
    until nothing damaged is needed."""
    state, endpoint = state_store(store, tmp_path, request, monkeypatch)
    endpoint = endpoint or ""
    output = tmp_path / "out"
    backend = open_backend(state, endpoint or None)
    restore: tuple = ()
    for _ in range(6):
        run = start_segment("linear", output, state, endpoint, "auto", *restore)
        try:
            before = segment_newest(state, endpoint)
            assert wait_for(lambda: segment_newest(state, endpoint) > before + 2 or run.poll() is not None,
                            timeout=60)
            wait_for(lambda: _sink_behind(state, endpoint) or run.poll() is not None, timeout=5, every=0.02)
            ended = run.poll() is not None
        finally:
            kill_tree(run)
        if ended:
            # A slow machine let the job finish before the sink fell behind: nothing is
            # left to replay, so start over from an empty store.
            backend.delete(backend.list(layout.job_prefix(SEGMENT_JOB)))
            shutil.rmtree(output, ignore_errors=True)
            restore = ()
            continue
        restore = ("--restore", "latest")
        if _sink_behind(state, endpoint):
            break
    else:
        pytest.fail("the sink never fell behind the window block: no replay to damage")
    damaged = segment_windows(state, endpoint)
    for n, key in enumerate(damaged):
        damage(backend, key, flip if n % 2 else truncate)
    rerun = start_segment("linear", output, state, endpoint, "auto", *restore)
    _, stderr = rerun.communicate(timeout=240)
    assert rerun.returncode == 0, stderr[-3000:]
    found = [key for key in damaged if f"{key} failed its integrity check" in stderr]
    assert found, f"no damaged window part was read: {stderr[-2000:]}"
    assert_segment_oracle("linear", output)


@pytest.mark.parametrize("store, protocol", [("file", "uncoordinated"), ("redis", "cic"), ("s3", "uncoordinated")])
def test_damaged_log_segments_are_found_and_the_recovery_line_falls_back(tmp_path, store, protocol, request,
                                                                         monkeypatch):
    """Each replica's newest channel-log segment is damaged, then a worker is killed: the
    recovery replays in-transit messages from those segments, finds the damage, forgets
    the checkpoints from the damaged one on and computes an earlier recovery line (the
    job keeps its last ``--retain`` stable lines for this; damaging every replica's newest
    segment at once rolls some back by more than the default 3), with exact output."""
    url, endpoint = state_store(store, tmp_path, request, monkeypatch)
    backend = open_backend(url, endpoint)
    output = tmp_path / "out"
    run = subprocess.Popen(
        [SEGFLOW, "run", os.path.join(JOBS, f"{JOB}.py"), "-p", f"output={output}", "-p", "events=30000",
         "-p", "rate=5000", "--parallelism", "2", "--checkpoint-protocol", protocol, "--checkpoint-interval", "0.3",
         "--retain", "6", "--state", url], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True)
    try:
        def newest_segments():
            """Each replica's newest log segment's index."""
            newest = {}
            for key in backend.list(layout.local_prefix(JOB)):
                local = layout.local_of(JOB, key)
                if local and layout.is_log(key):
                    newest[local[0]] = max(newest.get(local[0], -1), local[1])
            return newest

        def checkpointed_enough():
            """Every replica (two blocks of two) with six local checkpoints each: older stable
            lines exist to fall back to."""
            newest = newest_segments()
            return len(newest) == 4 and min(newest.values()) >= 6
        assert wait_for(lambda: checkpointed_enough() or run.poll() is not None, timeout=40)
        assert run.poll() is None, "the job ended before the damage: make it longer"
        newest = {process: layout.log_key(JOB, process, index) for process, index in newest_segments().items()}
        for n, key in enumerate(sorted(newest.values())):
            damage(backend, key, flip if n % 2 else truncate)
        workers_of(run)[0].send_signal(signal.SIGKILL)
        _, stderr = run.communicate(timeout=150)
    finally:
        kill_tree(run)
    assert run.returncode == 0, stderr[-3000:]
    found = [key for key in newest.values() if f"{key} failed its integrity check" in stderr]
    assert found, f"the recovery read no damaged segment: {stderr[-2000:]}"
    assert collections.Counter(read_lines(output)) == expected_lines(30000)
