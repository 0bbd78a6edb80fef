"""A connector's output channel under a regional recovery (``checkpoint.segment``): its
receiver goes, sends are kept but no longer fail the replica, and a rewire replays what
the receiver's restored version lacks (older parts from the store, newer ones and the
current part from memory), in order, into the new channel, then sends on it."""
import pickle
import threading

import pytest

from segflow.checkpoint.segment import WindowRecorder, coalesced
from segflow.runtime.channels import Cancelled, Outlet
from segflow.runtime.elements import Barrier, Batch


class Collected(Outlet):
    """A receiver that keeps what reaches it, or one that went (``gone``)."""

    def __init__(self, gone=None):
        self.got = []
        self.gone = gone

    def send(self, element):
        if self.gone is not None:
            raise self.gone
        self.got.append(element)


def batch(*items):
    return Batch(list(items))


def describe(elements):
    return [("B", e.checkpoint_id) if type(e) is Barrier else tuple(e.items) for e in elements]


def sent_versions(recorder, versions):
    """Version v carries batch (v,) then its barrier; each part is taken as a snapshot would."""
    for version in versions:
        recorder.send(batch(version))
        recorder.send(Barrier(version))
        recorder.take_part(version)


@pytest.mark.parametrize("gone", [ConnectionError("reset"), Cancelled()])
def test_a_receiver_that_goes_detaches_the_channel_and_the_window_keeps_what_follows(gone):
    first = Collected()
    recorder = WindowRecorder(first, threading.Event())
    sent_versions(recorder, [1])
    first.gone = gone
    recorder.send(batch(2))
    assert recorder.detached and describe(first.got) == [(1,), ("B", 1)]
    recorder.send(batch(3))
    assert [pickle.loads(d).items for d in recorder.kept] == [[2], [3]]


def test_a_failure_while_the_attempt_is_cancelled_still_raises():
    cancel = threading.Event()
    recorder = WindowRecorder(Collected(gone=Cancelled()), cancel)
    cancel.set()
    with pytest.raises(Cancelled):
        recorder.send(batch(1))


def test_a_rewire_replays_from_the_receivers_version_on_then_goes_live():
    first = Collected()
    recorder = WindowRecorder(first, threading.Event())
    sent_versions(recorder, [1, 2, 3, 4])
    recorder.forget_through(2)                         # complete everywhere: the store serves 1 and 2
    recorder.send(batch(5))
    first.gone = ConnectionError("reset")
    recorder.send(batch(6))
    store = {2: [pickle.dumps(batch(2)), pickle.dumps(Barrier(2))]}
    again = Collected()
    assert recorder.rewire(again, 2, 2, lambda v: store[v]) is first
    recorder.send(batch(7))
    assert describe(again.got) == [(2,), ("B", 2), (3,), ("B", 3), (4,), ("B", 4), (5, 6), (7,)]
    assert not recorder.detached


def test_a_receiver_gone_again_during_the_replay_leaves_the_channel_detached():
    recorder = WindowRecorder(Collected(), threading.Event())
    sent_versions(recorder, [1, 2])
    recorder.rewire(Collected(gone=ConnectionError("reset")), 1, 0, lambda v: [])
    assert recorder.detached
    again = Collected()
    recorder.rewire(again, 2, 0, lambda v: [])
    assert describe(again.got) == [(2,), ("B", 2)]


def test_versions_after_the_stored_ones_come_from_memory_whatever_their_ids():
    """Checkpoint ids jump (a new deployment revision, the job's end): the replay reads the
    store only up to the newest stored part it was told of, and memory after it."""
    recorder = WindowRecorder(Collected(), threading.Event())
    sent_versions(recorder, [3, 2**32 + 1])
    recorder.forget_through(3)
    again = Collected()
    recorder.rewire(again, 2, 3, lambda v: {2: [pickle.dumps(batch(2))], 3: [pickle.dumps(batch(3))]}[v])
    assert describe(again.got) == [(2, 3, 2**32 + 1), ("B", 2**32 + 1)]


def test_a_completion_during_a_replay_does_not_wait_for_it():
    recorder = WindowRecorder(Collected(), threading.Event())
    sent_versions(recorder, [1, 2])
    with recorder.lock:                                # a replay in progress
        recorder.forget_through(2)
    assert set(recorder.parts) == {1, 2}
    recorder.forget_through(2)
    assert recorder.parts == {}


def replayed(batch_size):
    """What a rewire sends of a window of one-record batches (a slow stream's, flushed by
    its batch timeout) on an edge of ``batch_size``."""
    first = Collected()
    recorder = WindowRecorder(first, threading.Event(), batch=batch_size)
    for version in (1, 2):
        for record in range(version * 10_000, version * 10_000 + 500):
            recorder.send(batch(record))
        recorder.send(Barrier(version))
        recorder.take_part(version)
    first.gone = ConnectionError("reset")
    for record in range(30_000, 32_049):
        recorder.send(batch(record))
    again = Collected()
    recorder.rewire(again, 1, 0, lambda v: [])
    records = [item for e in again.got if type(e) is Batch for item in e.items]
    assert records == [*range(10_000, 10_500), *range(20_000, 20_500), *range(30_000, 32_049)]
    return [len(e.items) if type(e) is Batch else "B" for e in again.got]


def test_a_replay_goes_in_full_batches_of_its_edges_size_between_the_barriers():
    assert replayed(1024) == [500, "B", 500, "B", 1024, 1024, 1]


def test_an_edge_that_sends_every_record_at_once_replays_so_too():
    assert replayed(1) == [*[1] * 500, "B", *[1] * 500, "B", *[1] * 2049]


def test_coalescing_keeps_timestamps_the_oldest_birth_and_large_batches_alone():
    elements = [Batch([1], [10], 5.0), Batch([2, 3], [20, 30], 4.0), Barrier(1), Batch([4], [40], None),
                Batch([5, 6, 7], [50, 60, 70], 9.0), Batch([8], [80], 8.0)]
    out = list(coalesced(elements, most=3))
    assert [(e.items, e.timestamps, e.born) if type(e) is Batch else e for e in out] == [
        ([1, 2, 3], [10, 20, 30], 4.0), Barrier(1), ([4], [40], None), ([5, 6, 7], [50, 60, 70], 9.0),
        ([8], [80], 8.0)]
