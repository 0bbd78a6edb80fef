"""Markers in operator state survive a snapshot's pickle round trip as the same object
(a non-keyed window open at a checkpoint was split in two after a restore)."""
import copy
import pickle

import cloudpickle

from segflow.runtime.elements import Batch
from segflow.runtime.operators.aggregate import Fold
from segflow.runtime.operators.windows import CountWindows, SessionWindows, TimeWindows
from segflow.runtime.sentinels import NO_KEY, NOTHING


def test_markers_keep_their_identity_through_pickle_cloudpickle_and_copies():
    for marker in (NO_KEY, NOTHING):
        assert pickle.loads(pickle.dumps(marker)) is marker
        assert cloudpickle.loads(cloudpickle.dumps(marker)) is marker
        assert copy.deepcopy(marker) is marker and copy.copy(marker) is marker


def _restored(op, make):
    fresh = make()
    fresh.restore(pickle.loads(pickle.dumps(op.snapshot())))
    return fresh


def _outputs(out):
    return [] if out is None else list(out.items)


def test_a_non_keyed_time_window_open_at_a_snapshot_is_emitted_once_after_restore():
    def make():
        return TimeWindows(10_000, 10_000, len, keyed=False)

    op = make()
    op.process(Batch(list(range(1000)), list(range(1000))))
    op = _restored(op, make)
    op.process(Batch(list(range(1000, 4000)), list(range(1000, 4000))))
    assert _outputs(op.on_end()) == [4000]


def test_non_keyed_count_and_session_windows_continue_their_open_window_after_restore():
    def make():
        return CountWindows(5, 5, len, keyed=False)

    op = make()
    op.process(Batch([1, 2, 3]))
    op = _restored(op, make)
    assert _outputs(op.process(Batch([4, 5, 6]))) == [5]
    assert _outputs(op.on_end()) == [1]

    def make():
        return SessionWindows(10, len, keyed=False)

    op = make()
    op.process(Batch([1, 2], [0, 5]))
    op = _restored(op, make)
    op.process(Batch([3], [12]))
    assert _outputs(op.on_end()) == [3]


def test_a_reduce_without_records_before_the_snapshot_starts_from_the_first_record_after():
    def make():
        return Fold(lambda a, b: a + b)

    op = make()
    op = _restored(op, make)
    op.process(Batch([4, 5]))
    assert _outputs(op.on_end()) == [9]
