"""Bad pipelines and failing user code give specific exceptions whose messages say what
went wrong and what to do, found while building when possible."""
import pytest
from support.pipelines import run

import segflow
from segflow import (BatchMode, CountWindow, EventTimeWindow, PipelineError, ProcessingTimeWindow,
                     SegflowError, UserFunctionError)

HERE = "test_errors.py"


def failure(build, parallelism=1):
    with pytest.raises(UserFunctionError) as caught:
        run(build, parallelism)
    return caught.value


def test_a_raising_function_names_operator_place_replica_position_and_record():
    """Position counts the records this replica's operator has seen, across batches."""
    error = failure(lambda env: env.from_iterable(range(3000)).map(lambda x: 10 // (x - 2500)), 2)
    assert error.operator.startswith("map(") and HERE in error.location
    assert error.record == 2500 and error.position == 2500 and isinstance(error.cause, ZeroDivisionError)
    assert error.replica.startswith("b0.r")
    text = str(error)
    assert "ZeroDivisionError" in text and "record #2500" in text and error.location in text


@pytest.mark.parametrize("build,operator,record", [
    (lambda env: env.from_iterable([("a", 1), ("b", 0)]).group_by(lambda r: r[0]).map(lambda k, r: 1 // r[1]),
     "map", ("b", ("b", 0))),
    (lambda env: env.from_iterable([1, 0]).filter(lambda x: 1 // x), "filter", 0),
    (lambda env: env.from_iterable([1, 0]).flat_map(lambda x: [1 // x]), "flat_map", 0),
    (lambda env: env.from_iterable([1, 0]).filter_map(lambda x: 1 // x), "filter_map", 0),
    (lambda env: env.from_iterable([1, 0]).rich_map(lambda: lambda x: 1 // x), "rich_map", 0),
    (lambda env: env.from_iterable([1, 0]).fold(0, lambda acc, x: acc + 1 // x), "fold", 0),
    (lambda env: env.from_iterable([1, 0]).group_by_sum(lambda x: 1 // x), "group_by_sum", 0),
    (lambda env: env.from_iterable([1, 2, 0]).group_by_fold(lambda x: x % 2, 0, lambda acc, x: acc + 1 // x,
                                                            lambda a, b: a + b), "group_by_fold", 0),
    (lambda env: env.from_iterable([("a", 1), ("a", 0)]).group_by_reduce(lambda r: r[0],
                                                                         lambda a, b: (a[0], a[1] // b[1])),
     "group_by_reduce", ("a", 0)),
    (lambda env: env.from_iterable([1, 0]).key_by(lambda x: 1 // x), "key_by", 0),
    (lambda env: env.from_iterable([1, 0]).add_timestamps(lambda x: 1 // x), "add_timestamps", 0),
    (lambda env: env.from_iterable([1, 0]).window_all(CountWindow.tumbling(2)).map(lambda w: 1 // w[1]),
     "count_window(2, 2).map", [1, 0]),
])
def test_failures_in_every_kind_of_operator_are_reported_with_the_record(build, operator, record):
    error = failure(build)
    assert error.operator.startswith(operator) and HERE in error.location
    assert error.record == record and isinstance(error.cause, ZeroDivisionError)


def test_a_failing_sink_and_iteration_fold_are_reported(tmp_path):
    error = failure(lambda env: env.from_iterable([1, 2]).map(lambda x: x).shuffle().inspect(
        lambda x: 1 // (x - 2)).filter(lambda x: False))
    assert error.operator.startswith("inspect") and error.record == 2
    env = segflow.StreamEnvironment()
    env.from_iterable([1, 2]).write_text(str(tmp_path), lambda x: 1 // (x - 1))
    with pytest.raises(UserFunctionError, match="write_text") as caught:
        env.execute()
    assert caught.value.record == 1
    error = failure(lambda env: env.from_iterable([3]).iterate(2, 0, lambda s, st: s, lambda d, x: d / 0,
                                                               lambda s, d: s, delta_init=0)[0])
    assert error.operator == "iterate.end" and error.record == 3


@pytest.mark.parametrize("method", ["map", "filter", "flat_map", "filter_map", "inspect"])
def test_keyed_functions_must_take_key_and_value(method):
    env = segflow.StreamEnvironment()
    keyed = env.from_iterable([1, 2]).group_by(lambda x: x)
    with pytest.raises(PipelineError, match=r"KeyedStream .* two arguments.*lambda key, value.*drop_key"):
        getattr(keyed, method)(lambda x: x)


@pytest.mark.parametrize("method", ["map", "filter", "flat_map", "filter_map", "inspect"])
def test_plain_functions_must_take_one_record(method):
    env = segflow.StreamEnvironment()
    with pytest.raises(PipelineError, match=r"one argument.*group_by\(key\) or .key_by\(key\)"):
        getattr(env.from_iterable([1, 2]), method)(lambda key, value: value)


def test_functions_that_can_take_the_arguments_are_accepted():
    """Defaults, *args and builtins without a signature are all fine."""
    got = run(lambda env: env.from_iterable([[1], [2, 3]]).map(len).group_by(lambda n: n)
              .map(lambda k, v, extra=0: v + extra).filter(lambda *kv: True).unkey().map(str))
    assert got == ["(1, 1)", "(2, 2)"]


@pytest.mark.parametrize("make,message", [
    (lambda: CountWindow.tumbling(0), "size must be positive, got 0"),
    (lambda: CountWindow.sliding(5, 0), "step must be positive"),
    (lambda: CountWindow(-2, 1), "size must be positive"),
    (lambda: EventTimeWindow.tumbling(-1), "size must be positive"),
    (lambda: EventTimeWindow.sliding(10, 0), "step must be positive"),
    (lambda: EventTimeWindow.session(0), "gap must be positive"),
    (lambda: EventTimeWindow(size=0), "size must be positive"),
    (lambda: EventTimeWindow(), r"needs a size or a gap: use EventTimeWindow.tumbling"),
    (lambda: ProcessingTimeWindow.tumbling(0.0), "size must be positive"),
    (lambda: ProcessingTimeWindow.session(-0.5), "gap must be positive"),
])
def test_windows_with_nonpositive_sizes_are_refused(make, message):
    with pytest.raises(PipelineError, match=message):
        make()


@pytest.mark.parametrize("build,message", [
    (lambda env: env.from_iterable([1]).map(42), "map needs a function, got int"),
    (lambda env: env.from_iterable(5), "from_iterable needs an iterable"),
    (lambda env: env.from_parallel([1]), "from_parallel needs a function"),
    (lambda env: env.generate(str, count=-1), "count must be >= 0"),
    (lambda env: env.generate(str, rate=0), "rate must be > 0"),
    (lambda env: env.generate(str, count=5, catch_up=True), "catch_up applies to a paced generator: give a rate"),
    (lambda env: env.generate(str, rate=5, arrivals="bursty"), "arrivals must be one of steady, poisson, got 'bursty'"),
    (lambda env: env.generate(str, count=5, arrivals="poisson"), "spaces a paced generator's records: give a rate"),
    (lambda env: env.from_iterable([1]).split(0), "split needs an integer >= 1"),
    (lambda env: env.from_iterable([1]).max_parallelism(0), "max_parallelism needs an integer >= 1"),
    (lambda env: env.from_iterable([1]).batch_mode("fast"), r"BatchMode.fixed\(n\)"),
    (lambda env: env.from_iterable([1]).group_by(str).group_by(str), r"keyed already: call .unkey\(\)"),
    (lambda env: env.from_iterable([1]).group_by(str).add_timestamps(str), "call it before group_by"),
    (lambda env: env.from_iterable([1]).window_all("tumbling"), "window needs CountWindow"),
    (lambda env: env.from_iterable([1]).iterate(0, 0, lambda s, st: s, lambda d, x: d, lambda s, d: s),
     "iterate needs max_iterations >= 1"),
    (lambda env: env.from_iterable([1]).replay(2, 0, lambda s, st: env.from_iterable([2]), lambda d, x: d,
                                               lambda s, d: s), "must return a stream built from the stream"),
    (lambda env: env.from_iterable([1]).add_timestamps(int).shuffle().iterate(
        2, 0, lambda s, st: s, lambda d, x: d, lambda s, d: s), "does not support timestamped streams"),
])
def test_bad_pipelines_are_refused_while_building(build, message):
    with pytest.raises(PipelineError, match=message):
        build(segflow.StreamEnvironment())


def test_nested_iterations_are_refused():
    env = segflow.StreamEnvironment()

    def body(s, st):
        return s.iterate(2, 0, lambda s2, st2: s2, lambda d, x: d, lambda a, d: a)[1]
    with pytest.raises(PipelineError, match="inside another iteration's body is not supported"):
        env.from_iterable([1]).iterate(2, 0, body, lambda d, x: d, lambda s, d: s)


@pytest.mark.parametrize("build,message", [
    (lambda env: env.from_iterable([1]).group_by(str).join(env.from_iterable([1]), str, str),
     r"join works on non-keyed streams: call .unkey\(\) or .drop_key\(\)"),
    (lambda env: env.from_iterable([1]).left_join(env.from_iterable([1]).group_by(str), str, str), "non-keyed"),
    (lambda env: env.from_iterable([1]).join(env.from_iterable([1]), str, 3), "join needs a function"),
    (lambda env: env.from_iterable([1]).join_with(env.from_iterable([1]), str, str).ship_broadcast_right().outer(),
     r"outer join cannot ship broadcast-right.*use .ship_hash\(\)"),
    (lambda env: env.from_iterable([1]).interval_join(env.from_iterable([1]).group_by(str), 1, 1),
     "both streams keyed or both not keyed"),
    (lambda env: env.from_iterable([1]).concat(env.from_iterable([1]).group_by(str)), "both streams keyed"),
    (lambda env: env.from_iterable([1]).add_timestamps(int).concat(env.from_iterable([1])),
     "both streams timestamped or neither: call add_timestamps on the other stream too"),
    (lambda env: env.from_iterable([1]).concat(env.from_iterable([1]).add_timestamps(int)),
     "call add_timestamps on the first stream too"),
    (lambda env: env.from_iterable([1]).group_by(str).window(CountWindow.tumbling(2)).join(
        env.from_iterable([1]).window_all(CountWindow.tumbling(2))), r"both streams keyed \(.group_by"),
    (lambda env: env.from_iterable([1]).window_all(CountWindow.tumbling(2)).join(
        env.from_iterable([1]).window_all(CountWindow.tumbling(3))), "windowed the same way"),
])
def test_joins_of_mismatched_streams_are_refused(build, message):
    with pytest.raises(PipelineError, match=message):
        build(segflow.StreamEnvironment())


def test_timestamps_survive_a_shuffle_for_the_concat_check():
    env = segflow.StreamEnvironment()
    stamped = env.from_iterable([1]).add_timestamps(int).shuffle().group_by(str).drop_key()
    assert stamped.concat(env.from_iterable([2]).add_timestamps(int)).block.timestamped
    folded = env.from_iterable([1]).add_timestamps(int).group_by(str).fold(0, max).drop_key()
    folded.concat(env.from_iterable([2]))            # a fold's results carry no timestamps


def test_a_stream_feeds_one_operator():
    env = segflow.StreamEnvironment()
    stream = env.from_iterable([1])
    stream.map(str)
    with pytest.raises(PipelineError, match=r"already used by map\(str\).*call .split\(n\)"):
        stream.map(repr)


def test_nothing_can_be_added_or_run_after_execute():
    env = segflow.StreamEnvironment()
    stream = env.from_iterable([1])
    left_over = env.from_iterable([2])
    out = stream.map(str).collect()
    left_over.map(str).collect()
    env.execute()
    assert out.get() == ["1"]
    for late in (lambda: left_over, lambda: env.from_iterable([3])):
        with pytest.raises(PipelineError, match="has run already; build the next pipeline on a new StreamEnvironment"):
            late().map(str)
    with pytest.raises(SegflowError, match="has run already"):
        env.execute()


def test_outputs_before_execute_and_empty_pipelines():
    env = segflow.StreamEnvironment()
    out = env.from_iterable([1]).collect()
    with pytest.raises(SegflowError, match=r"call env.execute\(\) before output.get\(\)"):
        out.get()
    with pytest.raises(PipelineError, match="the pipeline is empty: add a source"):
        segflow.StreamEnvironment().execute()


@pytest.mark.parametrize("read", ["read_text", "read_csv"])
def test_a_missing_source_file_is_refused_while_building_not_while_planning(read):
    with pytest.raises(PipelineError, match=f"{read}: no such file: /no/such/file"):
        getattr(segflow.StreamEnvironment(), read)("/no/such/file")
    getattr(segflow.StreamEnvironment(planning_only=True), read)("/no/such/file")


def stamped(env, records):
    return env.from_iterable(records).add_timestamps(lambda x: x)


@pytest.mark.parametrize("build,message", [
    (lambda env: env.from_iterable([("a", 1)]).group_by(lambda r: r[0]).window(EventTimeWindow.tumbling(10)).count(),
     r"event_time_window\(10, 10\).count \(defined at .*test_errors.py:\d+\) needs timestamped records: "
     r"call add_timestamps before the window"),
    (lambda env: env.from_iterable([1, 2]).window_all(EventTimeWindow.session(5)).count(),
     r"event_time_session\(5\).count \(defined at .*test_errors.py:\d+\) needs timestamped records"),
    (lambda env: stamped(env, [1]).join(stamped(env, [1]), int, int).drop_key().window_all(
        EventTimeWindow.tumbling(5)).count(), r"event_time_window\(5, 5\).count .* hash joins"),
    (lambda env: stamped(env, [1]).zip(stamped(env, [2])).window_all(EventTimeWindow.tumbling(5)).sum(),
     r"event_time_window\(5, 5\).sum .* zips"),
    (lambda env: stamped(env, [1]).group_by(str).fold(0, max).drop_key().window_all(
        EventTimeWindow.tumbling(5)).max(), r"event_time_window\(5, 5\).max .* aggregates give none"),
    (lambda env: env.from_iterable([1]).window_all(CountWindow.tumbling(2)).count().window_all(
        EventTimeWindow.tumbling(5)).sum(), r"event_time_window\(5, 5\).sum "),
    (lambda env: stamped(env, [1]).window_all(EventTimeWindow.tumbling(5)).join(
        env.from_iterable([2]).window_all(EventTimeWindow.tumbling(5))), r"event_time_window\(5, 5\).join "),
    (lambda env: stamped(env, [1]).interval_join(env.from_iterable([2]), 1, 1),
     r"interval_join \(defined at .*test_errors.py:\d+\) needs timestamped streams on both sides; its right "
     r"input has none: call add_timestamps on it"),
    (lambda env: env.from_iterable([1]).interval_join(stamped(env, [2]), 1, 1), "its left input has none"),
])
def test_event_time_without_timestamps_is_refused_while_building_naming_the_operator(build, message):
    with pytest.raises(PipelineError, match=message):
        build(segflow.StreamEnvironment())


@pytest.mark.parametrize("build,want", [
    (lambda env: env.from_iterable([1, 2, 12]).window_all(ProcessingTimeWindow.tumbling(60)).count(), [3]),
    (lambda env: stamped(env, [1, 2, 12]).shuffle().group_by(lambda x: x % 2).window(
        EventTimeWindow.tumbling(10)).count().drop_key(), [1, 1, 1]),
    (lambda env: stamped(env, [1, 2, 12]).window_all(EventTimeWindow.tumbling(10)).sum().window_all(
        EventTimeWindow.tumbling(100)).sum(), [15]),
    (lambda env: stamped(env, [1, 12]).concat(stamped(env, [2])).window_all(EventTimeWindow.tumbling(10)).count(),
     [1, 2]),
    (lambda env: stamped(env, range(1, 21)).window_all(CountWindow.tumbling(2)).count().window_all(
        EventTimeWindow.tumbling(100)).sum(), [20]),
    (lambda env: stamped(env, [1, 12]).interval_join(stamped(env, [2, 13]), 1, 1).window_all(
        EventTimeWindow.tumbling(10)).count(), [1, 1]),
])
def test_event_time_after_what_keeps_timestamps_builds_and_runs(build, want):
    assert sorted(run(build)) == want


def test_a_failure_in_every_replica_stops_the_job_with_one_error():
    with pytest.raises(UserFunctionError):
        run(lambda env: env.from_parallel(lambda i, n: range(10_000)).map(lambda x: 1 // 0).shuffle().map(str), 4)


@pytest.mark.parametrize("settings,message", [
    ({"parallelism": 0}, "parallelism must be an integer >= 1, got 0"),
    ({"parallelism": "2"}, "parallelism must be an integer"),
    ({"runtime": "gpu"}, "runtime must be one of auto, threads, processes"),
    ({"runtime": "threads", "checkpoint_protocol": "aligned", "state_url": "file:///tmp/segflow-x"},
     "checkpoints need worker processes"),
    ({"checkpoint_protocol": "magic"}, "unknown checkpoint protocol 'magic': choose one of"),
    ({"checkpoint_protocol": "aligned"}, "needs a state store: --state file:///dir"),
    ({"retain": 0}, "retain must keep at least 1 checkpoint"),
    ({"restore": "latest"}, "--restore needs the --state URL"),
])
def test_bad_settings_are_refused(settings, message):
    with pytest.raises(SegflowError, match=message):
        segflow.StreamEnvironment(**settings)


def test_bad_batch_modes_are_refused():
    with pytest.raises(ValueError, match="batch size must be >= 1, got 0"):
        BatchMode.fixed(0)
    with pytest.raises(ValueError, match="size >= 1 and timeout > 0"):
        BatchMode.adaptive(10, 0)


@pytest.mark.parametrize("build,where", [
    (lambda env: env.from_iterable([("a", 5), ("b", 15), ("b", 16)]).add_timestamps(lambda r: r[1])
     .group_by(lambda r: r[0]).window(EventTimeWindow.tumbling(10)).map(lambda w: 1 // (len(w) - 2)),
     "window [10, 20) of key 'b'"),
    (lambda env: env.from_iterable([("a", 5), ("a", 8), ("a", 30)]).add_timestamps(lambda r: r[1])
     .group_by(lambda r: r[0]).window(EventTimeWindow.session(5)).map(lambda w: 1 // (len(w) - 2)),
     "window [5, 13) of key 'a'"),
    (lambda env: env.from_iterable([1, 2, 3]).add_timestamps(lambda x: x * 10)
     .window_all(EventTimeWindow.sliding(20, 10)).map(lambda w: 1 // (len(w) - 1)), "window [0, 20)"),
    (lambda env: env.from_iterable([("k", 1), ("k", 0)]).group_by(lambda r: r[0])
     .window(CountWindow.tumbling(2)).map(lambda w: 1 // w[1][1]), "count window of key 'k'"),
])
def test_a_failing_window_function_names_its_window_and_key(build, where):
    error = failure(build)
    assert error.context == where and f"({where})" in str(error)
    assert isinstance(error.cause, ZeroDivisionError)


def test_explained_names_the_store_the_operation_and_what_to_do_and_lets_the_rest_through():
    from segflow.errors import explained
    from segflow.state import StateStoreError

    cause = ConnectionRefusedError("refused")
    with pytest.raises(StateStoreError) as caught:
        with explained(StateStoreError, "store s3://b", "reading 'k'", OSError, lambda exc: f"failed: {exc}; start it"):
            raise cause
    assert str(caught.value) == "store s3://b: reading 'k' failed: refused; start it"
    assert caught.value.__cause__ is cause
    with pytest.raises(KeyError):
        with explained(StateStoreError, "store", "reading", OSError, str):
            raise KeyError("not an OSError")
