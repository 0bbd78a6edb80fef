"""Checkpoint rounds as pure bookkeeping, and the metrics they feed."""
import pytest
from prometheus_client import CollectorRegistry

from segflow.coordinator.checkpoints import BlockDelays, CheckpointTracker, slowest_per_block
from segflow.observability.metrics import CheckpointMetrics

REPLICAS = {(0, 0), (0, 1), (1, 0)}


def test_rounds_follow_the_interval_one_at_a_time():
    t = CheckpointTracker(interval=1.0, replicas=REPLICAS)
    assert t.due(now=1.0)
    assert t.trigger(now=1.0) == 1
    assert not t.due(now=5.0), "a second round while one is in flight"
    for r in REPLICAS:
        outcome = t.ack(1, r, True, 10, 0.2, "", now=1.5)
    assert outcome.complete and outcome.bytes == 30 and outcome.alignment == 0.2
    assert outcome.seconds == 0.5
    assert not t.due(now=2.4) and t.due(now=2.5)
    assert t.trigger(now=2.5) == 2


def test_one_failed_ack_fails_only_that_round():
    t = CheckpointTracker(interval=1.0, replicas=REPLICAS)
    t.trigger(now=0.0)
    t.ack(1, (0, 0), True, 1, 0, "", now=0.1)
    outcome = t.ack(1, (0, 1), False, 0, 0, "redis down", now=0.2)
    assert not outcome.complete and outcome.error == "redis down"
    assert t.last_complete is None
    assert t.ack(1, (1, 0), True, 1, 0, "", now=0.3) is None, "a late ack of a failed round counts"
    t.trigger(now=1.2)
    for r in REPLICAS:
        outcome = t.ack(2, r, True, 1, 0, "", now=1.3)
    assert outcome.complete and t.last_complete.checkpoint_id == 2


def test_timeout_names_the_missing_replicas_and_acks_from_strangers_are_ignored():
    t = CheckpointTracker(interval=1.0, replicas=REPLICAS, timeout=5.0)
    t.trigger(now=0.0)
    assert t.ack(1, (9, 9), True, 1, 0, "", now=0.1) is None
    t.ack(1, (0, 0), True, 1, 0, "", now=0.1)
    assert t.expire(now=4.0) is None
    outcome = t.expire(now=5.1)
    assert not outcome.complete and outcome.error.endswith("waiting for 2 of 3 replicas: b0.r1, b1.r0")


def test_a_timeout_counts_every_missing_replica_and_names_the_first_in_block_order():
    """Block 3 comes before block 10 (a text sort put b10 first, and the names of the
    blocks really stuck fell past the cut)."""
    replicas = {(block, index) for block in (3, 10, 11) for index in range(4)}
    t = CheckpointTracker(interval=1.0, replicas=replicas, timeout=5.0)
    t.trigger(now=0.0)
    t.ack(1, (3, 2), True, 1, 0, "", now=0.1)
    outcome = t.expire(now=5.1)
    assert "waiting for 11 of 12 replicas: b3.r0, b3.r1, b3.r3, b10.r0, b10.r1, b10.r2, b10.r3, b11.r0, ..." \
        in outcome.error, outcome.error


def test_retract_and_explicit_ids():
    t = CheckpointTracker(interval=1.0, replicas={(0, 0)}, first_id=7)
    t.trigger(now=0.0)
    first = t.ack(7, (0, 0), True, 1, 0, "", now=0.1)
    t.trigger(now=2.0, checkpoint_id=99)
    t.ack(99, (0, 0), True, 1, 0, "", now=2.1)
    assert t.last_complete.checkpoint_id == 99 and t.next_id == 8
    t.retract(99)
    assert t.last_complete is first


def test_metrics_count_outcomes_and_keep_the_last_checkpoint():
    registry = CollectorRegistry()
    metrics = CheckpointMetrics(registry, {})
    t = CheckpointTracker(interval=1.0, replicas={(0, 0)})
    t.trigger(now=0.0)
    metrics.ended(t.ack(1, (0, 0), True, 4096, 0.05, "", now=0.3))
    t.trigger(now=2.0)
    metrics.ended(t.ack(2, (0, 0), False, 0, 0, "store down", now=2.1))
    value = registry.get_sample_value
    assert value("segflow_checkpoints_total", {"outcome": "complete"}) == 1
    assert value("segflow_checkpoints_total", {"outcome": "failed"}) == 1
    assert value("segflow_checkpoint_bytes") == 4096 and value("segflow_last_checkpoint_id") == 1
    assert value("segflow_checkpoint_duration_seconds_count") == 1


def test_segment_backup_windows_become_gauges_per_connector():
    from segflow.checkpoint.segment_plan import WindowSize
    registry = CollectorRegistry()
    metrics = CheckpointMetrics(registry, {0: "generate", 3: "fold"})
    metrics.windows({0: WindowSize(2, 2048, 100, 2), 3: WindowSize(1, 10, 1, 0)})
    value = registry.get_sample_value
    assert value("segflow_pending_window_bytes", {"connector": "0", "operator": "generate"}) == 2048
    assert value("segflow_pending_window_versions", {"connector": "3", "operator": "fold"}) == 1
    assert value("segflow_pending_window_records", {"connector": "0", "operator": "generate"}) == 100
    assert value("segflow_pending_window_truncation_lag_versions", {"connector": "0", "operator": "generate"}) == 2


def test_each_revision_numbers_its_checkpoints_apart_and_above_the_store():
    """A lingering coordinator of revision 2 goes on at its ids; revision 3's first id is
    above all of them, and above anything the store holds."""
    from segflow.coordinator.checkpoints import REVISION_IDS, first_checkpoint_id
    from segflow.runtime.elements import FINAL_CHECKPOINT
    assert first_checkpoint_id(0, 0, 0) == 1
    assert first_checkpoint_id(57, 40, 0) == 58
    old = first_checkpoint_id(12, 12, 2)
    new = first_checkpoint_id(old + 500, old + 400, 3)
    assert old == 2 * REVISION_IDS + 1 and new == 3 * REVISION_IDS + 1
    assert first_checkpoint_id(3 * REVISION_IDS + 9, 0, 3) == 3 * REVISION_IDS + 10
    assert first_checkpoint_id(0, 0, 2 ** 29) < FINAL_CHECKPOINT


def test_start_delays_are_set_against_the_ask_and_summed_up_per_block_by_the_slowest_replica():
    t = CheckpointTracker(interval=1.0, replicas=REPLICAS)
    t.trigger(now=0.0, asked_at=1000.0)
    t.ack(1, (0, 0), True, 1, 0, "", now=0.1, barrier_at=1000.002)
    t.ack(1, (0, 1), True, 1, 0, "", now=0.1, barrier_at=999.99)     # a host whose clock is behind
    outcome = t.ack(1, (1, 0), True, 1, 0, "", now=0.2, barrier_at=0.0)   # had finished: no barrier
    assert outcome.complete
    assert outcome.start_delays == {(0, 0): pytest.approx(0.002), (0, 1): 0.0}
    assert slowest_per_block(outcome.start_delays) == {0: pytest.approx(0.002)}
    assert slowest_per_block({(3, 0): 0.5, (3, 1): 0.25, (4, 0): 0.75}) == {3: 0.5, 4: 0.75}


def test_ack_delays_run_from_the_ask_to_each_acknowledgement_finished_replicas_included():
    t = CheckpointTracker(interval=1.0, replicas=REPLICAS)
    t.trigger(now=10.0, asked_at=1000.0)
    t.ack(1, (0, 0), True, 1, 0, "", now=10.03, barrier_at=1000.002)
    t.ack(1, (0, 1), True, 1, 0, "", now=10.05, barrier_at=1000.001)
    outcome = t.ack(1, (1, 0), True, 1, 0, "", now=10.01, barrier_at=0.0)
    assert outcome.ack_delays == {(0, 0): pytest.approx(0.03), (0, 1): pytest.approx(0.05), (1, 0): pytest.approx(0.01)}
    delays = BlockDelays.of(outcome)
    assert delays.ack == {0: pytest.approx(0.05), 1: pytest.approx(0.01)}
    assert delays.start == {0: pytest.approx(0.002)}
    assert BlockDelays.of(None) == BlockDelays({}, {})


def test_a_failed_acknowledgement_has_no_ack_delay_of_its_own():
    t = CheckpointTracker(interval=1.0, replicas=REPLICAS)
    t.trigger(now=0.0, asked_at=1000.0)
    t.ack(1, (0, 0), True, 1, 0, "", now=0.1, barrier_at=1000.0)
    failed = t.ack(1, (0, 1), False, 0, 0, "store down", now=0.2, barrier_at=1000.0)
    assert not failed.complete and failed.ack_delays == {(0, 0): pytest.approx(0.1)}


def test_a_round_asked_without_a_wall_clock_time_has_no_start_delays():
    t = CheckpointTracker(interval=1.0, replicas={(0, 0)})
    t.trigger(now=0.0)
    assert t.ack(1, (0, 0), True, 1, 0, "", now=0.1, barrier_at=1000.0).start_delays == {}


def test_records_a_block_received_add_up_over_reports_per_block():
    registry = CollectorRegistry()
    metrics = CheckpointMetrics(registry, {1: "map"})
    metrics.records_received({1: 40, 2: 0})
    metrics.records_received({1: 15})
    value = registry.get_sample_value
    assert value("segflow_block_records_in_total", {"block": "1", "operator": "map"}) == 55
    assert value("segflow_block_records_in_total", {"block": "2", "operator": ""}) is None
