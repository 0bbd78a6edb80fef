"""Restoring a snapshot taken at another parallelism (a rescaled savepoint restore).

Each operator says how its replicas' states become the states of the new replicas
(:meth:`Operator.rescale`): stateless operators need nothing, keyed state moves to the
replica that now owns each key (the same stable hash the routers use), the partial
results of a pre-aggregate (whose input is not partitioned) are combined, a file sink
keeps its replica index. Operators whose state has no such rule refuse with
:class:`RescaleError`, naming themselves, so a job is never restored wrongly. Sources are
not rescaled: the planner keeps their replica count (``pinned``), so each restores its
own position. A rescaled replica's input channels start afresh, except those whose
sender had finished before the snapshot (worker.restore closes them).
"""
from __future__ import annotations

from typing import Any, Callable

from ..errors import SegflowError
from .hashing import stable_hash


class RescaleError(SegflowError):
    """A snapshot cannot be restored at another parallelism; the message says why."""


def owned(key: Any, index: int, replicas: int) -> bool:
    return stable_hash(key) % replicas == index


def split_by_key(states: list[dict], field: str, index: int, replicas: int,
                 key: Callable[[Any], Any] = lambda k: k, combine: Callable[[Any, Any], Any] | None = None) -> dict:
    """The entries of every old replica's ``field`` dict whose key this replica now owns.

    Keyed state has each key in one old replica. A pre-aggregate's input is not partitioned,
    so several old replicas hold a partial result for the same key: ``combine`` joins them
    (keeping one would lose the others' records)."""
    merged: dict = {}
    for state in states:
        for k, v in state[field].items():
            if owned(key(k), index, replicas):
                merged[k] = combine(merged[k], v) if combine is not None and k in merged else v
    return merged


def sides_of(states: list[dict], field: str, side: int) -> list[dict]:
    """One input's part of a two-input operator's states (``field`` holds a pair), as
    states of their own, for :func:`split_by_key`."""
    return [{field: state[field][side]} for state in states]


def earliest_watermark(states: list[dict]) -> Any:
    """The new replica may only promise what every old one had promised."""
    marks = [s["watermark"] for s in states]
    return None if any(m is None for m in marks) else min(marks)


def executor_state(blob: dict) -> dict:
    """The executor state inside a replica's snapshot blob."""
    import cloudpickle
    return cloudpickle.loads(blob["state"]) if isinstance(blob["state"], bytes) else blob["state"]


def check_blobs(blobs: list[dict]) -> list[dict]:
    """The executor states inside the old replicas' snapshot blobs, checked for what a
    rescale cannot carry over: in-flight channel state and iterations in progress."""
    states = []
    for blob in blobs:
        if any(blob.get("channels") or {}):
            raise RescaleError("the snapshot holds in-flight records (an unaligned checkpoint): rescale from a "
                               "savepoint taken with the aligned protocol, or keep the parallelism")
        state = executor_state(blob)
        if state["iterations"] or state["iteration_values"]:
            raise RescaleError("the snapshot was taken inside an iteration: iterative blocks keep their parallelism")
        states.append(state)
    return states


def rescale_states(ops: list, blobs: list[dict], index: int, replicas: int) -> list[dict]:
    """The operator states of new replica ``index`` of ``replicas`` from the old blobs."""
    states = check_blobs(blobs)
    return [op.rescale([s["ops"][j] for s in states], index, replicas) for j, op in enumerate(ops)]


def finished_after_rescale(old_finished: list[bool], same_count: bool, index: int) -> bool:
    """Whether new replica ``index`` of a block has finished, from its old replicas' flags:
    at the same count its own; at another, only if every old one had (else the new
    replicas carry their unfinished state on)."""
    return old_finished[index] if same_count else all(old_finished)
