"""Every example job against its plain-Python oracle, record for record: in one process
at parallelism 1, 2 and 4, and on worker processes at 2 and 4."""
import collections
import glob
import os
import random

import pytest
from oracles import ORACLES

from segflow.jobs.loader import run_job

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TEXT_INPUT = ("wordcount_assoc", "windowed_wordcount")
SMALLER = {"nexmark_q1": {"events": "20000"}, "nexmark_q3": {"events": "30000"},
           "nexmark_q5": {"events": "20000"}, "nexmark_q8": {"events": "30000"},
           "rolling_top_words": {"events": "8000"}, "kmeans": {"points": "2000"}}
FLOATING = {"kmeans": 1e-6, "pagerank": 1e-9}     # sums in another order differ in the last digits
RUNS = [("threads", 1), ("threads", 2), ("threads", 4), ("processes", 2), ("processes", 4)]


def test_every_example_has_an_oracle():
    examples = {os.path.basename(p)[:-3] for p in glob.glob(os.path.join(ROOT, "examples", "*.py"))}
    assert examples - {"wordcount"} == set(ORACLES)


@pytest.fixture(scope="module")
def text(tmp_path_factory):
    """Words with very different frequencies, so count windows close 0 to many times."""
    rng = random.Random(5)
    vocabulary = [f"w{i}" for i in range(60)] + ["Cafe", "CAFE", "naïve"]
    path = tmp_path_factory.mktemp("input") / "text.txt"
    with open(path, "w", encoding="utf-8") as f:
        for _ in range(1500):
            f.write(" ".join(rng.choice(vocabulary[:rng.randint(1, len(vocabulary))])
                             for _ in range(rng.randint(0, 12))) + "\n")
    return str(path)


def read_lines(directory):
    lines = []
    for part in sorted(glob.glob(os.path.join(directory, "part-*"))):
        with open(part, encoding="utf-8") as f:
            lines += f.read().splitlines()
    return lines


def same_with_tolerance(got, want, tolerance):
    def split(lines):
        rows = sorted(line.split("\t") for line in lines)
        return [[float(c) for c in row] for row in rows]
    assert len(got) == len(want)
    for g, w in zip(split(got), split(want)):
        assert g == pytest.approx(w, abs=tolerance), (g, w)


@pytest.mark.parametrize("runtime,parallelism", RUNS, ids=[f"{r}-{p}" for r, p in RUNS])
@pytest.mark.parametrize("example", sorted(ORACLES))
def test_example_matches_its_oracle(example, runtime, parallelism, tmp_path, text):
    params = {"output": str(tmp_path / "out"), **SMALLER.get(example, {})}
    if example in TEXT_INPUT:
        params["input"] = text
    run_job(os.path.join(ROOT, "examples", f"{example}.py"), params, parallelism, runtime=runtime)
    got = read_lines(params["output"])
    want = ORACLES[example](params)
    assert want, "the oracle computed nothing: the test would prove nothing"
    if example in FLOATING:
        same_with_tolerance(got, want, FLOATING[example])
    else:
        assert collections.Counter(got) == collections.Counter(want)
