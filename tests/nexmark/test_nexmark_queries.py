"""Nexmark q0-q8 (the shipped examples) against the DuckDB oracle, record for record: in
one process at parallelism 1, 2 and 4, and on worker processes at 2. (Under worker kills:
tests/examples/test_example_kills.py, which covers every registered example.)"""
import collections
import glob
import os

import pytest

from nexmark.oracle import QUERIES, nexmark_lines
from segflow.jobs.loader import run_job

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EVENTS = 20000
RUNS = [("threads", 1), ("threads", 2), ("threads", 4), ("processes", 2)]


def written(directory):
    return collections.Counter(line for part in glob.glob(os.path.join(directory, "part-*"))
                               for line in open(part, encoding="utf-8").read().splitlines())


@pytest.mark.parametrize("runtime,parallelism", RUNS, ids=[f"{r}-{p}" for r, p in RUNS])
@pytest.mark.parametrize("query", sorted(QUERIES))
def test_query_matches_the_sql_oracle(query, runtime, parallelism, tmp_path):
    output = str(tmp_path / "out")
    run_job(os.path.join(ROOT, "examples", f"nexmark_{query}.py"), {"output": output, "events": str(EVENTS)},
            parallelism, runtime=runtime)
    want = collections.Counter(nexmark_lines(query, EVENTS))
    assert want, "the oracle selected nothing: the comparison would prove nothing"
    assert written(output) == want


def test_a_wrong_query_is_caught():
    """The comparison can fail: q1 without the currency conversion differs from the oracle."""
    assert collections.Counter(nexmark_lines("q0", 2000)) != collections.Counter(nexmark_lines("q1", 2000))
