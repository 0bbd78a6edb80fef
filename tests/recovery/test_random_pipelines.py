"""Pipelines nobody wrote by hand survive kills exactly once: each drawn pipeline
(jobs/random_pipeline.py) runs once without failures, in-process, and once on two worker
processes while three random workers are SIGKILLed; every sink's output must be the same
multiset in both runs. The seeds are chosen so that every shape runs, each with an ending
no other case has, under the five checkpoint protocols in turn."""
import collections
import os
import sys

import pytest

from recovery.jobs.random_pipeline import SHAPES, recipe
from segflow.jobs import run_job
from test_kills import JOBS, PROTOCOLS, read_lines, run_with_kills

JOB = os.path.join(JOBS, "random_pipeline.py")


def chosen_seeds() -> list[int]:
    """Per shape, the first seed that draws it with an ending no earlier shape has (a
    diamond's with its side sink)."""
    chosen: dict[str, int] = {}
    endings: set[str] = set()
    seed = 0
    while len(chosen) < len(SHAPES):
        made = recipe(seed)
        if made.shape not in chosen and made.ending not in endings and (made.side or made.shape != "diamond"):
            chosen[made.shape] = seed
            endings.add(made.ending)
        seed += 1
    return [chosen[shape] for shape in SHAPES]


SEEDS = chosen_seeds()


def outputs(directory) -> dict[str, collections.Counter]:
    return {sink: collections.Counter(read_lines(os.path.join(directory, sink))) for sink in os.listdir(directory)}


def uninterrupted(seed: int, output) -> dict[str, collections.Counter]:
    """The drawn pipeline's output without failures (its sources unpaced)."""
    for name in [name for name, module in sys.modules.items() if getattr(module, "__file__", None) == JOB]:
        del sys.modules[name]       # the job file as it is now, as the worker processes read it
    run_job(JOB, {"output": str(output), "seed": str(seed), "rate": "1000000"}, 2, runtime="threads")
    return outputs(output)


def test_the_chosen_seeds_cover_every_shape_with_distinct_endings():
    made = [recipe(seed) for seed in SEEDS]
    assert [m.shape for m in made] == list(SHAPES)
    assert len({m.ending for m in made}) == len(SHAPES)


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS, ids=lambda seed: f"{recipe(seed).shape}-{recipe(seed).ending}")
def test_a_random_pipeline_writes_under_kills_what_it_writes_without_them(seed, tmp_path):
    want = uninterrupted(seed, tmp_path / "want")
    assert want and all(want.values()), f"seed {seed} wrote nothing: the comparison would prove nothing"
    protocol = PROTOCOLS[SEEDS.index(seed) % len(PROTOCOLS)]
    run_with_kills("random_pipeline.py", {"output": tmp_path / "got", "seed": seed}, f"file://{tmp_path}/state",
                   protocol, seed=seed, interval=0.3, timeout=120)
    got = outputs(tmp_path / "got")
    for sink in want:
        missing, extra = want[sink] - got.get(sink, collections.Counter()), got.get(sink, collections.Counter()) - want[sink]
        assert not missing and not extra, (f"{recipe(seed)} under {protocol}, sink {sink}: "
                                           f"missing {list(missing.items())[:5]}, extra {list(extra.items())[:5]}")
    assert set(got) == set(want)
