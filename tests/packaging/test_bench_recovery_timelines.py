"""The arithmetic bench/segment_backup.py's worker-loss scenario reads its figures with,
from a chain's probe lines ``(node, record index, time)``: when each node went back and
first processed a newer record (the thesis's Definition 1), and how many records were
processed again. A wrong reading here would publish a recovery delay nobody measured."""
import importlib.util
import os
import sys

import pytest

from support.processes import ROOT


@pytest.fixture(scope="module")
def common():
    spec = importlib.util.spec_from_file_location("bench_common", os.path.join(ROOT, "bench", "common.py"))
    module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)     # dataclasses look it up there
    spec.loader.exec_module(module)
    return module


def test_a_node_that_restarts_recovers_at_its_first_record_newer_than_before_it_went_back(common):
    # node 5 processed 0..9, kept going (11, 12) after the kill at t=10, went back to 8 at
    # t=11, replayed 8..12 and reached 13 at t=11.5
    lines = [(5, i, float(i)) for i in range(10)] + [(5, 11, 10.1), (5, 12, 10.2)]
    lines += [(5, i, 11 + (i - 8) / 10) for i in range(8, 13)] + [(5, 13, 11.5)]
    found = common.node_recoveries(lines, failed_at=10.0)
    assert found[5] == common.NodeRecovery(went_back_at=11.0, newer_at=11.5)


def test_a_node_that_keeps_running_recovers_at_its_first_record_after_the_failure(common):
    lines = [(3, 0, 1.0), (3, 1, 2.0), (3, 2, 10.4), (3, 3, 10.6)]
    assert common.node_recoveries(lines, failed_at=10.0)[3] == common.NodeRecovery(None, 10.4)


def test_lines_out_of_order_in_the_file_are_read_in_time_order(common):
    lines = [(7, 5, 12.0), (7, 4, 11.0), (7, 6, 3.0), (7, 7, 12.5)]
    # before the failure node 7 had 6; 4 and 5 are replays, 7 the first newer record
    assert common.node_recoveries(lines, failed_at=10.0)[7] == common.NodeRecovery(11.0, 12.5)


def test_a_node_silent_after_the_failure_has_not_recovered(common):
    assert common.node_recoveries([(2, 0, 1.0)], failed_at=5.0)[2] == common.NodeRecovery(None, None)


def test_records_processed_again_count_every_repetition_per_node(common):
    lines = [(2, 0, 0.0), (2, 1, 0.1), (2, 1, 0.5), (2, 1, 0.9), (3, 0, 0.2), (3, 1, 0.3)]
    assert common.processed_again(lines) == {2: 2, 3: 0}


def test_relative_error_is_a_share_of_the_prediction(common):
    assert common.relative_error(0.4, 0.5) == pytest.approx(0.25)
    assert common.relative_error(0.4, 0.3) == pytest.approx(0.25)
    with pytest.raises(ValueError, match="must be > 0"):
        common.relative_error(0.0, 1.0)


def _run_with(common, logs, killed_at):
    run = common.Run(logs=logs)
    run.killed_at = killed_at
    return run


def test_the_restored_version_is_as_old_as_the_time_since_its_round_started(common):
    # round 6 started at 99.5 and completed at 99.7; round 7 started at 99.9 and never completed
    started = [{"msg": "checkpoint started", "checkpoint": 5, "ts": 99.0},
               {"msg": "checkpoint complete", "id": 5, "ts": 99.1, "time": 99.1, "seconds": 0.1},
               {"msg": "checkpoint started", "checkpoint": 6, "ts": 99.5},
               {"msg": "checkpoint complete", "id": 6, "ts": 99.7, "time": 99.7, "seconds": 0.2},
               {"msg": "checkpoint started", "checkpoint": 7, "ts": 99.9}]
    global_restore = _run_with(common, started + [{"msg": "recovering", "ts": 100.1, "restore_checkpoint": 6}], 100.0)
    assert common.restored_age(global_restore) == pytest.approx(0.5)
    # a regional restore names each restarted block's version: the oldest one counts
    regional = _run_with(common, started + [{"msg": "regional restore", "ts": 100.1, "versions": {"4": 6, "5": 5}},
                                            {"msg": "recovering", "ts": 100.1, "restore_checkpoint": "none"}], 100.0)
    assert common.restored_age(regional) == pytest.approx(100.0 - 99.0)
    # a segment's version restored although its round had not completed everywhere at the kill
    ahead = _run_with(common, started + [{"msg": "regional restore", "ts": 100.1, "versions": {"5": 7}},
                                         {"msg": "recovering", "ts": 100.1, "restore_checkpoint": "none"}], 100.0)
    assert common.restored_age(ahead) == pytest.approx(100.0 - 99.9)


def test_a_restored_version_no_round_started_before_the_kill_is_an_error(common):
    logs = [{"msg": "checkpoint started", "checkpoint": 6, "ts": 100.5},
            {"msg": "recovering", "ts": 100.1, "restore_checkpoint": 6}]
    with pytest.raises(RuntimeError, match="no round started before the kill"):
        common.restored_age(_run_with(common, logs, 100.0))


@pytest.fixture(scope="module")
def stall_probe():
    spec = importlib.util.spec_from_file_location("bench_stall_probe", os.path.join(ROOT, "bench", "stall_probe.py"))
    module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_stall_counts_beyond_the_sleep_asked_and_only_inside_the_window(stall_probe):
    stalls = [(100.0, 0.051),        # 50 ms stalled inside the window
              (100.5, 0.101),        # 100 ms, only its first 49 ms before the window ends at 100.55
              (99.0, 0.201)]         # before the window
    share = stall_probe.stall_share(stalls, start=100.0, end=100.55, sleep=0.001)
    assert share == pytest.approx((0.050 + 0.049) / 0.55)


def test_a_window_without_stalls_lost_nothing_and_an_empty_window_is_refused(stall_probe):
    assert stall_probe.stall_share([], 1.0, 2.0) == 0.0
    with pytest.raises(ValueError, match="must end after it starts"):
        stall_probe.stall_share([], 2.0, 2.0)


def test_a_probe_writes_down_the_late_wake_ups_of_a_frozen_process(stall_probe, tmp_path):
    """The probe against a real freeze: SIGSTOP for 0.2 s is a stall it must see."""
    import signal
    import time
    path = tmp_path / "stalls"
    probe = stall_probe.StallProbe(str(path))
    try:
        deadline = time.monotonic() + 30
        while not path.exists() and time.monotonic() < deadline:     # opened just before its loop
            time.sleep(0.01)
        time.sleep(0.05)
        probe.process.send_signal(signal.SIGSTOP)
        time.sleep(0.2)
        probe.process.send_signal(signal.SIGCONT)
        time.sleep(0.2)
    finally:
        probe.stop()
    assert max(took for _, took in probe.stalls()) >= 0.2


def test_a_kept_sinks_recovery_waits_for_a_record_the_lost_node_had_not_processed(common):
    # node 5 (lost at t=10) had processed 0..9; the kept sink 7 had 0..7 and took 8 and 9,
    # already in flight, at 10.01 and 10.02; 10, the recovery's first, reached it at 10.3
    lines = [(5, i, float(i) / 10 + 9) for i in range(10)] + [(7, i, float(i) / 10 + 9.05) for i in range(8)]
    lines += [(7, 8, 10.01), (7, 9, 10.02), (5, 10, 10.25), (7, 10, 10.3)]
    recovery = common.node_recoveries(lines, failed_at=10.0)[7]
    assert recovery == common.NodeRecovery(None, 10.01)
    assert common.past_the_lost_node(lines, sink=7, lost=5, failed_at=10.0, recovery=recovery) == 10.3
    # a sink that went back and replayed: its first newer record is already past the lost node
    lines = [(5, 0, 9.0), (7, 0, 9.1), (7, 0, 10.5), (5, 1, 10.6), (7, 1, 10.7)]
    recovery = common.node_recoveries(lines, failed_at=10.0)[7]
    assert common.past_the_lost_node(lines, sink=7, lost=5, failed_at=10.0, recovery=recovery) == 10.7
