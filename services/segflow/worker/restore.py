"""How a worker's replicas start again: from a complete checkpoint, from one taken at other
replica counts (keyed state redistributed), from an uncoordinated recovery line with
the in-transit messages replayed from the senders' logs, or from segment backup's
adjusted state with the connectors' pending windows replayed."""
from __future__ import annotations

import functools
import logging
import pickle
from typing import TYPE_CHECKING, Callable

from ..checkpoint.catalog import Catalog
from ..checkpoint.uncoordinated import cut, size
from ..errors import SegflowError
from ..observability.logs import event
from ..checkpoint.restore_plan import LineRestore, SegmentRestore
from ..net.control_codec import restore_plan
from ..plan.placement import replica_name
from ..runtime.elements import checkpoint_label
from ..runtime.rescale import check_blobs, executor_state, finished_after_rescale, rescale_states

if TYPE_CHECKING:
    from .agent import CheckpointAgent
    from .service import Attempt

log = logging.getLogger("segflow.worker")


def restore_attempt(worker: str, attempt: "Attempt", catalog: Catalog, execution) -> None:
    """Restore what the assignment asks for, if anything."""
    assignment = attempt.assignment
    restore = assignment.restore_checkpoint
    if restore and assignment.restore_replicas:
        _rescaled(worker, attempt, catalog, restore, dict(assignment.restore_replicas), execution)
    elif restore:
        _from_checkpoint(worker, attempt, catalog, restore)
    elif (plan := restore_plan(assignment)) is not None:
        RESTORES[type(plan)](worker, attempt, catalog, execution, plan)


def _agent(attempt: "Attempt") -> "CheckpointAgent":
    assert attempt.agent is not None, "an attempt restores once its checkpoint agent is made"
    return attempt.agent


def _from_checkpoint(worker: str, attempt: "Attempt", catalog: Catalog, checkpoint_id: int) -> None:
    restored = []
    for rid, executor in attempt.executors.items():
        state = catalog.read_state(checkpoint_id, rid.block, rid.index)
        if state is None:
            raise SegflowError(f"checkpoint {checkpoint_label(checkpoint_id)} has no snapshot of replica {rid}: "
                               "the state store lost part of it")
        executor.restore(state)
        restored.append(str(rid))
        if executor.finished:
            _agent(attempt).done.add(rid)
    event(log, logging.WARNING, "restored", worker=worker, checkpoint=checkpoint_label(checkpoint_id),
          attempt=attempt.assignment.attempt, replicas=restored)

def _rescaled(worker: str, attempt: "Attempt", catalog: Catalog, checkpoint_id: int, before: dict,
              execution) -> None:
    """A snapshot taken at other replica counts: blocks whose count changed get their
    keyed state redistributed (runtime.rescale); the others restore as usual. A rescaled
    replica's inputs start afresh except for the channels of senders that had finished:
    they sent their end long ago and will send no barrier (waiting for one hung the job)."""
    def changed(block: int) -> bool:
        return before.get(block, execution.replicas[block]) != execution.replicas[block]

    @functools.cache
    def read(block: int, index: int) -> dict:
        state = catalog.read_state(checkpoint_id, block, index)
        if state is None:
            raise SegflowError(f"checkpoint {checkpoint_label(checkpoint_id)} has no snapshot of replica "
                               f"{replica_name(block, index)}")
        return state

    @functools.cache
    def finished_before(block: int) -> list[bool]:
        return [executor_state(read(block, i))["finished"] for i in range(before.get(block, execution.replicas[block]))]

    def finished(block: int, index: int) -> bool:
        return finished_after_rescale(finished_before(block), not changed(block), index)

    graph = execution.graph
    for rid, executor in attempt.executors.items():
        inputs = graph.inputs_of(rid.block)
        if changed(rid.block):
            blobs = [read(rid.block, old) for old in range(before[rid.block])]
            op_states = rescale_states(executor.ops, blobs, rid.index, execution.replicas[rid.block])
        elif any(changed(edge.src) for edge in inputs):
            op_states = check_blobs([read(rid.block, rid.index)])[0]["ops"]
        else:
            executor.restore(read(rid.block, rid.index))
            continue
        closed = {(i, sender) for i, edge in enumerate(inputs) for sender in execution.senders(edge, rid.index)
                  if finished(edge.src, sender)}
        executor.restore_rescaled(op_states, closed, finished(rid.block, rid.index))
    event(log, logging.WARNING, "restored with rescaling", worker=worker, checkpoint=checkpoint_label(checkpoint_id),
          replicas={str(b): f"{n}->{execution.replicas[b]}" for b, n in sorted(before.items())})


def _segments(worker: str, attempt: "Attempt", catalog: Catalog, execution, plan: SegmentRestore) -> None:
    """Segment backup (checkpoint.segment): each block at its own version; connectors
    replay their windows to the segments behind them and drop what their state already
    holds; replicas behind the newest version owe snapshots of the versions in between
    (after a regional recovery, up to the newest the blocks kept running have begun)."""
    versions, replays = plan.versions, plan.replays
    newest = max(plan.through, *versions.values())
    graph = execution.graph
    for rid, executor in attempt.executors.items():
        version = versions.get(rid.block, 0)
        if version:
            state = catalog.read_state(version, rid.block, rid.index)
            if state is None:
                raise SegflowError(f"version {version} of replica {rid} is missing from the state store")
            executor.ctx.restored_from = version     # sinks publish what this version holds
            executor.restore(state)
        # A block a regional recovery kept running replays from this one's version on.
        dropping = {(edge.dst_input, sender): version for edge in graph.inputs_of(rid.block)
                    if edge.src not in plan.kept and versions.get(edge.src, 0) < version
                    for sender in execution.senders(edge, rid.index)}
        executor.checkpointing.restart(
            version, dropping, {dst: r for (src, dst), r in replays.items() if src == rid.block},
            lambda v, rid=rid: catalog.read_window(rid.block, rid.index, v))
        owed = range(version + 1, newest + 1)
        _agent(attempt).owe(rid, owed)
        if executor.finished:
            _agent(attempt).done.add(rid)
        elif executor.block.is_source:
            for checkpoint_id in owed:
                executor.trigger(checkpoint_id)
    event(log, logging.WARNING, "restored segments", worker=worker, attempt=attempt.assignment.attempt,
          versions={str(r): versions.get(r.block, 0) for r in attempt.executors},
          replays={f"{a}>{b}": r for (a, b), r in replays.items()})


def _recovery_line(worker: str, attempt: "Attempt", catalog: Catalog, execution, plan: LineRestore) -> None:
    """Uncoordinated recovery: each replica from its checkpoint on the recovery line, then
    the in-transit messages of its input channels, replayed from the senders' logs."""
    line, replay = plan.line, plan.replay
    restored = {}
    for rid, executor in attempt.executors.items():
        process = replica_name(rid.block, rid.index)
        index = line.get(process, 0)
        restored[process] = index
        if index == 0:
            continue
        blob = catalog.read_local(process, index)
        if blob is None:
            raise SegflowError(f"local checkpoint {index} of {process} is missing from the state store")
        saved = pickle.loads(blob)
        executor.ctx.restored_from = index     # sinks commit what this checkpoint covers
        executor.restore({"state": saved["state"], "channels": {}})
        executor.checkpointing.local.restore(index, saved["record"])
        if executor.finished:
            _agent(attempt).done.add(rid)
    for rid, executor in attempt.executors.items():
        by_channel = {c: key for key, c in executor.checkpointing.channel_of.items()}
        for channel, (first, last) in sorted(replay.items()):
            if channel not in by_channel:
                continue
            index_sender = by_channel[channel]
            executor.replay([(index_sender[0], index_sender[1], element)
                             for element in _logged(catalog, channel, line.get(channel[0], 0), first, last)])
    event(log, logging.WARNING, "restored recovery line", worker=worker, line=restored,
          replayed={f"{a}>{b}": r for (a, b), r in replay.items()}, attempt=attempt.assignment.attempt)


def _logged(catalog: Catalog, channel: tuple, sender_index: int, first: int, last: int) -> list:
    """Elements ``first..last`` of ``channel`` from the sender's logs (checkpoints 1..index)."""
    logged = []
    for index in range(1, sender_index + 1):
        data = catalog.read_log(channel[0], index)
        logged.extend((pickle.loads(data) if data else {}).get(channel, []))
    elements = cut(logged, first, last)
    if sum(size(e) for e in elements) != last - first + 1:
        raise SegflowError(f"the log of channel {channel} lacks part of {first}..{last}: the state store lost it")
    return elements


# How a worker restores each kind of restore plan (checkpoint.restore_plan); a kind without
# its entry here fails tests/protocols.
RESTORES: dict[type, Callable[..., None]] = {SegmentRestore: _segments, LineRestore: _recovery_line}
