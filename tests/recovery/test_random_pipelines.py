"""Pipelines nobody wrote by hand survive failures exactly once: each drawn pipeline
(jobs/random_pipeline.py) runs once without failures, in-process, and once with failures;
every sink's output must be the same multiset in both runs.

Kills: on two worker processes while three random workers are SIGKILLed; the seeds are
chosen so that every shape runs, each with an ending no other case has, under the five
checkpoint protocols in turn. Rescales: every process killed once checkpoints are stored,
then restored at another parallelism, for the shapes whose state moves between replicas
(a pre-aggregate behind a shuffle, joins). Whole-job restarts of the uncoordinated
protocols: every process killed twice once the store holds a stable line, each time
restarted from it."""
import collections
import os
import random
import subprocess
import sys
import time

import pytest

from recovery.jobs.random_pipeline import SHAPES, TIMED, recipe
from segflow.checkpoint.catalog import Catalog
from segflow.checkpoint.local_records import decode_line
from segflow.jobs import run_job
from segflow.state import open_backend
from support.processes import ROOT, kill_tree, wait_for
from test_kills import JOBS, PROTOCOLS, read_lines, run_args, run_with_kills

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


def uninterrupted(seed: int, output, events: int = 6000) -> dict[str, collections.Counter]:
    """The drawn pipeline's output without failures (its sources unpaced)."""
    for name in [name for name, module in sys.modules.items() if getattr(module, "__file__", None) == JOB]:
        del sys.modules[name]       # the job file as it is now, as the worker processes read it
    run_job(JOB, {"output": str(output), "seed": str(seed), "events": str(events), "rate": "1000000"}, 2,
            runtime="threads")
    return outputs(output)


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS, ids=lambda seed: f"{recipe(seed).shape}-{recipe(seed).ending}")
def test_a_random_pipeline_writes_under_kills_what_it_writes_without_them(seed, tmp_path):
    want = uninterrupted(seed, tmp_path / "want")
    assert want and all(want.values()), f"seed {seed} wrote nothing: the comparison would prove nothing"
    protocol = PROTOCOLS[SEEDS.index(seed) % len(PROTOCOLS)]
    run_with_kills("random_pipeline.py", {"output": tmp_path / "got", "seed": seed}, f"file://{tmp_path}/state",
                   protocol, seed=seed, interval=0.3, timeout=120)
    got = outputs(tmp_path / "got")
    for sink, wanted in want.items():
        written = got.get(sink, collections.Counter())
        missing, extra = wanted - written, written - wanted
        assert not missing and not extra, (f"{recipe(seed)} under {protocol}, sink {sink}: "
                                           f"missing {list(missing.items())[:5]}, extra {list(extra.items())[:5]}")
    assert set(got) == set(want)


def first_seed(wanted) -> int:
    return next(seed for seed in range(10_000) if wanted(recipe(seed)))


def stopped_when(args: list[str], ready, what: str) -> None:
    """Start ``args``, wait until ``ready()``, then kill every process of the run."""
    run = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           start_new_session=True)
    try:
        reached = wait_for(ready, timeout=60)
        assert run.poll() is None, f"the job ended before {what}: make it longer"
    finally:
        kill_tree(run)
    assert reached, f"no {what} in 60 s: {run.communicate()[1][-2000:]}"


RESCALES = [  # (seed, parallelism before, after)
    (first_seed(lambda m: m.shape == "reshuffle" and m.ending in ("fold", "sum", "reduce")), 2, 3),
    (first_seed(lambda m: m.shape == "join" and m.ending == "count"), 3, 2),
    (first_seed(lambda m: m.shape == "interval" and m.ending in ("sliding", "session", "tumbling")), 2, 3),
]


@pytest.mark.slow
@pytest.mark.parametrize("seed,before,after", RESCALES, ids=lambda v: str(v))
def test_a_random_pipeline_restored_at_another_parallelism_writes_what_it_writes_without_failures(
        seed, before, after, tmp_path):
    want = uninterrupted(seed, tmp_path / "want")
    assert want and all(want.values()), f"seed {seed} wrote nothing: the comparison would prove nothing"
    state = f"file://{tmp_path}/state"
    params = {"output": tmp_path / "got", "seed": seed}
    stopped_when(run_args("random_pipeline.py", params, state, "aligned", before, 0.3),
                 lambda: len(Catalog(open_backend(state), "random_pipeline").complete_ids()) >= 3, "3 checkpoints")
    restore = run_args("random_pipeline.py", params, state, "aligned", after, 0.3, ["--restore", "latest"])
    rerun = subprocess.run(restore, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert "restored with rescaling" in rerun.stderr or after < before
    assert outputs(tmp_path / "got") == want, f"{recipe(seed)} restored from parallelism {before} at {after}"


def stable_line(state: str) -> dict:
    """The stable line the store holds: replica -> local checkpoint index."""
    data = Catalog(open_backend(state), "random_pipeline").read_stable_line()
    return {} if data is None else {r.process: r.index for r in decode_line(data)[0]}


WHOLE_JOB = [  # (seed, protocol)
    (first_seed(lambda m: m.shape == "join" and m.ending in ("fold", "largest")), "uncoordinated"),
    (first_seed(lambda m: m.shape in ("interval", "union") and m.ending in TIMED), "cic"),
]


@pytest.mark.slow
@pytest.mark.parametrize("seed,protocol", WHOLE_JOB, ids=lambda v: str(v))
def test_the_uncoordinated_protocols_restart_the_whole_job_from_its_stable_line(seed, protocol, tmp_path):
    want = uninterrupted(seed, tmp_path / "want", events=9000)
    assert want and all(want.values()), f"seed {seed} wrote nothing: the comparison would prove nothing"
    state = f"file://{tmp_path}/state"
    args = run_args("random_pipeline.py", {"output": tmp_path / "got", "seed": seed, "events": 9000, "rate": 600},
                    state, protocol, 2, 0.3)
    rng = random.Random(seed)
    for restart in ([], ["--restore", "latest"]):
        before = sum(stable_line(state).values())
        deadline = []

        def line_advanced_then_a_while():
            if not deadline and sum(stable_line(state).values()) > before + 4:
                deadline.append(time.monotonic() + rng.uniform(0, 0.8))
            return deadline and time.monotonic() > deadline[0]
        stopped_when(args + restart, line_advanced_then_a_while, "a stable line")
    final = subprocess.run(args + ["--restore", "latest"], cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert final.returncode == 0, final.stderr[-3000:]
    assert "restored recovery line" in final.stderr
    assert outputs(tmp_path / "got") == want, f"{recipe(seed)} under {protocol}, restarted twice"
