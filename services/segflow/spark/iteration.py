"""iterate and replay on Spark: the iteration leader is the driver.

Each round evaluates the loop body's blocks on the round's input with the iteration state
broadcast to the workers (the body reads it with ``state.get()``), folds each partition's
output into a delta, and folds the collected deltas into the state on the driver, which
then decides whether to go on. A round's output is cached and its lineage cut, so a long
loop does not grow an ever longer chain of dependencies.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable

from ..errors import UserFunctionError
from ..plan.graph import BlockSpec
from ..runtime.context import set_iteration_state
from ..runtime.operators.aggregate import Fold, fresh
from ..runtime.operators.iteration import FEEDBACK, OUTER, RESULT_PORT, IterationEnd, IterationLeader, IterationStart
from . import steps
from .errors import PartitionFn
from .flows import Flow, records_of
from .partition import over_partition
from .translate import Step, then

if TYPE_CHECKING:
    from pyspark import Broadcast

    from .runner import Translation

steps.register("iteration", steps.LoopPart())      # IterationEnd, IterationLeader: run_loop runs them


@steps.head("iteration_start")
def round_input(t: "Translation", block: BlockSpec, head: IterationStart) -> Flow:
    """What enters the loop body in the current round."""
    assert t.loop is not None, "a loop body's block is evaluated only within a round"
    return t.loop.data


@dataclass
class Round:
    """One round of a loop being evaluated: the body's input, the state it reads, and the
    body's flows (new every round)."""

    scope: int
    data: Flow
    state: "Broadcast"
    flows: dict = field(default_factory=dict)
    cached: list = field(default_factory=list)

    def with_state(self, partition: PartitionFn) -> PartitionFn:
        """``partition`` run with the round's state readable by the body's functions."""
        scope, state = self.scope, self.state

        def run(elements: Iterable) -> Any:
            set_iteration_state(scope, state.value)
            return partition(elements)
        return run

    def call_with_state(self, fn: Callable) -> Callable:
        """``fn`` for Spark to call (combining functions), with the round's state readable."""
        scope, state = self.scope, self.state

        def call(*args: Any) -> Any:
            set_iteration_state(scope, state.value)
            return fn(*args)
        return call

    def release(self) -> None:
        for rdd in self.cached:
            rdd.unpersist()
        self.state.unpersist()


def _blocks(t: "Translation", scope: int) -> tuple[BlockSpec, BlockSpec, BlockSpec]:
    """The loop's start, end (last body block) and leader blocks."""
    def find(test: Callable[[list], bool]) -> BlockSpec:
        return next(b for b in t.graph.blocks if t.ops[b.id] and test(t.ops[b.id]))
    start = find(lambda ops: type(ops[0]) is IterationStart and ops[0].scope == scope)
    leader = find(lambda ops: type(ops[0]) is IterationLeader and ops[0].scope == scope)
    end = next(b for b in t.graph.blocks
               if b.scope == scope and t.ops[b.id] and type(t.ops[b.id][-1]) is IterationEnd)
    return start, end, leader


def run_loop(t: "Translation", scope: int) -> None:
    """Run the loop of ``scope`` to the end; sets the flows of its state stream (the
    leader's output) and, for ``iterate``, of its result (the last round's output)."""
    start, end, leader = _blocks(t, scope)
    first, last, lead = t.ops[start.id][0], t.ops[end.id][-1], t.ops[leader.id][0]
    assert isinstance(first, IterationStart) and isinstance(last, IterationEnd) and isinstance(lead, IterationLeader)
    n = t.plan.replicas[start.id]
    inputs = {e.dst_input: e for e in t.graph.inputs_of(start.id)}
    outer = t.edge_input(inputs[OUTER], n)
    if first.replay:
        outer = t.keep(outer, None)
    fold = over_partition(Fold(last.local_fold, last.delta_init), stamped=False, stamped_out=False)
    state, body_state = fresh(lead.initial_state), fresh(first.initial_state)
    data, iteration, previous = outer, 0, None
    while True:
        t.loop = current = Round(scope, data, t.sc.broadcast(body_state))
        out = t.evaluate(end, t.ops[end.id][:-1])
        out.rdd.persist()
        out.rdd.localCheckpoint()
        deltas = t.run_step(end, last, out, Step(then(records_of(out.stamped), fold), False)).rdd.collect()
        t.loop = None
        if previous is not None:
            previous.release()
        current.cached.append(out.rdd)
        previous = current
        iteration += 1
        state, proceed = _decide(lead, state, deltas, iteration)
        if not proceed:
            break
        body_state = state
        data = outer if first.replay else t.edge_input(inputs[FEEDBACK], n, out)
    t.cached += previous.cached
    t.broadcasts.append(previous.state)
    t.flows[(leader.id, 0)] = Flow(t.sc.parallelize([state], 1))
    if not first.replay:
        t.flows[(start.id, RESULT_PORT)] = t.edge_input(inputs[FEEDBACK], n, out)


def _decide(lead: IterationLeader, state: Any, deltas: list, iteration: int) -> tuple[Any, bool]:
    """The leader's step after a round: fold the deltas in, then ask the loop condition."""
    try:
        for delta in deltas:
            state = lead.global_fold(state, delta)
        proceed = True if lead.loop_condition is None else bool(lead.loop_condition(state))
    except Exception as exc:
        raise UserFunctionError(lead.name, lead.location, "driver", iteration, state, exc) from exc
    return state, proceed and iteration < lead.max_iterations


def is_loop_output(ops: list, port: int) -> int | None:
    """The scope of the loop whose run yields this output (state or result), if any."""
    if ops and type(ops[0]) is IterationLeader and port == 0:
        return ops[0].scope
    if ops and type(ops[0]) is IterationStart and port == RESULT_PORT:
        return ops[0].scope
    return None
