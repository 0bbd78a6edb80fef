"""A window part a regional recovery replays is gone from the store, or damaged (issue 48):
the job must recover without it, never fail, lose or repeat a record.

The linear shape at parallelism 2, placed by segment, with its state in moto's S3 server.
A worker of the middle segment (the plain block and the window connector after it) is
SIGKILLed until the coordinator's regional restore has the restarted connector replay
stored versions into the restarted sink (the sink's newest complete version is behind
the connector's). At once, before the restarted replicas read them, the test deletes
those parts from the store, or overwrites them (their seal check then fails). The replay
finds a part missing or damaged; the worker reports it,
the coordinator forgets it and recovers again around it (a regional recovery planned
without the part, or a global one). The committed output must equal the oracle."""
import collections
import json
import os
import queue
import random
import signal
import subprocess
import threading
import time

import pytest

from recovery.jobs.segment_shapes import oracle
from segflow.checkpoint import layout
from segflow.state import open_backend
from support.processes import ROOT, SEGFLOW, kill_tree, wait_for
from support.regional import SHAPES_JOB, placement, slot
from test_kills import read_lines, workers_of
from test_stores import s3_server  # noqa: F401 - the moto server, as a fixture

JOB = "segment_shapes"
EVENTS, RATE, DELAY = 36000, 3000, 0.0006
MIDDLE = {1, 2}
CONNECTOR, SINK = 2, 3
ATTEMPTS = 6


def start(output, state: str, endpoint: str) -> subprocess.Popen:
    return subprocess.Popen(
        [SEGFLOW, "run", SHAPES_JOB, "-p", f"output={output}", "-p", "shape=linear", "-p", f"events={EVENTS}",
         "-p", f"rate={RATE}", "-p", f"delay={DELAY}", "--parallelism", "6", "--placement", "segment",
         "--checkpoint-protocol", "segment", "--checkpoint-interval", "0.3", "--state", state, "--quiet"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True,
        env={**os.environ, "AWS_ENDPOINT_URL": endpoint})


def json_lines(process) -> tuple["queue.Queue[dict]", threading.Thread]:
    """The run's JSON log records as they come (every line is kept in ``process.seen``),
    and the thread that reads them (done once the run's stderr ends)."""
    records: queue.Queue = queue.Queue()
    process.seen = []

    def read():
        for line in process.stderr:
            process.seen.append(line)
            if line.startswith("{"):
                records.put(json.loads(line))
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    return records, reader


def regional_restore(records: queue.Queue, timeout: float = 30) -> dict | None:
    """The coordinator's plan of the next recovery if regional (its "regional restore"
    comes just before its "recovering"); None if the recovery restarts everything, or if
    none began (a worker killed while the region registers again is only started again)."""
    deadline, restore = time.monotonic() + timeout, None
    while time.monotonic() < deadline:
        try:
            record = records.get(timeout=0.1)
        except queue.Empty:
            continue
        if record.get("msg") == "regional restore":
            restore = record
        elif record.get("msg") == "recovering":
            return restore if "regional" in record else None
    return None


def damage(backend, keys: list[str], how: str) -> None:
    """Delete the parts, or overwrite them with bytes that fail their seal check."""
    if how == "delete":
        backend.delete(keys)
    else:
        for key in keys:
            backend.put(key, b"not the part the replica wrote")


@pytest.mark.parametrize("how", ["delete", "corrupt"])
def test_a_replayed_part_missing_from_the_store_makes_the_recovery_grow(tmp_path, s3_server, how):
    rng = random.Random(48)
    state = f"s3://segflow-test-missing-part/{how}-{tmp_path.name}"
    backend = open_backend(state, s3_server.endpoint)
    slots = {w for w, blocks in placement("linear", 6, tmp_path).items() if blocks & MIDDLE}
    run = start(tmp_path / "out", state, s3_server.endpoint)
    records, reader = json_lines(run)
    deleted: list[str] = []
    try:
        assert wait_for(lambda: any(map(layout.is_complete_marker, backend.list(layout.checkpoint_prefix(JOB)))),
                        timeout=60), f"no checkpoint completed: {''.join(run.seen)[-2000:]}"
        for _ in range(ATTEMPTS):
            time.sleep(rng.uniform(1.5, 2.5))
            if run.poll() is not None:
                break
            victims = wait_for(lambda: [w for w in workers_of(run) if slot(w) in slots], timeout=30)
            assert victims, f"no worker of the middle segment runs: {''.join(run.seen)[-2000:]}"
            rng.choice(victims).send_signal(signal.SIGKILL)
            restore = regional_restore(records, timeout=10)
            replay = restore["replays"].get(f"{CONNECTOR}>{SINK}") if restore else None
            if replay is not None and replay[1] != "live":
                deleted = [layout.window_key(JOB, CONNECTOR, r, replay[0]) for r in range(2)]
                damage(backend, deleted, how)
                break
        assert deleted, f"no regional restore replayed stored parts of block {CONNECTOR} in {ATTEMPTS} kills"
        run.wait(timeout=180)
        reader.join(timeout=10)
    finally:
        kill_tree(run)
        (tmp_path / "run.log").write_text("".join(run.seen))
    log = "".join(run.seen)
    assert run.returncode == 0, f"the job failed after losing {deleted}:\n{log[-3000:]}"
    logged = [json.loads(line) for line in run.seen if line.startswith("{")]
    recoveries = [r for r in logged if r.get("msg") == "recovering"]
    grown = [r for r in recoveries if r.get("damaged") in deleted]
    assert grown, f"no recovery named the deleted part {deleted}: {[r.get('reason') for r in recoveries]}"
    assert any(r.get("msg") == "window part lost" for r in logged)
    counts, = oracle("linear", EVENTS).values()
    got = collections.Counter(read_lines(tmp_path / "out" / "counts"))
    assert got == counts, f"{sum((got - counts).values())} lines too many, {sum((counts - got).values())} missing"
