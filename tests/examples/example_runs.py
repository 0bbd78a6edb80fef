"""Running an example as its tests do: the smaller parameters that keep runs short, a
text input with words of very different frequencies, and the comparison of its output
with its oracle (record for record, floats within a tolerance)."""
import collections
import glob
import os
import random

import pytest
from oracles import ORACLES

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TEXT_INPUT = ("wordcount_assoc", "windowed_wordcount")
SMALLER = {"nexmark_q0": {"events": "20000"}, "nexmark_q1": {"events": "20000"}, "nexmark_q2": {"events": "20000"},
           "nexmark_q3": {"events": "30000"}, "nexmark_q4": {"events": "20000"}, "nexmark_q5": {"events": "20000"},
           "nexmark_q6": {"events": "20000"}, "nexmark_q7": {"events": "20000"}, "nexmark_q8": {"events": "30000"},
           "rolling_top_words": {"events": "8000"}, "kmeans": {"points": "2000"},
           "sensor_averages": {"readings": "16000"}}
FLOATING = {"kmeans": 1e-6, "pagerank": 1e-9}     # sums in another order differ in the last digits


def example_path(example: str) -> str:
    return os.path.join(ROOT, "examples", f"{example}.py")


def write_text_input(path) -> str:
    """Words with very different frequencies, so count windows close 0 to many times."""
    rng = random.Random(5)
    vocabulary = [f"w{i}" for i in range(60)] + ["Cafe", "CAFE", "naïve"]
    with open(path, "w", encoding="utf-8") as f:
        for _ in range(1500):
            f.write(" ".join(rng.choice(vocabulary[:rng.randint(1, len(vocabulary))])
                             for _ in range(rng.randint(0, 12))) + "\n")
    return str(path)


def example_params(example: str, output, text: str) -> dict:
    params = {"output": str(output), **SMALLER.get(example, {})}
    if example in TEXT_INPUT:
        params["input"] = text
    return params


def read_lines(directory):
    lines = []
    for part in sorted(glob.glob(os.path.join(directory, "part-*"))):
        with open(part, encoding="utf-8") as f:
            lines += f.read().splitlines()
    return lines


def assert_matches_oracle(example: str, params: dict) -> None:
    """The example's output (``params["output"]``) is its oracle's, record for record."""
    got = read_lines(params["output"])
    want = ORACLES[example](params)
    assert want, "the oracle computed nothing: the test would prove nothing"
    if example not in FLOATING:
        assert collections.Counter(got) == collections.Counter(want)
        return

    def rows(lines):
        return [[float(c) for c in row] for row in sorted(line.split("\t") for line in lines)]
    assert len(got) == len(want)
    for g, w in zip(rows(got), rows(want)):
        assert g == pytest.approx(w, abs=FLOATING[example]), (g, w)
