"""Python's cyclic garbage collector while records flow.

Every batch allocates thousands of short-lived tuples and lists, and CPython runs a
young-generation collection every 700 net allocations of container objects: several
collections per batch, each walking the young objects, although records are freed by
reference counting and almost never form cycles. Collecting every 50 000 allocations
instead measured 10-15 % more events per second on the Nexmark queries and costs at most
that many young objects of memory. The old generations keep their thresholds.
"""
from __future__ import annotations

import contextlib
import gc
from typing import Iterator

YOUNG_THRESHOLD = 50_000


def collect_less_often() -> None:
    """For a process that only runs replicas (a worker): from now on. What the process
    holds already (modules, the job's graph, a caller's data) is frozen: the oldest
    generation's collections, whose cost grows with everything they walk, skip it."""
    young, middle, old = gc.get_threshold()
    gc.set_threshold(max(young, YOUNG_THRESHOLD), middle, old)
    gc.freeze()


@contextlib.contextmanager
def collecting_less_often() -> Iterator[None]:
    """For a job run inside the user's process: the user's thresholds come back after it."""
    before = gc.get_threshold()
    frozen_by_caller = gc.get_freeze_count() > 0
    collect_less_often()
    try:
        yield
    finally:
        gc.set_threshold(*before)
        if not frozen_by_caller:       # a caller's own freeze stays as it was
            gc.unfreeze()
