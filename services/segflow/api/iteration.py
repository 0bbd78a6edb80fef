"""Building iterations: the loop's blocks and edges around a user-built body."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from ..errors import PipelineError
from ..plan.graph import OperatorSpec, Strategy
from ..runtime.context import iteration_state
from ..runtime.operators.iteration import (DECISION_PORT, DELTA_PORT, FEEDBACK, LEADER, RESULT_PORT,
                                           IterationEnd,
                                           IterationLeader, IterationStart)
from .call_site import caller_location
from .core import StreamCore, _callable

if TYPE_CHECKING:
    from .stream import Stream


class IterationState:
    """Read-only handle on the iteration state inside a loop body: ``state.get()``.
    The body gets it as its second argument; the functions of the body's operators
    read it as they run, so each iteration sees the state the last one left.

    Examples:
        The state goes 10, 20, 50, 100; the record 0, 10, 30, 80:

        >>> env = segflow.StreamEnvironment(parallelism=1)
        >>> state, last = env.from_iterable([0]).iterate(
        ...     3, 10, lambda s, st: s.map(lambda x: x + st.get()), local_fold=lambda d, x: d + x,
        ...     global_fold=lambda total, d: total + d, delta_init=0)
        >>> out = last.collect()
        >>> _ = env.execute()
        >>> out.get()
        [80]
    """

    def __init__(self, scope: int):
        self.scope = scope

    def get(self) -> Any:
        """The iteration state as the leader's last ``global_fold`` left it (the initial
        state in the first iteration).

        Examples:
            >>> env = segflow.StreamEnvironment(parallelism=1)
            >>> state, last = env.from_iterable(["a"]).iterate(
            ...     2, "x", lambda s, st: s.map(lambda r: r + st.get()), local_fold=lambda d, r: r,
            ...     global_fold=lambda old, new: new, delta_init="")
            >>> out = last.collect()
            >>> _ = env.execute()
            >>> out.get()
            ['axax']
        """
        return iteration_state(self.scope)


def until_none_flagged(flag: Callable[[Any], Any]) -> dict[str, Any]:
    """``iterate``'s state, folds and condition for a loop run to a fixed point: each
    iteration counts the body's records that ``flag`` marks (a label that changed, a path
    that is new), and the loop goes on while the last iteration marked any.

    Examples:
        Count down to 0; a record is flagged while it still moves:

        >>> env = segflow.StreamEnvironment(parallelism=2)
        >>> step = lambda s, st: s.map(lambda r: (max(r[0] - 1, 0), r[0] > 0))
        >>> _, last = env.from_iterable([(3, True), (1, True)]).shuffle().iterate(
        ...     100, body=step, **segflow.until_none_flagged(lambda r: r[1]))
        >>> out = last.collect()
        >>> _ = env.execute()
        >>> out.get()
        [(0, False), (0, False)]
    """
    return {"initial_state": {"flagged": 0}, "local_fold": lambda n, record: n + bool(flag(record)),
            "global_fold": _add_flagged, "loop_condition": _any_flagged, "delta_init": 0}


def _add_flagged(state: dict[str, int], flagged: int) -> dict[str, int]:
    return {"flagged": state["flagged"] + flagged}


def _any_flagged(state: dict[str, int]) -> bool:
    """Called once per iteration: it also starts the next iteration's count."""
    flagged, state["flagged"] = state["flagged"], 0
    return flagged > 0


def build_iteration(stream: StreamCore[Any], max_iterations: int, initial_state: Any,
                    body: Callable[["Stream[Any]", IterationState], Any], local_fold: Callable[[Any, Any], Any],
                    global_fold: Callable[[Any, Any], Any], loop_condition: Callable[[Any], Any] | None,
                    delta_init: Any, replay: bool) -> tuple["Stream[Any]", "Stream[Any] | None"]:
    kind = "replay" if replay else "iterate"
    if not isinstance(max_iterations, int) or max_iterations < 1:
        raise PipelineError(f"{kind} needs max_iterations >= 1, got {max_iterations!r}")
    for name, fn in (("body", body), ("local_fold", local_fold), ("global_fold", global_fold)):
        _callable(f"{kind} {name}", fn)
    if stream.block.scope is not None:
        raise PipelineError(f"{kind} inside another iteration's body is not supported")
    if stream.block.timestamped:
        raise PipelineError(f"{kind} does not support timestamped streams")
    env = stream.env
    graph = env.graph
    location = caller_location()
    scope = env._new_scope()
    stream._consume(kind)

    start = env._new_block(stream.block, scope=scope)
    start.operators.append(OperatorSpec(
        f"{kind}.start", lambda: IterationStart(scope, initial_state, replay), location, stateful=True))
    graph.connect(stream.block, start, Strategy.FORWARD, dst_input=0)

    out = body(stream._next(start, keyed=False), IterationState(scope))
    if not isinstance(out, StreamCore) or out.block.scope != scope:
        raise PipelineError(f"the {kind} body must return a stream built from the stream it was given")
    out._consume(f"{kind}.end")
    end = out.block
    end.operators.append(OperatorSpec(
        f"{kind}.end", lambda: IterationEnd(local_fold, delta_init, feedback=not replay), location,
        stateful=True))

    leader = env._new_block(end, scope=None, max_parallelism=1)
    leader.operators.append(OperatorSpec(
        f"{kind}.leader",
        lambda: IterationLeader(scope, max_iterations, initial_state, global_fold, loop_condition),
        location, stateful=True))
    graph.connect(end, leader, Strategy.FORWARD, dst_input=0, port=DELTA_PORT)
    graph.connect(leader, start, Strategy.BROADCAST, dst_input=LEADER, port=DECISION_PORT, feedback=True)
    if not replay:
        graph.connect(end, start, Strategy.FORWARD, dst_input=FEEDBACK, feedback=True)

    state_block = env._new_block(leader, scope=None)
    graph.connect(leader, state_block, Strategy.FORWARD)
    state_stream = stream._next(state_block, keyed=False)
    if replay:
        return state_stream, None
    result_block = env._new_block(start, scope=None)
    graph.connect(start, result_block, Strategy.FORWARD, port=RESULT_PORT)
    return state_stream, stream._next(result_block, keyed=False)
