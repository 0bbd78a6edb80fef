"""The Spark sources read exactly what the engine's replicas read (no Spark needed)."""
from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from segflow.runtime.operators.sources import BadInputLine, LineReader, byte_range
from segflow.spark.sources import read_csv, read_jsonl, read_lines

PIECES = st.sampled_from(["a", "bb", " ", "\n", "\r\n", "\r", "é", "\xff", "x\ty", ""])


def engine_lines(path: str, index: int, replicas: int) -> list[str]:
    start, end = byte_range(os.path.getsize(path), index, replicas)
    return [line for _, _, lines in LineReader(path, start, end).chunks() for line in lines]


@settings(max_examples=200, deadline=None)
@given(pieces=st.lists(PIECES, max_size=40), replicas=st.integers(1, 5))
def test_lines_per_replica_are_the_engines(pieces, replicas, tmp_path_factory):
    path = tmp_path_factory.mktemp("text") / "in.txt"
    data = "".join(pieces).encode("utf-8").replace("\xff".encode("utf-8"), b"\xff")   # also invalid UTF-8
    path.write_bytes(data)
    for index in range(replicas):
        assert list(read_lines(str(path), index, replicas)) == engine_lines(str(path), index, replicas)


def test_csv_rows_skip_the_header_once_and_empty_lines(tmp_path):
    path = tmp_path / "in.csv"
    path.write_text('name,n\n"x, y",1\n\nz,2\nw,"3"\n', encoding="utf-8")
    rows = [row for index in range(3) for row in read_csv(str(path), ",", True, index, 3)]
    assert rows == [{"name": "x, y", "n": "1"}, {"name": "z", "n": "2"}, {"name": "w", "n": "3"}]
    assert [row for index in range(2) for row in read_csv(str(path), ",", False, index, 2)] == [
        ["name", "n"], ["x, y", "1"], ["z", "2"], ["w", "3"]]


def test_csv_rows_longer_or_shorter_than_the_header_are_zipped_as_on_the_engine(tmp_path):
    path = tmp_path / "in.csv"
    path.write_text("a,b,a\n1,2,3\n4\n5,6,7,8\n9,10,11\n", encoding="utf-8")
    rows = [row for index in range(2) for row in read_csv(str(path), ",", True, index, 2)]
    assert rows == [{"a": "3", "b": "2"}, {"a": "4"}, {"a": "7", "b": "6"}, {"a": "11", "b": "10"}]


def test_json_lines_per_replica_are_the_engines_and_a_bad_line_is_named_alike(tmp_path):
    path = tmp_path / "in.jsonl"
    lines = ['{"n": %d}' % i if i % 7 else "" for i in range(300)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for replicas in (1, 2, 3):
        values = [v for index in range(replicas) for v in read_jsonl(str(path), index, replicas)]
        assert values == [{"n": i} for i in range(300) if i % 7]
    lines[151] = "{oops"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(BadInputLine, match="line 152: not JSON"):
        for index in range(3):
            list(read_jsonl(str(path), index, 3))
