"""Runs one block replica: aligns its inputs (Noir's StartBlock), drives the operator
chain over batches, and hands the output to the router (Noir's EndBlock). What a replica
does for checkpoints is its protocol's business (segflow.checkpoint.replica): the executor
calls the protocol's hooks and lets it capture state, forward barriers and replay."""
from __future__ import annotations

import queue
import threading
import time
from collections import deque
from typing import TYPE_CHECKING, Any

import cloudpickle

from ..plan.graph import BlockSpec
from .channels import Cancelled, Inbox
from .context import set_iteration_state
from .elements import (END, IDLE, TERMINATE, Barrier, Batch, EndOfStream, FlushBatch, Idle,
                       IterationUpdate, Terminate, Watermark)
from .inputs import InputStage, InputState
from .operator import Operator, ReplicaContext, ticks
from .rescale import executor_state
from .routing import Router

if TYPE_CHECKING:
    from ..checkpoint.replica import ReplicaCheckpointing

IDLE_TICK = 0.2


class SourceOperator(Operator):
    """First operator of a source block: produces batches instead of receiving them."""

    def poll(self, max_items: int) -> Batch | None:
        """Next batch; an empty batch when nothing is ready yet; ``None`` when exhausted."""
        raise NotImplementedError


class Trigger:
    """Start checkpoint ``checkpoint_id`` here (sent by the worker, not by a channel)."""

    __slots__ = ("checkpoint_id",)

    def __init__(self, checkpoint_id: int):
        self.checkpoint_id = checkpoint_id


class Completed:
    """Wakes a replica: checkpoints are complete everywhere (their ids wait in its
    ``completions``), so its sinks commit."""

    __slots__ = ()


COMPLETED = Completed()


class ReplicaExecutor:
    """One block replica. ``run`` returns when every input has terminated."""

    def __init__(self, block: BlockSpec, ctx: ReplicaContext, inputs: list[InputState],
                 inbox: Inbox | None, router: Router, stop: Any = None):
        self.block = block
        self.ctx = ctx
        self.inputs = InputStage(inputs)
        self.inbox = inbox
        self.router = router
        self.stop = stop
        self.ops: list[Operator] = []
        for spec in block.operators:
            op = spec.factory()
            op.location = spec.location
            op.name = spec.name
            self.ops.append(op)
        if not self.ops:
            self.ops.append(Operator())
        self.head = self.ops[0]
        self.custom_control = self.head.handles_control
        self.tickers = [(i, op) for i, op in enumerate(self.ops) if ticks(op)]
        self.iterations: dict[int, int] = {}
        self.iteration_values: dict[int, Any] = {}   # the loop state each body replica reads
        self.records_in = 0
        self.cpu_seconds = 0.0              # the replica thread's CPU time, once it has ended
        self.barrier_seconds = 0.0          # time spent on barriers: snapshots, forwarding, window parts
        self.born: float | None = None
        self.on_sink_batch: Any = None      # observes batch latency where the job ends
        self.finished = False
        self.tick = block.batch_mode.timeout or IDLE_TICK
        self.backlog: deque = deque()       # messages to handle before the inbox
        self.triggers: queue.SimpleQueue = queue.SimpleQueue()   # sources only
        self.completions: queue.SimpleQueue = queue.SimpleQueue()
        self.closing = threading.Lock()     # held while the replica's thread closes its operators
        self.closed = False
        self.checkpointing: "ReplicaCheckpointing | None" = None

    # ----------------------------------------------------------- checkpointing
    def input_channels(self) -> list[tuple[int, int]]:
        return self.inputs.channels()

    def back_edge_inputs(self) -> set[int]:
        return self.inputs.back_edges()

    def capture(self, checkpoint_id: int) -> bytes:
        """The replica's state for checkpoint ``checkpoint_id`` (operators flush first)."""
        for op in self.ops:
            op.prepare_snapshot(checkpoint_id)
        return self._state()

    def forward(self, element: Any) -> None:
        """Send a control element (a barrier) through the whole chain and on."""
        self._control(0, element)

    def replay(self, messages: list) -> None:
        """Handle these ``(index, sender, element)`` messages before the inbox."""
        self.backlog.extend(messages)

    def trigger(self, checkpoint_id: int) -> None:
        """From the worker's thread: start a checkpoint (sources, and replicas that no
        barrier can reach any more)."""
        if self.block.is_source:
            self.triggers.put(checkpoint_id)
        elif self.inbox is not None:
            self.inbox.put((-1, -1, Trigger(checkpoint_id)), block=False)

    def notify_complete(self, checkpoint_id: int) -> None:
        """From the worker's thread: checkpoint ``checkpoint_id`` is complete everywhere.
        The operators hear it on the replica's own thread, between batches: a sink's commit
        must not run beside its writes and snapshots (a source block's sink, a replica
        ending). Once that thread has closed them, they hear it here."""
        with self.closing:
            if not self.closed:
                self.completions.put(checkpoint_id)
                if self.inbox is not None:
                    self.inbox.put((-1, -1, COMPLETED), block=False)
                return
            self._completed(checkpoint_id)

    def _take_completions(self) -> None:
        completions = self.completions
        while not completions.empty():
            self._completed(completions.get())

    def _completed(self, checkpoint_id: int) -> None:
        for op in self.ops:
            op.on_checkpoint_complete(checkpoint_id)

    def _state(self) -> bytes:
        inputs, frontier = self.inputs.snapshot()
        return cloudpickle.dumps({
            "ops": [op.snapshot() for op in self.ops],
            "inputs": inputs,
            "frontier": frontier,
            "iterations": self.iterations,
            "iteration_values": self.iteration_values,
            "terminated": self.checkpointing.closed_channels() if self.checkpointing else set(),
            "finished": self.finished,
        })

    def snapshot_finished(self, checkpoint_id: int) -> None:
        """For a replica whose thread is done: its (final) state, taken from outside."""
        assert self.checkpointing is not None
        self.checkpointing.finished_snapshot(checkpoint_id)

    def restore_rescaled(self, op_states: list[dict], closed: set[tuple[int, int]], finished: bool) -> None:
        """Restore the operators (a rescaled restore: watermarks and alignment start afresh,
        as the replica's inputs are not the snapshot's) and which input channels are
        ``closed`` (their senders had finished: nothing, not even a barrier, will come)."""
        for op, op_state in zip(self.ops, op_states):
            op.restore(op_state)
        self.inputs.close_finished(closed)
        self.finished = finished
        if self.checkpointing is not None:
            self.checkpointing.restore_closed_channels(set(closed))

    def restore(self, blob: dict) -> None:
        state = executor_state(blob)
        for op, op_state in zip(self.ops, state["ops"]):
            op.restore(op_state)
        self.inputs.restore(state["inputs"], state["frontier"])
        self.iterations = state["iterations"]
        self.finished = state["finished"]
        if self.checkpointing is not None:
            self.checkpointing.restore_closed_channels(set(state["terminated"]))
        self.iteration_values = state["iteration_values"]
        for (index, sender), elements in sorted(blob.get("channels", {}).items()):
            for element in elements:
                self.backlog.append((index, sender, element))

    def _channel_closed(self, channel: tuple[int, int]) -> None:
        if self.checkpointing is not None:
            self.checkpointing.on_channel_closed(channel)

    # ------------------------------------------------------------------ driving
    def run(self) -> None:
        for scope, value in self.iteration_values.items():
            set_iteration_state(scope, value)
        for op in self.ops:
            op.open(self.ctx)
        try:
            if self.checkpointing is not None:
                self.checkpointing.on_start()
            if self.finished:
                if self.inbox is not None:
                    self.inbox.discard()
                return
            if self.block.is_source:
                self._run_source()
            else:
                self._run_inputs()
        finally:
            with self.closing:
                self._take_completions()
                self.closed = True
                for op in self.ops:
                    op.close()

    def _run_source(self) -> None:
        source = self.head
        size = self.block.batch_mode.size
        assert isinstance(source, SourceOperator)
        stop = self.stop
        checkpointing = self.checkpointing
        while True:
            if stop is not None and stop.is_set():
                raise Cancelled()
            if checkpointing is not None:
                self._take_triggers(checkpointing)
                checkpointing.on_turn(time.monotonic())
            self._take_completions()
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
        if checkpointing is not None:
            self._take_triggers(checkpointing)
        self._control(0, END)
        self.finished = True
        self._control(0, TERMINATE)
        if checkpointing is not None:
            checkpointing.on_end()

    def _take_triggers(self, checkpointing: "ReplicaCheckpointing") -> None:
        triggers = self.triggers
        while not triggers.empty():
            checkpointing.on_trigger(triggers.get())

    def _next_message(self, inbox: Inbox) -> tuple | None:
        if self.backlog:
            return self.backlog.popleft()
        return inbox.get(self.tick)

    def _run_inputs(self) -> None:
        inbox = self.inbox
        assert inbox is not None
        head = self.head
        checkpointing = self.checkpointing
        while not self.finished:
            if checkpointing is not None:
                checkpointing.on_turn(time.monotonic())
            message = self._next_message(inbox)
            if message is None:
                self._idle()
                continue
            index, sender, element = message
            if index < 0:
                self._worker_message(element)
                continue
            if checkpointing is not None:
                element = checkpointing.admit(index, sender, element)
                if element is None:
                    continue
            kind = type(element)
            if kind is Batch:
                self.records_in += len(element.items)
                self.born = element.born
                if self.on_sink_batch is not None and element.born is not None:
                    self.on_sink_batch(time.time() - element.born)
                self.inputs.cache(index, element)
                out = head.process_input(index, element)
                if out is not None:
                    self._emit(1, out)
            elif kind is Barrier:
                if checkpointing is not None:
                    checkpointing.on_barrier(index, sender, element)
                else:
                    self._control(0, element)
            elif self.custom_control:
                self._custom_control(index, sender, element)
            else:
                self._align(index, sender, element)
        if checkpointing is not None:
            checkpointing.on_end()

    def _worker_message(self, element: Any) -> None:
        if type(element) is Trigger:
            if self.checkpointing is not None:
                self.checkpointing.on_trigger(element.checkpoint_id)
        elif type(element) is Completed:
            self._take_completions()

    def _idle(self) -> None:
        now = time.monotonic()
        for index, op in self.tickers:
            out = op.on_tick(now)
            if out is not None:
                self._emit(index + 1, out)
        self.router.flush_expired(now)

    # ---------------------------------------------------------------- alignment
    def _align(self, index: int, sender: int, element: Any) -> None:
        inputs = self.inputs
        kind = type(element)
        if kind is Watermark:
            self._frontier(inputs.watermark(index, sender, element.ts))
        elif kind is Idle:
            frontier, all_idle = inputs.idle(index, sender)
            self._frontier(frontier)
            if all_idle:
                self._control(0, IDLE)
        elif kind is EndOfStream:
            if inputs.ended(index):
                self._control(0, END)
        elif kind is Terminate:
            if inputs.terminated(index):
                self.finished = True
                self._control(0, TERMINATE)
            self._channel_closed((index, sender))
        elif kind is IterationUpdate:
            self._iteration_update(element)
        elif kind is FlushBatch:
            self.router.flush()
        else:
            raise TypeError(f"unknown stream element {element!r}")

    def _frontier(self, frontier: Any) -> None:
        if frontier is not None:
            self._control(0, Watermark(frontier))

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
        for index, batch in self.inputs.cached():
            out = self.head.process_input(index, batch)
            if out is not None:
                self._emit(1, out)

    def _custom_control(self, index: int, sender: int, element: Any) -> None:
        out = self.head.on_input_control(index, sender, element)
        if out is not None:
            self._emit(1, out)
        if type(element) is Terminate:
            if self.inputs.terminated(index):
                self.finished = True
            self._channel_closed((index, sender))

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
                self._emit(k, out)
                return
            if not out.items:
                return
            batch = out
        self.router.send(batch, self.born)

    def _emit(self, k: int, out: Any) -> None:
        """Operator ``k - 1``'s output onward: a batch, or a list of batches and control
        elements in the order they must keep."""
        for element in (out,) if type(out) is Batch else out:
            if type(element) is not Batch:
                self._control(k, element)
            elif element.items:
                self._push(k, element)

    def _control(self, k: int, element: Any) -> None:
        kind = type(element)
        if kind is IterationUpdate:
            set_iteration_state(element.scope, element.state)
            self.iteration_values[element.scope] = element.state
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
