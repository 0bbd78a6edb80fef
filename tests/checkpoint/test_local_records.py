"""The coordinator's bookkeeping for the uncoordinated protocols, without servers."""
from segflow.checkpoint.local_records import LocalCheckpointRecords
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
    book = LocalCheckpointRecords()
    for index, sent in ((1, 2), (2, 4), (3, 6)):
        book.add(CheckpointRecord(A, index, {AB: sent}, {}), [A, B])
        book.add(CheckpointRecord(B, index, {}, {AB: sent}), [A, B])
    checkpoints, segments = book.newly_collectable()
    assert checkpoints == {(A, 1), (A, 2), (B, 1), (B, 2)}
    assert {(A, 1), (A, 2), (A, 3)} <= segments
    assert book.newly_collectable() == (set(), set())
