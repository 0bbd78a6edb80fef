"""Loops: iterate (each iteration's output feeds the next) and replay."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from ..core import StreamCore, T

if TYPE_CHECKING:
    from ..iteration import IterationState
    from ..stream import Stream

Body = Callable[["Stream[Any]", "IterationState"], "Stream[Any]"]   # builds the loop body


class IterationOps(StreamCore[T]):
    def iterate(self, max_iterations: int, initial_state: Any, body: Body, local_fold: Callable[[Any, Any], Any],
                global_fold: Callable[[Any, Any], Any], loop_condition: Callable[[Any], Any] | None = None,
                delta_init: Any = None) -> "tuple[Stream[Any], Stream[Any]]":
        """Run ``body`` repeatedly, feeding each iteration's output into the next.

        ``body(stream, state)`` builds the loop body (``state.get()`` reads the iteration
        state). Each replica folds the body's output into a delta with
        ``local_fold(delta, record)`` (from ``delta_init``); the leader folds the deltas into
        the state with ``global_fold(state, delta)`` and goes on while
        ``loop_condition(state)`` holds, at most ``max_iterations`` times. The condition is
        called once after every iteration (the last one too) and may update a mutable
        state in place, e.g. to reset what ``global_fold`` accumulates per iteration. Returns
        ``(state stream with the final state, stream of the last iteration's output)``.

        Examples:
            Double every record until the sums of all iterations' outputs pass 100
            (12, then 24, 48, 96):

            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> state, last = env.from_iterable([1, 2, 3]).shuffle().iterate(
            ...     10, 0, lambda s, st: s.map(lambda x: x * 2), local_fold=lambda d, x: d + x,
            ...     global_fold=lambda total, d: total + d, loop_condition=lambda total: total <= 100, delta_init=0)
            >>> final, records = state.collect(), last.collect()
            >>> _ = env.execute()
            >>> final.get(), sorted(records.get())
            ([180], [16, 32, 48])
        """
        from ..iteration import build_iteration
        state, last = build_iteration(self, max_iterations, initial_state, body, local_fold, global_fold,
                                      loop_condition, delta_init, replay=False)
        assert last is not None, "an iterate (not a replay) has a result stream"
        return state, last

    def replay(self, max_iterations: int, initial_state: Any, body: Body, local_fold: Callable[[Any, Any], Any],
               global_fold: Callable[[Any, Any], Any], loop_condition: Callable[[Any], Any] | None = None,
               delta_init: Any = None) -> "Stream[Any]":
        """Like :meth:`iterate`, but every iteration replays this stream's records; the
        body's output only updates the state. Returns the state stream.

        Examples:
            Each iteration reads the same records and adds them, plus the state, to it
            (6, then 6 + 24, then 30 + 96):

            >>> env = segflow.StreamEnvironment(parallelism=2)
            >>> state = env.from_iterable([1, 2, 3]).shuffle().replay(
            ...     3, 0, lambda s, st: s.map(lambda x: x + st.get()), local_fold=lambda d, x: d + x,
            ...     global_fold=lambda total, d: total + d, delta_init=0)
            >>> out = state.collect()
            >>> _ = env.execute()
            >>> out.get()
            [126]
        """
        from ..iteration import build_iteration
        state, _ = build_iteration(self, max_iterations, initial_state, body, local_fold, global_fold,
                                   loop_condition, delta_init, replay=True)
        return state
