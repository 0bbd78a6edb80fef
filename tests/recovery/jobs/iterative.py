"""An iteration whose rounds take a while: each round adds 1 to every number, the state
counts the records seen; both the final state and the last round's output are written."""
import time


def slow_increment(x):
    if x % 200 == 0:
        time.sleep(0.01)
    return x + 1


def build(env, output, n="3000", rounds="30"):
    state, last = env.from_iterable(range(int(n))).shuffle().iterate(
        int(rounds), 0,
        lambda s, st: s.map(slow_increment),
        local_fold=lambda d, x: d + 1,
        global_fold=lambda s, d: s + d,
        delta_init=0)
    last.write_text(output)
    state.write_text(output + "-state")
