"""The loop examples survive losing every process, at parallelism 4: the job is SIGKILLed
whole three times, each time once new checkpoints are stored and at a random moment after,
``segflow run ... --restore latest`` starts it again from the store alone, and the last run
ends with the example's oracle, record for record.

Loops are where restores went wrong before: a loop's head outlives its input, its
checkpoints are started by triggers rather than barriers, and its back edges are recorded
(a trigger that came before the source's last Terminate once stalled pagerank here)."""
import random
import subprocess
import time

import pytest
from example_runs import assert_matches_oracle, example_params, example_path
from test_example_kills import RATES

from segflow.checkpoint.catalog import Catalog
from segflow.state import open_backend
from support.processes import ROOT, kill_tree, wait_for
from recovery.test_kills import run_args

LOOPS = ("connected_components", "kmeans", "pagerank", "transitive_closure")
DISASTERS = 3


def newest_checkpoint(state: str) -> int:
    """The newest complete checkpoint in the store (retention deletes old ones)."""
    return max(Catalog(open_backend(state), "slowed_example").complete_ids(), default=0)


def start(job: dict, state: str, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(run_args("slowed_example.py", job, state, "aligned", 4, 0.3, extra), cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


@pytest.mark.slow
@pytest.mark.parametrize("example", LOOPS)
def test_a_loop_survives_three_whole_job_disasters_at_parallelism_4(example, tmp_path, text):
    rng = random.Random(example)
    params = example_params(example, tmp_path / "out", text)
    # half the kill test's rate: parallel sources split their input in 4 here, not 2
    job = {"example": example_path(example), "rate": RATES[example] / 2, **params}
    state = f"file://{tmp_path}/state"
    restore: tuple = ()
    for disaster in range(DISASTERS):
        before = newest_checkpoint(state)
        run = start(job, state, *restore)
        try:
            assert wait_for(lambda: newest_checkpoint(state) > before + 1 or run.poll() is not None, timeout=60)
            time.sleep(rng.uniform(0, 0.8))
            assert run.poll() is None, (f"the job ended before disaster {disaster + 1}: slow it down\n"
                                        f"{run.communicate()[1][-3000:]}")
        finally:
            kill_tree(run)
        restore = ("--restore", "latest")
    run = start(job, state, *restore)
    try:
        _, stderr = run.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        kill_tree(run)
        raise AssertionError(f"the job did not finish in 120 s after its restore:\n{run.communicate()[1][-4000:]}")
    finally:
        kill_tree(run)
    assert run.returncode == 0, stderr[-3000:]
    assert '"restoring"' in stderr, "the last run did not restore a checkpoint"
    assert_matches_oracle(example, params)
