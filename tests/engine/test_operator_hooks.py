"""Every hook the executor calls is declared on Operator, with a default; the executor
ticks only the operators that override on_tick, so the default costs nothing."""
import pytest

from segflow.runtime.operator import Operator, ticks
from segflow.runtime.operators.iteration import IterationStart
from segflow.runtime.operators.stateless import Map
from segflow.runtime.operators.time import AddTimestamps, WatermarkStrategy
from segflow.runtime.operators.windows import ProcessingTime, TimeWindows


def test_only_operators_that_override_on_tick_are_ticked():
    assert not ticks(Operator())
    assert not ticks(Map(str, False))
    assert ticks(AddTimestamps(lambda x: x, WatermarkStrategy.monotonous()))
    assert ticks(ProcessingTime(TimeWindows(1.0, 1.0, sum, False)))


def test_the_defaults_tick_nothing_and_take_no_control_themselves():
    op = Operator()
    assert op.on_tick(0.0) is None
    assert op.handles_control is False
    assert IterationStart.handles_control is True


def test_a_head_that_claims_control_without_handling_it_says_so():
    class Claims(Operator):
        handles_control = True
    with pytest.raises(NotImplementedError, match="Claims sets handles_control but does not define"):
        Claims().on_input_control(0, 0, object())


def test_the_executor_probes_no_operator_attribute():
    """The hooks are declared, so the runtime needs no hasattr/getattr on operators."""
    from pathlib import Path
    import segflow.runtime.executor as executor
    source = Path(executor.__file__).read_text()
    assert "hasattr(" not in source and "getattr(self.head" not in source
