"""plan.compact runs once per graph: every process that builds a job must number its
blocks alike, whether it compacted in the job loader only or in env.execute as well."""
from segflow import StreamEnvironment
from segflow.plan.compact import compact
from segflow.settings import Config


def operators(graph) -> list[tuple[int, list[str]]]:
    return [(block.id, [op.name for op in block.operators]) for block in graph.blocks]


def test_a_second_compact_changes_nothing():
    """After one pass the source has absorbed the map's block, and the sink's block is its
    only successor: a second pass would chain that too and renumber the blocks."""
    env = StreamEnvironment(Config(parallelism=2))
    env.from_iterable(range(10)).map(lambda x: x).collect()
    compact(env.graph)
    once = operators(env.graph)
    compact(env.graph)
    assert operators(env.graph) == once
    assert len(once) == 2, once
