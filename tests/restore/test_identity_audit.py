"""Markers compared by identity that cross a pickle or a copy (found by auditing
services/segflow for ``object()`` and ``is`` comparisons): after the round trip they must
still be the marker."""
import copy

import cloudpickle
import pytest

import segflow
from segflow.errors import SegflowError


@pytest.mark.parametrize("duplicate", [copy.deepcopy, lambda output: cloudpickle.loads(cloudpickle.dumps(output))])
def test_a_copied_collect_handle_of_a_job_not_run_yet_says_so(duplicate):
    env = segflow.StreamEnvironment()
    output = env.from_iterable([1, 2]).collect()
    with pytest.raises(SegflowError, match="has not run yet"):
        duplicate(output).get()
