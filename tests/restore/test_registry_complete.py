"""The restore property covers every runtime operator: a new operator (or connector) that
is not in the registry fails here, so none can skip the property."""
from segflow.runtime.operator import Operator
from segflow.runtime.operators.iteration import IterationStart
from segflow.runtime.operators.redis_streams import RedisStreamSink
from segflow.runtime.operators.sources import TextFileSource
from segflow.runtime.operators.windows import TimeWindows

from .registry import ABSTRACT_BASES, CASES, runtime_operator_classes


def keeps_state(klass: type) -> bool:
    return bool(klass.state_fields) or klass.snapshot is not Operator.snapshot


def test_every_runtime_operator_is_in_the_restore_registry():
    covered = {case.operator for case in CASES}
    missing = sorted(k.__qualname__ for k in runtime_operator_classes() - ABSTRACT_BASES - covered)
    assert not missing, (f"operators without a restore case: {missing}; add a RestoreCase for each to "
                         "tests/restore/operator_cases.py or connector_cases.py")


def test_every_stateful_runtime_operator_is_in_the_restore_registry():
    """The rule above could one day be relaxed for stateless operators; this one never. The
    walk must find the stateful operators (a walk that finds none would pass vacuously)."""
    stateful = {k for k in runtime_operator_classes() - ABSTRACT_BASES if keeps_state(k)}
    assert {TimeWindows, TextFileSource, RedisStreamSink, IterationStart} <= stateful
    assert stateful - {case.operator for case in CASES} == set()
