"""The cost model of Shen, Segment Backup (chapter 4), checked against values worked out
by hand from the thesis's equations (a 7-node all-pass pipeline, as in its experiment)."""
import dataclasses

import pytest

from segflow.checkpoint.segment_cost import (Delays, Pipeline, Prices, UnstableQueue, money_per_second,
                                             overhead_communication, overhead_storage, overhead_time,
                                             pending_window, queue_wait, recovery_delay, regional_recovery_delay,
                                             replayed_tuples, response_time, restore_lag, versioned_pending_window)
from segflow.errors import SegflowError

DELAYS = Delays(edge=0.001, transmit=0.0005, read=0.002, write=0.003, normal=0.01, barrier=0.05, ack=0.004,
                recover_response=0.5, recover_misc=0.25)


def pipeline(connectors=(1, 4, 7), service=1 / 80):
    # 24 normal tuples/s in blocks of 25 (one barrier): 25 tuples/s leave the spout.
    return Pipeline(service=(service,) * 7, ratios=(1.0,) * 6, connectors=frozenset(connectors), block=25,
                    rate=24, tuple_bytes=100, barrier_bytes=10, checkpoint_bytes=1000, ack_bytes=8)


def test_recovery_delay_shrinks_as_connectors_are_added():
    # 0.5 + 0.25 + (0.001 + 0.01) * 3 hops + 0.01 * 25 / 2 tuples
    assert recovery_delay(pipeline(), DELAYS) == pytest.approx(0.908)
    # plain ABS: the sink is 6 hops from the spout
    assert recovery_delay(pipeline((1, 7)), DELAYS) == pytest.approx(0.941)


def test_overheads_of_time_and_network():
    # one block a second: 7 barriers x 0.05 s, 2 acks x 0.004 s, 25 tuples x 3 connectors x 0.003 s
    assert overhead_time(pipeline(), DELAYS) == pytest.approx(0.583)
    # 6 barrier hops x 10 B + 7 checkpoints x 1000 B, 2 acks x 8 B, 25 tuples x 3 connectors x 100 B
    assert overhead_communication(pipeline()) == pytest.approx(14576)


def test_pending_windows_by_little_s_law():
    assert response_time(pipeline(), 3) == pytest.approx(1 / 55)        # M/M/1: 1 / (80 - 25)
    # 25 tuples/s x (3 hops x (0.001 + 1/55) + 0.004 ack)
    assert pending_window(pipeline(), DELAYS, 1) == pytest.approx(25 * (3 * (0.001 + 1 / 55) + 0.004))
    assert overhead_storage(pipeline(), DELAYS) == pytest.approx(100 * 2 * 25 * (3 * (0.001 + 1 / 55) + 0.004)
                                                                + 7000)


def test_a_versioned_window_waits_for_its_barrier_not_for_its_tuples():
    # W_q = 1/55 - 1/80 at every bolt; a barrier adds its own 0.05 s there, not 1/80
    assert queue_wait(pipeline(), 3) == pytest.approx(1 / 55 - 1 / 80)
    assert versioned_pending_window(pipeline(), DELAYS, 4) == pytest.approx(
        25 * (3 * (0.001 + 1 / 55 - 1 / 80 + 0.05) + 0.004))
    # with a barrier as cheap as nothing, a versioned window is smaller than 4.7's by the
    # bolts' service times: 25 tuples/s x 3 hops x 1/80 s
    free = dataclasses.replace(DELAYS, barrier=0.0)
    assert pending_window(pipeline(), free, 1) - versioned_pending_window(pipeline(), free, 1) == pytest.approx(
        25 * 3 / 80)


def test_money_weighs_time_network_and_storage_by_their_prices():
    unit = money_per_second(pipeline(), DELAYS, Prices(1, 1, 1))
    assert unit == pytest.approx(0.583 + 14576 + overhead_storage(pipeline(), DELAYS))
    assert 0 < money_per_second(pipeline(), DELAYS) < unit


def test_an_overloaded_node_is_named():
    with pytest.raises(UnstableQueue, match="node 2 receives 25.0 tuples/s but serves only 20.0/s"):
        pending_window(pipeline(service=1 / 20), DELAYS, 1)


@pytest.mark.parametrize("connectors,message", [((1, 4), "include the spout"), ((4, 7), "include the spout")])
def test_the_spout_and_sink_are_always_connectors(connectors, message):
    with pytest.raises(SegflowError, match=message):
        pipeline(connectors)


def test_a_connector_replays_half_a_block_of_its_input():
    # Node 3 doubles its input and node 4 keeps a quarter: connector 3 catches up on half an
    # input block of 25 tuples (l_2), connector 7 on half of 12.5 (l_6).
    p = Pipeline(service=(1 / 80,) * 7, ratios=(1.0, 2.0, 0.25, 1.0, 1.0, 1.0), connectors=frozenset({1, 3, 7}),
                 block=25, rate=24, tuple_bytes=100, barrier_bytes=10, checkpoint_bytes=1000, ack_bytes=8)
    assert recovery_delay(p, DELAYS) == pytest.approx(0.75 + max(0.011 * 2 + 0.01 * 25 / 2,
                                                                 0.011 * 4 + 0.01 * 12.5 / 2))


def test_restore_lag_is_half_an_interval_when_checkpoints_are_instant():
    assert restore_lag(0.5, 0.0) == pytest.approx(0.25)
    # completions every 0.5 + 0.2 s; the newest is 0.2 s old just after one, 0.9 s just before the next
    assert restore_lag(0.5, 0.2) == pytest.approx((0.2 + 0.9) / 2)
    with pytest.raises(SegflowError, match="interval must be > 0"):
        restore_lag(0.0, 0.1)


def test_a_slow_checkpoint_lengthens_the_replay():
    p = pipeline()
    assert replayed_tuples(p, DELAYS, 4) == pytest.approx(25 / 2)          # 4.2's half block
    slow = dataclasses.replace(DELAYS, checkpoint=0.2)
    interval = 24 / 24                                                      # (block - 1) / rate
    assert replayed_tuples(p, slow, 4) == pytest.approx(25 * (interval / 2 + 0.3) / interval)
    # every connector's catch-up replays 0.3 s more of the spout's output, at 0.01 s a tuple
    assert recovery_delay(p, slow) - recovery_delay(p, DELAYS) == pytest.approx(0.01 * 25 * 0.3)


def test_a_known_failure_moment_replays_what_came_since_its_cut():
    p = pipeline()
    known = dataclasses.replace(DELAYS, checkpoint=0.2, restored_age=0.1)
    assert replayed_tuples(p, known, 4) == pytest.approx(25 * 0.1)          # 0.1 s of one block a second
    assert recovery_delay(p, known) - recovery_delay(p, DELAYS) == pytest.approx(0.01 * 25 * (0.1 - 0.5))


def test_a_node_that_sends_from_its_processing_thread_pays_both_per_replayed_tuple():
    p = pipeline()
    serial = dataclasses.replace(DELAYS, serial_send=True)
    # 4.2 overlaps transmit (0.0005) and processing (0.01); in series each of the 12.5 replayed tuples costs both
    assert recovery_delay(p, serial) - recovery_delay(p, DELAYS) == pytest.approx(0.0005 * 25 / 2)


REGIONAL = dataclasses.replace(DELAYS, restored_age=1.0, serial_send=True)


def test_a_regional_recovery_replays_what_the_sink_saw_since_the_connector_s_cut_through_the_whole_chain():
    # connector 4 replays into nodes 5-7. Its cut came after the barrier's way to it (3 hops
    # of an edge, the queue ahead, t^b); the sink had not seen the tuples of the last 3 hops
    # of an edge and a sojourn; 24 tuples/s of the rest come again, each at the pace of the
    # slowest restarted node plus its send, after the first fills the chain.
    barrier_way = 3 * (0.001 + (1 / 55 - 1 / 80) + 0.05)
    tuple_way = 3 * (0.001 + 1 / 55)
    again = 24 * (1.0 - barrier_way - tuple_way)
    fill = 3 * (0.001 + 1 / 80)
    assert regional_recovery_delay(pipeline(), REGIONAL, 4) == pytest.approx(
        0.5 + 0.25 + fill + again * (0.0005 + 1 / 80))
    # a global rollback (the spout catching up): no barrier way, six nodes to fill
    assert regional_recovery_delay(pipeline(), REGIONAL, 1) == pytest.approx(
        0.75 + 6 * (0.001 + 1 / 80) + 24 * (1.0 - 6 * (0.001 + 1 / 55)) * (0.0005 + 1 / 80))


def test_the_slowest_restarted_node_sets_a_replay_s_pace_and_a_dear_connector_cuts_later():
    dear = dataclasses.replace(pipeline(), service=(1 / 80,) * 3 + (2 / 80,) + (1 / 80,) * 3)
    rollback, regional = (regional_recovery_delay(dear, REGIONAL, b) for b in (1, 4))
    equal = regional_recovery_delay(pipeline(), REGIONAL, 4)
    # under a rollback node 4 restarts and every tuple waits for it: twice the pace, less
    # the tuples its longer sojourn kept from the sink
    tuple_way = 5 * (0.001 + 1 / 55) + 0.001 + 1 / 15
    assert rollback == pytest.approx(0.75 + 5 * (0.001 + 1 / 80) + 0.001 + 2 / 80
                                     + 24 * (1.0 - tuple_way) * (0.0005 + 2 / 80))
    # kept running, node 4 only delays the cut (its queue is longer), so fewer come again
    assert regional < equal
    assert equal - regional == pytest.approx(24 * (queue_wait(dear, 4) - queue_wait(pipeline(), 4))
                                             * (0.0005 + 1 / 80))


def test_stalls_stretch_a_recovery_s_work_but_not_its_measured_restart():
    stalled = dataclasses.replace(REGIONAL, stall_share=0.2)
    assert regional_recovery_delay(pipeline(), stalled, 4) - 0.75 == pytest.approx(
        (regional_recovery_delay(pipeline(), REGIONAL, 4) - 0.75) / 0.8)


def test_a_failure_right_after_the_cut_replays_nothing_the_sink_saw():
    early = dataclasses.replace(REGIONAL, restored_age=0.01)
    assert regional_recovery_delay(pipeline(), early, 4) == pytest.approx(0.75 + 3 * (0.001 + 1 / 80))


@pytest.mark.parametrize("boundary, delays, says", [
    (7, REGIONAL, "a node 1..6"), (0, REGIONAL, "a node 1..6"),
    (4, DELAYS, "restored version's age"),
    (4, dataclasses.replace(REGIONAL, stall_share=1.0), "stall share")])
def test_a_regional_recovery_delay_refuses_what_it_cannot_model(boundary, delays, says):
    with pytest.raises(SegflowError, match=says):
        regional_recovery_delay(pipeline(), delays, boundary)
