"""Restore equivalence through the public API, in new processes: a paced job with one
branch per operator family (jobs/families.py), and an iteration (recovery/jobs/iterative.py),
is stopped at a random moment after it has checkpointed, and processes that never saw its
state continue it; every sink's output must equal the plain-Python oracle, line for line.

Aligned and unaligned checkpoints (the latter with in-flight channel state) restore the
whole job: every process is SIGKILLed, and ``segflow run --restore latest`` starts new
ones; so does segment backup, each block from its own version with the connectors (every
block behind a keyed exchange) replaying their pending windows. The uncoordinated protocols
(uncoordinated, cic) keep per-replica local checkpoints and channel logs, not job-wide
complete checkpoints, so a job cannot be restarted from them with ``--restore``; their new
processes are a replacement worker, which restores from the recovery line and replays the
logged channels."""
import collections
import os
import random
import subprocess
import time

import pytest

from recovery.test_kills import JOBS, kill_tree, read_lines, run_with_kills
from segflow import Config
from segflow.jobs.loader import JobModule, build_job
from support.processes import ROOT, SEGFLOW, savepoint_taken, segflow_savepoint, wait_for

from .jobs.families import oracle_lines

JOB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jobs", "families.py")
ITERATIVE = os.path.join(JOBS, "iterative.py")
EVENTS = 6000
RATE = 2000


def job_name(job):
    """The module's name and this test process's: ``segflow savepoint NAME`` finds a running
    job by its name, machine-wide, so another test process's run of the job stays apart."""
    return f"{os.path.splitext(os.path.basename(job))[0]}_{os.getpid()}"


def run_args(job, params, state_url, protocol, *extra):
    args = [SEGFLOW, "run", job, "--job-name", job_name(job), "--parallelism", "2", "--checkpoint-protocol",
            protocol, "--checkpoint-interval", "0.2", "--state", state_url, "--quiet", *extra]
    for key, value in params.items():
        args += ["-p", f"{key}={value}"]
    return args


def complete_checkpoints(state_dir, job):
    root = os.path.join(state_dir, "jobs", job_name(job))
    names = os.listdir(root) if os.path.isdir(root) else []
    return [name for name in names if os.path.exists(os.path.join(root, name, "_COMPLETE"))]


def outputs(output):
    return {name: collections.Counter(read_lines(os.path.join(output, name))) for name in oracle_lines(0)}


def take_savepoint(state_dir, job) -> str:
    """Once the job has checkpointed: a savepoint of it (``segflow savepoint``), its id."""
    assert wait_for(lambda: complete_checkpoints(state_dir, job), timeout=30), "no checkpoint completed"
    save = segflow_savepoint(job_name(job))
    assert save.returncode == 0, save.stderr
    return str(savepoint_taken(save.stdout)[0])


def latest_checkpoint(state_dir, job) -> str:
    """Once the job has checkpointed: ``latest``, for ``--restore``."""
    assert wait_for(lambda: complete_checkpoints(state_dir, job), timeout=30), "no checkpoint completed"
    return "latest"


def kill_then_restore(job, params, state_dir, protocol, restore_point, seed, *extra) -> None:
    """Run ``job``, SIGKILL all its processes at a random moment once ``restore_point`` has a
    checkpoint to offer, then run it to the end in new processes restored from there."""
    rng = random.Random(seed)
    first = subprocess.Popen(run_args(job, params, f"file://{state_dir}", protocol, *extra), cwd=ROOT,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        time.sleep(rng.uniform(0.0, 1.0))
        restore = restore_point(state_dir, job)
    finally:
        kill_tree(first)
    assert first.returncode != 0, "the job finished before it was killed"
    rerun = subprocess.run(run_args(job, params, f"file://{state_dir}", protocol, "--restore", restore, *extra),
                           cwd=ROOT,
                           capture_output=True, text=True, timeout=120)
    assert rerun.returncode == 0, rerun.stderr[-3000:]


# The protocols whose jobs restart whole from a checkpoint, and those whose lost worker is
# replaced from a recovery line: between them, every registered protocol (tests/protocols).
WHOLE_JOB_RESTORES = [("aligned", latest_checkpoint), ("unaligned", latest_checkpoint), ("aligned", take_savepoint),
                      ("segment", latest_checkpoint)]
REPLACEMENT_WORKER_PROTOCOLS = ["uncoordinated", "cic"]
RESTORED_PROTOCOLS = {p for p, _ in WHOLE_JOB_RESTORES} | set(REPLACEMENT_WORKER_PROTOCOLS)


@pytest.mark.parametrize("protocol, restore_point", WHOLE_JOB_RESTORES,
                         ids=["aligned-latest", "unaligned-latest", "aligned-savepoint", "segment-latest"])
def test_a_job_killed_whole_continues_in_new_processes_from_a_checkpoint(tmp_path, protocol, restore_point):
    output = tmp_path / "out"
    kill_then_restore(JOB, {"output": output, "events": EVENTS, "rate": RATE}, tmp_path / "state", protocol,
                      restore_point, seed=f"{protocol} {restore_point.__name__}")
    assert outputs(output) == oracle_lines(EVENTS)


def test_segment_backup_with_every_block_a_connector_restores_every_operator_family(tmp_path):
    """Every block keeps a pending window: each operator family's output is replayed from
    the store into the next block, and dropped where the next block already holds it."""
    params = {"output": tmp_path / "out", "events": EVENTS, "rate": RATE}
    env, _ = build_job(JobModule(JOB, params={k: str(v) for k, v in params.items()}), Config(planning_only=True))
    every = ",".join(str(b.id) for b in env.graph.blocks)
    kill_then_restore(JOB, params, tmp_path / "state", "segment", latest_checkpoint, "every block",
                      "--connectors", every)
    assert outputs(tmp_path / "out") == oracle_lines(EVENTS)


@pytest.mark.parametrize("protocol", ["aligned", "unaligned"])
def test_an_iteration_killed_whole_continues_in_new_processes_from_its_latest_checkpoint(tmp_path, protocol):
    """The loop's state, its leader and the records in flight around the loop come back."""
    output = tmp_path / "out"
    kill_then_restore(ITERATIVE, {"output": output}, tmp_path / "state", protocol, latest_checkpoint, seed=protocol)
    assert sorted(map(int, read_lines(output))) == [x + 30 for x in range(3000)]
    assert read_lines(str(output) + "-state") == [str(3000 * 30)]


@pytest.mark.parametrize("protocol", REPLACEMENT_WORKER_PROTOCOLS)
def test_a_replacement_worker_continues_from_the_recovery_line(tmp_path, protocol):
    output = tmp_path / "out"
    run_with_kills(JOB, {"output": output, "events": EVENTS, "rate": RATE}, f"file://{tmp_path}/state", protocol,
                   seed=protocol, kills=1, interval=0.2)
    assert outputs(output) == oracle_lines(EVENTS)
