"""The runtime operator interface, and how user-function failures are reported.

Operators are push-based and work on whole batches: ``process`` takes a :class:`Batch` and
returns a Batch, ``None`` (nothing to pass on) or a list of elements (batches and control
elements, in order). Control methods return output the same way; the executor forwards
the control element itself afterwards.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, ClassVar, Iterable

from ..errors import UserFunctionError
from ..plan.placement import replica_name
from .elements import Batch, Barrier, IterationUpdate

Output = Batch | list | None


@dataclasses.dataclass(eq=False)
class ReplicaContext:
    """What an operator instance knows about where it runs, and its side outputs."""

    block: int
    index: int
    replicas: int
    worker: str
    side_output: Callable[[int, Any], None]
    deliver: Callable[[int, list], None]
    input_senders: list[int] = dataclasses.field(default_factory=list)
    transactional: bool = False     # output becomes visible only for completed checkpoints
    restored_from: int = 0          # the checkpoint this replica was restored from

    @property
    def name(self) -> str:
        return replica_name(self.block, self.index)


class Operator:
    """Base class: a stateless pass-through; subclasses override what they need."""

    name = "operator"
    location = "?"
    state_fields: tuple[str, ...] = ()   # attributes that make up the operator's state

    def snapshot(self) -> dict:
        """The operator's state; the executor serializes it at once (that is the copy)."""
        return {field: getattr(self, field) for field in self.state_fields}

    def restore(self, state: dict) -> None:
        for field, value in state.items():
            setattr(self, field, value)

    def rescale(self, states: list[dict], index: int, replicas: int) -> dict:
        """This operator's state at replica ``index`` of ``replicas``, from the states of
        all replicas of a snapshot taken at another parallelism. Stateless operators need
        nothing; stateful ones without a rule refuse."""
        if not self.state_fields:
            return {}
        from .rescale import RescaleError
        raise RescaleError(f"{self.name} keeps state that cannot be redistributed to another parallelism: "
                           "restore it at the parallelism of the snapshot")

    def prepare_snapshot(self, checkpoint_id: int) -> None:
        """Called just before the state is captured for ``checkpoint_id`` (a sink closes
        the epoch that the checkpoint will cover)."""
        return None

    def on_checkpoint_complete(self, checkpoint_id: int) -> None:
        """Checkpoint ``checkpoint_id`` is complete everywhere (sinks commit here)."""
        return None

    def open(self, ctx: ReplicaContext) -> None:
        self.ctx = ctx

    def process(self, batch: Batch) -> Output:
        return batch

    def process_input(self, input_index: int, batch: Batch) -> Output:
        return self.process(batch)

    def on_watermark(self, ts: Any) -> Output:
        return None

    def on_end(self) -> Output:
        return None

    def passes_end(self) -> bool:
        """Whether the end-of-stream goes on downstream after :meth:`on_end`."""
        return True

    def on_terminate(self) -> Output:
        return None

    def on_iteration(self, update: IterationUpdate) -> Output:
        return None

    def on_barrier(self, barrier: Barrier) -> Output:
        return None

    def on_tick(self, now: float) -> Output:
        """Called while the replica waits for input (about every batch timeout), with
        ``time.monotonic()``: output that is due because time passed (idleness,
        processing-time windows). The executor calls it only on operators that override
        it (:func:`ticks`), so the default costs nothing."""
        return None

    # Whether this operator, at the head of its block, takes its inputs' control elements
    # itself (:meth:`on_input_control`) instead of the executor aligning them across inputs
    # (an iteration's start, whose inputs end and restart per iteration).
    handles_control = False

    def on_input_control(self, input_index: int, sender: int, element: Any) -> Output:
        """A control element (not a batch, not a barrier) from ``sender`` of input
        ``input_index``, unaligned; called only on a head with :attr:`handles_control`."""
        raise NotImplementedError(f"{type(self).__name__} sets handles_control but does not define "
                                  "on_input_control")

    def close(self) -> None:
        return None

    # -- on Spark (segflow.spark): the operator names its Spark step, and the spark package
    # -- holds the step under that name (segflow.runtime cannot import segflow.spark). Most
    # -- operators are CHAIN: they run there as themselves over each partition, and adding
    # -- one touches only its own module; a source, a sink or a multi-input head names the
    # -- step that a segflow.spark module registers for it (segflow.spark.steps).
    spark_step: ClassVar[str | None] = None   # CHAIN, ENGINE_ONLY or a registered step's name

    def timestamps_after(self, stamped: bool) -> bool:
        """Whether this operator's output is timestamped, given whether its input is."""
        return stamped

    def spark_refusal(self) -> tuple[str, str] | None:
        """``(why, what to do instead)`` when this operator has no meaning in a batch run."""
        return None


CHAIN = "chain"                 # spark_step: runs on Spark as itself, over each partition
ENGINE_ONLY = "engine only"     # spark_step: always refused on Spark (spark_refusal says why)


def ticks(op: Operator) -> bool:
    """Whether ``op`` overrides :meth:`Operator.on_tick` (the executor ticks only those)."""
    return type(op).on_tick is not Operator.on_tick


def engine_only(op: Operator) -> tuple[str, str]:
    """The refusal of an operator that only the segflow engine runs (external connectors)."""
    return f"there is no Spark translation of {type(op).__name__}", "run the job on the segflow engine"


class Delegating(Operator):
    """An operator that wraps another (``inner``): same identity for errors, same state."""

    inner: Operator

    def open(self, ctx: ReplicaContext) -> None:
        super().open(ctx)
        self.inner.name, self.inner.location = self.name, self.location
        self.inner.open(ctx)

    def snapshot(self) -> dict:
        return self.inner.snapshot()

    def restore(self, state: dict) -> None:
        self.inner.restore(state)

    def rescale(self, states: list[dict], index: int, replicas: int) -> dict:
        self.inner.name = self.name
        return self.inner.rescale(states, index, replicas)


class UserCall:
    """Runs a user function over a batch and, when it raises, finds the failing record.

    The fast path is a list comprehension; only after a failure are the records retried
    one by one to report the exact position (stateless functions only, which is where
    comprehensions are used).
    """

    def __init__(self, op: Operator):
        self.op = op
        self.seen = 0

    def fail(self, exc: BaseException, items: Iterable, probe: Callable[[Any], Any]) -> None:
        for i, item in enumerate(items):
            try:
                probe(item)
            except Exception as again:  # noqa: BLE001 - re-raised with its position
                raise self.error(again, i, item) from again
        raise self.error(exc, 0, "(the failure did not repeat when the batch was retried)") from exc

    def error(self, exc: BaseException, offset: int, item: Any, context: str = "") -> UserFunctionError:
        ctx = getattr(self.op, "ctx", None)
        return UserFunctionError(self.op.name, self.op.location, ctx.name if ctx else "?",
                                 self.seen + offset, item, exc, context)


def function_name(fn: Any) -> str:
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
    return name.replace(".<locals>", "")
