"""The collector while a job runs in the caller's process: collected less often and the
caller's heap frozen for the run; afterwards the caller's thresholds and freeze are back."""
import gc

import segflow
from segflow.runtime.collection import YOUNG_THRESHOLD, collecting_less_often


def test_a_run_in_process_gives_back_the_callers_thresholds_and_heap():
    before = gc.get_threshold()
    seen = []
    env = segflow.StreamEnvironment(parallelism=2)
    env.generate(lambda i: i, count=100).inspect(lambda _: seen.append((gc.get_threshold()[0], gc.get_freeze_count())))
    env.execute()
    assert seen and all(young >= YOUNG_THRESHOLD and frozen > 0 for young, frozen in seen)
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_a_callers_own_freeze_is_kept():
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with collecting_less_often():
            pass
        assert gc.get_freeze_count() >= frozen > 0
    finally:
        gc.unfreeze()
