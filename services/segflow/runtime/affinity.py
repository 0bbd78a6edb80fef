"""One core for the replica threads of a process: a local worker's, or a run inside the
caller's process.

Replicas in one process run on threads that take turns holding the GIL, so its Python
runs on one core at a time anyway. Left to the scheduler, the threads take their turns on
different cores, and every batch one replica hands to the next (a thousand freshly made
records) is read from the other core's cache. Bound to one core, the comparison bench's
aggregate at N=1 (2M bids, worker processes) took 6.6-10.0 s instead of 8.0-9.8 s, four
interleaved pairs; the columnar path, whose kernels release the GIL, did not change.

The local runtime's spawner gives each of its workers its own core when there are at
least as many usable cores as workers (otherwise the scheduler's balancing is worth
more) and names it in :data:`REPLICA_CPU_ENV`; a run in this process takes one core the
same way. Only the replica threads are bound, not gRPC's or the caller's; threads that a
replica's own code starts inherit the binding, which is why ``SEGFLOW_PIN_REPLICAS=off``
turns it off. Workers on Kubernetes are never bound: the node decides. Linux only
(elsewhere nothing is bound).
"""
from __future__ import annotations

import os
from typing import Mapping, Sequence

from ..errors import SegflowError

REPLICA_CPU_ENV = "SEGFLOW_REPLICA_CPU"
PIN_ENV = "SEGFLOW_PIN_REPLICAS"
PIN_VALUES = ("on", "off")


class AffinityError(SegflowError):
    """Replica threads cannot be bound as the environment asks."""


def worker_cores(workers: int, usable: Sequence[int], first: int) -> list[int | None]:
    """The core of each of ``workers`` local workers, from ``usable`` starting at the
    ``first``-th (so that concurrent local jobs do not all begin on the same core), or
    None for every worker when cores are too few to give each its own."""
    cores = sorted(usable)
    if len(cores) < 2 or workers > len(cores):
        return [None] * workers
    return [cores[(first + i) % len(cores)] for i in range(workers)]


def pinning_wanted(env: Mapping[str, str]) -> bool:
    value = env.get(PIN_ENV, "on").strip().lower()
    if value not in PIN_VALUES:
        raise AffinityError(f"{PIN_ENV}={env[PIN_ENV]!r}: use 'on' (the default) or 'off'")
    return value == "on"


def usable_cores() -> list[int]:
    """The cores this process may run on; none where the platform cannot bind threads."""
    if not hasattr(os, "sched_setaffinity"):
        return []
    return sorted(os.sched_getaffinity(0))


def local_worker_cores(workers: int, env: Mapping[str, str] = os.environ) -> list[int | None]:
    """The cores a local coordinator gives its ``workers`` (see :func:`worker_cores`)."""
    if not pinning_wanted(env):
        return [None] * workers
    return worker_cores(workers, usable_cores(), os.getpid())


def worker_core_from_env(env: Mapping[str, str] = os.environ) -> int | None:
    """The core this worker's spawner gave it (:data:`REPLICA_CPU_ENV`), if any."""
    value = env.get(REPLICA_CPU_ENV)
    if not value:
        return None
    try:
        return int(value)
    except ValueError:
        raise AffinityError(f"{REPLICA_CPU_ENV}={value!r} is not a core number; unset it or set "
                            f"{PIN_ENV}=off for the run") from None


def in_process_core(env: Mapping[str, str] = os.environ) -> int | None:
    """The core for the replica threads of a run inside this process: they share one GIL
    as a worker's do."""
    return local_worker_cores(1, env)[0]


def bind_replica_thread(core: int | None) -> None:
    """Binds the calling thread (a replica's) to ``core``; None binds nothing."""
    if core is None or not hasattr(os, "sched_setaffinity"):
        return
    try:
        os.sched_setaffinity(0, {core})
    except OSError as exc:
        raise AffinityError(f"cannot bind a replica thread to core {core} ({exc}); "
                            f"set {PIN_ENV}=off for the run") from exc
