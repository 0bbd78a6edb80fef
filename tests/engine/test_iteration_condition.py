"""The iteration's loop condition runs after every iteration, the last allowed one too,
and may finish the iteration's work in the state (Noir's ``&mut state``)."""
import segflow


def test_the_condition_sees_the_last_iteration_and_may_update_the_state():
    env = segflow.StreamEnvironment(parallelism=2)

    def condition(state):
        state["rounds"] += 1
        state["seen"].append(state["sum"])
        return True                       # never stops by itself: max_iterations does
    state, _ = env.from_iterable(range(10)).iterate(
        3, {"sum": 0, "rounds": 0, "seen": []}, lambda s, _st: s.map(lambda x: x + 1),
        local_fold=lambda d, x: d + x, global_fold=lambda st, d: {**st, "sum": st["sum"] + d},
        loop_condition=condition, delta_init=0)
    out = state.collect()
    env.execute()
    assert out.get() == [{"sum": 195, "rounds": 3, "seen": [55, 55 + 65, 55 + 65 + 75]}]
