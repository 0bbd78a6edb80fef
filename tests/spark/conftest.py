"""One Spark session for every Spark test (starting one takes about 10 s), and running one
pipeline on both engines."""
from __future__ import annotations

import collections
from typing import Callable

import pytest

from segflow import StreamEnvironment, StreamOutput
from segflow.spark.runner import run_on_spark
from segflow.spark.session import get_session, stop_session

Build = Callable[[StreamEnvironment], StreamOutput]


@pytest.fixture(scope="session")
def spark():
    session = get_session("local[2]")
    yield session
    stop_session()


def multiset(records: list) -> collections.Counter:
    """Records as a multiset; ``repr`` makes lists and dicts countable and floats exact."""
    return collections.Counter(map(repr, records))


def on_both(build: Build, parallelism: int) -> tuple[list, list]:
    """The records ``build`` collects on the segflow engine (in process) and on Spark."""
    engine = StreamEnvironment(parallelism=parallelism)
    expected = build(engine)
    engine.execute()
    batch = StreamEnvironment(parallelism=parallelism)
    got = build(batch)
    run_on_spark(batch)
    return expected.get(), got.get()


@pytest.fixture(scope="session")
def both_engines(spark) -> Callable[[Build, int], tuple[list, list]]:
    return on_both


@pytest.fixture(scope="session")
def same_on_both(spark) -> Callable[[Build, int], list]:
    """Assert that both engines collect the same multiset (and something); returns it."""
    def check(build: Build, parallelism: int) -> list:
        expected, got = on_both(build, parallelism)
        assert expected, "the pipeline produced nothing: the comparison would prove nothing"
        assert multiset(got) == multiset(expected)
        return got
    return check
