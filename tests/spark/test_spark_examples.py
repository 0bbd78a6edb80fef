"""Every example job on both engines with bounded input: the segflow engine in process
and Spark write the same lines. An example listed in REFUSED cannot run on Spark and must
be refused with a message saying why; no example is skipped."""
from __future__ import annotations

import collections
import glob
import os
import random

import pytest

from segflow.jobs.loader import JobModule, load_job, missing_parameters, run_job
from segflow.spark import UnsupportedOnSpark
from segflow.spark.runner import run_job_on_spark

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = sorted(glob.glob(os.path.join(ROOT, "examples", "*.py")))
PARALLELISM = 2
# Smaller inputs and fewer rounds than the defaults: each loop round is a Spark job of a
# few stages (about a second on these machines).
SMALLER = {"nexmark_q1": {"events": "20000"}, "nexmark_q3": {"events": "30000"},
           "nexmark_q5": {"events": "20000"}, "nexmark_q8": {"events": "30000"},
           "rolling_top_words": {"events": "8000"}, "kmeans": {"points": "2000", "iterations": "6"},
           "pagerank": {"nodes": "120", "iterations": "3"},
           "connected_components": {"nodes": "60", "edges": "200"},
           "transitive_closure": {"nodes": "14", "edges": "16"}}
FLOATING = {"kmeans": 1e-6, "pagerank": 1e-9}     # sums in another order differ in the last digits
REFUSED: dict[str, str] = {}                        # example -> what the refusal must say


@pytest.fixture(scope="module")
def text(tmp_path_factory) -> str:
    rng = random.Random(11)
    vocabulary = [f"w{i}" for i in range(50)] + ["Cafe", "CAFE", "naïve"]
    path = tmp_path_factory.mktemp("input") / "text.txt"
    path.write_text("\n".join(" ".join(rng.choice(vocabulary[:rng.randint(1, len(vocabulary))])
                                       for _ in range(rng.randint(0, 12))) for _ in range(1200)), encoding="utf-8")
    return str(path)


def read_lines(directory: str) -> list[str]:
    lines: list[str] = []
    for part in sorted(glob.glob(os.path.join(directory, "part-*"))):
        with open(part, encoding="utf-8") as f:
            lines += f.read().splitlines()
    return lines


def parameters(path: str, name: str, output: str, text: str) -> dict[str, str]:
    params = {"output": output, **SMALLER.get(name, {})}
    needed = missing_parameters(load_job(JobModule(path)), JobModule(path, params=params))
    if "input" in needed:
        params["input"] = text
    assert not set(needed) - {"input"}, f"{name} needs parameters this test does not know: {needed}"
    return params


def assert_same_lines(got: list[str], want: list[str], tolerance: float | None) -> None:
    if tolerance is None:
        assert collections.Counter(got) == collections.Counter(want)
        return
    rows = [sorted(line.split("\t") for line in lines) for lines in (got, want)]
    assert len(rows[0]) == len(rows[1])
    for g, w in zip(*rows):
        assert [float(c) for c in g] == pytest.approx([float(c) for c in w], abs=tolerance), (g, w)


@pytest.mark.parametrize("path", EXAMPLES, ids=[os.path.basename(p)[:-3] for p in EXAMPLES])
def test_example_on_both_engines(path, tmp_path, text, spark):
    name = os.path.basename(path)[:-3]
    engine_out, spark_out = str(tmp_path / "segflow"), str(tmp_path / "spark")
    if name in REFUSED:
        with pytest.raises(UnsupportedOnSpark, match=REFUSED[name]):
            run_job_on_spark(path, parameters(path, name, spark_out, text), PARALLELISM)
        return
    run_job(path, parameters(path, name, engine_out, text), PARALLELISM)
    run_job_on_spark(path, parameters(path, name, spark_out, text), PARALLELISM)
    want = read_lines(engine_out)
    assert want, f"{name} wrote nothing: the comparison would prove nothing"
    assert_same_lines(read_lines(spark_out), want, FLOATING.get(name))
    assert sorted(os.listdir(spark_out)) == sorted(os.listdir(engine_out)), "part files differ"
