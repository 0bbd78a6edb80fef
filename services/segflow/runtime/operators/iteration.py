"""Iterations: the loop head, the per-replica delta fold, and the iteration leader.

Inputs of an iteration's start block: 0 = the stream entering the loop, 1 = the leader's
decisions, 2 = the feedback from the body's end (``iterate`` only). Output port 0 feeds
the body; port 1 carries the loop's result (the last iteration's output). The leader's
port 0 is the state stream; its port 1 broadcasts decisions to the start replicas.
"""
from __future__ import annotations

from typing import Any, Callable

from ..elements import END, TERMINATE, Barrier, Batch, EndOfStream, IterationUpdate, Terminate
from ..operator import Operator, Output, UserCall
from .aggregate import fresh

OUTER, LEADER, FEEDBACK = 0, 1, 2          # inputs of the start block
RESULT_PORT = 1                             # start block: the loop's result
DELTA_PORT = 2                              # end of the body: deltas to the leader
DECISION_PORT = 1                           # leader: decisions to the start replicas


class IterationStart(Operator):
    """Feeds one iteration at a time into the body, and waits for the leader in between
    (the iteration state lock: the next iteration starts only after every replica has
    the new state, which travels in band ahead of the data)."""

    spark_step = "iteration_start"

    handles_control = True
    state_fields = ("iteration", "started", "outer_ended", "feedback_ended", "pending", "cache", "feedback",
                    "result_closed")

    def __init__(self, scope: int, initial_state: Any, replay: bool):
        self.scope = scope
        self.initial_state = initial_state
        self.replay = replay
        self.iteration = 0
        self.started = False
        self.outer_ended = 0
        self.feedback_ended = 0
        self.pending: IterationUpdate | None = None
        self.cache: list = []
        self.feedback: list = []
        self.result_closed = False

    def on_barrier(self, barrier: Barrier) -> Output:
        if not self.result_closed:
            self.ctx.side_output(RESULT_PORT, barrier)
        return None

    def _prologue(self) -> list:
        if self.started:
            return []
        self.started = True
        return [IterationUpdate(self.scope, 0, fresh(self.initial_state), True)]

    def process_input(self, input_index: int, batch: Batch) -> Output:
        if input_index == FEEDBACK:
            self.feedback.extend(batch.items)
            return None
        if self.replay:
            self.cache.extend(batch.items)
        return self._prologue() + [Batch(batch.items)]

    def on_input_control(self, input_index: int, sender: int, element: Any) -> Output:
        kind = type(element)
        if input_index == OUTER and kind is EndOfStream:
            self.outer_ended += 1
            if self.outer_ended == self.ctx.input_senders[OUTER]:
                return self._prologue() + [END]
        elif input_index == FEEDBACK and kind is EndOfStream:
            self.feedback_ended += 1
            return self._advance()
        elif input_index == LEADER and kind is IterationUpdate:
            self.pending = element
            return self._advance()
        elif kind is Terminate:
            return None
        return None

    def _advance(self) -> Output:
        update = self.pending
        if update is None:
            return None
        if not self.replay and self.feedback_ended < self.ctx.input_senders[FEEDBACK]:
            return None
        self.pending = None
        self.feedback_ended = 0
        data, self.feedback = self.feedback, []
        if update.proceed:
            self.iteration = update.iteration
            records = list(self.cache) if self.replay else data
            return [update, Batch(records), END]
        if not self.replay:
            self.ctx.side_output(RESULT_PORT, Batch(data))
        self.ctx.side_output(RESULT_PORT, END)
        self.ctx.side_output(RESULT_PORT, TERMINATE)
        self.result_closed = True
        return [update, TERMINATE]


class _ControlAlsoAside(Operator):
    """An iteration operator whose side port carries the loop's control: barriers and the
    job's termination must reach the replicas on the other end of it too."""

    spark_step = "iteration"

    control_port: int

    def on_barrier(self, barrier: Barrier) -> Output:
        self.ctx.side_output(self.control_port, barrier)
        return None

    def on_terminate(self) -> Output:
        self.ctx.side_output(self.control_port, TERMINATE)
        return None


class IterationEnd(_ControlAlsoAside):
    """Folds the body's output of this replica into a delta; at the end of an iteration
    sends the delta to the leader. With ``feedback`` the records also loop back."""

    state_fields = ("delta",)
    control_port = DELTA_PORT

    def __init__(self, local_fold: Callable, delta_init: Any, feedback: bool):
        self.local_fold = local_fold
        self.delta_init = delta_init
        self.feedback = feedback
        self.delta = fresh(delta_init)
        self.call = UserCall(self)

    def process(self, batch: Batch) -> Output:
        fold = self.local_fold
        delta = self.delta
        items = batch.items
        i = 0
        try:
            for i, x in enumerate(items):
                delta = fold(delta, x)
        except Exception as exc:
            raise self.call.error(exc, i, items[i]) from exc
        self.call.seen += len(items)
        self.delta = delta
        return Batch(items) if self.feedback else None

    def on_end(self) -> Output:
        delta, self.delta = self.delta, fresh(self.delta_init)
        self.ctx.side_output(DELTA_PORT, Batch([delta]))
        self.ctx.side_output(DELTA_PORT, END)
        return None


class IterationLeader(_ControlAlsoAside):
    """The single replica that owns the iteration state: folds the deltas of all replicas,
    checks the loop condition and the iteration limit, and broadcasts the decision."""

    state_fields = ("state", "iteration", "done")
    control_port = DECISION_PORT

    def __init__(self, scope: int, max_iterations: int, initial_state: Any,
                 global_fold: Callable, loop_condition: Callable | None):
        self.scope = scope
        self.max_iterations = max_iterations
        self.initial_state = initial_state
        self.global_fold = global_fold
        self.loop_condition = loop_condition
        self.state = fresh(initial_state)
        self.iteration = 0
        self.done = False
        self.call = UserCall(self)

    def process(self, batch: Batch) -> Output:
        state = self.state
        try:
            for delta in batch.items:
                state = self.global_fold(state, delta)
        except Exception as exc:
            raise self.call.error(exc, 0, delta) from exc
        self.state = state
        return None

    def on_end(self) -> Output:
        """An iteration is over. The loop condition sees every iteration's state, the last
        one included: like Noir's ``&mut state`` it may finish the iteration's work in
        place (e.g. turn summed deltas into new centroids) before deciding."""
        self.iteration += 1
        proceed = True
        if self.loop_condition is not None:
            try:
                proceed = bool(self.loop_condition(self.state))
            except Exception as exc:
                raise self.call.error(exc, self.iteration, self.state) from exc
        proceed = proceed and self.iteration < self.max_iterations
        self.ctx.side_output(DECISION_PORT, IterationUpdate(self.scope, self.iteration, self.state, proceed))
        if proceed:
            return None
        self.done = True
        return Batch([self.state])

    def passes_end(self) -> bool:
        return self.done
