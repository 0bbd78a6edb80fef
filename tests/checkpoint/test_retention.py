"""Garbage collection of uncoordinated checkpoints: nothing a future recovery needs goes."""
from segflow.checkpoint.recovery_line import CheckpointRecord, recovery_line
from segflow.checkpoint.retention import SavepointRetention, collectable

A, B = "a", "b"
AB = (A, B)


def records(*checkpoints):
    result = {}
    for process, index, sent, processed in checkpoints:
        result.setdefault(process, {})[index] = CheckpointRecord(process, index, sent, processed)
    return result


def test_checkpoints_before_the_stable_line_and_fully_processed_segments_go():
    history = records((A, 1, {AB: 5}, {}), (A, 2, {AB: 9}, {}), (A, 3, {AB: 12}, {}),
                      (B, 1, {}, {AB: 4}), (B, 2, {}, {AB: 9}))
    checkpoints, segments = collectable(history, {A: 2, B: 2})
    assert checkpoints == {(A, 1), (B, 1)}
    assert segments == {(A, 1), (A, 2), (B, 1), (B, 2)}     # b sends nothing: its segments are empty


def test_a_segment_with_a_message_the_receiver_has_not_processed_stays():
    history = records((A, 1, {AB: 5}, {}), (A, 2, {AB: 9}, {}), (B, 1, {}, {AB: 4}))
    checkpoints, segments = collectable(history, {A: 1, B: 1})
    assert (A, 1) not in segments           # message 5 is in transit on the stable line
    assert checkpoints == set()


def test_nothing_collected_is_needed_by_any_later_recovery_line():
    history = records((A, 1, {AB: 3}, {}), (A, 2, {AB: 7}, {}), (A, 3, {AB: 10}, {}),
                      (B, 1, {}, {AB: 2}), (B, 2, {}, {AB: 7}), (B, 3, {}, {AB: 8}))
    flat = [CheckpointRecord(A, 0), CheckpointRecord(B, 0)] + [r for p in history.values() for r in p.values()]
    stable = recovery_line(flat, set()).line
    checkpoints, segments = collectable(history, stable)
    history[A][4] = CheckpointRecord(A, 4, {AB: 15}, {})
    history[B][4] = CheckpointRecord(B, 4, {}, {AB: 15})
    later = recovery_line([CheckpointRecord(A, 0), CheckpointRecord(B, 0)] +
                          [r for p in history.values() for r in p.values()], {A}).line
    assert all((p, i) not in checkpoints for p, i in later.items())
    for (sender, receiver), (first, _last) in recovery_line(
            [r for p in history.values() for r in p.values()] + [CheckpointRecord(A, 0), CheckpointRecord(B, 0)],
            {A}).replay.items():
        needed = {i for i, r in history[sender].items() if i > 0 and r.sent.get((sender, receiver), 0) >= first}
        assert not needed & {i for p, i in segments if p == sender}


def test_savepoints_are_kept_by_count_and_by_age():
    taken = {3: 100.0, 9: 200.0, 14: 300.0, 20: 400.0}
    assert SavepointRetention().expired(taken, now=10_000.0) == set()
    assert SavepointRetention(keep=2).expired(taken, now=500.0) == {3, 9}
    assert SavepointRetention(max_age=150.0).expired(taken, now=420.0) == {3, 9}
    assert SavepointRetention(keep=3, max_age=250.0).expired(taken, now=420.0) == {3}
    assert SavepointRetention(keep=1, max_age=10.0).expired(taken, now=420.0) == {3, 9, 14, 20}
