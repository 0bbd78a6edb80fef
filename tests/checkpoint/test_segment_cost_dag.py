"""The cost model per path, for topologies that split and merge: on a chain it is chapter
4's own model, figure for figure; on a DAG each combination rule is checked against what
the paths give one by one, worked out here without the module's own helpers."""
import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from segflow.checkpoint import segment_cost as chain
from segflow.checkpoint import segment_cost_dag as dag_model
from segflow.checkpoint.segment_choice import choose, evaluate
from segflow.checkpoint.segment_cost import Delays, Pipeline, Prices, UnstableQueue
from segflow.checkpoint.segment_cost_dag import Dag, from_pipeline, path_pipeline, paths
from segflow.errors import SegflowError

DELAYS = Delays(edge=0.001, transmit=0.0005, read=0.002, write=0.003, normal=0.01, barrier=0.05, ack=0.004,
                recover_response=0.5, recover_misc=0.25)
SIZES = dict(tuple_bytes=100, barrier_bytes=10, checkpoint_bytes=1000, ack_bytes=8)


@st.composite
def pipelines(draw):
    nodes = draw(st.integers(2, 8))
    inner = draw(st.sets(st.integers(2, nodes - 1))) if nodes > 2 else set()
    return Pipeline(service=tuple(draw(st.lists(st.floats(1e-4, 5e-3), min_size=nodes, max_size=nodes))),
                    ratios=tuple(draw(st.lists(st.floats(0.5, 1.5), min_size=nodes - 1, max_size=nodes - 1))),
                    connectors=frozenset({1, nodes} | inner), block=draw(st.floats(2.5, 200)),
                    rate=draw(st.floats(5, 40)), **SIZES)


@settings(max_examples=200, deadline=None)
@given(pipelines())
def test_on_a_chain_every_figure_is_chapter_4s(p):
    d = from_pipeline(p)
    assert paths(d) == [tuple(range(1, p.nodes + 1))]
    for dag_f, chain_f in [(dag_model.recovery_delay, chain.recovery_delay),
                           (dag_model.overhead_time, chain.overhead_time),
                           (dag_model.overhead_storage, chain.overhead_storage),
                           (dag_model.money_per_second, chain.money_per_second)]:
        assert dag_f(d, DELAYS) == pytest.approx(chain_f(p, DELAYS), rel=1e-9)
    assert dag_model.overhead_communication(d) == pytest.approx(chain.overhead_communication(p), rel=1e-9)
    for c in sorted(p.connectors - {p.nodes}):
        assert dag_model.pending_window(d, DELAYS, c) == pytest.approx(chain.pending_window(p, DELAYS, c), rel=1e-9)
        assert dag_model.versioned_pending_window(d, DELAYS, c) == \
            pytest.approx(chain.versioned_pending_window(p, DELAYS, c), rel=1e-9)


def split(connectors=(1, 3, 4), long_branch=4):
    """1 -> 2, then 2 feeds a short branch 2 -> 3 and a long one 2 -> 5 -> ... -> 4."""
    long = list(range(5, 5 + long_branch - 1))
    hops = [(1, 2), (2, 3), (2, long[0])] + list(zip(long, long[1:])) + [(long[-1], 4)]
    blocks = {1, 2, 3, 4, *long}
    return Dag(service={b: 1 / 80 for b in blocks}, flows={h: 24.0 for h in hops}, connectors=frozenset(connectors),
               block=25, rate=24, **SIZES)


def test_a_split_recovers_when_its_slowest_path_has():
    d = split()
    assert len(paths(d)) == 2
    each = [chain.recovery_delay(path_pipeline(d, p), DELAYS) for p in paths(d)]
    assert dag_model.recovery_delay(d, DELAYS) == max(each) and each[0] != each[1]
    on_long = dataclasses.replace(d, connectors=d.connectors | {6})
    assert dag_model.recovery_delay(on_long, DELAYS) < dag_model.recovery_delay(d, DELAYS)


def test_shared_blocks_and_channels_cost_once():
    d = split(long_branch=2)             # blocks 1, 2, 3, 4, 5; channels 1>2, 2>3, 2>5, 5>4
    versions = 1 / ((25 - 1) / 24)
    factor = 25 / 24
    writes = factor * DELAYS.write * (24 + 24 + 24)          # what connectors 1, 3 (sink), 4 (sink) send or emit
    by_hand = versions * DELAYS.barrier * 5 + versions * DELAYS.ack * 2 + writes
    assert dag_model.overhead_time(d, DELAYS) == pytest.approx(by_hand)
    per_path = sum(chain.overhead_time(path_pipeline(d, p), DELAYS) for p in paths(d))
    assert dag_model.overhead_time(d, DELAYS) < per_path           # summing paths counts 1 and 1>2 twice
    network = versions * (10 * 4 + 1000 * 5) + versions * 8 * 2 + factor * 100 * 72
    assert dag_model.overhead_communication(d) == pytest.approx(network)


def test_a_splitting_connector_keeps_each_channel_for_its_slowest_path():
    d = split(connectors=(1, 2, 3, 4))
    short, long = sorted(paths(d), key=len)
    by_channel = [chain.pending_window(path_pipeline(d, p), DELAYS, 2) for p in (short, long)]
    assert dag_model.pending_window(d, DELAYS, 2) == pytest.approx(sum(by_channel))
    assert by_channel[0] < by_channel[1]


def merge(left_rate=30.0, right_rate=30.0, service=1 / 80):
    """Sources 1 and 2 both feed 3, which feeds the sink 4."""
    return Dag(service={1: 1e-4, 2: 1e-4, 3: service, 4: 1e-4},
               flows={(1, 3): left_rate, (2, 3): right_rate, (3, 4): left_rate + right_rate},
               connectors=frozenset({1, 2, 4}), block=61, rate=left_rate + right_rate, **SIZES)


def test_where_paths_merge_the_block_serves_both():
    d = merge()
    left = path_pipeline(d, (1, 3, 4))
    assert chain.response_time(left, 2) == pytest.approx(1 / (80 - 60 * 61 / 60))
    alone = dataclasses.replace(left, arrivals=())
    assert chain.response_time(alone, 2) < chain.response_time(left, 2)     # one path alone would miss the load
    with pytest.raises(UnstableQueue, match="node 2 receives"):
        dag_model.pending_window(merge(left_rate=45, right_rate=45), DELAYS, 1)
    # One version a second; 4 blocks take barriers; only the sink acknowledges (both sources
    # are connectors that nothing feeds); connectors write what they send or emit.
    by_hand = DELAYS.barrier * 4 + DELAYS.ack * 1 + 61 / 60 * DELAYS.write * (30 + 30 + 60)
    assert dag_model.overhead_time(d, DELAYS) == pytest.approx(by_hand)


def test_a_bad_topology_is_refused_with_what_to_do():
    with pytest.raises(SegflowError, match="carried no tuple"):
        dataclasses.replace(merge(), flows={(1, 3): 0.0, (2, 3): 30.0, (3, 4): 30.0})
    with pytest.raises(SegflowError, match=r"include every source and sink \(missing \[2\]\)"):
        dataclasses.replace(merge(), connectors=frozenset({1, 4}))


def test_the_choice_on_a_split_buys_a_connector_where_the_slow_path_needs_it():
    d = split(connectors=(1, 3, 4), long_branch=6)
    loose = evaluate(d, DELAYS, Prices(), (1, 3, 4), 5.0, 1e6).recovery_delay
    target = loose - 0.01
    choice = choose(d, DELAYS, Prices(), max_recovery_delay=target, intervals=(5.0,))
    assert choice.meets_target and {1, 3, 4} < set(choice.connectors)
    long_branch = {n for p in paths(d) for n in p if len(p) > 3} - {1, 2, 4}
    assert set(choice.connectors) & long_branch
