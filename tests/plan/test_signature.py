"""A pipeline's layout (what a snapshot's state is laid out by) and how two differ: pure."""
import json

import pytest

import segflow
from segflow import EventTimeWindow
from segflow.plan.compact import compact
from segflow.plan.signature import layout, layout_difference, operator_kind


def graph_of(build):
    env = segflow.StreamEnvironment(parallelism=2)
    build(env)
    return env.graph


def counts(env, size=100, extra=lambda s: s, sink="/tmp/a"):
    stamped = env.generate(lambda i: ("k", i), count=10).add_timestamps(lambda e: e[1], lambda e, ts: None)
    windowed = stamped.group_by(lambda e: e[0]).window(EventTimeWindow.tumbling(size)).count().unkey()
    extra(windowed).write_text(sink)


@pytest.mark.parametrize("name, kind", [
    pytest.param("event_time_window(100, 100).count", "event_time_window.count", id="a window's sizes"),
    pytest.param("add_timestamps(build.<lambda>)", "add_timestamps", id="a function"),
    pytest.param("map(f(g(x)))", "map", id="nested calls"),
    pytest.param("group_by_count pre-aggregate", "group_by_count pre-aggregate", id="a pre-aggregate"),
    pytest.param("generate", "generate", id="no arguments"),
])
def test_an_operators_kind_leaves_out_its_arguments(name, kind):
    assert operator_kind(name) == kind


def test_a_layout_is_json_and_the_same_for_another_window_size_function_or_path():
    stored = json.loads(json.dumps(layout(graph_of(counts))))
    assert stored["blocks"][-1] == ["event_time_window.count", "write_text"]
    again = layout(graph_of(lambda env: counts(env, size=200, sink="/tmp/b")))
    assert layout_difference(stored, again) == ""


def test_an_operator_added_to_a_chain_is_named():
    stored = layout(graph_of(counts))
    now = layout(graph_of(lambda env: counts(env, extra=lambda s: s.map(str))))
    assert layout_difference(stored, now) == (
        "its block 2 chained event_time_window.count -> write_text; this pipeline's block 2 chains "
        "event_time_window.count -> map -> write_text")


def test_another_number_of_blocks_or_other_edges_differ():
    stored = layout(graph_of(counts))
    shuffled = layout(graph_of(lambda env: counts(env, extra=lambda s: s.shuffle())))
    assert layout_difference(stored, shuffled) == f"it had 3 blocks, this pipeline has {len(shuffled['blocks'])}"
    rewired = dict(stored, edges=[[0, 2, 0, 0, "hash"]])
    assert layout_difference(rewired, stored) == \
        "its blocks were connected differently (shuffles, joins or splits moved)"


def compacted(build):
    graph = graph_of(build)
    compact(graph)
    return graph


def test_a_checkpoint_taken_before_sources_chained_their_next_block_is_told_apart():
    """An earlier segflow kept the operators after a source in a block of their own: the
    same operators, one block more after each source."""
    now = layout(compacted(counts))
    (source, rest) = now["blocks"][0], now["blocks"][1:]
    edges = [[src + 1, dst + 1, *more] for src, dst, *more in now["edges"]] + [[0, 1, 0, 0, "forward"]]
    earlier = {"blocks": [source[:1], source[1:], *rest], "edges": edges}
    assert layout_difference(earlier, now) == (
        f"it had {len(now['blocks']) + 1} blocks, this pipeline has {len(now['blocks'])}; the same operators with "
        "each source's block apart from the block after it: an earlier segflow took it (this one runs them in one "
        "block), and only such a segflow restores it")
    regrouped = {"blocks": [source, rest[0][:1], rest[0][1:], *rest[1:]], "edges": edges}
    assert layout_difference(regrouped, now) == f"it had {len(now['blocks']) + 1} blocks, this pipeline has " \
        f"{len(now['blocks'])}"
