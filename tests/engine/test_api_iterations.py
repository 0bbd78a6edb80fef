"""iterate and replay: the leader's state, delta folds, loop conditions, side inputs."""
from conftest import bag, run


def test_iterate_feeds_each_iteration_into_the_next(parallelism):
    def build(env):
        state, last = env.from_iterable(range(10)).shuffle().iterate(
            4, 0, lambda s, st: s.map(lambda x: x * 2), local_fold=lambda d, x: d + x,
            global_fold=lambda s, d: s + d, delta_init=0)
        return [state, last]
    state, last = run(build, parallelism)
    assert sorted(last) == [x * 16 for x in range(10)]
    assert state == [sum(x * 2 ** k for x in range(10) for k in range(1, 5))]


def test_the_body_reads_the_state_and_the_condition_stops_the_loop(parallelism):
    def build(env):
        state, last = env.from_iterable(range(5)).iterate(
            100, 1, lambda s, st: s.map(lambda x: x + st.get()), local_fold=lambda d, x: max(d, x),
            global_fold=lambda s, d: max(s, d), loop_condition=lambda s: s < 50, delta_init=0)
        return [state, last]
    state, last = run(build, parallelism)
    expected, current = 1, list(range(5))
    while True:
        current = [x + expected for x in current]
        expected = max(expected, max(current))
        if expected >= 50:
            break
    assert state == [expected] and sorted(last) == sorted(current)


def test_replay_runs_every_iteration_over_the_same_input(parallelism):
    def build(env):
        return env.from_iterable(range(1, 11)).shuffle().replay(
            3, 0, lambda s, st: s.map(lambda x: x + st.get()), local_fold=lambda d, x: d + x,
            global_fold=lambda s, d: s + d, delta_init=0)
    state = 0
    for _ in range(3):
        state += sum(x + state for x in range(1, 11))
    assert run(build, parallelism) == [state]


def test_side_inputs_are_replayed_in_every_iteration(parallelism):
    def build(env):
        table = env.from_iterable([(i, i * 100) for i in range(5)])
        _, last = env.from_iterable([(i, 0) for i in range(5)]).iterate(
            3, 0, lambda s, st: s.join(table, lambda r: r[0], lambda t: t[0]).drop_key()
            .map(lambda pair: (pair[0][0], pair[0][1] + pair[1][1])),
            local_fold=lambda d, x: d + 1, global_fold=lambda s, d: s + d, delta_init=0)
        return last
    assert bag(run(build, parallelism)) == bag((i, i * 300) for i in range(5))
