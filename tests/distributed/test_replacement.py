"""When a lost worker's new standby process starts (``coordinator.replacement``): after the
recovered attempt completed a checkpoint, or after the grace, never while the recovery
that took the standby is still catching up."""
import subprocess

from segflow.coordinator.replacement import REPLACEMENT_GRACE, DeferredReplacement
from segflow.coordinator.spawner import WorkerSpawner


def test_it_waits_while_the_recovered_attempt_has_completed_no_checkpoint():
    pending = DeferredReplacement(lost_at=100.0, complete_at_loss=7)
    assert not pending.due(100.5, running=True, complete=7)
    assert not pending.due(100.5, running=False, complete=None)


def test_it_starts_once_the_recovered_attempt_completes_a_checkpoint():
    pending = DeferredReplacement(lost_at=100.0, complete_at_loss=7)
    assert pending.due(100.2, running=True, complete=8)


def test_a_checkpoint_completed_while_the_attempt_does_not_run_is_not_a_catch_up():
    pending = DeferredReplacement(lost_at=100.0, complete_at_loss=None)
    assert not pending.due(100.2, running=False, complete=3)
    assert pending.due(100.2, running=True, complete=3)


def test_without_any_checkpoint_it_starts_after_the_grace():
    pending = DeferredReplacement(lost_at=100.0, complete_at_loss=None)
    assert not pending.due(100.0 + REPLACEMENT_GRACE - 0.01, running=True, complete=None)
    assert pending.due(100.0 + REPLACEMENT_GRACE, running=False, complete=None)


def test_a_worker_to_be_started_later_is_ended_now_and_its_exit_is_no_news():
    """The spawner's side: a silent (still running) lost worker ends at once; its exit
    does not make the coordinator start it again as a lost worker meanwhile."""
    spawner = WorkerSpawner(2, {})
    spawner.processes["w0"] = silent = subprocess.Popen(["sleep", "30"])
    spawner.processes["w1"] = ended = subprocess.Popen(["true"])
    try:
        ended.wait(10)
        spawner.start_later("w0")
        assert silent.poll() is not None
        assert spawner.exited() == ["w1"]
        assert spawner.deferred == {"w0"}
    finally:
        silent.kill()
        silent.wait()
