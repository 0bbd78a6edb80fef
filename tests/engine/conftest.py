"""Running small pipelines in process for the engine's tests."""
import collections

import pytest

import segflow

PARALLELISMS = [1, 3]


def run(build, parallelism=1, **config):
    """``build(env)`` returns a stream (or a list of streams); their collected records."""
    env = segflow.StreamEnvironment(parallelism=parallelism, **config)
    built = build(env)
    streams = built if isinstance(built, list) else [built]
    outputs = [s.collect() for s in streams]
    env.execute()
    results = [o.get() for o in outputs]
    return results if isinstance(built, list) else results[0]


def bag(items):
    return collections.Counter(items)


@pytest.fixture(params=PARALLELISMS, ids=lambda p: f"p{p}")
def parallelism(request):
    return request.param
