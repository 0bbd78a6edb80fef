"""iterate and replay: the leader's state (delta folds, global fold, loop condition), the
feedback of each iteration into the next, side inputs replayed every iteration, and
operators in the body starting afresh every iteration."""
from support.pipelines import bag, run

ADD = dict(local_fold=lambda d, x: d + x, global_fold=lambda s, d: s + d, delta_init=0)


def test_iterate_feeds_each_iteration_into_the_next(parallelism):
    def build(env):
        state, last = env.from_iterable(range(10)).shuffle().iterate(4, 0, lambda s, st: s.map(lambda x: x * 2), **ADD)
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


def test_the_condition_sees_every_iteration_and_may_update_the_state():
    """Like Noir's ``&mut state``, the condition may finish an iteration's work in place;
    it also runs after the last iteration allowed by max_iterations."""
    def condition(state):
        state["rounds"] += 1
        state["seen"].append(state["sum"])
        return True
    got = run(lambda env: env.from_iterable(range(10)).iterate(
        3, {"sum": 0, "rounds": 0, "seen": []}, lambda s, _st: s.map(lambda x: x + 1),
        local_fold=lambda d, x: d + x, global_fold=lambda st, d: {**st, "sum": st["sum"] + d},
        loop_condition=condition, delta_init=0)[0], 2)
    assert got == [{"sum": 195, "rounds": 3, "seen": [55, 55 + 65, 55 + 65 + 75]}]


def test_one_iteration_and_an_empty_input(parallelism):
    def build(env):
        state, last = env.from_iterable(range(4)).shuffle().iterate(1, 100, lambda s, st: s.map(lambda x: -x), **ADD)
        empty_state, empty_last = env.from_iterable([]).shuffle().iterate(3, 7, lambda s, st: s.map(abs), **ADD)
        return [state, last, empty_state, empty_last]
    state, last, empty_state, empty_last = run(build, parallelism)
    assert (state, sorted(last)) == ([100 - 6], [-3, -2, -1, 0])
    assert (empty_state, empty_last) == ([7], [])


def test_aggregations_and_rich_operators_in_the_body_start_afresh_every_iteration(parallelism):
    """A keyed fold in the body sums one iteration's records only: 0..8 by x % 3 gives
    9, 12, 15, then 36 (one key), then 36 again. A rich_map's state restarts too: a
    counter numbers every iteration's records from 1."""
    def fold_body(s, st):
        return s.group_by(lambda x: x % 3).fold(0, lambda acc, x: acc + x).drop_key()

    def counter():
        count = [0]

        def number(x):
            count[0] += 1
            return count[0]
        return number

    def build(env):
        _, folded = env.from_iterable(range(9)).iterate(3, 0, fold_body, **ADD)
        _, counted = env.from_iterable(range(5)).iterate(
            3, 0, lambda s, st: s.max_parallelism(1).rich_map(counter), **ADD)
        return [folded, counted]
    folded, counted = run(build, parallelism)
    assert folded == [36] and sorted(counted) == [1, 2, 3, 4, 5]


def test_replay_runs_every_iteration_over_the_same_input(parallelism):
    def build(env):
        return env.from_iterable(range(1, 11)).shuffle().replay(
            3, 0, lambda s, st: s.map(lambda x: x + st.get()), **ADD)
    state = 0
    for _ in range(3):
        state += sum(x + state for x in range(1, 11))
    assert run(build, parallelism) == [state]


def test_replay_stops_on_the_condition(parallelism):
    got = run(lambda env: env.from_iterable([1, 2, 3]).replay(
        50, 0, lambda s, st: s, loop_condition=lambda s: s < 20, **ADD), parallelism)
    assert got == [24]            # 6 per iteration: 6, 12, 18, 24 stops


def test_side_inputs_are_replayed_in_every_iteration(parallelism):
    def build(env):
        table = env.from_iterable([(i, i * 100) for i in range(5)])
        _, last = env.from_iterable([(i, 0) for i in range(5)]).iterate(
            3, 0, lambda s, st: s.join(table, lambda r: r[0], lambda t: t[0]).drop_key()
            .map(lambda pair: (pair[0][0], pair[0][1] + pair[1][1])),
            local_fold=lambda d, x: d + 1, global_fold=lambda s, d: s + d, delta_init=0)
        return last
    assert bag(run(build, parallelism)) == bag((i, i * 300) for i in range(5))


def test_until_none_flagged_stops_after_the_first_iteration_that_flags_nothing(parallelism):
    """Counting down to 0 flags a record while it still moves: the largest value, 6, takes
    six moving iterations, then one flags nothing (the fixed point) and the loop stops
    there, 20 iterations short of its maximum. Each record counts the iterations it saw."""
    from segflow import until_none_flagged

    def step(s, _st):
        return s.map(lambda r: (max(r[0] - 1, 0), r[0] > 0, r[2] + 1))
    state, last = run(lambda env: list(env.from_iterable([(v, True, 0) for v in (6, 2, 0, 5)]).shuffle().iterate(
        27, body=step, **until_none_flagged(lambda r: r[1]))), parallelism)
    assert state == [{"flagged": 0}]
    assert last == [(0, False, 7)] * 4
