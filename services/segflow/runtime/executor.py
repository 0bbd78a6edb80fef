"""Runs one block replica: aligns its inputs (Noir's StartBlock), drives the operator
chain over batches, and hands the output to the router (Noir's EndBlock)."""
from __future__ import annotations

import time
from typing import Any

from ..plan.graph import BlockSpec
from .context import set_iteration_state
from .channels import Cancelled, Inbox
from .elements import (END, TERMINATE, Barrier, Batch, EndOfStream, FlushBatch,
                       IterationUpdate, Terminate, Watermark)
from .operator import Operator, ReplicaContext
from .routing import Router

IDLE_TICK = 0.2


class SourceOperator(Operator):
    """First operator of a source block: produces batches instead of receiving them."""

    def poll(self, max_items: int) -> Batch | None:
        """Next batch; an empty batch when nothing is ready yet; ``None`` when exhausted."""
        raise NotImplementedError


class InputState:
    """What the StartBlock tracks about one input of the block."""

    __slots__ = ("senders", "watermarks", "ended", "terminated", "replay", "feedback", "cache")

    def __init__(self, senders: int, replay: bool, feedback: bool):
        self.senders = senders
        self.watermarks: dict[int, Any] = {}
        self.ended = 0
        self.terminated = 0
        self.replay = replay
        self.feedback = feedback
        self.cache: list[Batch] | None = [] if replay else None


class ReplicaExecutor:
    """One block replica. ``run`` returns when every input has terminated."""

    def __init__(self, block: BlockSpec, ctx: ReplicaContext, inputs: list[InputState],
                 inbox: Inbox | None, router: Router, stop: Any = None):
        self.block = block
        self.stop = stop
        self.ctx = ctx
        self.inputs = inputs
        self.inbox = inbox
        self.router = router
        self.ops: list[Operator] = []
        for spec in block.operators:
            op = spec.factory()
            op.location = spec.location
            op.name = spec.name
            self.ops.append(op)
        if not self.ops:
            self.ops.append(Operator())
        self.head = self.ops[0]
        self.custom_control = getattr(self.head, "handles_control", False)
        self.tickers = [(i, op) for i, op in enumerate(self.ops) if hasattr(op, "on_tick")]
        self.frontier: Any = None
        self.iterations: dict[int, int] = {}
        self.records_in = 0
        self.born: float | None = None
        self.on_sink_batch: Any = None      # observes batch latency where the job ends
        self.finished = False
        self.tick = block.batch_mode.timeout or IDLE_TICK

    # ------------------------------------------------------------------ driving
    def run(self) -> None:
        for op in self.ops:
            op.open(self.ctx)
        try:
            if self.block.is_source:
                self._run_source()
            else:
                self._run_inputs()
        finally:
            for op in self.ops:
                op.close()

    def _run_source(self) -> None:
        source = self.head
        size = self.block.batch_mode.size
        assert isinstance(source, SourceOperator)
        stop = self.stop
        while True:
            if stop is not None and stop.is_set():
                raise Cancelled()
            batch = source.poll(size)
            if batch is None:
                break
            if batch.items:
                self.records_in += len(batch.items)
                self.born = time.time()
                self._push(1, batch)
            else:
                self._idle()
            self.router.flush_expired(time.monotonic())
        self._control(0, END)
        self._control(0, TERMINATE)

    def _run_inputs(self) -> None:
        inbox = self.inbox
        assert inbox is not None
        head = self.head
        while not self.finished:
            message = inbox.get(self.tick)
            if message is None:
                self._idle()
                continue
            index, sender, element = message
            if type(element) is Batch:
                self.records_in += len(element.items)
                self.born = element.born
                if self.on_sink_batch is not None and element.born is not None:
                    self.on_sink_batch(time.time() - element.born)
                state = self.inputs[index]
                if state.cache is not None and state.ended < state.senders:
                    state.cache.append(element)
                out = head.process_input(index, element)
                if out is not None:
                    self._emit(1, out)
            elif self.custom_control:
                self._custom_control(index, sender, element)
            else:
                self._align(index, sender, element)

    def _idle(self) -> None:
        now = time.monotonic()
        for index, op in self.tickers:
            out = op.on_tick(now)
            if out is not None:
                self._emit(index + 1, out)
        self.router.flush_expired(now)

    # ---------------------------------------------------------------- alignment
    def _align(self, index: int, sender: int, element: Any) -> None:
        state = self.inputs[index]
        kind = type(element)
        if kind is Watermark:
            state.watermarks[sender] = element.ts
            self._advance_frontier()
        elif kind is EndOfStream:
            state.ended += 1
            if all(s.ended >= s.senders for s in self.inputs):
                for s in self.inputs:
                    if not s.replay:
                        s.ended = 0
                self._control(0, END)
        elif kind is Terminate:
            state.terminated += 1
            if all(s.terminated >= s.senders for s in self.inputs):
                self._control(0, TERMINATE)
                self.finished = True
        elif kind is IterationUpdate:
            self._iteration_update(element)
        elif kind is FlushBatch:
            self.router.flush()
        elif kind is Barrier:
            self._control(0, element)
        else:
            raise TypeError(f"unknown stream element {element!r}")

    def _advance_frontier(self) -> None:
        low = None
        for s in self.inputs:
            if s.feedback or s.replay:
                continue
            if len(s.watermarks) < s.senders:
                return
            m = min(s.watermarks.values())
            low = m if low is None or m < low else low
        if low is not None and (self.frontier is None or low > self.frontier):
            self.frontier = low
            self._control(0, Watermark(low))

    def _iteration_update(self, update: IterationUpdate) -> None:
        """Forward a new iteration's state once, then replay the cached side inputs.

        Side inputs keep their end-of-stream from the first pass, so the block ends the
        new iteration as soon as the loop input ends it.
        """
        if self.iterations.get(update.scope, -1) >= update.iteration:
            return
        self.iterations[update.scope] = update.iteration
        self._control(0, update)
        if update.iteration == 0 or not update.proceed:
            return
        for index, state in enumerate(self.inputs):
            for batch in state.cache or ():
                out = self.head.process_input(index, batch)
                if out is not None:
                    self._emit(1, out)

    def _custom_control(self, index: int, sender: int, element: Any) -> None:
        out = self.head.on_input_control(index, sender, element)
        if out is not None:
            self._emit(1, out)
        if type(element) is Terminate:
            state = self.inputs[index]
            state.terminated += 1
            if all(s.terminated >= s.senders for s in self.inputs):
                self.finished = True

    # ------------------------------------------------------------------- chain
    def _push(self, k: int, batch: Batch) -> None:
        ops = self.ops
        n = len(ops)
        while k < n:
            out = ops[k].process(batch)
            k += 1
            if out is None:
                return
            if type(out) is not Batch:
                self._emit_list(k, out)
                return
            if not out.items:
                return
            batch = out
        self.router.send(batch, self.born)

    def _emit(self, k: int, out: Any) -> None:
        if type(out) is Batch:
            if out.items:
                self._push(k, out)
        else:
            self._emit_list(k, out)

    def _emit_list(self, k: int, elements: list) -> None:
        for element in elements:
            if type(element) is Batch:
                if element.items:
                    self._push(k, element)
            else:
                self._control(k, element)

    def _control(self, k: int, element: Any) -> None:
        kind = type(element)
        if kind is IterationUpdate:
            set_iteration_state(element.scope, element.state)
        ops = self.ops
        for i in range(k, len(ops)):
            op = ops[i]
            if kind is Watermark:
                out = op.on_watermark(element.ts)
            elif kind is EndOfStream:
                out = op.on_end()
            elif kind is Terminate:
                out = op.on_terminate()
            elif kind is IterationUpdate:
                out = op.on_iteration(element)
            elif kind is Barrier:
                out = op.on_barrier(element)
            else:
                out = None
            if out is not None:
                self._emit(i + 1, out)
            if kind is EndOfStream and not op.passes_end():
                return
        self.router.send_control(element)
