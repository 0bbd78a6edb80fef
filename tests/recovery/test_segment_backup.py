"""Segment backup under the loss of every process (the datacenter disaster of Shen, Segment
Backup): a linear, a splitting and a merging topology at parallelism 2, with the state in a
real store (file, Redis, moto S3). Every process of the job is SIGKILLed at a random
moment, three times per run, and each time a new ``segflow run ... --restore latest``
starts from the store alone; the committed output must equal a plain-Python oracle, line
for line."""
import collections
import json
import os
import random
import subprocess
import time

import pytest

from recovery.jobs.segment_shapes import oracle
from segflow.checkpoint import layout
from segflow.state import open_backend
from support.processes import ROOT, SEGFLOW, savepoint_taken, wait_for
from test_kills import JOBS, kill_tree, read_lines, run_with_kills
from test_stores import redis_server, s3_server  # noqa: F401 - fixtures

EVENTS = 36000
RATE = 3000         # events/s: a run lasts 12 s, time for three disasters
DELAY = 0.0006      # per record on one branch: its sink acknowledges versions later (see segment_shapes)
JOB = "segment_shapes"


def start(shape, output, state, endpoint, connectors, *extra):
    env = {**os.environ, "AWS_ENDPOINT_URL": endpoint} if endpoint else None
    return subprocess.Popen(
        [SEGFLOW, "run", os.path.join(JOBS, "segment_shapes.py"), "-p", f"output={output}", "-p", f"shape={shape}",
         "-p", f"events={EVENTS}", "-p", f"rate={RATE}", "-p", f"delay={DELAY}", "--parallelism", "2",
         "--checkpoint-protocol", "segment",
         "--checkpoint-interval", "0.3", "--connectors", connectors, "--state", state, "--quiet", *extra],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True, env=env)


def snapshots(state, endpoint):
    """The replicas' snapshots in the store (not the checkpoints' markers)."""
    return [k for k in open_backend(state, endpoint or None).list(layout.checkpoint_prefix(JOB))
            if layout.checkpoint_of(k) is not None and layout.snapshot_of(k) is not None]


def held_versions(state, endpoint):
    """The versions each replica (``(block, replica)``) holds in the store."""
    held = collections.defaultdict(set)
    for key in snapshots(state, endpoint):
        held[layout.snapshot_of(key)].add(layout.checkpoint_of(key))
    return held


def in_flight(state, endpoint):
    """A version is being taken: some replicas hold the newest version, others not yet."""
    held = held_versions(state, endpoint)
    newest = max((max(v) for v in held.values()), default=0)
    return any(newest not in versions for versions in held.values())


def held_apart(state, endpoint, a, b):
    """Every replica of one of blocks ``a`` and ``b`` holds a version that no replica of
    the other holds yet: a disaster now restores them at different versions."""
    newest = {a: [], b: []}
    for (block, _), versions in held_versions(state, endpoint).items():
        if block in newest:
            newest[block].append(max(versions))
    if not newest[a] or not newest[b]:
        return False
    return min(newest[a]) > max(newest[b]) or min(newest[b]) > max(newest[a])


def newest_version(state, endpoint):
    return max((layout.checkpoint_of(k) for k in snapshots(state, endpoint)), default=0)


def windows(state, endpoint):
    return open_backend(state, endpoint or None).list(layout.window_prefix(JOB))


def restored_versions(stderr):
    """The coordinator's segment restores, as {block: version} each."""
    return [json.loads(line)["versions"] for line in stderr.splitlines()
            if line.startswith("{") and '"segment restore"' in line]


def run_with_disasters(shape, output, state, strike_apart, endpoint="", connectors="auto", disasters=3, seed=0):
    """Kill everything ``disasters`` times, each at a random moment once the store holds
    new snapshots, while blocks ``strike_apart`` hold different versions (a checkpoint is
    being taken, and a slow connector has not reached the version of a fast one); restart
    from the store each time; let the last run finish. Returns the versions of every
    restore."""
    rng = random.Random(seed)
    restore = ()
    restores = []
    for disaster in range(disasters):
        before = newest_version(state, endpoint)
        run = start(shape, output, state, endpoint, connectors, *restore)
        try:
            assert wait_for(lambda: newest_version(state, endpoint) > before + 1 or run.poll() is not None,
                            timeout=60)
            time.sleep(rng.uniform(0.2, 1.0))
            wait_for(lambda: held_apart(state, endpoint, *strike_apart), timeout=1.5, every=0.02)
            assert run.poll() is None, f"the job ended before disaster {disaster + 1}: make it longer\n" \
                                       f"{run.communicate()[1][-3000:]}"
        finally:
            kill_tree(run)
        restores += restored_versions(run.communicate()[1])
        restore = ("--restore", "latest")
    run = start(shape, output, state, endpoint, connectors, *restore)
    try:
        _, stderr = run.communicate(timeout=180)
    finally:
        kill_tree(run)
    assert run.returncode == 0, stderr[-3000:]
    return restores + restored_versions(stderr)


def assert_oracle(shape, output):
    for sink, lines in oracle(shape, EVENTS).items():
        got = collections.Counter(read_lines(output / sink))
        assert got == lines, (f"{sink}: {sum((got - lines).values())} lines too many, "
                              f"{sum((lines - got).values())} missing")


def apart(restores, a, b):
    """Some restore put blocks ``a`` and ``b`` at different versions."""
    return any(v[str(a)] != v[str(b)] for v in restores)


def test_linear_topology_with_file_state(tmp_path):
    """The slow sink restores behind the window block: the window replays to it."""
    state = f"file://{tmp_path}/state"
    restores = run_with_disasters("linear", tmp_path / "out", state, (2, 3), seed=1)
    assert_oracle("linear", tmp_path / "out")
    assert len(restores) == 3 and apart(restores, 2, 3), restores
    assert windows(state, "") == [], "the finished job left pending windows behind"


@pytest.mark.parametrize("connectors", ["auto", "1"])
def test_splitting_topology_with_redis_state(tmp_path, redis_server, connectors):
    """auto: one segment ends at both sinks, and the sink ahead drops what its state
    holds; "1": the split block is a connector with two downstream segments (a version
    pointer each) and replays to the slow branch only."""
    state = redis_server.url
    restores = run_with_disasters("split", tmp_path / "out", state, (2, 3), connectors=connectors, seed=2)
    assert_oracle("split", tmp_path / "out")
    assert len(restores) == 3 and apart(restores, 2, 3), restores


def test_merging_topology_with_s3_state(tmp_path, s3_server):
    """Two sources feed one segment: each replays its own window into the join."""
    state = f"s3://segflow-segments-{os.getpid()}/state"
    restores = run_with_disasters("merge", tmp_path / "out", state, (0, 3), endpoint=s3_server.endpoint,
                                  seed=3)
    assert_oracle("merge", tmp_path / "out")
    assert len(restores) == 3 and apart(restores, 0, 3), restores


@pytest.mark.parametrize("parallelism", [1, 3])
def test_a_restore_at_another_parallelism_is_refused_and_keeps_the_store(tmp_path, parallelism):
    """Fewer replicas than the store holds, or more than its newest complete version shows
    (before, a restore at 3 found no version every replica held and started afresh)."""
    state = f"file://{tmp_path}/state"
    run = start("linear", tmp_path / "out", state, "", "auto")
    try:
        assert wait_for(lambda: newest_version(state, "") >= 2, timeout=60), "no snapshot was taken"
    finally:
        kill_tree(run)
    held = sorted(snapshots(state, ""))
    args = [SEGFLOW, "run", os.path.join(JOBS, "segment_shapes.py"), "-p", f"output={tmp_path}/out",
            "--parallelism", str(parallelism), "--checkpoint-protocol", "segment", "--state", state, "--restore",
            "latest", "--quiet"]
    result = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert "segment backup restores at the parallelism the job ran with" in result.stderr, result.stderr[-2000:]
    assert sorted(snapshots(state, "")) == held, "a refused restore changed the store"


def test_a_finished_job_resumes_from_its_end_at_the_parallelism_it_ran_with(tmp_path):
    """The job's final checkpoint is every replica's end: at another parallelism the
    restore is refused up front (before, a replica it never had failed the job with
    "version 4611686018427387904 of replica b0.r2 is missing")."""
    state, output = f"file://{tmp_path}/state", tmp_path / "out"

    def run(parallelism, *extra):
        return subprocess.run([SEGFLOW, "run", os.path.join(JOBS, "random_pipeline.py"), "-p", f"output={output}",
                               "-p", "seed=2", "-p", "events=3000", "-p", "rate=100000", "--parallelism",
                               str(parallelism), "--checkpoint-protocol", "segment", "--state", state, "--quiet",
                               *extra], cwd=ROOT, capture_output=True, text=True, timeout=120)

    def written():
        return {path: path.read_bytes() for path in output.rglob("*") if path.is_file()}

    ended = run(2)
    assert ended.returncode == 0, ended.stderr[-3000:]
    before, stored = written(), sorted((tmp_path / "state").rglob("*"))
    refused = run(3, "--restore", "latest")
    assert refused.returncode == 1
    assert "segment backup restores at the parallelism the job ran with" in refused.stderr, refused.stderr[-2000:]
    assert written() == before and sorted((tmp_path / "state").rglob("*")) == stored
    resumed = run(2, "--restore", "latest")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "restoring its end" in resumed.stderr and written() == before


def test_a_savepoint_restores_every_block_at_its_version(tmp_path):
    """What the operator's suspend and savepoint upgrade do with a segment-backup job."""
    state = f"file://{tmp_path}/state"
    run = start("linear", tmp_path / "out", state, "", "auto")
    try:
        assert wait_for(lambda: newest_version(state, "") >= 2, timeout=60), "no snapshot was taken"
        save = subprocess.run([SEGFLOW, "savepoint", JOB], cwd=ROOT, capture_output=True, text=True,
                              timeout=60)
        assert save.returncode == 0, save.stderr
        savepoint, _ = savepoint_taken(save.stdout)
        assert wait_for(lambda: newest_version(state, "") > savepoint, timeout=30), \
            "the job took no checkpoint after the savepoint"
    finally:
        kill_tree(run)
    rerun = start("linear", tmp_path / "out", state, "", "auto", "--restore", str(savepoint))
    try:
        _, stderr = rerun.communicate(timeout=180)
    finally:
        kill_tree(rerun)
    assert rerun.returncode == 0, stderr[-3000:]
    assert restored_versions(stderr) == [{str(b): savepoint for b in range(4)}]
    assert_oracle("linear", tmp_path / "out")


@pytest.mark.parametrize("shape", ["linear", "split", "merge"])
def test_worker_kills_with_placement_by_segment_lose_nothing_and_repeat_nothing(tmp_path, shape):
    """``--placement segment`` on 3 workers (each shape has 3 groups or fewer): each group of
    blocks on workers of its own (the plan says so), SIGKILLs of random workers, and the
    output equals the oracle."""
    params = {"output": tmp_path / "out", "shape": shape, "events": EVENTS, "rate": RATE}
    shown = subprocess.run([SEGFLOW, "plan", os.path.join(JOBS, "segment_shapes.py"), "-p", f"output={tmp_path}/x",
                            "-p", f"shape={shape}", "--parallelism", "3", "--placement", "segment"],
                           cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert "each on workers of its own" in shown.stdout, shown.stdout + shown.stderr
    run_with_kills("segment_shapes.py", params, f"file://{tmp_path}/state", "segment", seed=7, parallelism=3,
                   extra=("--placement", "segment"))
    assert_oracle(shape, tmp_path / "out")
