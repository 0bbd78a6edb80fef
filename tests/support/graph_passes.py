"""Checking a pass over a job graph from outside: what every sink receives must not change."""
import collections
from typing import Callable

import segflow
from segflow.plan.graph import JobGraph
from segflow.runtime.local import LocalRuntime


def built(pipeline: Callable, parallelism: int, *passes: Callable[[JobGraph], None]):
    """``pipeline(env)`` collected, with ``passes`` applied to its graph: (env, output)."""
    env = segflow.StreamEnvironment(parallelism=parallelism)
    output = pipeline(env).collect()
    for apply in passes:
        apply(env.graph)
    return env, output


def collected(graph: JobGraph, output, parallelism: int) -> collections.Counter:
    result = LocalRuntime(parallelism).execute(graph)
    return collections.Counter(map(repr, result.results.get(output.sink_id, [])))


def blocks_removed(graph_pass: Callable[[JobGraph], None], pipeline: Callable, parallelism: int,
                   *before: Callable[[JobGraph], None]) -> int:
    """How many blocks ``graph_pass`` takes out of ``pipeline``'s graph (after the passes
    ``before``), checking that the ids stay dense and every sink gets the same records."""
    env, output = built(pipeline, parallelism, *before)
    unchanged = collected(env.graph, output, parallelism)
    env, output = built(pipeline, parallelism, *before)
    blocks = len(env.graph.blocks)
    graph_pass(env.graph)
    graph = env.graph
    assert [b.id for b in graph.blocks] == list(range(len(graph.blocks)))
    assert all(0 <= e.src < len(graph.blocks) and 0 <= e.dst < len(graph.blocks) for e in graph.edges)
    assert unchanged and collected(graph, output, parallelism) == unchanged
    return blocks - len(graph.blocks)
