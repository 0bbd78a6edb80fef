"""The coordinator's bookkeeping for the uncoordinated protocols, without servers."""
import pytest

from segflow.checkpoint.local_records import LocalCheckpointRecords, StateNoLongerKept, decode_line, encode_line
from segflow.checkpoint.recovery_line import CheckpointRecord

A, B = "b0.r0", "b1.r0"
AB = (A, B)


def test_a_checkpoint_commits_only_once_no_failure_can_roll_it_back():
    book = LocalCheckpointRecords()
    # B's checkpoint has processed 3 messages that A's stored state has not sent yet: an orphan.
    assert book.add(CheckpointRecord(B, 1, {}, {AB: 3}), [A, B]) == {}
    assert book.add(CheckpointRecord(A, 1, {AB: 5}, {}), [A, B]) == {A: 1, B: 1}
    assert book.add(CheckpointRecord(A, 2, {AB: 9}, {}), [A, B]) == {A: 2}
    assert book.committed == {A: 2, B: 1}


def test_recovery_forgets_checkpoints_past_the_line_and_replays_in_transit_messages():
    book = LocalCheckpointRecords()
    book.add(CheckpointRecord(A, 1, {AB: 5}, {}), [A, B])
    book.add(CheckpointRecord(B, 1, {}, {AB: 3}), [A, B])
    book.add(CheckpointRecord(B, 2, {}, {AB: 8}), [A, B])      # an orphan once A is lost
    result = book.recover([A, B], {A})
    assert result.line == {A: 1, B: 1}
    assert result.replay == {AB: (4, 5)}
    assert sorted(book.records[B]) == [1]


def test_what_is_collectable_is_handed_out_once():
    book = LocalCheckpointRecords(retain=1)
    for index, sent in ((1, 2), (2, 4), (3, 6)):
        book.add(CheckpointRecord(A, index, {AB: sent}, {}), [A, B])
        book.add(CheckpointRecord(B, index, {}, {AB: sent}), [A, B])
    checkpoints, segments = book.newly_collectable()
    assert checkpoints == {(A, 1), (A, 2), (B, 1), (B, 2)}
    assert {(A, 1), (A, 2), (A, 3)} <= segments
    assert book.newly_collectable() == (set(), set())


def _lockstep(book, rounds):
    """A sends to B; both checkpoint after every 2 messages, B having processed them all."""
    for index in range(1, rounds + 1):
        book.add(CheckpointRecord(A, index, {AB: 2 * index}, {}), [A, B])
        book.add(CheckpointRecord(B, index, {}, {AB: 2 * index}), [A, B])


def test_the_last_retain_stable_line_checkpoints_are_kept():
    book = LocalCheckpointRecords(retain=3)
    _lockstep(book, 5)
    assert book.committed == {A: 5, B: 5}
    assert book.floor == {A: 3, B: 3}
    checkpoints, segments = book.newly_collectable()
    assert checkpoints == {(A, 1), (A, 2), (B, 1), (B, 2)}
    assert {(A, 1), (A, 2), (A, 3)} <= segments and (A, 4) not in segments


def test_a_damaged_log_segment_falls_back_within_what_is_kept():
    book = LocalCheckpointRecords(retain=3)
    _lockstep(book, 5)
    book.forget(A, 5)     # A's last log segment failed its integrity check
    result = book.recover([A, B], {B})
    # B's checkpoint 5 processed messages 9-10, which only A's forgotten checkpoint 5 sent:
    # B goes back too, and A resends them
    assert result.line == {A: 4, B: 4}
    assert result.replay == {}


def test_a_fall_back_past_what_is_kept_says_so():
    book = LocalCheckpointRecords(retain=2)
    _lockstep(book, 5)
    book.forget(A, 3)
    with pytest.raises(StateNoLongerKept, match=r"local checkpoint 2 of b0.r0 \(the oldest kept is 4\).*--retain"):
        book.recover([A, B], {B})


def test_retain_must_keep_one():
    with pytest.raises(ValueError, match="retain must be >= 1"):
        LocalCheckpointRecords(retain=0)


def restarted_from(book: LocalCheckpointRecords, earlier_segments=None, retain=3) -> LocalCheckpointRecords:
    """A new coordinator's records after the whole job restarts from ``book``'s stored line."""
    stored = decode_line(encode_line(book.stable_line(), [A, B], 1234.5, {"blocks": [["generate"], ["map"]]}))
    assert stored.processes == [A, B] and stored.written == 1234.5
    assert stored.layout == {"blocks": [["generate"], ["map"]]}
    again = LocalCheckpointRecords(retain)
    again.seed(stored.line, earlier_segments or {})
    return again


def test_a_whole_job_restart_restores_the_stable_line_and_replays_what_was_in_transit():
    book = LocalCheckpointRecords()
    book.add(CheckpointRecord(A, 1, {AB: 5}, {}), [A, B])
    book.add(CheckpointRecord(B, 1, {}, {AB: 3}), [A, B])
    book.add(CheckpointRecord(B, 2, {}, {AB: 8}), [A, B])      # an orphan: A's state has not sent 6..8
    assert book.line == {A: 1, B: 1}
    again = restarted_from(book)
    result = again.recover([A, B], {A, B})
    assert result.line == {A: 1, B: 1}
    assert result.replay == {AB: (4, 5)}


def test_after_a_restart_the_line_never_goes_back_past_the_restored_one():
    book = LocalCheckpointRecords()
    _lockstep(book, 3)
    again = restarted_from(book)
    assert again.add(CheckpointRecord(B, 4, {}, {AB: 8}), [A, B]) == {}     # processed what A's state has not sent
    result = again.recover([A, B], {A})
    assert result.line == {A: 3, B: 3} and result.replay == {}
    assert again.add(CheckpointRecord(A, 4, {AB: 8}, {}), [A, B]) == {A: 4}
    assert again.add(CheckpointRecord(B, 4, {}, {AB: 8}), [A, B]) == {B: 4}


def test_a_replica_still_at_its_initial_state_restarts_from_it():
    book = LocalCheckpointRecords()
    book.add(CheckpointRecord(A, 1, {AB: 2}, {}), [A, B])
    assert book.stable_line() == [CheckpointRecord(A, 1, {AB: 2}, {})]
    result = restarted_from(book).recover([A, B], {A, B})
    assert result.line == {A: 1, B: 0} and result.replay == {AB: (1, 2)}


def test_a_damaged_checkpoint_of_the_restored_line_cannot_fall_back():
    book = LocalCheckpointRecords()
    _lockstep(book, 2)
    with pytest.raises(StateNoLongerKept, match="local checkpoint 2 of b0.r0, on the stable line this run restored"):
        restarted_from(book).forget(A, 2)


@pytest.mark.parametrize("data", [b"{}", b"[]", b"not json", b'{"line": [{"process": "b0.r0"}], "processes": []}'])
def test_an_unreadable_stored_line_is_refused(data):
    with pytest.raises(ValueError, match="not a stored stable line"):
        decode_line(data)


def test_log_segments_stored_before_a_restored_line_go_with_the_line_checkpoints_own():
    """No record of this run says what A's segments 1-2 hold; they hold messages sent
    before its line checkpoint 3's, so they go once segment 3 may go, not before."""
    book = LocalCheckpointRecords()
    _lockstep(book, 2)
    book.add(CheckpointRecord(A, 3, {AB: 6}, {}), [A, B])      # 5..6 in transit to B at the line
    assert book.line == {A: 3, B: 2}
    again = restarted_from(book, {A: {1, 2}, B: {1}}, retain=1)
    _, first = again.newly_collectable()
    assert not {(A, 1), (A, 2), (A, 3)} & first, "a replay of 5..6 reads A's segment 3"
    assert {(B, 1), (B, 2)} <= first                            # B sends nothing
    again.add(CheckpointRecord(B, 3, {}, {AB: 6}), [A, B])
    checkpoints, then = again.newly_collectable()
    assert checkpoints == {(B, 2)} and {(A, 1), (A, 2), (A, 3)} <= then
