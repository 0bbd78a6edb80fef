"""Restore equivalence through the public API, in new processes: a paced job with one
branch per operator family (jobs/families.py) is stopped at a random moment after it has
checkpointed, and processes that never saw its state continue it; every sink's output must
equal the plain-Python oracle, line for line.

Aligned and unaligned checkpoints (the latter with in-flight channel state) restore the
whole job: every process is SIGKILLed, and ``segflow run --restore latest`` starts new
ones. The uncoordinated protocols (uncoordinated, cic) keep per-replica local checkpoints
and channel logs, not job-wide complete checkpoints, so a job cannot be restarted from them
with ``--restore``; their new processes are a replacement worker, which restores from the
recovery line and replays the logged channels."""
import collections
import os
import random
import subprocess
import time

import pytest

from recovery.test_kills import kill_tree, read_lines, run_with_kills
from support.processes import ROOT, SEGFLOW, wait_for

from .jobs.families import oracle_lines

JOB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jobs", "families.py")
EVENTS = 6000
RATE = 2000


def run_args(output, state_url, protocol, *extra):
    return [SEGFLOW, "run", JOB, "-p", f"output={output}", "-p", f"events={EVENTS}", "-p", f"rate={RATE}",
            "--parallelism", "2", "--checkpoint-protocol", protocol, "--checkpoint-interval", "0.2",
            "--state", state_url, "--quiet", *extra]


def complete_checkpoints(state_dir):
    root = os.path.join(state_dir, "jobs", "families")
    names = os.listdir(root) if os.path.isdir(root) else []
    return [name for name in names if os.path.exists(os.path.join(root, name, "_COMPLETE"))]


def outputs(output):
    return {name: collections.Counter(read_lines(os.path.join(output, name))) for name in oracle_lines(0)}


def take_savepoint(state_dir) -> str:
    """Once the job has checkpointed: a savepoint of it (``segflow savepoint``), its id."""
    assert wait_for(lambda: complete_checkpoints(state_dir), timeout=30), "no checkpoint completed"
    save = subprocess.run([SEGFLOW, "savepoint", "families"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert save.returncode == 0, save.stderr
    return save.stdout.strip()


def latest_checkpoint(state_dir) -> str:
    """Once the job has checkpointed: ``latest``, for ``--restore``."""
    assert wait_for(lambda: complete_checkpoints(state_dir), timeout=30), "no checkpoint completed"
    return "latest"


@pytest.mark.parametrize("protocol, restore_point", [("aligned", latest_checkpoint), ("unaligned", latest_checkpoint),
                                                      ("aligned", take_savepoint)],
                         ids=["aligned-latest", "unaligned-latest", "aligned-savepoint"])
def test_a_job_killed_whole_continues_in_new_processes_from_a_checkpoint(tmp_path, protocol, restore_point):
    output, state_dir = tmp_path / "out", tmp_path / "state"
    rng = random.Random(f"{protocol} {restore_point.__name__}")
    first = subprocess.Popen(run_args(output, f"file://{state_dir}", protocol), cwd=ROOT, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        time.sleep(rng.uniform(0.0, 1.0))
        restore = restore_point(state_dir)
    finally:
        kill_tree(first)
    assert outputs(output)["total"] == collections.Counter(), "the job finished before it was killed"
    rerun = subprocess.run(run_args(output, f"file://{state_dir}", protocol, "--restore", restore), cwd=ROOT,
                           capture_output=True, text=True, timeout=120)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert outputs(output) == oracle_lines(EVENTS)


@pytest.mark.parametrize("protocol", ["uncoordinated", "cic"])
def test_a_replacement_worker_continues_from_the_recovery_line(tmp_path, protocol):
    output = tmp_path / "out"
    run_with_kills(JOB, {"output": output, "events": EVENTS, "rate": RATE}, f"file://{tmp_path}/state", protocol,
                   seed=protocol, kills=1, interval=0.2)
    assert outputs(output) == oracle_lines(EVENTS)
