"""The operator families on worker processes (gRPC between them) at N = 2 and 4: the same
results as in one process, checked against the same plain-Python expectations."""
import sys

import cloudpickle
import pytest
from support.pipelines import bag, groups, time_windows
from support.pipelines import count_windows as count_model

from segflow import CountWindow, EventTimeWindow
from segflow.jobs.loader import run_pipeline

PAIRS = [(f"k{i % 5}", i) for i in range(300)]
cloudpickle.register_pickle_by_value(sys.modules[__name__])    # the workers cannot import this test module


def on_workers(build, parallelism):
    _, output = run_pipeline(build, parallelism, runtime="processes")
    return output.get()


def keyed_sums(env):
    return env.from_parallel(lambda i, n: PAIRS[i::n]).group_by_sum(lambda p: p[0], lambda p: p[1]).collect()


def windows(env):
    return (env.from_iterable(PAIRS).add_timestamps(lambda p: p[1], lambda p, ts: ts if ts % 20 == 0 else None)
            .group_by(lambda p: p[0]).window(EventTimeWindow.sliding(40, 20)).count().collect())


def count_windows(env):
    return env.from_iterable(PAIRS).group_by(lambda p: p[0]).window(CountWindow.tumbling(7)).count().collect()


def joins(env):
    left = env.from_iterable([(i % 11, i) for i in range(60)]).shuffle()
    right = env.from_iterable([(i % 13, -i) for i in range(40)]).shuffle()
    return left.left_join(right, lambda lft: lft[0], lambda r: r[0]).collect()


def iteration(env):
    state, _ = env.from_iterable(range(20)).shuffle().iterate(
        3, 0, lambda s, st: s.map(lambda x: x + 1), local_fold=lambda d, x: d + x,
        global_fold=lambda s, d: s + d, delta_init=0)
    return state.collect()


def expected(name):
    by_key = groups(PAIRS)
    if name == "keyed_sums":
        return bag((k, sum(v)) for k, v in by_key.items())
    if name == "windows":
        return bag((k, len(v)) for (k, _), v in time_windows([(k, (t, t)) for k, t in PAIRS], 40, 20).items())
    if name == "count_windows":
        return bag((k, len(w)) for k, v in by_key.items() for w in count_model(v, 7, 7))
    if name == "joins":
        left, right = [(i % 11, i) for i in range(60)], [(i % 13, -i) for i in range(40)]
        return bag((lft[0], (lft, r)) for lft in left for r in ([r for r in right if r[0] == lft[0]] or [None]))
    return bag([sum(x + k for x in range(20) for k in (1, 2, 3))])


@pytest.mark.parametrize("parallelism", [2, 4])
@pytest.mark.parametrize("build", [keyed_sums, windows, count_windows, joins, iteration],
                         ids=lambda b: b.__name__)
def test_operator_families_on_workers(build, parallelism):
    assert bag(on_workers(build, parallelism)) == expected(build.__name__)
