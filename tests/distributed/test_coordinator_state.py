"""The coordinator's decisions, as a pure state machine (no servers, explicit time)."""
import pytest

from segflow.coordinator.state import PEER_FAILURE_GRACE, JobState, Phase, RegistrationError


def started(n=2, timeout=3.0):
    state = JobState(n, timeout)
    for i in range(n):
        state.register(f"w{i}", f"127.0.0.{2 + i}:5000", "", 1, 100 + i, now=0.0)
    return state


def test_job_starts_when_the_last_worker_registers():
    state = JobState(2, 3.0)
    assert state.register("w0", "a", "", 1, 1, now=0.0) is False
    assert state.phase is Phase.WAITING_FOR_WORKERS
    assert state.register("w1", "b", "", 1, 2, now=0.5) is True
    assert state.phase is Phase.RUNNING


def test_duplicate_and_extra_workers_are_refused():
    state = started(2)
    with pytest.raises(RegistrationError, match="registered already"):
        state.register("w0", "x", "", 1, 9, now=1.0)
    state2 = JobState(1, 3.0)
    state2.register("w0", "x", "", 1, 9, now=0.0)
    with pytest.raises(RegistrationError, match="has them all"):
        state2.register("w1", "y", "", 1, 9, now=0.0)


def test_success_needs_every_worker_and_merges_results():
    state = started(2)
    state.finished("w0", True, "", False, {0: [1, 2]}, now=1.0)
    assert state.phase is Phase.RUNNING
    state.finished("w1", True, "", False, {0: [3], 1: ["x"]}, now=1.1)
    assert state.phase is Phase.SUCCEEDED
    assert sorted(state.results[0]) == [1, 2, 3] and state.results[1] == ["x"]


def test_silent_worker_is_lost_after_the_timeout_and_named():
    state = started(2, timeout=3.0)
    state.heartbeat("w0", {}, now=2.9)
    state.heartbeat("w1", {}, now=0.5)
    assert state.check(now=3.0) is None
    name, why = state.check(now=3.6)
    assert name == "w1" and "no heartbeat for 3.1 s" in why
    state.lost(name, why, now=3.6)
    assert state.phase is Phase.FAILED
    assert "w1" in state.error and "pid 101" in state.error and "127.0.0.3" in state.error


def test_a_worker_gets_the_startup_timeout_until_its_first_heartbeat():
    """Building the job and restoring take a while on a loaded machine: a worker that has
    not yet spoken in its attempt is lost only after the start-up timeout, one that has
    after the heartbeat timeout; so is each worker of the next attempt until it speaks."""
    state = JobState(2, 3.0, recoverable=True, startup_timeout=10.0)
    for i in range(2):
        state.register(f"w{i}", f"127.0.0.{2 + i}:5000", "", 1, 100 + i, now=0.0)
    state.heartbeat("w0", {}, now=1.0)
    assert state.check(now=4.5) == ("w0", "no heartbeat for 3.5 s")
    state.heartbeat("w0", {}, now=5.0)
    assert state.check(now=7.5) is None                   # w1 builds its job: not silent yet
    state.heartbeat("w0", {}, now=9.0)
    name, why = state.check(now=10.5)
    assert (name, why) == ("w1", "no heartbeat for 10.5 s")
    assert state.lost(name, why, now=10.5)
    for i in range(2):
        state.register(f"w{i}", f"127.0.0.{2 + i}:5000", "", 1, 200 + i, now=11.0)
    assert state.phase is Phase.RUNNING
    assert state.check(now=15.0) is None                  # neither has spoken in the new attempt
    assert state.check(now=21.5)[0] in ("w0", "w1")


def test_waiting_for_slow_peers_is_not_silence():
    state = JobState(2, 3.0)
    state.register("w0", "a", "", 1, 1, now=0.0)
    state.register("w1", "b", "", 1, 2, now=10.0)
    assert state.check(now=11.0) is None


def test_a_lost_worker_starts_a_new_attempt_when_recoverable():
    state = JobState(2, 3.0, recoverable=True, two_phase=True)
    for i in range(2):
        state.register(f"w{i}", "a", "", 1, i, now=0.0)
    assert state.lost("w1", "killed", now=1.0) is True
    assert state.phase is Phase.RECOVERING and state.attempt == 1 and state.recoveries == 1
    with pytest.raises(RegistrationError, match="unknown worker"):
        state.register("w7", "x", "", 1, 9, now=1.1)
    state.register("w0", "a", "", 1, 0, now=1.2)
    assert state.register("w1", "b", "", 1, 5, now=1.3) is True
    assert state.phase is Phase.RUNNING


def test_two_phase_end_commits_before_success():
    state = JobState(2, 3.0, recoverable=True, two_phase=True)
    for i in range(2):
        state.register(f"w{i}", "a", "", 1, i, now=0.0)
    assert state.finished("w0", True, "", False, {}, now=1.0, committed=False) == ""
    assert state.finished("w1", True, "", False, {}, now=1.1, committed=False) == "commit"
    assert state.phase is Phase.RUNNING
    state.finished("w0", True, "", False, {0: [1]}, now=1.2, committed=True)
    state.finished("w1", True, "", False, {0: [2]}, now=1.3, committed=True)
    assert state.phase is Phase.SUCCEEDED and sorted(state.results[0]) == [1, 2]
    assert state.lost("w0", "exited after committing", now=1.4) is False


def test_a_lost_peer_is_blamed_rather_than_the_worker_that_noticed_it():
    state = started(3)
    state.finished("w0", False, "worker w0: channel to the receiver failed", True, {}, now=1.0)
    assert state.phase is Phase.RUNNING
    state.lost("w2", "its heartbeat stream broke", now=1.2)
    assert state.phase is Phase.FAILED and "lost worker w2" in state.error


def test_a_peer_failure_stands_when_no_peer_is_lost():
    state = started(2)
    state.finished("w0", False, "worker w0: channel failed", True, {}, now=1.0)
    for w in ("w0", "w1"):
        state.heartbeat(w, {}, now=1.0 + PEER_FAILURE_GRACE)
    assert state.check(now=1.0 + PEER_FAILURE_GRACE) is None
    assert state.phase is Phase.FAILED and "channel failed" in state.error


def test_a_user_error_fails_at_once_and_a_finished_worker_is_not_lost():
    state = started(2)
    state.finished("w0", True, "", False, {}, now=1.0)
    state.lost("w0", "stream closed after finishing", now=1.1)
    assert state.phase is Phase.RUNNING
    state.finished("w1", False, "map(parse) raised ValueError", False, {}, now=1.2)
    assert state.phase is Phase.FAILED and "map(parse)" in state.error


def test_a_standby_that_took_over_and_was_lost_stands_by_again_when_started_again():
    """The spawner starts a lost worker that had taken over a slot again as a standby,
    under its own name, which no slot bears: it was refused as an unknown worker, and the
    job went on with no standby at all."""
    state = JobState(2, 3.0, recoverable=True, standby_workers=1)
    state.register("w0", "a", "", 1, 1, now=0.0)
    state.register("w1", "b", "", 1, 2, now=0.0)
    state.register("w2", "c", "", 1, 3, now=0.0, standby=True)
    assert state.lost("w1", "its process exited", now=1.0) and state.promoted == "w2"
    assert state.register("w0", "a", "", 1, 1, now=1.1) is True        # w2 runs slot w1 in attempt 1
    assert state.register("w1", "b", "", 1, 4, now=1.5, standby=True) is False
    assert state.lost("w2", "its process exited", now=2.0) and state.promoted == "w1"
    assert state.register("w0", "a", "", 1, 1, now=2.1) is True
    assert state.register("w2", "c", "", 1, 5, now=2.5, standby=True) is False
    assert state.is_standby("w2") and state.phase is Phase.RUNNING


def test_a_heartbeat_says_what_each_block_received_since_the_workers_last_one():
    state = started(2)
    assert state.heartbeat("w0", {(0, 0): 10, (1, 0): 4}, now=1.0) == {0: 10, 1: 4}
    assert state.heartbeat("w0", {(0, 0): 25, (1, 0): 4}, now=1.1) == {0: 15, 1: 0}
    # a replica restored in the same process counts from 0 again: all of its count is new
    assert state.heartbeat("w0", {(0, 0): 3, (1, 0): 9}, now=1.2) == {0: 3, 1: 5}
    assert state.heartbeat("w1", {(0, 1): 7, (1, 1): 2}, now=1.2) == {0: 7, 1: 2}
    assert state.heartbeat("nobody", {(0, 0): 1}, now=1.3) == {}


def test_a_recovery_counts_the_next_attempts_replicas_from_zero():
    state = JobState(1, 3.0, recoverable=True)
    state.register("w0", "a", "", 1, 1, now=0.0)
    assert state.heartbeat("w0", {(0, 0): 50}, now=1.0) == {0: 50}
    assert state.lost("w0", "its heartbeat stream broke", now=2.0)
    state.register("w0", "a", "", 1, 2, now=2.5)
    assert state.heartbeat("w0", {(0, 0): 20}, now=3.0) == {0: 20}


def test_progress_sums_records_per_block_over_workers():
    state = started(2)
    state.heartbeat("w0", {(0, 0): 10, (1, 0): 4}, now=1.0)
    state.heartbeat("w1", {(0, 1): 5, (1, 1): 6}, now=1.0)
    assert state.progress() == {0: 15, 1: 10}


def with_standby(n=2, standby=1):
    state = JobState(n, 3.0, recoverable=True, two_phase=True, standby_workers=standby)
    for i in range(standby):
        assert state.register(f"w{n + i}", f"127.0.0.{9 + i}:5000", "", 1, 300 + i, now=0.0, standby=True) is False
    for i in range(n):
        state.register(f"w{i}", f"127.0.0.{2 + i}:5000", "", 1, 100 + i, now=0.0)
    return state


def test_a_standby_waits_in_the_pool_and_the_job_starts_without_it():
    state = with_standby(2, 1)
    assert state.phase is Phase.RUNNING and sorted(state.workers) == ["w0", "w1"] and state.names == ["w0", "w1"]
    assert state.is_standby("w2") and not state.is_standby("w0")
    with pytest.raises(RegistrationError, match="keeps 1 standby worker"):
        state.register("w9", "z", "", 1, 9, now=0.0, standby=True)


def test_a_lost_worker_slot_goes_to_the_standby_and_its_new_process_becomes_the_standby():
    state = with_standby(2, 1)
    assert state.lost("w1", "killed", now=1.0) is True
    assert state.promoted == "w2" and state.slot("w2") == "w1" and "w2" in state.workers
    assert "standby w2 takes over w1" in state.events[-1]
    assert state.phase is Phase.RECOVERING
    assert state.register("w0", "a", "", 1, 100, now=1.1) is True          # the survivor: the attempt starts
    assert state.phase is Phase.RUNNING and state.names == ["w0", "w1"] and sorted(state.workers) == ["w0", "w2"]
    assert state.register("w1", "b2", "", 1, 200, now=1.2) is False        # the lost one, started again
    assert state.is_standby("w1") and state.slot("w0") == "w0"
    assert state.lost("w2", "killed too", now=2.0) is True                 # the new standby takes the same slot
    assert state.promoted == "w1" and state.slot("w1") == "w1"


def test_without_a_standby_the_lost_worker_takes_its_own_slot_again():
    state = with_standby(2, 1)
    state.unregister("w2")                                                 # the standby died idle
    assert state.lost("w1", "killed", now=1.0) is True and state.promoted is None
    assert state.register("w0", "a", "", 1, 100, now=1.1) is False
    assert state.register("w1", "b", "", 1, 101, now=1.2) is True and state.slot("w1") == "w1"
    with pytest.raises(RegistrationError, match="unknown worker 'w7'"):
        state.register("w7", "c", "", 1, 9, now=1.3)


def test_a_single_worker_job_restarts_on_its_standby_alone():
    state = with_standby(1, 1)
    assert state.lost("w0", "killed", now=1.0) is True
    assert state.start_if_all_registered(1.0) is True and state.phase is Phase.RUNNING
    assert list(state.workers) == ["w1"] and state.names == ["w0"]


def test_a_regional_recovery_keeps_the_workers_outside_the_region():
    """w0 runs upstream of the region w1 and w2 run: it stays registered and counts in the
    new attempt too; the others register again. What a worker says as part of an attempt
    counts only for an attempt it runs in."""
    state = JobState(3, 3.0, recoverable=True, two_phase=True)
    for i in range(3):
        state.register(f"w{i}", f"a{i}", "", 1, 100 + i, now=0.0)
    assert state.lost("w1", "gone", now=1.0, keep=frozenset({"w0"}))
    assert state.phase is Phase.RECOVERING and set(state.workers) == {"w0"}
    assert state.in_attempt("w0", 0) and state.in_attempt("w0", 1) and not state.in_attempt("w2", 0)
    state.finished("w0", True, "", False, {}, now=1.1, committed=False)    # it may end while the others restart
    state.register("w2", "a2", "", 1, 102, now=1.2)
    assert state.register("w1", "a1", "", 1, 201, now=1.3) is True
    assert state.in_attempt("w1", 1) and not state.in_attempt("w1", 0)
    state.finished("w1", True, "", False, {}, now=2.0, committed=False)
    assert state.finished("w2", True, "", False, {}, now=2.1, committed=False) == "commit"


def test_a_lost_worker_is_never_kept():
    state = JobState(2, 3.0, recoverable=True)
    state.register("w0", "a", "", 1, 1, now=0.0)
    state.register("w1", "b", "", 1, 2, now=0.0)
    assert state.lost("w1", "gone", now=1.0, keep=frozenset({"w0", "w1"}))
    assert set(state.workers) == {"w0"}


def test_a_kept_worker_lost_while_the_region_registers_again_restarts_everything():
    state = JobState(3, 3.0, recoverable=True, two_phase=True)
    for i in range(3):
        state.register(f"w{i}", f"a{i}", "", 1, 100 + i, now=0.0)
    assert state.lost("w1", "gone", now=1.0, keep=frozenset({"w0"}))
    state.register("w2", "a2", "", 1, 102, now=1.1)
    assert not state.lost("w2", "gone", now=1.2), "a region worker is started again, in the same attempt"
    assert state.is_kept("w0") and state.lost("w0", "gone", now=1.3)
    assert state.attempt == 2 and state.workers == {} and not state.is_kept("w0")
