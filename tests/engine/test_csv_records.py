"""CSV rows as dicts from a function compiled for the header: the dicts ``dict(zip(header,
row))`` gives, for any header text (none of it runs as code) and rows of any length."""
import pytest
from hypothesis import given, settings, strategies as st

from segflow.runtime.operators.csv_records import record_maker, records

names = st.text(alphabet=st.characters(codec="utf-8"), max_size=8) | st.sampled_from(
    ["__class__", "f0", "'); import os; ('", "}", "__builtins__", "lambda"])


@settings(max_examples=300, deadline=None)
@given(st.lists(names, max_size=7), st.data())
def test_a_compiled_header_makes_the_dicts_that_zip_makes(header, data):
    rows = data.draw(st.lists(st.lists(st.text(max_size=4), min_size=len(header), max_size=len(header)), max_size=5))
    make = record_maker(header)
    assert make(iter(rows)) == [dict(zip(header, row)) for row in rows]


@settings(max_examples=200, deadline=None)
@given(st.lists(names, min_size=1, max_size=5), st.lists(st.lists(st.text(max_size=3), max_size=8), max_size=6))
def test_rows_longer_or_shorter_than_the_header_are_zipped(header, rows):
    assert records(record_maker(header), header, lambda: iter(rows)) == [dict(zip(header, row)) for row in rows]


def test_a_row_of_another_length_than_the_header_is_refused_by_the_compiled_function():
    make = record_maker(["a", "b"])
    for row in (["1"], ["1", "2", "3"]):
        with pytest.raises(ValueError):
            make([["x", "y"], row])


def test_a_header_is_data_and_the_function_sees_no_builtins():
    make = record_maker(["__import__('os').getpid()", "x"])
    assert make([["1", "2"]]) == [{"__import__('os').getpid()": "1", "x": "2"}]
    assert make.__globals__["__builtins__"] == {}
