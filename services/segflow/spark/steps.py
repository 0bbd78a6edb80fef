"""Every operator's Spark step, found by the name the operator declares
(``Operator.spark_step``).

Why names declared by the operator and steps registered here, rather than a dispatch on
the operator's class in the runner: ``segflow.runtime`` must not import ``segflow.spark``
(tests/layers), so the operator cannot hold its Spark code; it can name it. Most operators
are ``CHAIN`` and run on Spark as themselves over each partition, so adding one touches its
own module only. A source, a sink or a multi-input head names a step that the Spark module
of its family registers beside its code with one of the decorators below (``@head("zip")``
in ``spark/joins.py``); the runner looks steps up and knows no operator class.
tests/spark/test_steps_complete.py fails for an operator that names no registered step
(or ``ENGINE_ONLY`` without a refusal).

A step's kind says where in a block it acts: :class:`Source` makes a source block's RDD,
:class:`Head` makes the flow entering a block from its inputs, :class:`Chain` is one
operator over a partition, :class:`Sink` ends a job's stream; :class:`PreAggregate` and
:class:`LoopPart` are translated by ``spark/aggregate.py`` and ``spark/iteration.py``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from ..runtime.operator import Operator

if TYPE_CHECKING:
    from pyspark import RDD, SparkContext

    from ..plan.graph import BlockSpec
    from .flows import Flow
    from .runner import Translation
    from .translate import Step


@dataclass(frozen=True)
class Source:
    """``rdd(spark context, source operator, replicas)``: one partition per replica."""

    rdd: Callable[["SparkContext", Any, int], "RDD"]


@dataclass(frozen=True)
class Head:
    """``flow(translation, block, head)``: what enters the block; the head is applied."""

    flow: Callable[["Translation", "BlockSpec", Any], "Flow"]


@dataclass(frozen=True)
class Chain:
    """``step(operator, whether its input is timestamped)``: the function over a partition."""

    step: Callable[[Any, bool], "Step"]


@dataclass(frozen=True)
class Sink:
    """``write(records, sink, results)``: runs the job's stream into the sink; a sink that
    brings records back puts them in ``results`` under its id."""

    write: Callable[["RDD", Any, dict], None]


@dataclass(frozen=True)
class PreAggregate:
    """A keyed local stage: runs inside Spark's map-side combine (spark/aggregate.py)."""


@dataclass(frozen=True)
class LoopPart:
    """An iteration's end or leader, which the loop's driver runs (spark/iteration.py)."""


SparkStep = Source | Head | Chain | Sink | PreAggregate | LoopPart
STEPS: dict[str, SparkStep] = {}
F = TypeVar("F", bound=Callable)


def register(name: str, step: SparkStep) -> None:
    if name in STEPS:
        raise ValueError(f"two Spark steps are registered as {name!r}")
    STEPS[name] = step


def _registering(kind: type) -> Callable[[str], Callable[[F], F]]:
    def named(name: str) -> Callable[[F], F]:
        def decorate(fn: F) -> F:
            register(name, kind(fn))
            return fn
        return decorate
    return named


source = _registering(Source)
head = _registering(Head)
chain = _registering(Chain)
sink = _registering(Sink)


def step_of(op: Operator) -> SparkStep:
    """The Spark step ``op`` names (the job was checked by :func:`translate.refuse` first,
    so an engine-only operator never gets here)."""
    try:
        return STEPS[op.spark_step]   # type: ignore[index]
    except KeyError:
        raise TypeError(f"{type(op).__name__} names the Spark step {op.spark_step!r}, which no segflow.spark "
                        "module registers: set its spark_step (segflow.spark.steps)") from None
