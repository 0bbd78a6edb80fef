"""Coordinator updates become views by the phase names of control.proto itself."""
import pytest

from segflow.v1 import control_pb2 as cpb
from segflow_operator.observe import coordinator_view


@pytest.mark.parametrize("number,name", [(v.number, v.name) for v in cpb.JobUpdate.Phase.DESCRIPTOR.values])
def test_every_phase_of_the_contract_has_its_view(number, name):
    view = coordinator_view(cpb.JobUpdate(phase=number, recoveries=2, last_checkpoint=5, error="e"))
    assert view.phase == ("WAITING_FOR_WORKERS" if name == "PHASE_UNSPECIFIED" else name)
    assert (view.recoveries, view.last_checkpoint, view.error) == (2, 5, "e")
