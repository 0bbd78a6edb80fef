"""Which epochs the batch stage may process (pure), against a brute-force oracle: epoch K
is committed iff every replica's marker says it published everything up to K."""
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from segflow.batch import progress
from segflow.batch.plan import EpochRange, leftovers, next_range, partition, parts_in
from segflow.runtime.operators.two_phase import MarkerError, committed_through, parse_markers
from segflow.runtime.elements import FINAL_CHECKPOINT


def oracle_committed(markers, candidates):
    """The largest candidate epoch that every replica 0..n-1 has reached (0 if none)."""
    if not markers:
        return 0
    n = max(r for _, r in markers.values())
    ok = [k for k in candidates if all(i in markers and markers[i][0] >= k for i in range(n))]
    return max(ok, default=0)


@given(st.dictionaries(st.integers(0, 4), st.tuples(st.integers(1, 12), st.integers(1, 5)), max_size=5))
def test_committed_is_the_newest_epoch_every_replica_published(markers):
    assert committed_through(markers) == oracle_committed(markers, range(1, 13))


def test_final_is_committed_only_when_every_replica_finished():
    assert committed_through({0: (FINAL_CHECKPOINT, 2), 1: (7, 2)}) == 7
    assert committed_through({0: (FINAL_CHECKPOINT, 2), 1: (FINAL_CHECKPOINT, 2)}) == FINAL_CHECKPOINT


def test_a_missing_replica_commits_nothing():
    assert committed_through({0: (5, 3), 2: (5, 3)}) == 0


@given(st.integers(0, 20), st.integers(0, 20))
def test_the_next_range_follows_the_last_processed_epoch(committed, processed):
    epochs = next_range(committed, processed)
    expected = list(range(processed + 1, committed + 1))
    assert (list(range(epochs.first, epochs.last + 1)) if epochs else []) == expected


def test_markers_are_parsed_by_replica_and_bad_ones_named():
    markers = {"_committed/part-00001": json.dumps({"epoch": 4, "replicas": 2}).encode(),
               "_committed/.part-00000.tmp": b"half"}
    assert parse_markers(markers) == {1: (4, 2)}
    with pytest.raises(MarkerError, match="_committed/part-00000"):
        parse_markers({"_committed/part-00000": b"{"})


def test_parts_in_a_range_in_epoch_order():
    names = ["part-00001-e3.jsonl", "part-00000-e3.jsonl", "part-00000-e1.jsonl", "part-00000-end.jsonl",
             "part-00000-e10.jsonl", ".part-00000.epoch-4.pending", "part-00000.jsonl", "_committed/part-00000"]
    assert parts_in(names, EpochRange(2, 10)) == ["part-00000-e3.jsonl", "part-00001-e3.jsonl",
                                                   "part-00000-e10.jsonl"]
    assert parts_in(names, EpochRange(11, FINAL_CHECKPOINT)) == ["part-00000-end.jsonl"]


def test_partitions_and_the_leftovers_of_an_interrupted_run():
    assert partition(EpochRange(3, 7)) == "epochs=3-7/part-0.parquet"
    assert partition(EpochRange(8, FINAL_CHECKPOINT)) == "epochs=8-end/part-0.parquet"
    names = ["epochs=1-2/part-0.parquet", "epochs=3-7/part-0.parquet", "epochs=8-end/part-0.parquet",
             "_batch_stage/progress.json"]
    assert leftovers(names, 7) == ["epochs=8-end/part-0.parquet"]
    assert leftovers(names, 2) == ["epochs=3-7/part-0.parquet", "epochs=8-end/part-0.parquet"]


def test_progress_advances_only_after_a_successful_run():
    ok = progress.run_record(EpochRange(3, 7), 1.5, 100, 10, "")
    failed = progress.run_record(EpochRange(3, 9), 0.2, 0, 0, "ValueError: bad")
    after = progress.advanced({"lastEpoch": 2}, ok)
    assert after["lastEpoch"] == 7 and after["lastRun"]["epochs"] == "3-7"
    assert progress.advanced(after, failed) == {"lastEpoch": 7, "lastRun": failed}
    final = progress.advanced(after, progress.run_record(EpochRange(8, FINAL_CHECKPOINT), 1, 5, 1, ""))
    assert progress.finished(final) and progress.summary(final)["lastEpoch"] == "end"
    assert progress.summary(final)["lastRun"]["epochs"] == "8-end"


def test_part_lines_become_columns_by_format():
    from segflow.batch.records import to_table
    assert to_table("jsonl", ['{"a": 1, "b": "x"}', '{"a": 2}', "3"]).to_pylist() == [
        {"a": 1, "b": "x", "value": None}, {"a": 2, "b": None, "value": None},
        {"a": None, "b": None, "value": 3}]
    assert to_table("csv", ["1,x", "2"]).to_pylist() == [{"_c0": "1", "_c1": "x"}, {"_c0": "2", "_c1": None}]
    assert to_table("txt", ["a b", ""]).to_pylist() == [{"value": "a b"}, {"value": ""}]
