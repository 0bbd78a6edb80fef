"""A connector's window parts in memory are bounded (``WindowRecorder.limit``,
``--window-memory``): while checkpoints do not complete, the oldest parts leave memory,
and a rewire reads them back from the store, so the replay is the same record for record."""
import pickle
import threading

from segflow.checkpoint.segment import WindowRecorder, part_bytes
from segflow.runtime.elements import Barrier, Batch
from test_window_rewire import Collected, describe

VERSIONS = range(1, 21)


def recorded(limit: int) -> tuple[WindowRecorder, dict[int, list[bytes]], list[int]]:
    """Twenty versions of 50 records each, never completed; the store keeps every part,
    as the replica's snapshots write them. Returns the memory used after each part."""
    recorder = WindowRecorder(Collected(), threading.Event(), limit)
    store: dict[int, list[bytes]] = {}
    held = []
    for version in VERSIONS:
        recorder.send(Batch([(version, i) for i in range(50)]))
        recorder.send(Barrier(version))
        store[version] = recorder.take_part(version)[0]
        held.append(sum(part_bytes(part) for part in recorder.parts.values()))
    recorder.send(Batch([("current", 0)]))
    return recorder, store, held


def replay(recorder: WindowRecorder, store: dict[int, list[bytes]], first: int, through: int) -> list:
    receiver = Collected()
    recorder.rewire(receiver, first, through, store.__getitem__)
    return describe(receiver.got)


def test_parts_past_the_bound_leave_memory_and_a_replay_reads_them_from_the_store():
    unbounded, store, _ = recorded(0)
    size = part_bytes(store[1])
    bounded, _, held = recorded(3 * size)
    assert len(unbounded.parts) == len(VERSIONS) and unbounded.spilled == 0
    assert max(held) <= 3 * size and bounded.spilled == len(VERSIONS) - len(bounded.parts) > 0
    assert bounded.held == sum(part_bytes(part) for part in bounded.parts.values())
    # the planner found the store's parts through 12: the rest came from memory before
    for first, through in [(1, 20), (5, 12), (9, 8)]:
        assert replay(bounded, store, first, through) == replay(unbounded, store, first, through)
    bounded.forget_through(20)
    assert bounded.parts == {} and bounded.gone == set() and bounded.held == 0


def test_the_newest_part_stays_in_memory_however_small_the_bound():
    recorder, store, _ = recorded(1)
    assert list(recorder.parts) == [max(VERSIONS)]
    assert [pickle.loads(d).items for d in recorder.kept] == [[("current", 0)]]
