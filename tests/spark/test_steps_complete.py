"""Every runtime operator has its Spark step: it names one (``spark_step``) that a
segflow.spark module registers, or it is ENGINE_ONLY and says why (``spark_refusal``). A new
operator that does neither fails here, as one without a restore case fails
tests/restore/test_registry_complete."""
import pytest

import segflow.spark.runner  # noqa: F401 - imports every module that registers a step
from segflow.runtime.executor import SourceOperator
from segflow.runtime.operator import CHAIN, ENGINE_ONLY, Operator
from segflow.spark import steps

from restore.registry import ABSTRACT_BASES, runtime_operator_classes

OPERATORS = sorted(runtime_operator_classes() - ABSTRACT_BASES, key=lambda k: k.__qualname__)


def test_the_walk_finds_the_operators():
    names = {k.__qualname__ for k in OPERATORS}
    assert {"IntervalJoin", "Map", "CsvSource", "FileSink", "RedisStreamSink"} <= names


@pytest.mark.parametrize("klass", OPERATORS, ids=lambda k: k.__qualname__)
def test_every_runtime_operator_names_its_spark_step(klass):
    name = klass.spark_step
    assert name is not None, (f"{klass.__qualname__} names no Spark step: set spark_step = CHAIN (it runs as "
                              "itself over each partition), ENGINE_ONLY with a spark_refusal, or the name of a "
                              "step registered in segflow.spark (segflow.spark.steps)")
    if name == ENGINE_ONLY:
        assert klass.spark_refusal is not Operator.spark_refusal, \
            f"{klass.__qualname__} is ENGINE_ONLY on Spark: its spark_refusal must say why and what to do"
    else:
        assert name in steps.STEPS, f"{klass.__qualname__} names the Spark step {name!r}, which nothing registers"


@pytest.mark.parametrize("klass", OPERATORS, ids=lambda k: k.__qualname__)
def test_sources_and_multi_input_heads_are_not_chain_steps(klass):
    """A chain step runs the operator's process() over one partition: a source polls
    instead, and a head of several inputs needs them met first."""
    if klass.spark_step == ENGINE_ONLY:
        return
    step = steps.STEPS[klass.spark_step]
    if issubclass(klass, SourceOperator):
        assert isinstance(step, steps.Source), f"{klass.__qualname__} is a source: its Spark step must be one"
    elif klass.process_input is not Operator.process_input:
        assert not isinstance(step, steps.Chain), f"{klass.__qualname__} reads several inputs: it needs a Head step"


def test_an_operator_that_names_no_step_fails_the_check():
    class Unnamed(Operator):
        pass
    with pytest.raises(AssertionError, match="Unnamed names no Spark step"):
        test_every_runtime_operator_names_its_spark_step(Unnamed)
    with pytest.raises(TypeError, match="names the Spark step None, which no segflow.spark module registers"):
        steps.step_of(Unnamed())
    assert isinstance(steps.STEPS[CHAIN], steps.Chain)
