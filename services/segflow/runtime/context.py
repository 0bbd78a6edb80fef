"""Per-replica values that user functions read while they run (iteration state)."""
from __future__ import annotations

import threading
from typing import Any

_local = threading.local()


def set_iteration_state(scope: int, state: Any) -> None:
    states = getattr(_local, "states", None)
    if states is None:
        states = _local.states = {}
    states[scope] = state


def iteration_state(scope: int) -> Any:
    states = getattr(_local, "states", None)
    if states is None or scope not in states:
        raise LookupError("the iteration state is only readable inside the loop body while the job runs")
    return states[scope]
