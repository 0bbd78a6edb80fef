"""``segflow run ... --batch-stage`` runs the lambda example's batch function beside the
streaming job: the Parquet totals per auction and day equal the plain-Python oracle. And
the refusals of bad input, which answer before any JVM starts."""
import datetime
import json
import os
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from segflow.runtime.elements import FINAL_CHECKPOINT
from support.lambda_oracle import DAILY, STREAM, daily_oracle, parquet_totals
from support.processes import ROOT

SEGFLOW = [sys.executable, "-m", "segflow.cli.main"]
EVENTS = 12000


def segflow(*args, timeout=240):
    return subprocess.run([*SEGFLOW, *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def checkpoints(tmp_path):
    return ["--checkpoint-protocol", "aligned", "--checkpoint-interval", "0.3", "--state", f"file://{tmp_path}/state"]


def stale_output(bids, directory):
    """What a finished earlier run left: a final part and commit marker in the sink's
    output, and a result and progress past the final epoch in the stage's."""
    (bids / "_committed").mkdir(parents=True)
    (bids / "_committed" / "part-00000").write_text(json.dumps({"epoch": FINAL_CHECKPOINT, "replicas": 1}))
    (bids / "part-00000-end.jsonl").write_text('{"auction": 1, "bidder": 1, "price": 7, "date_time": 0}\n')
    (directory / "epochs=1-end").mkdir(parents=True)
    pq.write_table(pa.table({"auction": [1], "day": [datetime.date(2026, 1, 1)], "bids": [5], "volume": [9],
                             "max_price": [9]}), directory / "epochs=1-end" / "part-0.parquet")
    (directory / "_batch_stage").mkdir()
    (directory / "_batch_stage" / "progress.json").write_text(json.dumps({"lastEpoch": FINAL_CHECKPOINT}))


def test_run_with_a_batch_stage_aggregates_every_bid_once(tmp_path):
    stale_output(tmp_path / "bids", tmp_path / "daily")          # a fresh run of the job starts the stage afresh too
    result = segflow("run", STREAM, "-p", f"output={tmp_path / 'bids'}", "-p", f"events={EVENTS}", "-p", "rate=2000",
                     "--parallelism", "2", *checkpoints(tmp_path), "--batch-stage", f"{DAILY}:daily",
                     "--batch-output", str(tmp_path / "daily"))
    assert result.returncode == 0, result.stderr[-3000:]
    assert '"msg": "batch run"' in result.stderr and "Traceback" not in result.stderr
    objects = {}
    for directory, _, files in os.walk(tmp_path / "daily"):
        for name in files:
            if name.endswith(".parquet"):
                path = os.path.join(directory, name)
                with open(path, "rb") as f:
                    objects[os.path.relpath(path, tmp_path / "daily")] = f.read()
    totals, rows = parquet_totals(objects)
    assert totals == daily_oracle(EVENTS)
    assert any(label.endswith("-end") for label in rows)


@pytest.mark.parametrize("args,message", [
    (["--batch-stage", "daily.py"], "--batch-stage takes MODULE.py:FUNCTION"),
    (["--batch-stage", f"{DAILY}:daily"], "needs --batch-output"),
    (["--batch-output", "x"], "need --batch-stage"),
])
def test_run_refuses_an_incomplete_batch_stage(tmp_path, args, message):
    result = segflow("run", STREAM, "-p", f"output={tmp_path / 'bids'}", "-p", "events=10", *checkpoints(tmp_path),
                     *args)
    assert result.returncode == 1 and message in result.stderr and "Traceback" not in result.stderr, result.stderr


def test_run_refuses_a_batch_stage_without_checkpoints(tmp_path):
    result = segflow("run", STREAM, "-p", f"output={tmp_path / 'bids'}", "-p", "events=10",
                     "--batch-stage", f"{DAILY}:daily", "--batch-output", str(tmp_path / "daily"))
    assert result.returncode == 1 and "add --checkpoint-protocol aligned" in result.stderr, result.stderr


@pytest.mark.parametrize("change,message", [
    ({"--module": "no_such_dir/daily.py"}, "job file not found: no_such_dir/daily.py"),
    ({"--function": "weekly"}, "has no function weekly(spark, records)"),
    ({"--trigger": "sometimes"}, "trigger must be onCheckpoint or a number of seconds"),
    ({"--input": STREAM}, "is a file: the batch stage needs the sink's output directory"),
    ({"--output": "ftp://host/x"}, "a directory or s3://bucket/prefix"),
])
def test_the_stage_refuses_bad_input_clearly(tmp_path, change, message):
    options = {"--input": str(tmp_path / "bids"), "--output": str(tmp_path / "daily"), "--module": DAILY,
               "--function": "daily", **change}
    result = segflow("batch-stage", *[part for pair in options.items() for part in pair], timeout=60)
    assert result.returncode == 1 and message in result.stderr and "Traceback" not in result.stderr, result.stderr
