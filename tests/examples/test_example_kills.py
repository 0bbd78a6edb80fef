"""Every example survives worker kills exactly once: at parallelism 2 on worker processes
with aligned checkpoints, three SIGKILLs of a worker at random moments, and the output
still equals the example's oracle, record for record. The examples' sources are paced
(tests/recovery/jobs/slowed_example.py) so that the kills land while the job runs and
after checkpoints have completed."""
import os

import pytest
from example_runs import assert_matches_oracle, example_params, example_path
from oracles import ORACLES
from recovery.test_kills import JOBS, run_with_kills

SLOWED = os.path.join(JOBS, "slowed_example.py")
# Records per second per source replica: about 5 s of input for each example with the
# parameters of example_runs.SMALLER (loops then iterate over it for a while more).
RATES = {"connected_components": 90, "enum_triangles": 180, "kmeans": 200, "nexmark_q0": 2000, "nexmark_q1": 2000,
         "nexmark_q2": 2000, "nexmark_q3": 3000, "nexmark_q4": 2000, "nexmark_q5": 2000, "nexmark_q6": 2000,
         "nexmark_q7": 2000, "nexmark_q8": 3000, "pagerank": 60,
         "rolling_top_words": 800, "sensor_averages": 2000, "transitive_closure": 12, "windowed_wordcount": 150,
         "wordcount_assoc": 150}


def test_every_example_has_a_rate_for_its_kill_test():
    assert set(RATES) == set(ORACLES)


@pytest.mark.slow
@pytest.mark.parametrize("example", sorted(ORACLES))
def test_example_survives_three_worker_kills(example, tmp_path, text):
    params = example_params(example, tmp_path / "out", text)
    job = {"example": example_path(example), "rate": RATES[example], **params}
    run_with_kills(SLOWED, job, f"file://{tmp_path}/state", "aligned", seed=example, interval=0.3, timeout=120)
    assert_matches_oracle(example, params)
