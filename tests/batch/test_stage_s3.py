"""The batch stage against a real S3 endpoint (moto), over parts and markers written by a
real checkpointed run of examples/lambda: every epoch is in the Parquet output exactly
once (totals per auction and day equal the plain-Python oracle), when the stage is killed
by PID mid-run and restarted, and when it stops between a result and its progress record.
A failing batch function is recorded in the progress without advancing it."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from segflow.batch.plan import EpochRange, parts_in
from segflow.batch.progress import KEY
from segflow.runtime.elements import FINAL_CHECKPOINT
from segflow.state import open_backend
from support.lambda_oracle import DAILY, STREAM, daily_oracle, parquet_totals
from support.processes import ROOT

EVENTS = 24000
SEGFLOW = [sys.executable, "-m", "segflow.cli.main"]


def start(args, endpoint, log):
    env = {**os.environ, "AWS_ENDPOINT_URL": endpoint, "SEGFLOW_LOG_LEVEL": "info"}
    with open(log, "ab") as out:
        return subprocess.Popen([*SEGFLOW, *args], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)


def stop(process):
    """Kill the process and its group (the stage's Spark JVM) by the PID this test started."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(30)


def stage_args(source, output, module=DAILY, function="daily", *extra):
    return ["batch-stage", "--input", source, "--output", output, "--module", module, "--function", function,
            *extra]


def wait_for(check, timeout, what, process=None, log=None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        if process is not None and process.poll() is not None:
            pytest.fail(f"{what}: the process exited with {process.returncode}:\n{open(log).read()[-3000:]}")
        time.sleep(0.2)
    pytest.fail(f"timed out waiting for {what}" + (f":\n{open(log).read()[-3000:]}" if log else ""))


def progress(store):
    data = store.get(KEY)
    return json.loads(data) if data else {}


def results(store):
    return {key: store.get(key) for key in store.list("epochs=")}


@pytest.fixture(scope="module")
def processed(s3_server, tmp_path_factory):
    """A checkpointed run of the stream, with the stage killed after its first run while the
    job still writes, then restarted until the job's final epoch is processed."""
    tmp = tmp_path_factory.mktemp("lambda-s3")
    source, output = "s3://lambda-in/bids", "s3://lambda-out/daily"
    store = open_backend(output, s3_server.endpoint)
    first = start(stage_args(source, output), s3_server.endpoint, tmp / "stage-1.log")
    wait_for(lambda: "batch stage ready" in (tmp / "stage-1.log").read_text(), 60, "Spark to start", first,
             tmp / "stage-1.log")
    job = start(["run", STREAM, "-p", f"output={source}", "-p", f"events={EVENTS}", "-p", "rate=1000",
                 "--parallelism", "2", "--checkpoint-protocol", "aligned", "--checkpoint-interval", "0.5",
                 "--state", f"file://{tmp}/state", "--quiet"], s3_server.endpoint, tmp / "job.log")
    try:
        # a run that wrote a result: an epoch can be empty (a checkpoint before the first
        # record reached the sink, as on a loaded machine), and then no result is written
        wait_for(lambda: progress(store).get("lastEpoch") and results(store), 90, "the stage's first result", first,
                 tmp / "stage-1.log")
        stop(first)
        killed_at = progress(store)
        still_running = job.poll() is None
        second = start(stage_args(source, output, DAILY, "daily", "--until-finished"), s3_server.endpoint,
                       tmp / "stage-2.log")
        assert second.wait(120) == 0, open(tmp / "stage-2.log").read()[-3000:]
        assert job.wait(60) == 0, open(tmp / "job.log").read()[-3000:]
    finally:
        for process in (first, job, locals().get("second")):
            if process is not None:
                stop(process)
    return {"source": source, "output": output, "store": store, "killed_at": killed_at,
            "still_running": still_running, "tmp": tmp}


def ranges(store):
    spans = []
    for key in store.list("epochs="):
        first, last = key.split("/")[0][len("epochs="):].split("-")
        spans.append((int(first), FINAL_CHECKPOINT if last == "end" else int(last)))
    return sorted(spans)


def test_each_committed_epoch_is_processed_once_across_a_killed_stage(processed):
    store = processed["store"]
    assert processed["still_running"], "the job ended before the stage was killed: nothing tests mid-run"
    final = progress(store)
    assert final["lastEpoch"] == FINAL_CHECKPOINT and final["lastRun"]["error"] == ""
    spans = ranges(store)
    assert len(spans) >= 2 and spans[-1][1] == FINAL_CHECKPOINT
    parts = open_backend(processed["source"], processed["store"].endpoint).list("part-")
    skipped = parts_in(parts, EpochRange(1, spans[0][0] - 1)) if spans[0][0] > 1 else []
    assert skipped == [], (spans, skipped)          # the epochs before the first result held no record
    assert all(a[1] + 1 == b[0] for a, b in zip(spans, spans[1:])), spans   # contiguous, none twice
    assert spans[0][1] <= processed["killed_at"]["lastEpoch"]
    totals, _ = parquet_totals(results(store))
    assert totals == daily_oracle(EVENTS)


def test_a_result_without_its_progress_record_is_redone_not_doubled(processed, s3_server):
    """The stage stopped after writing results but before recording them: the next run
    covers those epochs again, in one range, and removes the orphaned results."""
    store, tmp = processed["store"], processed["tmp"]
    spans = ranges(store)
    store.put(KEY, json.dumps({"lastEpoch": spans[0][1]}).encode())      # the later records were lost
    again = start(stage_args(processed["source"], processed["output"], DAILY, "daily", "--until-finished"),
                  s3_server.endpoint, tmp / "stage-3.log")
    try:
        assert again.wait(120) == 0, open(tmp / "stage-3.log").read()[-3000:]
    finally:
        stop(again)
    assert ranges(store) == [spans[0], (spans[0][1] + 1, FINAL_CHECKPOINT)]
    totals, _ = parquet_totals(results(store))
    assert totals == daily_oracle(EVENTS)


def test_a_failing_function_is_recorded_and_does_not_advance(processed, s3_server, tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def daily(spark, records):\n    raise ValueError('no prices today')\n")
    output = "s3://lambda-out/failing"
    store = open_backend(output, s3_server.endpoint)
    stage = start(stage_args(processed["source"], output, str(bad), "daily"), s3_server.endpoint,
                  tmp_path / "bad.log")
    try:
        failed = wait_for(lambda: progress(store).get("lastRun"), 90, "a recorded run", stage, tmp_path / "bad.log")
        assert stage.poll() is None                # the stage keeps running, to retry
    finally:
        stop(stage)
    assert "ValueError: no prices today" in failed["error"]
    assert progress(store)["lastEpoch"] == 0 and results(store) == {}
