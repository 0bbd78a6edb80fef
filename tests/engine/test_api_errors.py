"""Bad pipelines and failing user code give specific exceptions that say what to do."""
import pytest
from conftest import run

import segflow
from segflow import CountWindow, EventTimeWindow, PipelineError, UserFunctionError


def test_a_raising_user_function_names_the_operator_the_place_and_the_record():
    with pytest.raises(UserFunctionError) as caught:
        run(lambda env: env.from_iterable([1, 2, 0, 4]).map(lambda x: 10 // x), 2)
    error = caught.value
    assert "map" in error.operator and "test_api_errors.py" in error.location
    assert error.record == 0 and isinstance(error.cause, ZeroDivisionError)
    assert "ZeroDivisionError" in str(error) and "record #" in str(error)


def test_keyed_functions_take_key_and_value():
    with pytest.raises(UserFunctionError, match="TypeError"):
        run(lambda env: env.from_iterable([1, 2]).group_by(lambda x: x).map(lambda x: x + 1))


@pytest.mark.parametrize("make,message", [
    (lambda: CountWindow.tumbling(0), "size"),
    (lambda: CountWindow.sliding(5, 0), "step"),
    (lambda: EventTimeWindow.tumbling(-1), "size"),
    (lambda: EventTimeWindow.session(0), "gap"),
])
def test_windows_with_nonpositive_sizes_are_refused(make, message):
    with pytest.raises(PipelineError, match=message):
        make()


@pytest.mark.parametrize("build,message", [
    (lambda env: env.from_iterable([1]).map(42), "map"),
    (lambda env: env.from_iterable(5), "iterable"),
    (lambda env: env.generate(str, count=-1), "count"),
    (lambda env: env.generate(str, rate=0), "rate"),
    (lambda env: env.from_iterable([1]).split(0), "split"),
    (lambda env: env.from_iterable([1]).max_parallelism(0), "max_parallelism"),
    (lambda env: env.from_iterable([1]).batch_mode("fast"), "BatchMode"),
    (lambda env: env.from_iterable([1]).group_by(str).group_by(str), "keyed already"),
    (lambda env: env.from_iterable([1]).group_by(str).join(env.from_iterable([1]), str, str), "non-keyed"),
    (lambda env: env.from_iterable([1]).concat(env.from_iterable([1]).group_by(str)), "both streams keyed"),
    (lambda env: env.from_iterable([1]).interval_join(env.from_iterable([1]).group_by(str), 1, 1), "both"),
    (lambda env: env.from_iterable([1]).join_with(env.from_iterable([1]), str, str).ship_broadcast_right().outer(),
     "ship_hash"),
    (lambda env: env.from_iterable([1]).window_all("tumbling"), "window needs"),
    (lambda env: env.from_iterable([1]).iterate(0, 0, lambda s, st: s, lambda d, x: d, lambda s, d: s), "iterate"),
    (lambda env: env.read_text("/no/such/file.txt"), "no such file"),
])
def test_bad_pipelines_are_refused_while_building(build, message):
    with pytest.raises(PipelineError, match=message):
        build(segflow.StreamEnvironment())


def test_a_stream_is_used_once():
    env = segflow.StreamEnvironment()
    stream = env.from_iterable([1])
    stream.map(str)
    with pytest.raises(PipelineError, match="split"):
        stream.map(repr)


def test_windows_over_time_need_timestamps():
    with pytest.raises(segflow.JobFailed, match="call add_timestamps first"):
        run(lambda env: env.from_iterable([("a", 1)]).group_by(lambda e: e[0])
            .window(EventTimeWindow.tumbling(10)).count())


def test_parallelism_must_be_positive():
    with pytest.raises(segflow.SegflowError, match="parallelism"):
        segflow.StreamEnvironment(parallelism=0)
