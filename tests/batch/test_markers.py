"""Commit markers of the file sink in a real checkpointed run: every replica ends with the
final epoch, and a fresh run clears the markers of replicas the job no longer has."""
import json
import os

from segflow.runtime.operators.two_phase import committed_through, parse_markers
from segflow.jobs.loader import run_job
from segflow.runtime.elements import FINAL_CHECKPOINT
from support.lambda_oracle import STREAM


def markers(directory):
    root = directory / "_committed"
    return {f"_committed/{name}": (root / name).read_bytes() for name in os.listdir(root)}


def run(tmp_path, parallelism, events=6000):
    run_job(STREAM, {"output": str(tmp_path / "bids"), "events": str(events), "rate": "8000"}, parallelism,
            runtime="processes", checkpoint_protocol="aligned", checkpoint_interval=0.2,
            state_url=f"file://{tmp_path}/state-{parallelism}")


def test_every_replica_records_the_final_epoch_and_fresh_runs_clear_old_markers(tmp_path):
    run(tmp_path, 2)
    found = markers(tmp_path / "bids")
    assert {name: json.loads(data) for name, data in found.items()} == {
        "_committed/part-00000": {"epoch": FINAL_CHECKPOINT, "replicas": 2},
        "_committed/part-00001": {"epoch": FINAL_CHECKPOINT, "replicas": 2}}
    numbered = [n for n in os.listdir(tmp_path / "bids") if "-e" in n]
    assert numbered, "the run took no checkpoint while writing: nothing tests the epochs"
    run(tmp_path, 1, events=3000)
    found = markers(tmp_path / "bids")
    assert list(found) == ["_committed/part-00000"]
    assert committed_through(parse_markers(found)) == FINAL_CHECKPOINT
