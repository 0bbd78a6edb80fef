"""Every example job against its plain-Python oracle, record for record: in one process
at parallelism 1, 2 and 4, and on worker processes at 2 and 4."""
import glob
import os

import pytest
from oracles import ORACLES
from example_runs import ROOT, assert_matches_oracle, example_params, example_path

from segflow.jobs.loader import run_job

RUNS = [("threads", 1), ("threads", 2), ("threads", 4), ("processes", 2), ("processes", 4)]


def test_every_example_has_an_oracle():
    examples = {os.path.basename(p)[:-3] for p in glob.glob(os.path.join(ROOT, "examples", "*.py"))}
    assert examples - {"wordcount"} == set(ORACLES)


@pytest.mark.parametrize("runtime,parallelism", RUNS, ids=[f"{r}-{p}" for r, p in RUNS])
@pytest.mark.parametrize("example", sorted(ORACLES))
def test_example_matches_its_oracle(example, runtime, parallelism, tmp_path, text):
    params = example_params(example, tmp_path / "out", text)
    run_job(example_path(example), params, parallelism, runtime=runtime)
    assert_matches_oracle(example, params)
