"""What Spark refuses before it starts, and how failures in users' functions come back."""
from __future__ import annotations

import pytest

from segflow import JobFailed, ProcessingTimeWindow, StreamEnvironment, UserFunctionError
from segflow.spark import UnsupportedOnSpark, run_on_spark


def parse(line):
    return int(line)


@pytest.mark.parametrize("build, message", [
    (lambda env: env.from_iterable(range(5)).window_all(ProcessingTimeWindow.sliding(2.0, 1.0)).sum().collect(),
     r"processing_time_window\(2.0, 1.0\).sum \(defined at .*test_spark_refusals.py:\d+\) cannot run on Spark: "
     r"processing-time windows depend on when records are read"),
    (lambda env: env.generate(lambda i: i).map(str).collect(),
     r"generate \(defined at .*\) cannot run on Spark: a generator without a count never ends; "
     r"give generate\(..., count=N\)"),
    (lambda env: env.from_iterable(range(5)).iterate(
        3, 0, lambda s, _: (lambda kept, shown: (shown.for_each(print), kept)[1])(*s.split(2)),
        lambda d, x: d, lambda s, d: s)[1].collect(),
     r"for_each\(print\) .* every stream of an iterate/replay body must lead to the body's end"),
])
def test_refused_before_spark_starts(build, message):
    env = StreamEnvironment(parallelism=2)
    build(env)
    with pytest.raises(UnsupportedOnSpark, match=message):
        run_on_spark(env, master="local[2]")


def test_a_failing_function_names_its_operator(spark):
    env = StreamEnvironment(parallelism=2)
    env.from_iterable(["1", "2", "three"]).map(parse).collect()
    with pytest.raises(JobFailed) as failure:
        run_on_spark(env)
    message = str(failure.value)
    assert message.startswith("map(parse) (defined at ") and "test_spark_refusals.py:" in message
    assert "raised ValueError: invalid literal for int() with base 10: 'three'" in message
    assert "\n" not in message


def test_a_failing_combining_function_names_its_operator(spark):
    env = StreamEnvironment(parallelism=2)
    env.generate(lambda i: i, count=50).group_by_reduce(lambda x: x % 3, lambda a, b: a // (b - b)).collect()
    with pytest.raises(JobFailed, match=r"^group_by_reduce\(.*<lambda>\) pre-aggregate \(defined at .*\) raised "
                                        r"ZeroDivisionError"):
        run_on_spark(env)


def test_a_failing_loop_condition_names_the_leader(spark):
    env = StreamEnvironment()
    env.from_iterable(range(5)).replay(3, 0, lambda s, _: s, lambda d, x: d + x, lambda s, d: s + d,
                                       loop_condition=lambda s: s["total"], delta_init=0).collect()
    with pytest.raises(UserFunctionError, match=r"replay.leader \(defined at .*\) raised TypeError"):
        run_on_spark(env)
